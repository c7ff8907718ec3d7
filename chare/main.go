package chare

import (
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/charmgo/charm/actor"
)

// Config describes a job.
type Config struct {
	PEs    int      // processing elements; 0 means 1
	Args   []string // the program's own arguments, passed to the main chare
	Logger *slog.Logger
	// Timeout, if set, aborts a job that has not ended after that long
	// (tests use it so that a hang fails loudly).
	Timeout time.Duration
}

// Chare is embedded in singleton chare types, the main chare among them:
//
//	type Main struct{ chare.Chare[Main] }
type Chare[T any] struct {
	Base
}

// ThisProxy returns a proxy to the chare itself (thisProxy).
func (c *Chare[T]) ThisProxy() Proxy[T] {
	return Proxy[T]{route: Route{Kind: KindChare, Coll: c.coll.ID, PE: c.pe.ID()}}
}

// Run runs a job: it starts the PEs, creates the main chare T on PE 0 and
// runs start on it as a threaded entry method with cfg.Args. It returns when
// some PE calls Exit (with its code) or the job aborts (code 1 and the
// reason). Returning from start does not end the job.
func Run[T any](cfg Config, start func(main *T, args []string)) (int, error) {
	typ, err := register(reflectType[T]())
	if err != nil {
		return 1, err
	}
	job := &Job{args: cfg.Args}
	rt, err := actor.Start(actor.Config{
		PEs:    cfg.PEs,
		Logger: cfg.Logger,
		// Set job.rt here, before any PE runs: boot may run on PE 0
		// before Start returns.
		Setup: func(ap *actor.PE) { job.rt = ap.Runtime(); newPE(ap, job) },
	}, func(ap *actor.PE) {
		pe := peOf(ap)
		obj := new(T)
		b, ok := any(obj).(Context)
		if !ok || !isChare[T]() {
			pe.fail(fmt.Errorf("chare: the main chare type %s must embed chare.Chare[%s]", typ.Name, typ.Name))
			return
		}
		c := &Collection{ID: pe.NewCollID(), Kind: KindChare, Type: typ, Tree: []int{0}}
		c.NewLocal = func(*PE) (Part, error) { return &single{pe: 0, obj: obj}, nil }
		pe.AddCollection(c)
		b.base().Bind(pe, c, 0, obj)
		ap.Spawn(func() string { return typ.Name + " (the main function)" }, func(*actor.Thread) {
			start(obj, cfg.Args)
		})
	})
	if err != nil {
		return 1, err
	}
	if cfg.Timeout > 0 {
		t := time.AfterFunc(cfg.Timeout, func() {
			rt.Abort(fmt.Errorf("chare: the job did not end within %v", cfg.Timeout))
		})
		defer t.Stop()
	}
	return rt.Wait()
}

// Main is the whole main function of a chare program:
//
//	func main() { os.Exit(chare.Main((*App).Start)) }
//
// It takes the runtime's flags (-p N) out of the command line, runs the
// job, prints the reason if it aborted, and returns the exit code.
func Main[T any](start func(main *T, args []string)) int {
	cfg, err := ParseArgs(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	code, err := Run(cfg, start)
	if err != nil {
		fmt.Fprintln(os.Stderr, os.Args[0]+":", err)
	}
	return code
}

// ParseArgs takes the runtime's flags out of a command line and returns the
// configuration with the remaining arguments, in order, in Args. The
// runtime's flags are -p N (PEs) and -v (log to standard error); -p N and
// -p=N both work, anywhere before a "--", which ends the runtime's flags
// (it is passed on to the program).
func ParseArgs(args []string) (Config, error) {
	var cfg Config
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			cfg.Args = append(cfg.Args, args[i:]...)
			break
		}
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") {
			name = ""
		}
		switch name {
		case "p":
			if !hasVal {
				if i+1 >= len(args) {
					return cfg, fmt.Errorf("flag -p needs a number of PEs")
				}
				i++
				val = args[i]
			}
			n, err := strconv.Atoi(val)
			if err != nil || n < 1 {
				return cfg, fmt.Errorf("flag -p: bad number of PEs %q: want a whole number of at least 1", val)
			}
			cfg.PEs = n
		case "v":
			cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
		default:
			cfg.Args = append(cfg.Args, a)
		}
	}
	return cfg, nil
}

// single is the part of a singleton chare on its PE.
type single struct {
	pe  int
	obj any
}

func (s *single) Locate(any) (int, error)           { return s.pe, nil }
func (s *single) Deliver(pe *PE, e Envelope, _ any) { pe.Invoke(s.obj, e) }
func (s *single) DeliverAll(pe *PE, e Envelope)     { pe.Invoke(s.obj, e) }
func (s *single) Object(any) any                    { return s.obj }
