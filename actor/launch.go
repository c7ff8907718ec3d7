package actor

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"time"
)

// Launching a job of several processes on one machine (charmrun ++local):
// node 0 listens, then starts nodes 1..M-1 as copies of the same program
// with the same arguments; the environment tells each copy its node
// number, node 0's address and the job's token. On several hosts, each
// node is started by hand with a node list instead (see NodeConfig).

const (
	envNode  = "CHARMGO_NODE"
	envNodes = "CHARMGO_NODES"
	envJoin  = "CHARMGO_JOIN"
	envToken = "CHARMGO_TOKEN"
	envPEs   = "CHARMGO_PES"
)

// NodeFromEnv returns the node configuration and PE count of a process
// that a local launch started, and false for any other process.
func NodeFromEnv() (NodeConfig, int, bool) {
	v := os.Getenv(envNode)
	if v == "" {
		return NodeConfig{}, 0, false
	}
	node, err1 := strconv.Atoi(v)
	nodes, err2 := strconv.Atoi(os.Getenv(envNodes))
	pes, err3 := strconv.Atoi(os.Getenv(envPEs))
	if err1 != nil || err2 != nil || err3 != nil {
		return NodeConfig{}, 0, false
	}
	return NodeConfig{Node: node, Nodes: nodes, Join: os.Getenv(envJoin), Token: os.Getenv(envToken)}, pes, true
}

// NewToken returns a random job token.
func NewToken() string {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on supported systems
	}
	return hex.EncodeToString(b)
}

// children are the processes of nodes 1..M-1 of a local launch.
type children struct {
	mu   sync.Mutex
	cmds []*exec.Cmd
	done []chan struct{}
	errs []error // how each ended (cmd.Wait), once done is closed
}

// launch starts nodes 1..M-1 running argv, and aborts the job if one of
// them ends before the job does.
func (rt *Runtime) launch(argv []string, nc NodeConfig, addr string) error {
	if len(argv) == 0 {
		return fmt.Errorf("actor: no program to launch the other nodes with")
	}
	ch := &children{}
	rt.kids = ch
	for n := 1; n < nc.Nodes; n++ {
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Stdout, cmd.Stderr, cmd.Stdin = os.Stdout, os.Stderr, nil
		cmd.Env = append(os.Environ(),
			envNode+"="+strconv.Itoa(n), envNodes+"="+strconv.Itoa(nc.Nodes),
			envJoin+"="+addr, envToken+"="+nc.Token, envPEs+"="+strconv.Itoa(rt.cfg.PEs))
		if nc.NoLocalSocket {
			cmd.Env = append(cmd.Env, EnvLocalSocket+"=off")
		}
		if err := cmd.Start(); err != nil {
			return fmt.Errorf("actor: starting node %d (%s): %w", n, argv[0], err)
		}
		done := make(chan struct{})
		ch.mu.Lock()
		ch.cmds = append(ch.cmds, cmd)
		ch.done = append(ch.done, done)
		ch.errs = append(ch.errs, nil)
		ch.mu.Unlock()
		go func(n int) {
			err := cmd.Wait()
			ch.mu.Lock()
			ch.errs[n-1] = err
			ch.mu.Unlock()
			close(done)
			rt.node.markLost(n)
			if !rt.Stopped() {
				lo, hi := PERange(n, nc.Nodes, rt.cfg.PEs)
				rt.Abort(fmt.Errorf("actor: lost node %d (PEs %d..%d, process %d): it exited before the job ended (%v)", n, lo, hi-1, cmd.Process.Pid, err))
			}
		}(n)
	}
	return nil
}

// reap waits for the launched nodes to end after the job did, and kills
// those that do not within the grace period. A node found lost (silent:
// frozen, say) is killed at once: waiting for it would only delay the end
// of the job by the whole grace period.
func (ch *children) reap(grace time.Duration, lost func(node int) bool) {
	ch.mu.Lock()
	dones, cmds := ch.done, ch.cmds
	ch.mu.Unlock()
	for i, d := range dones {
		if lost(i + 1) {
			select {
			case <-d:
			default:
				_ = cmds[i].Process.Kill()
			}
		}
	}
	deadline := time.After(grace)
	for i, d := range dones {
		select {
		case <-d:
		case <-deadline:
			_ = cmds[i].Process.Kill()
			<-d
		}
	}
}

// Pids returns the process IDs of the launched nodes (for tests that kill
// one).
func (rt *Runtime) Pids() []int {
	if rt.kids == nil {
		return nil
	}
	rt.kids.mu.Lock()
	defer rt.kids.mu.Unlock()
	var ps []int
	for _, c := range rt.kids.cmds {
		ps = append(ps, c.Process.Pid)
	}
	return ps
}

// LaunchedResults returns, after Wait, how each launched node's process
// ended (nil for exit status 0), in node order from node 1.
func (rt *Runtime) LaunchedResults() []error {
	if rt.kids == nil {
		return nil
	}
	rt.kids.mu.Lock()
	defer rt.kids.mu.Unlock()
	return append([]error(nil), rt.kids.errs...)
}
