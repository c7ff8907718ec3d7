package core

import (
	"fmt"
	"log/slog"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/charmgo/charm/actor"
	"github.com/charmgo/charm/actor/launcher"
)

// Config describes a job.
type Config struct {
	PEs    int      // processing elements; 0 means 1
	Args   []string // the program's own arguments, passed to the main chare
	Logger *slog.Logger
	// Timeout, if set, aborts a job that has not ended after that long
	// (tests use it so that a hang fails loudly).
	Timeout time.Duration
	// Nodes, if more than 1, runs the job as that many processes on this
	// machine (charmrun ++local): this process is node 0 and starts the
	// others by running Launch (by default, this program with its
	// arguments). The PEs are split between the nodes.
	Nodes  int
	Launch []string
	// Node, if set, makes this process one node of a job whose nodes are
	// started by hand, on one or several hosts (see ParseArgs: -nodelist).
	Node *actor.NodeConfig
	// TLS, if set, secures the connections of a local launch (Nodes).
	TLS *actor.TLSFiles
	// Restart, if set, restarts the program from the checkpoint in this
	// directory (see Checkpoint) instead of creating the main chare and
	// running start.
	Restart string
	// Trace, if set, writes the run as a timeline to this file (the
	// runtime flag -trace FILE sets Flags["trace"], which has the same
	// effect); see package trace.
	Trace string
	// TraceMax is the most events each process of a traced job records
	// (the runtime flag -tracemax N); 0 means trace.EventLimit. When it
	// is reached, recording stops, and the trace and standard error say
	// so.
	TraceMax int
	// Flags holds the values of flags that other packages registered
	// with RegisterFlag (lb: -balancer, -lbperiod...), by name.
	Flags map[string]string
	// OnEnd, if set, is called once, as soon as the job ends, with what
	// Run will return: before Run stops the PEs and waits for the other
	// nodes (which takes up to a few seconds when a node is lost). Main
	// prints an abort's reason with it, so that a lost node is named at
	// once.
	OnEnd func(code int, err error)
	// MaxInFlight bounds the backlog of messages that the PEs of this
	// process may post to one PE's mailbox: a sender that finds it full
	// waits (its PE processes nothing meanwhile) until half of it has been
	// processed; no message is dropped. 0 means actor.DefaultMaxInFlight,
	// a negative value no bound. See actor.Config.MaxInFlight.
	MaxInFlight int
	// MaxRemoteInFlight bounds, in bytes, the messages that the PEs of
	// this process have sent to another process and that it has not
	// processed yet: a sender at the bound waits; nothing is dropped.
	// 0 means actor.DefaultMaxRemoteInFlight, a negative value no bound.
	// See actor.Config.MaxRemoteInFlight.
	MaxRemoteInFlight int
	// MaxRemoteMessage bounds, in bytes, one message between processes
	// (with the frame around it); a longer one ends the job with an error
	// naming it. It bounds a whole frame, which may hold many messages:
	// a value below a frame (3 MiB, wire.MaxFrame) is an error. 0 means
	// actor.DefaultMaxRemoteMessage (1 GiB). Messages longer than a frame
	// travel in fragments. See
	// actor.Config.MaxRemoteMessage.
	MaxRemoteMessage int
	// FailAfter is, in a job of several processes, how long a node may
	// stay silent (no heartbeat, no frame) before the others declare it
	// lost and the job aborts (actor.NodeConfig.FailAfter); 0 means 3 s.
	// Raise it where processes outnumber cores under a heavy load. Every
	// node should have the same: nodes of a local launch run this program
	// with its command line (-failafter), so they do if it is set the same
	// way there. A negative value is an error, and so is one that differs
	// from a FailAfter set in Node.
	FailAfter time.Duration
	// Wait is what a PE does when it has no message to handle (the
	// runtime flag -wait active|passive): actor.WaitActive (the zero
	// value) keeps the PE's core while its messages come microseconds
	// apart, as Charm++'s PEs do, and parks it when they stop;
	// actor.WaitPassive looks briefly and then parks. See
	// actor.WaitPolicy.
	Wait actor.WaitPolicy

	// dropSecret, set by ParseArgs on rank 0 of a launcher's job that
	// made its own secret, removes the secret's file once the job has
	// assembled (every rank has read it).
	dropSecret func()
}

