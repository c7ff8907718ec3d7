package actor

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	pa "github.com/asynkron/protoactor-go/actor"

	"github.com/charmgo/charm/actor/wire"
)

// Config describes the PEs of a job.
type Config struct {
	// PEs is the number of processing elements; 0 means 1.
	PEs int
	// Arity of the spanning trees (broadcast, reductions, waves); 0 means DefaultArity.
	Arity int
	// Logger receives the runtime's log lines; nil keeps it quiet.
	Logger *slog.Logger
	// Setup, if set, runs for every local PE before any message is
	// delivered; upper layers attach their per-PE state there.
	Setup func(pe *PE)
	// MaxInFlight bounds, in messages (a Sized run of messages counts by
	// its bytes, EnvelopeBytes a message), the backlog of each PE's mailbox
	// that other PEs of this process may build: a sender that finds its
	// receiver's backlog at the bound waits until it has halved (see
	// credit.go). 0 means DefaultMaxInFlight; a negative value, no bound.
	// The memory of messages in flight inside a process is then at most
	// about PEs × (MaxInFlight + PEs × 256) envelopes.
	MaxInFlight int
	// MaxRemoteInFlight bounds, in bytes of frames, what the PEs of this
	// process may have sent to another process and that process has not
	// yet processed: a sender that finds the bound reached waits until
	// half of it is processed (see remoteCredit). 0 means
	// DefaultMaxRemoteInFlight; a negative value, no bound. Every node of
	// a job must be given the same value (chare.Run does): a receiver
	// acknowledges what it processed in steps of a quarter of its own.
	MaxRemoteInFlight int
	// MaxRemoteMessage bounds, in bytes, a frame between processes: a
	// message (with the frame around it) longer than wire.MaxFrame
	// travels in fragments that the receiver joins, and one longer than
	// this bound is refused by its sender, and by its receiver, with an
	// error that ends the job. 0 means DefaultMaxRemoteMessage; a value
	// below wire.MaxFrame (a frame of many small messages is that long) is
	// an error. The receiver holds at most one partly received
	// frame per PE of each other node (so, per sending node, its PEs ×
	// this bound, in the worst case). Give every node the same value.
	MaxRemoteMessage int
	// Node, if set, makes this process one node of a job of several; the
	// PEs are split between the nodes. Nil means one process.
	Node *NodeConfig
	// Wait is what a PE does when its mailbox runs empty; the zero value
	// is WaitActive. A policy this version does not know is an error.
	// In a job of several processes (Node set) PEs wait as under
	// WaitPassive whatever the policy.
	Wait WaitPolicy
}

// Runtime is the set of PEs of one process and the job state they share.
type Runtime struct {
	cfg  Config
	sys  *pa.ActorSystem // the links between processes; nil in a job of one process
	pes  []*PE
	log  *slog.Logger
	tree PETree

	done     chan struct{}
	exitOnce sync.Once
	exitCode int
	exitErr  error
	stopped  atomic.Bool
	bound    int64 // of a mailbox's backlog; 0 for none
	foldAt   int64 // foldAt(bound)

	node   *nodeState // nil in a single-process job
	prefix string     // names this job's actors in a shared actor system
	kids   *children  // the nodes this one launched

	// awake counts the PEs of this process whose goroutine runs (see
	// mailbox.run): written at each park and wake, so on a cache line of
	// its own, away from the fields every PE reads at each message.
	_     [64]byte
	awake atomic.Int32
	_     [60]byte
	// goroutines counts the PE goroutines and their threads' goroutines
	// (threadWorker) that have not returned.
	goroutines sync.WaitGroup
}

// ErrStopped is returned by operations attempted after the job ended.
var ErrStopped = errors.New("actor: the job has stopped")

