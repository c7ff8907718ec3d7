package core_test

import (
	"os"
	"runtime"
	"runtime/metrics"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/internal/core"
	"github.com/charmgo/charm/internal/jobtest"
)

// headroomChild, set in the environment of a child test process, makes
// TestHeadroomKeptFromTheStart report what the child's process kept.
const headroomChild = "CHARM_TEST_HEADROOM_CHILD"

// A process started at Go's default pace has its headroom before any job,
// its pages not resident (on Linux), and the collector counts it: the
// live heap after a cycle holds it, and the goal is twice that. A process
// started with GOGC or GOMEMLIMIT in its environment has none (a child
// test process each).
func TestHeadroomKeptFromTheStart(t *testing.T) {
	if want := os.Getenv(headroomChild); want != "" {
		h := core.Headroom()
		if want == "none" {
			require.Nil(t, h)
			return
		}
		require.Len(t, h, core.HeadroomBytes)
		requireNotResident(t, h)
		runtime.GC()
		s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/gc/heap/goal:bytes"}}
		metrics.Read(s)
		require.GreaterOrEqual(t, s[0].Value.Uint64(), uint64(core.HeadroomBytes), "the live heap after a cycle")
		require.GreaterOrEqual(t, s[1].Value.Uint64(), uint64(2*core.HeadroomBytes), "the collector's goal after a cycle")
		return
	}
	for _, c := range []struct{ env, want string }{
		{"", "kept"}, {"GOGC=200", "none"}, {"GOGC=off", "none"}, {"GOMEMLIMIT=1GiB", "none"},
	} {
		cmd := jobtest.Command(t.Context(), t)
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