// peSetups run on every PE of every job when it starts.
var peSetups []func(pe *PE)

// OnPEStart registers a function that runs on every PE of every job when
// the PE starts, before any message (packages such as lb set up their
// per-PE state with it). Call it in an init function.
func OnPEStart(fn func(pe *PE)) { peSetups = append(peSetups, fn) }

// boots run on PE 0 of every job, as its first message.
var boots []func(pe *PE)

// OnBoot registers a function that runs on PE 0 of every job as its first
// message, once every PE exists (a periodic timer starts there). Call it
// in an init function.
func OnBoot(fn func(pe *PE)) { boots = append(boots, fn) }

// jobEnds run in every process when a job ends.
var jobEnds []func(j *Job)

// OnJobEnd registers a function that runs in every process of every job
// when the job ends, after its PEs have stopped and before Run returns
// (packages write their reports with it, such as tune/tunedebug's
// -tunedebug). Call it in an init function.
func OnJobEnd(fn func(j *Job)) { jobEnds = append(jobEnds, fn) }

// Flag returns the value of a registered flag for this job.
func (j *Job) Flag(name string) (string, bool) {
	v, ok := j.flags[name]
	return v, ok
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
	if cfg.dropSecret != nil { // on every way out, and once the job assembled
		cfg.dropSecret = sync.OnceFunc(cfg.dropSecret)
		defer cfg.dropSecret()
	}
	typ, err := register(reflectType[T]())
	if err != nil {
		return 1, err
	}
	job := &Job{args: cfg.Args, flags: cfg.Flags}
	nc, pes, err := nodeConfig(cfg)
	if err != nil {
		return 1, err
	}
	if path := cfg.Trace; path != "" || cfg.Flags["trace"] != "" {
		if path == "" {
			path = cfg.Flags["trace"]
		}
		node, nodes := 0, 1
		if nc != nil {
			node, nodes = nc.Node, nc.Nodes
		}
		traceMax := cfg.TraceMax
		if v, ok := cfg.Flags["tracemax"]; ok && traceMax == 0 {
			if traceMax, err = parseTraceMax(v); err != nil {
				return 1, fmt.Errorf("chare: -tracemax: %w", err)
			}
		}
		if traceMax < 0 {
			return 1, fmt.Errorf("chare: Config.TraceMax %d is negative", traceMax)
		}
		if job.trace, err = openTrace(path, node, nodes, traceMax); err != nil {
			return 1, err
		}
	}
	traceClosed := false
	defer func() { // a job that failed before it ran leaves no trace
		if !traceClosed {
			job.abortTrace()
		}
	}()
	var ckpt *ckptFile
	if cfg.Restart != "" && (nc == nil || nc.Node == 0) {
		if ckpt, err = readCheckpoint(cfg.Restart); err != nil {
			return 1, err
		}
	}
	checkHeadroom()
	rt, err := actor.Start(actor.Config{
		PEs:               pes,
		Logger:            cfg.Logger,
		Node:              nc,
		MaxInFlight:       cfg.MaxInFlight,
		MaxRemoteInFlight: cfg.MaxRemoteInFlight,
		MaxRemoteMessage:  cfg.MaxRemoteMessage,
		Wait:              cfg.Wait,
		// Set job.rt here, before any PE runs: boot may run on PE 0
		// before Start returns.
		Setup: func(ap *actor.PE) {
			job.rt = ap.Runtime()
			pe := newPE(ap, job)
			pe.setupTrace()
			for _, fn := range peSetups {
				fn(pe)
			}
		},
	}, func(ap *actor.PE) {
		pe := peOf(ap)
		for _, fn := range boots {
			fn(pe)
		}
		if ckpt != nil {
			if err := pe.restartBoot(ckpt); err != nil {
				pe.fail(err)
			}
			return
		}
		obj := new(T)
		b, ok := any(obj).(Context)
		if !ok || !isChare[T]() {
			pe.fail(fmt.Errorf("chare: the main chare type %s must embed chare.Chare[%s]", typ.Name, typ.Name))
			return
		}
		c := &Collection{ID: NewCollID(pe), Kind: KindChare, Type: typ, Tree: []int{0}, Spec: Spec{Builder: "chare"}}
		c.NewLocal = func(*PE) (Part, error) { return &single{pe: 0, obj: obj, coll: c}, nil }
		AddCollection(pe, c)
		BindBase(b.base(), pe, c, 0, obj)
		if _, err := PartOf(pe, c.ID); err != nil { // made now: a checkpoint finds it
			pe.fail(err)
			return
		}
		ap.Spawn(func() string { return typ.Name + " (the main function)" }, func(*actor.Thread) {
			start(obj, cfg.Args)
		})
	})
	if cfg.dropSecret != nil { // every rank has joined, or the job will not start
		cfg.dropSecret()
	}
	if err != nil {
		return 1, err
	}
	if cfg.Timeout > 0 {
		t := time.AfterFunc(cfg.Timeout, func() {
			rt.Abort(fmt.Errorf("chare: the job did not end within %v", cfg.Timeout))
		})
		defer t.Stop()
	}
	if cfg.OnEnd != nil {
		ended := make(chan struct{})
		go func() {
			defer close(ended)
			<-rt.Done()
			cfg.OnEnd(rt.Result())
		}()
		defer func() { <-ended }() // OnEnd has run when Run returns
	}
	code, err := rt.Wait()
	for _, fn := range jobEnds {
		fn(job)
	}
	job.dropFuncs()
	traceClosed = true
	if terr := job.closeTrace(); terr != nil && err == nil {
		return max(code, 1), terr
	}
	return code, err
}

