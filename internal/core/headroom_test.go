package core

import (
	"math"
	"runtime"
	"runtime/debug"
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
	require.Equal(t, HeadroomBytes, headroomAtStart(def))
	def.cycles = 1
	require.Zero(t, headroomAtStart(def), "a collection ran before the runtime's initialisation")
}

// currentPace sees what the program and the environment set.
func TestHeadroomCurrentPaceReadsTheCollector(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(250))
	require.EqualValues(t, 250, currentPace().percent)
	before := currentPace().cycles
	runtime.GC()
	require.Greater(t, currentPace().cycles, before)

	defer debug.SetMemoryLimit(debug.SetMemoryLimit(3 << 30))
	require.EqualValues(t, 3<<30, currentPace().limit)

	t.Setenv("GOGC", "100")
	t.Setenv("GOMEMLIMIT", "")
	p := currentPace()
	require.True(t, p.envGOGC)
	require.False(t, p.envLimit)
}

// A program that sets the collector's pace gives the headroom up when its
// next job starts.
func TestHeadroomGivenUpWhenThePaceChanges(t *testing.T) {
	headroomMu.Lock()
	kept := headroom
	headroom = make([]byte, 1) // a stand-in, so that the test runs under any environment
	headroomMu.Unlock()
	defer func() {
		headroomMu.Lock()
		headroom = kept
		headroomMu.Unlock()
	}()
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	defer debug.SetGCPercent(debug.SetGCPercent(100)) // as if the environment had not set them
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))

	_, err := Run(Config{PEs: 1, Timeout: 30 * time.Second}, func(m *countMain, _ []string) { m.Exit(0) })
	require.NoError(t, err)
	require.NotNil(t, headroom, "a job at the default pace keeps it")

	defer debug.SetGCPercent(debug.SetGCPercent(300))
	_, err = Run(Config{PEs: 1, Timeout: 30 * time.Second}, func(m *countMain, _ []string) { m.Exit(0) })
	require.NoError(t, err)
	require.Nil(t, headroom, "a job after debug.SetGCPercent(300)")
}
