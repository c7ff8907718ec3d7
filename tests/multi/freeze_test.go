package multi

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/actor"
	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/group"
	"github.com/charmgo/charm/internal/jobtest"
)

// A frozen node (SIGSTOP) is alive for the kernel, so its connections stay
// open: only its silence tells the others. Every node must exit non-zero
// within 5 s of the node falling silent (3 s of silence and the exit),
// naming the lost node as soon as it is found.
const freezeBound = 5 * time.Second

// ringJob starts rings of messages across 3 nodes and 6 PEs that never
// end by themselves, then runs then on node 0's main function.
func ringJob(t *testing.T, onEnd func(int, error), then func(m *ringMain, rt *actor.Runtime)) (int, error) {
	return chare.Run(chare.Config{PEs: 6, Nodes: 3, Launch: jobtest.Launch(t), Timeout: 60 * time.Second, OnEnd: onEnd},
		func(m *ringMain, _ []string) {
			rt := chare.PEOf(m).Job().Runtime()
			g, err := group.New[ringer](m)
			if err != nil {
				m.Abort(err)
				return
			}
			for i := 0; i < 6; i++ {
				_ = chare.Send(m, g.At(i), (*ringer).Pass, 0)
			}
			then(m, rt)
		})
}

// TestFreezeOneOfThreeProcesses stops node 2 with SIGSTOP: node 0 must
// name it at once and end within the bound, with node 1 ended and node 2
// killed.
func TestFreezeOneOfThreeProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("launches processes")
	}
	var rt *actor.Runtime
	var frozen time.Time
	type end struct {
		at  time.Time
		err error
	}
	ended := make(chan end, 1)
	code, err := ringJob(t, func(_ int, err error) { ended <- end{time.Now(), err} }, func(m *ringMain, r *actor.Runtime) {
		rt = r
		pids := rt.Pids()
		if len(pids) != 2 {
			m.Abort(errNodes(len(pids)))
			return
		}
		frozen = time.Now()
		_ = syscall.Kill(pids[1], syscall.SIGSTOP)
	})
	jobtest.ExitNode(code)
	took := time.Since(frozen)
	require.NotZero(t, code)
	require.Error(t, err)
	require.Regexp(t, `lost node 2 \(PEs 4\.\.5`, err.Error())
	e := <-ended // Run returns after OnEnd
	require.Regexp(t, `lost node 2 \(PEs 4\.\.5`, e.err.Error(), "OnEnd names the lost node")
	require.Less(t, e.at.Sub(frozen), freezeBound, "node 0 named the lost node too late")
	t.Logf("node 0 named node 2 %v and ended %v after the freeze", e.at.Sub(frozen).Round(time.Millisecond), took.Round(time.Millisecond))
	require.Less(t, took, freezeBound, "node 0 took too long to end the job (node 1 had ended before Run returned)")
	res := rt.LaunchedResults()
	require.Len(t, res, 2)
	require.Error(t, res[0], "node 1 must end with a non-zero status")
	require.Error(t, res[1], "node 2, frozen, must have been killed")
}