// Start creates the PEs and then runs boot as a message on PE 0.
func Start(cfg Config, boot func(pe *PE)) (*Runtime, error) {
	if cfg.PEs == 0 {
		cfg.PEs = 1
	}
	if cfg.PEs < 0 {
		return nil, fmt.Errorf("actor: bad number of PEs %d: want at least 1", cfg.PEs)
	}
	if cfg.MaxRemoteMessage < 0 || cfg.MaxRemoteMessage > 0 && cfg.MaxRemoteMessage < wire.MaxFrame {
		// The bound is on frames: one of many small messages is up to
		// wire.MaxFrame long, so a lower bound would refuse ordinary traffic.
		return nil, fmt.Errorf("actor: bad MaxRemoteMessage %d: want 0 (the default, %d) or a number of bytes of at least %d (wire.MaxFrame)",
			cfg.MaxRemoteMessage, DefaultMaxRemoteMessage, wire.MaxFrame)
	}
	if cfg.Wait != WaitPassive && cfg.Wait != WaitActive {
		return nil, fmt.Errorf("actor: bad Wait %v: want WaitPassive or WaitActive", cfg.Wait)
	}
	if cfg.MaxRemoteMessage == 0 {
		cfg.MaxRemoteMessage = DefaultMaxRemoteMessage
	}
	if cfg.Arity <= 0 {
		cfg.Arity = DefaultArity
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	rt := &Runtime{
		cfg:  cfg,
		log:  log,
		tree: PETree{Root: 0, N: cfg.PEs, Arity: cfg.Arity},
		done: make(chan struct{}),
	}
	rt.bound = rt.inFlightBound()
	rt.foldAt = foldAt(rt.bound)
	// A job of one process needs no actor system: its PEs' mailboxes are
	// their own (dispatch.go); only the links between processes are
	// protoactor-go's.
	if cfg.Node != nil {
		nc := *cfg.Node
		if nc.Listen == "" {
			nc.Listen = "127.0.0.1:0"
		}
		ep, err := sharedEndpoint(nc, cfg.Logger)
		if err != nil {
			return nil, fmt.Errorf("actor: node %d: %w", nc.Node, err)
		}
		rt.sys, rt.prefix = ep.sys, jobPrefix(nc.Token)
		addToken(nc.Token)
	}
	lo, hi := 0, cfg.PEs
	if cfg.Node != nil {
		lo, hi = PERange(cfg.Node.Node, cfg.Node.Nodes, cfg.PEs)
	}
	rt.pes = make([]*PE, cfg.PEs) // nil for the PEs of other nodes
	for i := lo; i < hi; i++ {
		rt.pes[i] = newPE(rt, i)
		if cfg.Setup != nil {
			cfg.Setup(rt.pes[i])
		}
	}
	for i := lo; i < hi; i++ {
		pe := rt.pes[i]
		pe.mb = newMailbox(&rt.awake, cfg.spins())
		rt.goroutines.Add(1)
		go func() {
			defer rt.goroutines.Done()
			defer pe.releaseWorkers() // also if a handler ends the goroutine (runtime.Goexit)
			pe.mb.run(pe.handleWoke, pe.idle)
		}()
	}
	if cfg.Node != nil {
		if err := rt.startNode(*cfg.Node); err != nil {
			rt.finish(1, err)
			rt.shutdown()
			return nil, err
		}
	}
	if lo == 0 {
		rt.pes[0].post(extMsg{funcMsg(boot)})
	}
	return rt, nil
}

// NumPEs returns the number of PEs in the job.
func (rt *Runtime) NumPEs() int { return len(rt.pes) }

// PE returns the local PE numbered i, or nil if it is not in this process.
func (rt *Runtime) PE(i int) *PE {
	if i < 0 || i >= len(rt.pes) {
		return nil
	}
	return rt.pes[i]
}

// IsLocal reports whether PE i lives in this process.
func (rt *Runtime) IsLocal(i int) bool { return rt.PE(i) != nil }

// NumNodes returns the number of processes in the job.
func (rt *Runtime) NumNodes() int {
	if rt.node == nil {
		return 1
	}
	return rt.node.cfg.Nodes
}

// NodeOf returns the node (process) that hosts PE pe.
func (rt *Runtime) NodeOf(pe int) int {
	if rt.node == nil {
		return 0
	}
	return rt.node.nodeOf[pe]
}

// FirstPE returns the lowest-numbered PE of a node.
func (rt *Runtime) FirstPE(node int) int {
	if rt.node == nil {
		return 0
	}
	lo, _ := PERange(node, rt.node.cfg.Nodes, len(rt.pes))
	return lo
}

// Tree is the spanning tree over all PEs rooted at PE 0.
func (rt *Runtime) Tree() PETree { return rt.tree }

// Logger returns the runtime's logger.
func (rt *Runtime) Logger() *slog.Logger { return rt.log }

// Done is closed when the job ends.
func (rt *Runtime) Done() <-chan struct{} { return rt.done }

// Result returns the job's exit code and, for an aborted job, the reason,
// once Done is closed (zero and nil before): what Wait returns, known
// before the PEs are stopped and the other nodes waited for.
func (rt *Runtime) Result() (int, error) {
	select {
	case <-rt.done:
		return rt.exitCode, rt.exitErr
	default:
		return 0, nil
	}
}

// Stopped reports whether the job has ended.
func (rt *Runtime) Stopped() bool { return rt.stopped.Load() }

// spins reports whether the PEs of a runtime of cfg spin on under
// WaitActive: only in a job of one process. In a job of several, other
// processes' messages arrive through the network poller, which a P runs
// only when it has no goroutine to run, so a PE spinning for them would
// delay them.
func (cfg Config) spins() bool { return cfg.Wait == WaitActive && cfg.Node == nil }

// WaitPolicy returns the wait policy the runtime was given (Config.Wait);
// in a job of several processes its PEs wait as under WaitPassive
// whatever it says.
func (rt *Runtime) WaitPolicy() WaitPolicy { return rt.cfg.Wait }

// Exit ends the job with the given exit code. The first call wins.
func (rt *Runtime) Exit(code int) { rt.finish(code, nil) }

// Abort ends the job with exit code 1 and the given error. The first call
// (of Exit or Abort) wins.
func (rt *Runtime) Abort(err error) {
	rt.log.Error("job aborted", "err", err)
	rt.finish(1, err)
}

func (rt *Runtime) finish(code int, err error) {
	rt.exitOnce.Do(func() {
		rt.exitCode, rt.exitErr = code, err
		rt.stopped.Store(true)
		if rt.node != nil {
			// Before done closes, so that Wait knows how many exit frames
			// to see acknowledged.
			rt.broadcastExit(code, err)
		}
		close(rt.done)
	})
}

// Wait blocks until the job ends, stops the PEs and returns the exit code
// and, for an aborted job, the reason.
func (rt *Runtime) Wait() (int, error) {
	<-rt.done
	rt.shutdown()
	return rt.exitCode, rt.exitErr
}

func (rt *Runtime) shutdown() {
	for _, pe := range rt.pes {
		if pe != nil && pe.mb != nil {
			pe.mb.close()
		}
	}
	if rt.node != nil {
		rt.nodeShutdown()
	}

	if rt.kids != nil {
		// The others were told the job ended (exit frames): after a
		// normal end they may still be finishing their output; after an
		// abort there is nothing left for them to do.
		grace := 10 * time.Second
		if rt.exitCode != 0 {
			grace = 2 * time.Second
		}
		rt.kids.reap(grace, func(n int) bool { return rt.node.lost[n].Load() })
	}
}

// funcMsg runs a function on the destination PE; it is a control message.
type funcMsg func(pe *PE)

func (f funcMsg) Deliver(pe *PE) { f(pe) }
func (funcMsg) system()          {}
