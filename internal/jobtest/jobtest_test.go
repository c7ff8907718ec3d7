package jobtest_test

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/internal/jobtest"
)

func TestPattern(t *testing.T) {
	require.Equal(t, "^TestHelloTwoProcesses$", jobtest.Pattern("TestHelloTwoProcesses"))
	require.Equal(t, `^TestX$/^pes=4\.n$`, jobtest.Pattern("TestX/pes=4.n"))
	require.Equal(t, `^TestX$/^a$/^b\(1\)$`, jobtest.Pattern("TestX/a/b(1)"))
}

func TestLaunch(t *testing.T) {
	t.Run("sub.1", func(t *testing.T) {
		require.Equal(t, []string{os.Args[0], `-test.run=^TestLaunch$/^sub\.1$`, "-test.count=1"}, jobtest.Launch(t))
		cmd := jobtest.Command(nil, t, "-test.v")
		require.Equal(t, []string{os.Args[0], `-test.run=^TestLaunch$/^sub\.1$`, "-test.count=1", "-test.v"}, cmd.Args)
	})
}

type nodesMain struct{ chare.Chare[nodesMain] }

func init() { chare.Register[nodesMain]() }

// countNodes is a job's start: it records how many processes and PEs the
// job has and ends it.
func countNodes(nodes, pes *int) func(*nodesMain, []string) {
	return func(m *nodesMain, _ []string) {
		*nodes = m.Here().Job().Runtime().NumNodes()
		*pes = m.NumPEs()
		m.Exit(0)
	}
}

// TestRunInProcessesAndSubtests: Run runs a job in one process or as
// several, from a test or a subtest (whose launched copies run just that
// subtest: the sibling subtest launching other nodes would hang them).
func TestRunInProcessesAndSubtests(t *testing.T) {
	for _, c := range []struct {
		name  string
		nodes int
	}{{"one", 1}, {"two", 2}, {"three", 3}} {
		t.Run(c.name, func(t *testing.T) {
			var nodes, pes int
			code, err := jobtest.Run(t, chare.Config{PEs: 3, Nodes: c.nodes, Timeout: 30 * time.Second}, countNodes(&nodes, &pes))
			require.NoError(t, err)
			require.Equal(t, 0, code)
			require.Equal(t, c.nodes, nodes, "processes of the job")
			require.Equal(t, 3, pes)
		})
	}
}
