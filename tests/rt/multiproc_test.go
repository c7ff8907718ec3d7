package rt_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/group"
)

// The suite across processes: TestSuiteAcrossProcesses runs this test
// binary again with CHARM_TEST_NODES set, so that every job is split
// between that many processes (see runJob): the whole suite as 2
// processes (2 × 2 for the jobs of 4 PEs), and the tests of acrossFour as
// 4 processes (4 × 1 for the jobs of 4 PEs). A job of fewer PEs than
// processes is skipped; so are the tests that need one process, each
// saying why (inProcessOnly).

// acrossSkip lists the tests that the cross-process runs leave out
// although they would pass, and why.
var acrossSkip = []struct{ test, why string }{
	{"TestBadInput", "its mistakes are caught on the sending PE, before anything leaves it: " +
		"across processes it would repeat the one-process run at the cost of some fifty launches " +
		"(TestBadInputAtDestination covers the mistakes that do cross)"},
}

// acrossFour lists the tests that also run as 4 processes: one of each
// kind of collection, callbacks, reductions (several in flight, sections),
// quiescence and completion detection, FIFO delivery, futures and exits
// from every node. Their jobs of fewer than 4 PEs are skipped.
var acrossFour = []string{
	"TestSmokeHelloSum",
	"TestMigrationStorm", // elements cross between four processes
	"TestCheckpointRestart",
	"TestArrayShapes", // more PEs than elements: some nodes have none
	"TestCallbacks",
	"TestSingletonOnEachPE",
	"TestGroupLocalBranch",
	"TestNodeGroup",
	"TestDelegateFromElements",
	"TestReductionsInOrder",
	"TestSectionReductions",
	"TestQuiescenceAfterChains",
	"TestStartCompletionDetectsAllConsumed",
	"TestDeliveryArrayAllToAll",
	"TestFutureInThreadedEntry",
	"TestExitFromAnyPE",
	"TestJobsInSequence",
	"TestConstructorSendsToOwnCollection", // constructors greet members in other processes
}

// TestJobsInSequence runs several jobs in one test function and in nested
// subtests. Across processes each job launches its own nodes, which must
// join that job (not the first one that the test function runs again in
// them) and end with it.
func TestJobsInSequence(t *testing.T) {
	const pes = 4
	job := func(t *testing.T, k int) {
		t.Helper()
		code := run(t, pes, func(m *tmain, _ []string) {
			inJob.Equal(testNodes, chare.PEOf(m).Job().Runtime().NumNodes(), "processes in job %d", k)
			g, err := group.New[grp](m)
			inJob.NoError(err)
			for range k {
				inJob.NoError(chare.Send(m, g, (*grp).Hit, grpHit{}))
			}
			got := grpReport(m, g)
			inJob.Len(got, pes)
			for pe, st := range got {
				inJob.Equal(k, st.Hits, "branch %d in job %d", pe, k)
			}
			m.Exit(10 + k)
		})
		require.Equal(t, 10+k, code, "job %d", k)
	}
	job(t, 1)
	job(t, 2)
	t.Run("nested", func(t *testing.T) {
		job(t, 3)
		t.Run("deeper", func(t *testing.T) {
			job(t, 4)
			job(t, 5)
		})
	})
	job(t, 6)
}

func TestSuiteAcrossProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the suite again as several processes")
	}
	if testNodes > 1 || chare.IsLaunchedNode() {
		t.Skip("this run is already across processes")
	}
	var skip []string
	for _, s := range acrossSkip {
		skip = append(skip, regexp.QuoteMeta(s.test))
	}
	t.Run("2nodes", func(t *testing.T) {
		out := runSuite(t, 2, share2Nodes, "-test.skip=^("+strings.Join(skip, "|")+")$")
		for _, s := range acrossSkip {
			mustPass(t, !strings.Contains(out, "=== RUN   "+s.test+"\n"), out, "%s ran across processes", s.test)
		}
	})
	t.Run("4nodes", func(t *testing.T) {
		out := runSuite(t, 4, share4Nodes, "-test.run=^("+strings.Join(acrossFour, "|")+")$")
		for _, name := range acrossFour {
			mustPass(t, strings.Contains(out, "--- PASS: "+name+" "), out, "%s did not run as 4 processes", name)
		}
	})
}