// nodeConfig works out whether this process is one node of several: a
// node that a local launch started (the environment says so), node 0 of a
// local launch (cfg.Nodes), or a node started by hand (cfg.Node).
func nodeConfig(cfg Config) (*actor.NodeConfig, int, error) {
	pes := cfg.PEs
	var nc *actor.NodeConfig
	switch env, envPEs, child := actor.NodeFromEnv(); {
	case child:
		env.TLS = cfg.TLS // launched with the same command line
		nc, pes = &env, envPEs
	case cfg.Node != nil:
		c := *cfg.Node
		nc = &c
	case cfg.Nodes > 1:
		launch := cfg.Launch
		if launch == nil {
			exe, err := os.Executable()
			if err != nil {
				return nil, 0, fmt.Errorf("chare: finding this program to launch the other nodes: %w", err)
			}
			launch = append([]string{exe}, os.Args[1:]...)
		}
		nc = &actor.NodeConfig{Node: 0, Nodes: cfg.Nodes, Token: actor.NewToken(), Launch: launch, TLS: cfg.TLS}
	case cfg.Nodes < 0:
		return nil, 0, fmt.Errorf("chare: bad number of nodes %d", cfg.Nodes)
	}
	if cfg.FailAfter < 0 {
		return nil, 0, fmt.Errorf("chare: FailAfter %v is negative: want the time after which a silent node is lost, or 0 for 3 s", cfg.FailAfter)
	}
	if nc != nil {
		nc.Fingerprint = Fingerprint()
		if cfg.FailAfter != 0 {
			if nc.FailAfter != 0 && nc.FailAfter != cfg.FailAfter {
				return nil, 0, fmt.Errorf("chare: FailAfter %v and Node.FailAfter %v disagree", cfg.FailAfter, nc.FailAfter)
			}
			nc.FailAfter = cfg.FailAfter
		}
	}
	return nc, pes, nil
}

