package core

import (
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The headroom is kept at Go's default pace only: a pace the program or
// its environment set is left as it is.
func TestHeadroomOnlyAtTheDefaultPace(t *testing.T) {
	def := gcPace{percent: 100, limit: math.MaxInt64}
	require.Equal(t, HeadroomBytes, headroomFor(def))
	for name, p := range map[string]gcPace{
		"GOGC in the environment":       {envGOGC: true, percent: 100, limit: math.MaxInt64},
		"GOMEMLIMIT in the environment": {envLimit: true, percent: 100, limit: math.MaxInt64},
		"SetGCPercent(200)":             {percent: 200, limit: math.MaxInt64},
		"GOGC=off":                      {percent: math.MaxUint64, limit: math.MaxInt64},
		"SetMemoryLimit(1 GiB)":         {percent: 100, limit: 1 << 30},
	} {
		require.Zero(t, headroomFor(p), name)
	}
}

// currentPace sees what the program and the environment set.
func TestCurrentPaceReadsTheCollector(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(250))
	p := currentPace()
	require.EqualValues(t, 250, p.percent)

	defer debug.SetMemoryLimit(debug.SetMemoryLimit(3 << 30))
	require.EqualValues(t, 3<<30, currentPace().limit)

	t.Setenv("GOGC", "100")
	t.Setenv("GOMEMLIMIT", "")
	p = currentPace()
	require.True(t, p.envGOGC)
	require.False(t, p.envLimit)
}

// Once a job ran in a process at Go's default pace, the collector's goal
// counts the headroom: a heap of a few MiB is far from its next cycle.
func TestJobKeepsHeadroom(t *testing.T) {
	if headroomFor(currentPace()) == 0 {
		t.Skip("the environment or the program set the collector's pace (GOGC, GOMEMLIMIT): no headroom is kept")
	}
	_, err := Run(Config{PEs: 1, Timeout: 30 * time.Second}, func(m *countMain, _ []string) { m.Exit(0) })
	require.NoError(t, err)
	require.Len(t, headroom, HeadroomBytes)
	runtime.GC()
	s := []metrics.Sample{{Name: "/gc/heap/goal:bytes"}}
	metrics.Read(s)
	require.GreaterOrEqual(t, s[0].Value.Uint64(), uint64(2*HeadroomBytes), "the collector's goal after a cycle")
}
