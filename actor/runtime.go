package actor

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"

	pa "github.com/asynkron/protoactor-go/actor"
)

// Config describes the PEs of a job.
type Config struct {
	// PEs is the number of processing elements; 0 means 1.
	PEs int
	// Arity of the spanning trees (broadcast, reductions, waves); 0 means DefaultArity.
	Arity int
	// Logger receives the runtime's log lines; nil keeps it quiet.
	Logger *slog.Logger
	// Setup, if set, runs for every PE before any message is delivered;
	// upper layers attach their per-PE state there.
	Setup func(pe *PE)
}

// Runtime is the set of PEs of one process and the job state they share.
type Runtime struct {
	cfg  Config
	sys  *pa.ActorSystem
	pes  []*PE
	log  *slog.Logger
	tree PETree

	done     chan struct{}
	exitOnce sync.Once
	exitCode int
	exitErr  error
	stopped  atomic.Bool
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
	if cfg.Arity <= 0 {
		cfg.Arity = DefaultArity
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	quiet := func(*pa.ActorSystem) *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
	if cfg.Logger != nil {
		quiet = func(*pa.ActorSystem) *slog.Logger { return cfg.Logger.With("lib", "protoactor") }
	}
	rt := &Runtime{
		cfg:  cfg,
		sys:  pa.NewActorSystem(pa.WithLoggerFactory(quiet)),
		log:  log,
		tree: PETree{Root: 0, N: cfg.PEs, Arity: cfg.Arity},
		done: make(chan struct{}),
	}
	rt.pes = make([]*PE, cfg.PEs)
	for i := range rt.pes {
		rt.pes[i] = newPE(rt, i)
		if cfg.Setup != nil {
			cfg.Setup(rt.pes[i])
		}
	}
	for i, pe := range rt.pes {
		pe := pe
		pid, err := rt.sys.Root.SpawnNamed(pa.PropsFromProducer(func() pa.Actor { return pe }), fmt.Sprintf("pe-%d", i))
		if err != nil {
			rt.Abort(fmt.Errorf("actor: spawning PE %d: %w", i, err))
			return nil, rt.exitErr
		}
		pe.pid = pid
	}
	rt.pes[0].post(controlMsg{funcMsg(boot)})
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

// NumNodes returns the number of processes in the job.
func (rt *Runtime) NumNodes() int { return 1 }

// NodeOf returns the node (process) that hosts PE pe.
func (rt *Runtime) NodeOf(pe int) int { return 0 }

// FirstPE returns the lowest-numbered PE of a node.
func (rt *Runtime) FirstPE(node int) int { return 0 }

// Tree is the spanning tree over all PEs rooted at PE 0.
func (rt *Runtime) Tree() PETree { return rt.tree }

// Logger returns the runtime's logger.
func (rt *Runtime) Logger() *slog.Logger { return rt.log }

// Done is closed when the job ends.
func (rt *Runtime) Done() <-chan struct{} { return rt.done }

// Stopped reports whether the job has ended.
func (rt *Runtime) Stopped() bool { return rt.stopped.Load() }

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
		close(rt.done)
	})
}

// Wait blocks until the job ends, stops the PEs and returns the exit code
// and, for an aborted job, the reason.
func (rt *Runtime) Wait() (int, error) {
	<-rt.done
	for _, pe := range rt.pes {
		if pe.pid != nil {
			rt.sys.Root.Stop(pe.pid)
		}
	}
	rt.sys.Shutdown()
	return rt.exitCode, rt.exitErr
}

// funcMsg runs a function on the destination PE; it is a control message.
type funcMsg func(pe *PE)

func (f funcMsg) Deliver(pe *PE) { f(pe) }
func (funcMsg) system()          {}