// The time a run across processes may take is a share of what is left of
// this test binary's (-timeout; CI gives 15m, go test 10m by default):
// unloaded, the suite takes 2–3 minutes as 2 processes and about a third
// of that as 4 (every job launches its processes), and more than twice as
// long when other work keeps the cores busy. A fixed limit either fails a
// busy machine or waits long for a hang; a share of the deadline lets a
// slow run finish while a hung one still ends in time to dump its
// goroutines and to leave the tests after this one their turn.
const (
	share2Nodes   = 0.6              // of what is left, for the 2-process run (the 4-process one follows)
	share4Nodes   = 0.8              // of what is left then, for the 4-process run
	suiteReserve  = 30 * time.Second // kept back for the dump and the later tests
	minSuiteLimit = time.Minute      // less than this cannot run the suite
	noDeadline    = 30 * time.Minute // the limit under -timeout 0 (no deadline)
)

// suiteLimit is the time a run across processes may take: share of left,
// the time to the deadline (if hasDeadline), after suiteReserve. It is an
// error if that is less than minSuiteLimit.
func suiteLimit(left time.Duration, hasDeadline bool, share float64) (time.Duration, error) {
	if !hasDeadline {
		return noDeadline, nil
	}
	limit := time.Duration(float64(left-suiteReserve) * share)
	if limit < minSuiteLimit {
		return 0, fmt.Errorf("%v left before the test deadline gives the run %v, less than %v: raise -timeout",
			left.Round(time.Second), max(0, limit).Round(time.Second), minSuiteLimit)
	}
	return limit, nil
}

// runSuite runs this test binary with every job split between nodes
// processes, within share of the time left (suiteLimit), requires it to
// pass, and returns its output (printed if it fails).
func runSuite(t *testing.T, nodes int, share float64, args ...string) string {
	t.Helper()
	d, ok := t.Deadline()
	limit, err := suiteLimit(time.Until(d), ok, share)
	require.NoError(t, err, "the suite as %d processes", nodes)
	ctx, cancel := context.WithTimeout(context.Background(), limit+10*time.Second)
	defer cancel()
	// -test.timeout makes a hang dump the goroutines before the context
	// kills the run.
	args = append([]string{"-test.v", "-test.count=1", "-test.timeout=" + limit.String()}, args...)
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d", envTestNodes, nodes))
	start := time.Now()
	b, err := cmd.CombinedOutput()
	out := string(b)
	mustPass(t, err == nil, out, "the suite as %d processes failed: %v", nodes, err)
	// The launched nodes are not tests: a race that one of them finds
	// shows only in the output.
	mustPass(t, !strings.Contains(out, "WARNING: DATA RACE"), out, "a data race as %d processes", nodes)
	t.Logf("as %d processes: %d tests and subtests passed, %d skipped, in %v (limit %v)", nodes,
		strings.Count(out, "--- PASS: "), strings.Count(out, "--- SKIP: "), time.Since(start).Round(time.Millisecond), limit.Round(time.Second))
	return out
}

// mustPass fails the test with the output of a run if ok is false.
func mustPass(t *testing.T, ok bool, out, format string, args ...any) {
	t.Helper()
	if !ok {
		t.Fatalf("%s\n--- output ---\n%s", fmt.Sprintf(format, args...), out)
	}
}

func TestSuiteLimit(t *testing.T) {
	for _, c := range []struct {
		name        string
		left        time.Duration
		hasDeadline bool
		share       float64
		want        time.Duration
		err         string
	}{
		{"no deadline", 0, false, share2Nodes, noDeadline, ""},
		{"CI's 15m, 2 processes", 15 * time.Minute, true, 0.6, time.Duration(0.6 * float64(14*time.Minute+30*time.Second)), ""},
		{"4 processes after", 6*time.Minute + 30*time.Second, true, 0.8, time.Duration(0.8 * float64(6*time.Minute)), ""},
		{"just enough", time.Minute + suiteReserve, true, 1, time.Minute, ""},
		{"too little", 90 * time.Second, true, 0.6, 0, "1m30s left before the test deadline gives the run 36s, less than 1m0s: raise -timeout"},
		{"past the deadline", -time.Second, true, 0.6, 0, "gives the run 0s"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := suiteLimit(c.left, c.hasDeadline, c.share)
			if c.err != "" {
				require.ErrorContains(t, err, c.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, c.want, got)
		})
	}
}