// TestFreezeNodeZero stops node 0 with SIGSTOP. The job runs in a process
// of its own (node 0, launching nodes 1 and 2); this test reads what the
// nodes print, stops node 0, and checks that nodes 1 and 2 name node 0 and
// exit within the bound; resumed, node 0 ends non-zero too.
func TestFreezeNodeZero(t *testing.T) {
	const env = "CHARM_TEST_FREEZE0"
	if os.Getenv(env) != "" || chare.IsLaunchedNode() {
		freezeZeroNode(t)
		return
	}
	if testing.Short() {
		t.Skip("launches processes")
	}
	cmd := jobtest.Command(nil, t)
	cmd.Env = append(os.Environ(), env+"=1")
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = cmd.Stdout
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	type line struct {
		at   time.Time
		text string
	}
	lines := make(chan line, 256)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- line{time.Now(), sc.Text()}
		}
		close(lines)
	}()
	var log []string
	next := func(within time.Duration, what string) line {
		t.Helper()
		select {
		case l, ok := <-lines:
			require.True(t, ok, "the output ended while waiting for %s; so far:\n%s", what, strings.Join(log, "\n"))
			log = append(log, l.text)
			return l
		case <-time.After(within):
			t.Fatalf("no %s within %v; so far:\n%s", what, within, strings.Join(log, "\n"))
		}
		return line{}
	}
	var kids []int
	for kids == nil {
		l := next(60*time.Second, "pids line from node 0")
		if f := strings.Fields(l.text); len(f) == 3 && f[0] == "pids" {
			for _, s := range f[1:] {
				p, err := strconv.Atoi(s)
				require.NoError(t, err)
				kids = append(kids, p)
			}
		}
	}
	frozen := time.Now()
	require.NoError(t, syscall.Kill(cmd.Process.Pid, syscall.SIGSTOP))
	named := map[int]bool{}
	for len(named) < 2 {
		l := next(freezeBound-time.Since(frozen), "end report from nodes 1 and 2")
		var n, code int
		if _, err := fmt.Sscanf(l.text, "node %d ended code=%d", &n, &code); err == nil {
			require.NotZero(t, code, "node %d", n)
			require.Regexp(t, `lost node 0 \(PEs 0\.\.1`, l.text)
			require.Less(t, l.at.Sub(frozen), freezeBound, "node %d named node 0 too late", n)
			t.Logf("node %d named node 0 %v after the freeze", n, l.at.Sub(frozen).Round(time.Millisecond))
			named[n] = true
		}
	}
	// Their processes end too (zombies: their parent, node 0, is stopped).
	for _, p := range kids {
		require.Eventually(t, func() bool { return exited(p) }, freezeBound-time.Since(frozen), 10*time.Millisecond,
			"node process %d still runs %v after node 0 froze", p, time.Since(frozen))
	}
	require.NoError(t, syscall.Kill(cmd.Process.Pid, syscall.SIGCONT))
	waited := make(chan error, 1)
	report := make(chan string, 1)
	go func() {
		var end string
		for l := range lines { // node 0 writes its end report
			if strings.HasPrefix(l.text, "node 0 ended") {
				end = l.text
			}
		}
		report <- end
		waited <- cmd.Wait()
	}()
	select {
	case err := <-waited:
		require.Error(t, err, "node 0 must end non-zero once resumed")
	case <-time.After(10 * time.Second):
		t.Fatal("node 0 did not end within 10 s of resuming")
	}
	// Resumed, node 0 says what happened: nodes 1 and 2 ended the job (an
	// exit frame waits in its sockets), exited, or closed their
	// connections. It must not call them silent: it was the one that did
	// not run.
	end := <-report
	require.NotEmpty(t, end, "node 0 printed no end report")
	require.NotRegexp(t, `lost node [12] .*no frame`, end)
	require.Regexp(t, `lost node 0 |exited before the job ended|its connection closed`, end)
	t.Logf("node 0, resumed: %s", end)
}

// freezeZeroNode is the job of TestFreezeNodeZero, on every node: node 0
// prints the pids of the others; each node prints its end at once.
func freezeZeroNode(t *testing.T) {
	env, _, _ := actor.NodeFromEnv() // node 0: the zero value
	code, _ := ringJob(t, func(code int, err error) {
		fmt.Printf("node %d ended code=%d: %v\n", env.Node, code, err)
	}, func(m *ringMain, rt *actor.Runtime) {
		p := rt.Pids()
		if len(p) != 2 {
			m.Abort(errNodes(len(p)))
			return
		}
		fmt.Printf("pids %d %d\n", p[0], p[1])
	})
	os.Exit(code)
}

// exited reports whether process p has ended (gone, or a zombie).
func exited(p int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p))
	if err != nil {
		return true
	}
	// pid (comm) state ...: the state follows the last ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] == 'Z'
}