// IsLaunchedNode reports whether this process is a node that another one
// launched (nodes 1..M-1 of a local job); tests use it to skip the checks
// that only node 0, where the main chare runs, can make.
func IsLaunchedNode() bool {
	_, _, child := actor.NodeFromEnv()
	return child
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
	var told atomic.Bool
	cfg.OnEnd = func(_ int, err error) {
		if err != nil {
			fmt.Fprintln(os.Stderr, os.Args[0]+":", err)
			told.Store(true)
		}
	}
	code, err := Run(cfg, start)
	if err != nil && !told.Load() { // the job did not start
		fmt.Fprintln(os.Stderr, os.Args[0]+":", err)
	}
	return code
}

// ParseArgs takes the runtime's flags out of a command line and returns the
// configuration with the remaining arguments, in order, in Args. The
// runtime's flags, anywhere before a "--" (which ends them and is not
// passed on: what follows it goes to the program as it is), in the form
// -flag value or -flag=value:
//
//	-p N             PEs in the whole job
//	-nodes M         run as M processes on this machine (charmrun ++local)
//	-nodelist FILE   a job across hosts: one host:port per line, node 0 first
//	-node I          with -nodelist: this process is node I
//	-token T         with -nodelist: the job's secret, the same on every node
//	                 (or set CHARMGO_TOKEN); under a launcher, the job's
//	                 secret (or set CHARMGO_SECRET), needed across hosts
//	-tls-cert F, -tls-key F   TLS between the nodes, with this certificate
//	-jobport N       under mpirun or srun: node 0's port (default: derived
//	                 from the launcher's job id)
//	-nodehost HOST   under a launcher: the host of rank 0 (needed by
//	                 mpirun and mpiexec across hosts)
//	-failafter D     a node silent for D (a duration: 10s) is lost, and the
//	                 job aborts; default 3s (Config.FailAfter)
//	-wait P          what an idle PE does: active (the default), keep its
//	                 core while messages come fast, or passive (Config.Wait)
//	-restart DIR     restart from the checkpoint in DIR (see Checkpoint)
//	-trace FILE      write the run as a timeline (Chrome trace-event JSON; see
//	                 package trace)
//	-tracemax N      with -trace: record at most N events per process
//	                 (default trace.EventLimit), then stop and say so
//	-v               log to standard error
//
// and the flags that imported packages register (RegisterFlag).
//
// Started by a launcher — Open MPI's mpirun, MPICH's Hydra mpiexec, or
// Slurm's srun — with more than one rank, each process is the node of its
// rank, with no node list: see package launcher for the variables read,
// the job's secret and where node 0 listens. A job whose ranks all run on
// this host needs no secret (rank 0 makes one that only this user can
// read, and the job listens on loopback only); a job across hosts needs
// the same secret on every rank (CHARMGO_SECRET, or -token). Without -p,
// the job has one PE per rank. A launcher's environment that is half
// there is an error naming the variable.
//
// Other
// arguments go to the program, except flags that look like the runtime's:
// a flag of a package of this module that the program does not import
// (-balancer without package lb) or a near miss of a runtime flag
// (-balncer) is an error naming the flag and what it needs, unless the
// program defined it on flag.CommandLine before calling ParseArgs (or
// Main) or declared it with ProgramFlags.
func ParseArgs(args []string) (Config, error) {
	var cfg Config
	var nodelist, token, cert, key, nodehost string
	node, jobport := -1, 0
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			cfg.Args = append(cfg.Args, args[i+1:]...)
			break
		}
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") {
			name = ""
		}
		if def, ok := Flag(name); ok {
			if def.Value && !hasVal {
				if i+1 >= len(args) {
					return cfg, fmt.Errorf("flag -%s needs a value", name)
				}
				i++
				val = args[i]
			} else if !def.Value && !hasVal {
				val = "true"
			}
			if def.Check != nil {
				if err := def.Check(val); err != nil {
					return cfg, fmt.Errorf("flag -%s: %w", name, err)
				}
			}
			if cfg.Flags == nil {
				cfg.Flags = map[string]string{}
			}
			cfg.Flags[name] = val
			continue
		}
		if name != "v" && slices.Contains(runtimeFlags, name) { // every runtime flag but -v takes a value
			if !hasVal {
				if i+1 >= len(args) {
					return cfg, fmt.Errorf("flag -%s needs a value", name)
				}
				i++
				val = args[i]
			}
		}
		var err error
		switch name {
		case "p":
			if cfg.PEs, err = strconv.Atoi(val); err != nil || cfg.PEs < 1 {
				return cfg, fmt.Errorf("flag -p: bad number of PEs %q: want a whole number of at least 1", val)
			}
		case "nodes":
			if cfg.Nodes, err = strconv.Atoi(val); err != nil || cfg.Nodes < 1 {
				return cfg, fmt.Errorf("flag -nodes: bad number of nodes %q: want a whole number of at least 1", val)
			}
		case "node":
			if node, err = strconv.Atoi(val); err != nil || node < 0 {
				return cfg, fmt.Errorf("flag -node: bad node number %q", val)
			}
		case "nodelist":
			nodelist = val
		case "jobport":
			if jobport, err = strconv.Atoi(val); err != nil || jobport < 1 || jobport > 65535 {
				return cfg, fmt.Errorf("flag -jobport: bad port %q: want 1..65535", val)
			}
		case "nodehost":
			if nodehost = val; val == "" {
				return cfg, fmt.Errorf("flag -nodehost: empty host")
			}
		case "token":
			token = val
		case "tls-cert":
			cert = val
		case "tls-key":
			key = val
		case "restart":
			cfg.Restart = val
		case "failafter":
			if cfg.FailAfter, err = time.ParseDuration(val); err != nil || cfg.FailAfter <= 0 {
				return cfg, fmt.Errorf("flag -failafter: bad duration %q: want a positive duration such as 10s", val)
			}
		case "wait":
			if cfg.Wait, err = actor.ParseWaitPolicy(val); err != nil {
				return cfg, fmt.Errorf("flag -wait: %w", err)
			}
		case "v":
			cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
		default:
			if err := checkProgramFlag(a, name); err != nil {
				return cfg, err
			}
			cfg.Args = append(cfg.Args, a)
		}
	}
	if (cert == "") != (key == "") {
		return cfg, fmt.Errorf("flags -tls-cert and -tls-key go together")
	}
	if nodelist == "" {
		if node >= 0 {
			return cfg, fmt.Errorf("flag -node needs -nodelist")
		}
		if err := underLauncher(&cfg, token, nodehost, jobport); err != nil {
			return cfg, err
		}
		if cert != "" {
			if cfg.Node != nil {
				cfg.Node.TLS = &actor.TLSFiles{Cert: cert, Key: key}
			} else {
				cfg.TLS = &actor.TLSFiles{Cert: cert, Key: key}
			}
		}
		return cfg, nil
	}
	if jobport != 0 || nodehost != "" {
		return cfg, fmt.Errorf("flags -jobport and -nodehost are for jobs under mpirun or srun, not with -nodelist")
	}
	addrs, err := readNodeList(nodelist)
	if err != nil {
		return cfg, err
	}
	if node < 0 || node >= len(addrs) {
		return cfg, fmt.Errorf("flag -node: node %d is not in %s, which lists %d nodes", node, nodelist, len(addrs))
	}
	if token == "" {
		token = os.Getenv("CHARMGO_TOKEN")
	}
	if token == "" {
		return cfg, fmt.Errorf("a job across hosts needs the same -token (or CHARMGO_TOKEN) on every node")
	}
	cfg.Node = &actor.NodeConfig{Node: node, Nodes: len(addrs), Listen: addrs[node], Join: addrs[0], Token: token}
	if cert != "" {
		cfg.Node.TLS = &actor.TLSFiles{Cert: cert, Key: key}
	}
	return cfg, nil
}

