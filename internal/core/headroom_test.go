package core

import (
	"math"
	"os"
	"os/exec"
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
	require.Equal(t, HeadroomBytes, headroomAtStart(def, 0))
	require.Zero(t, headroomAtStart(def, 1), "a collection ran before the runtime's initialisation")
}

// currentPace sees what the program and the environment set.
func TestHeadroomCurrentPaceReadsTheCollector(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(250))
	require.EqualValues(t, 250, currentPace().percent)
	before := collections()
	runtime.GC()
	require.Greater(t, collections(), before)

	defer debug.SetMemoryLimit(debug.SetMemoryLimit(3 << 30))
	require.EqualValues(t, 3<<30, currentPace().limit)

	t.Setenv("GOGC", "100")
	t.Setenv("GOMEMLIMIT", "")
	p := currentPace()
	require.True(t, p.envGOGC)
	require.False(t, p.envLimit)
}

// headroomChild, set in the environment of a child test process, makes
// TestHeadroomKeptFromTheStart report what the child's process kept.
const headroomChild = "CHARM_TEST_HEADROOM_CHILD"

// A process started at Go's default pace has its headroom before any job,
// its pages not resident (on Linux), and the collector counts it: the
// live heap after a cycle holds it, and the goal is twice that. A process started with GOGC or GOMEMLIMIT in
// its environment has none (a child test process each).
func TestHeadroomKeptFromTheStart(t *testing.T) {
	if want := os.Getenv(headroomChild); want != "" {
		if want == "none" {
			require.Nil(t, headroom)
			return
		}
		require.Len(t, headroom, HeadroomBytes)
		requireNotResident(t, headroom)
		runtime.GC()
		s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/gc/heap/goal:bytes"}}
		metrics.Read(s)
		require.GreaterOrEqual(t, s[0].Value.Uint64(), uint64(HeadroomBytes), "the live heap after a cycle")
		require.GreaterOrEqual(t, s[1].Value.Uint64(), uint64(2*HeadroomBytes), "the collector's goal after a cycle")
		return
	}
	for _, c := range []struct{ env, want string }{
		{"", "kept"}, {"GOGC=200", "none"}, {"GOGC=off", "none"}, {"GOMEMLIMIT=1GiB", "none"},
	} {
		cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestHeadroomKeptFromTheStart$", "-test.count=1")
		cmd.Env = append(os.Environ(), headroomChild+"="+c.want)
		for _, name := range []string{"GOGC", "GOMEMLIMIT"} {
			cmd.Env = append(cmd.Env, name+"=") // unset in the child but for c.env
		}
		if c.env != "" {
			cmd.Env = append(cmd.Env, c.env)
		}
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "a child process with %q: %s", c.env, out)
	}
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
