// Package multi holds tests that run jobs as several real processes: the
// test binary launches copies of itself as the other nodes, which join the
// job (chare.IsLaunchedNode) and exit with its code.
package multi

import (
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/actor"
	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/group"
	"github.com/charmgo/charm/internal/jobtest"
)

// alone makes the current test run in a process of its own: in the test
// process it runs a copy of the test binary for just this test, checks
// that it passed and returns false; in that copy it returns true.
func alone(t *testing.T) bool {
	t.Helper()
	if os.Getenv("CHARM_TEST_ALONE") == t.Name() {
		return true
	}
	cmd := jobtest.Command(nil, t, "-test.v")
	cmd.Env = append(os.Environ(), "CHARM_TEST_ALONE="+t.Name())
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s in its own process:\n%s", t.Name(), out)
	require.Contains(t, string(out), "--- PASS: "+t.Name())
	return false
}

type ringMain struct{ chare.Chare[ringMain] }

// ringer keeps a token going around the PEs forever.
type ringer struct {
	group.Branch[ringer]
	seen int
}

func (r *ringer) Pass(n int) {
	r.seen++
	_ = chare.Send(r, r.ThisProxy().At((r.PE()+1)%r.NumPEs()), (*ringer).Pass, n+1)
}

func init() {
	chare.Register[ringMain]()
	chare.Register[ringer]()
}

// TestKillOneOfThreeProcesses kills node 2 of a three-process job while
// messages flow between all of them: every other node must stop within
// 10 s, with a non-zero exit code and an error naming the lost node and
// its PEs.
func TestKillOneOfThreeProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("launches processes")
	}
	var rt *actor.Runtime
	var killed time.Time
	code, err := chare.Run(chare.Config{PEs: 6, Nodes: 3, Launch: jobtest.Launch(t), Timeout: 60 * time.Second},
		func(m *ringMain, _ []string) {
			rt = chare.PEOf(m).Job().Runtime()
			g, err := group.New[ringer](m)
			if err != nil {
				m.Abort(err)
				return
			}
			for i := 0; i < 6; i++ {
				_ = chare.Send(m, g.At(i), (*ringer).Pass, 0)
			}
			// The rings cross the processes and never end by themselves:
			// only the kill of node 2 ends the job.
			pids := rt.Pids()
			if len(pids) != 2 {
				m.Abort(errNodes(len(pids)))
				return
			}
			killed = time.Now()
			_ = syscall.Kill(pids[1], syscall.SIGKILL)
		})
	jobtest.ExitNode(code)
	require.NotZero(t, code)
	require.Error(t, err)
	require.Regexp(t, `lost node 2 \(PEs 4\.\.5`, err.Error())
	require.Less(t, time.Since(killed), 10*time.Second, "node 0 took too long to stop")
	// Node 1 stopped as well (Run reaps the launched nodes), with a
	// non-zero status; node 2 was killed.
	res := rt.LaunchedResults()
	require.Len(t, res, 2)
	require.Error(t, res[0], "node 1 must end with a non-zero status")
	require.Error(t, res[1], "node 2 was killed")
}

type nodesErr int

func (n nodesErr) Error() string { return "expected 2 launched nodes" }

func errNodes(n int) error { return nodesErr(n) }