// lookupEnv reads the environment; tests replace it.
var lookupEnv launcher.Env = os.LookupEnv

// jobSecretWait bounds how long a rank waits for rank 0 to write the
// secret of a job on one host (as long as the job may take to assemble).
const jobSecretWait = 30 * time.Second

// underLauncher makes cfg a node of the job that mpirun, mpiexec or srun
// started, if one did (with more than one rank); a process that a local
// launch started (-nodes) has its place in its environment already.
func underLauncher(cfg *Config, token, nodehost string, jobport int) (err error) {
	if _, child := lookupEnv("CHARMGO_NODE"); child {
		return nil
	}
	var drop func()
	job, err := launcher.Detect(lookupEnv, launcher.Options{Port: jobport, NodeHost: nodehost, Secret: token,
		KVSName: func() (string, error) { return launcher.PMIKVSName(lookupEnv) },
		LocalSecret: func(j *launcher.Job) (string, error) {
			s, rm, err := launcher.JobSecret(launcher.SecretDir(), j, jobSecretWait)
			drop = rm
			return s, err
		}})
	if err != nil {
		return err
	}
	if drop != nil {
		defer func() {
			if err != nil { // no job: nobody will read the secret
				drop()
			}
		}()
	}
	cfg.dropSecret = drop
	if job == nil {
		if (jobport != 0 || nodehost != "") && !launcher.Started(lookupEnv) {
			return fmt.Errorf("flags -jobport and -nodehost are for jobs under mpirun or srun, and no launcher started this process")
		}
		return nil
	}
	if cfg.Nodes > 1 {
		return fmt.Errorf("flag -nodes %d: %s already started this process as rank %d of %d; the launcher decides the processes, drop -nodes", cfg.Nodes, job.Launcher, job.Rank, job.Size)
	}
	if job.Listen == "" { // across hosts
		if job.Listen, err = launcher.ListenToward(job.Join); err != nil {
			return fmt.Errorf("%s, rank %d: %w", job.Launcher, job.Rank, err)
		}
	}
	if cfg.PEs == 0 {
		cfg.PEs = job.Size // one PE per rank, as an MPI build of Charm++ has
	}
	cfg.Node = &actor.NodeConfig{Node: job.Rank, Nodes: job.Size, Listen: job.Listen, Join: job.Join, Token: job.Token}
	return nil
}

// readNodeList reads a node list: one host:port per line; blank lines and
// lines starting with # are skipped.
func readNodeList(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("node list: %w", err)
	}
	var addrs []string
	for n, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if _, _, err := net.SplitHostPort(line); err != nil {
			return nil, fmt.Errorf("node list %s, line %d: %q is not host:port", path, n+1, line)
		}
		addrs = append(addrs, line)
	}
	if len(addrs) == 0 {
		return nil, fmt.Errorf("node list %s names no node", path)
	}
	return addrs, nil
}

// single is the part of a singleton chare on its PE.
type single struct {
	pe   int
	obj  any
	init func(any) // the constructor, until Construct runs it
	coll *Collection
}

func (s *single) Locate(any) (int, error) { return s.pe, nil }

// Deliver runs a message on the chare, unless its header names an entry
// method of another chare type (damaged, or a program's bug): that is
// refused with an error before the method is called.
func (s *single) Deliver(pe *PE, e Envelope, _ any) {
	if h := e.Header(); h.Entry != nil && h.Entry.Type != s.coll.Type {
		pe.fail(fmt.Errorf("chare: %s: an entry method of %s, not of %s, the type of chare %v on PE %d", Describe(e), h.Entry.Type.Name, s.coll.Type.Name, s.coll.ID, s.pe))
		return
	}
	if h := e.Header(); h.Kind != KindChare || h.PE != s.pe || pe.ID() != s.pe {
		pe.fail(fmt.Errorf("chare: %s reached PE %d as a %v message for PE %d: chare %v lives on PE %d", Describe(e), pe.ID(), h.Kind, h.PE, s.coll.ID, s.pe))
		return
	}
	Invoke(pe, s.obj, e)
}

// DeliverAll runs a broadcast on the chare; route checked its entry
// method's type (checkBroadcast).
func (s *single) DeliverAll(pe *PE, e Envelope) { Invoke(pe, s.obj, e) }
func (s *single) Object(any) any                { return s.obj }
