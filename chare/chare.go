// Code in this file forwards to internal/core, where the runtime lives; see doc.go.

package chare

import (
	reducer "github.com/charmgo/charm/chare/reducer"
	"github.com/charmgo/charm/internal/core"
	time "time"
)

// CallbackKind says what a callback does with its value.
//
// Its methods (defined in the runtime, internal/core):
//
//	func (k CallbackKind) String() string
type CallbackKind = core.CallbackKind

// The kinds of callback, of type CallbackKind, with their values.
const (
	CallbackIgnore = core.CallbackIgnore // 0: drop the value (CkCallback::ignore)
	CallbackEntry  = core.CallbackEntry  // 1: invoke an entry method (or broadcast one)
	CallbackFuture = core.CallbackFuture // 2: fulfil a future
	CallbackFunc   = core.CallbackFunc   // 3: call a Go function on a PE
	CallbackExit   = core.CallbackExit   // 4: end the job (CkCallback::ckExit)
)

// Callback is where a result goes: an entry method of a chare, a group
// branch or an array element, a broadcast to a group or array, a future, a
// Go function on a PE, nowhere, or the end of the job. Callbacks are values
// and can travel in messages.
//
// Its fields (defined in the runtime, internal/core):
//
//	type Callback struct {
//		Kind   CallbackKind
//		Route  Route
//		Entry  EntryID
//		Future futureRef
//		Func   uint64
//		PE     int
//		Code   int
//		// Has unexported fields.
//	}
//
// Its methods (defined in the runtime, internal/core):
//
//	// Send delivers v through the callback.
//	func (cb Callback) Send(from Context, v any) error
//
//	// EncodeMsgpack lets a callback travel in a message.
//	func (cb Callback) EncodeMsgpack(enc *msgpack.Encoder) error
//
//	// DecodeMsgpack reads a callback from a message.
//	func (cb *Callback) DecodeMsgpack(dec *msgpack.Decoder) error
type Callback = core.Callback

// IgnoreCallback drops the value.
func IgnoreCallback() Callback {
	return core.IgnoreCallback()
}

// ExitCallback ends the job with the given exit code when called.
func ExitCallback(code int) Callback {
	return core.ExitCallback(code)
}

// EntryCallback invokes method with the callback's value as its message;
// through a group or array proxy it broadcasts. A callback made from a
// delegated proxy sends through the proxy's delegate, and carries it
// wherever the callback travels, as the proxy would; make it from
// p.Undelegate() to send directly (a bracketed strategy, for one, takes
// sends only between a source's BeginIteration and EndIteration). The
// value must be of the
// method's message type (numbers convert between numeric types, so a
// method taking float64 is a typed reduction target for a float sum).
func EntryCallback[T, M any](to Target[T], method func(*T, M)) Callback {
	return core.EntryCallback[T, M](to, method)
}

// EntryCallback0 invokes a method without a message; the callback's value
// is dropped (a barrier's target).
func EntryCallback0[T any](to Target[T], method func(*T)) Callback {
	return core.EntryCallback0[T](to, method)
}

// FuncCallback calls fn on PE pe with the callback's value. The function
// lives in this process, as long as the job of from: the callback cannot
// be used by another process, nor once its job has ended (the process
// then forgets fn, and what it refers to can be collected). It may be sent
// any number of times: make one for a recurring event and reuse it, not
// one per step; NumFuncCallbacks counts those held.
func FuncCallback(from Context, pe int, fn func(ctx Context, value any)) Callback {
	return core.FuncCallback(from, pe, fn)
}

// NumFuncCallbacks returns how many function callbacks this process
// holds: a count that grows with every step of a program, or from job to
// job, shows a leak.
func NumFuncCallbacks() int {
	return core.NumFuncCallbacks()
}

// CheckpointFile is the name of the file a checkpoint writes in its
// directory.
const CheckpointFile = "checkpoint.charm"

// HeadroomBytes is the heap, never written, that a program keeps from its
// start, so that the collector of a job whose heap is small runs rarely;
// there is none with GOGC or GOMEMLIMIT in the environment (nor if a
// collection ran before the runtime's initialisation), and a program
// that calls debug.SetGCPercent (to another value than 100) or
// debug.SetMemoryLimit gives it up when its next job starts. See the
// guide, "The garbage collector's headroom".
const HeadroomBytes = core.HeadroomBytes // 16777216: 16 MiB

// Packer is implemented by chare types that pack their own state for
// migration and checkpoints (Charm++'s pup); without it, their exported
// fields are packed with msgpack.
//
// Unpack's bytes come from another process or from a file, and the
// runtime does not know their format: a Packer that writes msgpack should
// read it back with UnmarshalState, which checks the bytes first, rather
// than msgpack.Unmarshal, which a few corrupt bytes can make allocate
// gigabytes or recurse until the stack is exhausted (a fatal error).
//
// Its methods (defined in the runtime, internal/core):
//
//	type Packer interface {
//		Pack() ([]byte, error)
//		Unpack([]byte) error
//	}
type Packer = core.Packer

// UnmarshalState decodes msgpack bytes from another process or a file
// into v (a pointer), as msgpack.Unmarshal does, after checking them:
// lengths within the bytes, nesting at most 10,000 deep, and what the
// decoding allocates at most 64 bytes per byte plus 1 MiB, counted along
// v's type (package internal/mpcheck). For Packers; the runtime checks
// the state it decodes itself.
func UnmarshalState(b []byte, v any) error {
	return core.UnmarshalState(b, v)
}

// Checkpoint writes the job's state to dir once the job is quiescent, then
// sends cb (with a nil value); a restart from dir sends cb again. cb must
// be an entry callback: futures and functions do not survive a restart.
// It returns an error naming the type and the fields if an object of the
// job has state that would not survive packing (unexported, interface,
// func or channel fields not declared with Transient).
func Checkpoint(from Context, dir string, cb Callback) error {
	return core.Checkpoint(from, dir, cb)
}

// Detector is a completion detection session (Charm++'s
// CkCompletionDetector): a known number of producers, anywhere in the job,
// produce items that are consumed anywhere; once every producer called
// Done and every produced item was consumed, the finished callback runs.
// TRAM uses it to know when a step's items have all arrived. Detectors are
// values and can travel in messages.
//
// Its fields (defined in the runtime, internal/core):
//
//	type Detector struct {
//		ID actor.DetectorID
//	}
//
// Its methods (defined in the runtime, internal/core):
//
//	// Produce counts n items produced by the caller.
//	func (d Detector) Produce(from Context, n int) error
//
//	// Consume counts n items consumed by the caller.
//	func (d Detector) Consume(from Context, n int) error
//
//	// Done records that n producers (usually 1: the caller) finished.
//	func (d Detector) Done(from Context, n int) error
type Detector = core.Detector

// Completion holds the callbacks of a detection session; each receives a
// nil value.
//
// Its fields (defined in the runtime, internal/core):
//
//	type Completion struct {
//		Producers   int      // producers across the job that will call Done
//		Started     Callback // every PE knows the session: production may begin
//		AllProduced Callback // every producer called Done
//		Finished    Callback // and every produced item was consumed
//	}
type Completion = core.Completion

// StartCompletion begins a completion detection session.
func StartCompletion(from Context, c Completion) (Detector, error) {
	return core.StartCompletion(from, c)
}

// Context is the code that is running: a chare, group branch or array
// element (through the Base they embed), the main chare, or a PE's own
// context. Every send names its Context first, as protoactor-go's
// ctx.Send does: it tells the runtime which PE is sending.
type Context = core.Context

// Base is embedded (through Chare, group.Branch or array.Element) in every
// chare object; the runtime fills it in when it creates the object.
//
// Its methods (defined in the runtime, internal/core):
//
//	// Here returns the PE state the object lives on.
//	func (b *Base) Here() *PE
//
//	// PE returns the number of the PE the object lives on (CkMyPe); 0 for an
//	// object the runtime did not make (its Base unbound).
//	func (b *Base) PE() int
//
//	// NumPEs returns the number of PEs in the job (CkNumPes); 0 for an
//	// object the runtime did not make.
//	func (b *Base) NumPEs() int
//
//	// Exit ends the job with the given exit code on every PE (CkExit).
//	func (b *Base) Exit(code int)
//
//	// Abort ends the job with exit code 1 and the given reason (CkAbort).
//	func (b *Base) Abort(err error)
//
//	// DetectQuiescence sends to cb (with a nil value) once no entry method
//	// runs anywhere and no message is in flight (CkStartQD).
//	func (b *Base) DetectQuiescence(cb Callback)
//
//	// Args returns the program's arguments that the runtime did not take.
//	func (b *Base) Args() []string
//
//	// Index returns the object's index in its collection: the array index of
//	// an element, the PE of a group branch.
//	func (b *Base) Index() any
//
//	// Self returns the object the Base is embedded in.
//	func (b *Base) Self() any
//
//	// MemberState returns the member's reduction state.
//	func (b *Base) MemberState() MemberState
//
//	// SetMemberState restores the member's reduction state.
//	func (b *Base) SetMemberState(s MemberState)
//
//	// SetLoad sets the object's load for the current load-balancing period,
//	// in seconds, instead of the measured one (Charm++'s setObjTime).
//	func (b *Base) SetLoad(seconds float64) error
//
//	// Load returns the object's load since the last reset.
//	func (b *Base) Load() ObjLoad
//
//	// ResetLoad starts a new measurement period for the object.
//	func (b *Base) ResetLoad()
//
//	// Contribute adds the object's value to the next reduction over its
//	// collection (a group or an array), combined with r and delivered to cb
//	// (Charm++'s contribute).
//	func (b *Base) Contribute(value any, r reducer.Reducer, cb Callback) error
//
//	// ContributeTo adds the object's value to the next reduction over a
//	// section it belongs to.
//	func (b *Base) ContributeTo(s *Section, value any, r reducer.Reducer, cb Callback) error
type Base = core.Base

// ErrNoContext is returned when a send is made with a nil Context or one
// whose object was never bound to a PE.
var ErrNoContext = core.ErrNoContext

// PEOf returns the PE a context runs on, or nil for a nil or unbound one.
func PEOf(ctx Context) *PE {
	return core.PEOf(ctx)
}

// MemberState is what the runtime keeps of a migratable member besides
// its own fields: where it is in its reductions. Array migration and
// checkpoints carry it.
//
// Its fields (defined in the runtime, internal/core):
//
//	type MemberState struct {
//		RedNo    int
//		Sections map[CollID]int
//		Load     ObjLoad // the load measured since the last step travels along
//	}
type MemberState = core.MemberState

// Header is the routing part of an envelope.
//
// Its fields (defined in the runtime, internal/core):
//
//	type Header struct {
//		Route
//		Entry *Entry
//		Src   int // the sending PE
//		// Root is the PE at the root of a broadcast's spanning tree.
//		Root int
//		// Epoch is, for a message to an array element, the epoch at which the
//		// sender believed the element to be on the destination PE (see
//		// package location); for an array broadcast, its sequence number.
//		Epoch uint32
//		// Hops counts how many times a message to an array element has been
//		// forwarded.
//		Hops uint8
//		// Flow numbers the message's arrow in a trace (0: none); with Src it
//		// names the arrow job-wide (trace.FlowID), and it travels to other
//		// processes in the envelope's tail.
//		Flow uint32
//	}
//
// Its methods (defined in the runtime, internal/core):
//
//	// Members returns the section members on the destination PE of a
//	// multicast hop; the multicast puts them in the route's Index, which
//	// sections do not otherwise use.
//	func (h *Header) Members() []any
type Header = core.Header

// Envelope is one entry-method invocation on its way: a header and the
// message. Delegates receive envelopes and pass them on with [Forward].
//
// Its methods (defined in the runtime, internal/core):
//
//	type Envelope interface {
//		actor.Message
//		Header() *Header
//		// Payload returns the message, or nil for an entry without one.
//		Payload() any
//		// PayloadRef returns a pointer to the message (the message itself for
//		// an envelope built from a description, which holds it as an
//		// interface), or nil for an entry without one: unlike Payload, it
//		// does not copy the message into an interface, so it allocates
//		// nothing. What it points to must not be changed.
//		PayloadRef() any
//		// Has unexported methods.
//	}
type Envelope = core.Envelope

// NewEnvelope builds an envelope for an entry method known by its
// description, with the message in an any; the message's type is checked
// when the method runs.
func NewEnvelope(r Route, e *Entry, msg any) Envelope {
	return core.NewEnvelope(r, e, msg)
}

// Future is a value that will arrive later (charm4py's Future, Charm++'s
// CkFuture). Create it on a PE, pass it (or a Callback to it) to whoever
// will produce the value, and wait for it with Get in a threaded entry
// method on the same PE. A future takes one value.
//
// Its fields (defined in the runtime, internal/core):
//
//	type Future[T any] struct {
//		PE int
//		ID uint64
//	}
//
// Its methods (defined in the runtime, internal/core):
//
//	// IsZero reports whether the future was never created.
//	func (f Future[T]) IsZero() bool
//
//	// Send gives the future its value.
//	func (f Future[T]) Send(from Context, v T) error
//
//	// Callback returns a callback that sends its value to the future.
//	func (f Future[T]) Callback() Callback
//
//	// Get waits for the value and returns it.
//	func (f Future[T]) Get(ctx Context) (T, error)
//
//	// GetBefore is Get with a deadline: if the value has not arrived by then
//	// it returns an error that wraps ErrDeadlineExceeded and names the
//	// future.
//	func (f Future[T]) GetBefore(ctx Context, deadline time.Time) (T, error)
//
//	// Drop forgets a future whose value will never be taken: one whose
//	// callback was handed to a call that then failed.
//	func (f Future[T]) Drop(ctx Context) error
type Future[T any] = core.Future[T]

// Waitable is a future of any type, for WaitAll and WaitAny.
type Waitable = core.Waitable

// NewFuture creates a future owned by the sender's PE.
func NewFuture[T any](ctx Context) Future[T] {
	return core.NewFuture[T](ctx)
}

// ErrNotThreaded is returned by Get, WaitAll and WaitAny outside a
// threaded entry method: blocking there would stall the PE.
var ErrNotThreaded = core.ErrNotThreaded

// ErrDeadlineExceeded is wrapped by the error of GetBefore when the
// deadline passes before the value arrives (errors.Is finds it).
var ErrDeadlineExceeded = core.ErrDeadlineExceeded

// WaitAll waits until every future has its value (without taking them).
func WaitAll(ctx Context, fs ...Waitable) error {
	return core.WaitAll(ctx, fs...)
}

// WaitAny waits until one of the futures has its value and returns its
// position in fs.
func WaitAny(ctx Context, fs ...Waitable) (int, error) {
	return core.WaitAny(ctx, fs...)
}

// Yield lets the PE process the messages that wait for it, then goes on
// (CthYield). It needs a threaded entry method or the main function;
// elsewhere it returns ErrNotThreaded. Long loops of sends (TRAM's
// insertions) call it now and then so that the PE stays responsive.
func Yield(ctx Context) error {
	return core.Yield(ctx)
}

// Nap suspends the threaded entry method until its PE has handled another
// message, or until the deadline (the zero time: none), and reports
// whether a message woke it. It is the sleep of a loop that polls, as the
// overlap loop does: after a poll that found nothing, Nap frees the PE
// (and its core) instead of spinning, and the next message — data, an
// acknowledgement — wakes it as soon as its entry method has run. Any
// message wakes it, so the caller looks again at what changed. Nothing is
// left behind when it returns (no future, no live timer). A deadline
// already past yields once (as Yield) and reports false.
func Nap(ctx Context, deadline time.Time) (bool, error) {
	return core.Nap(ctx, deadline)
}

// ObjLoad is an object's load since its last reset.
//
// Its fields (defined in the runtime, internal/core):
//
//	type ObjLoad struct {
//		Wall, CPU time.Duration
//		// User, if set (HasUser), is the load the object gave itself with
//		// SetLoad, in seconds; it replaces the measured one.
//		User    float64
//		HasUser bool
//	}
//
// Its methods (defined in the runtime, internal/core):
//
//	// Seconds is the load a strategy uses: the user's, else the CPU time if
//	// measured, else the wall time.
//	func (l ObjLoad) Seconds() float64
type ObjLoad = core.ObjLoad

// Config describes a job.
//
// Its fields (defined in the runtime, internal/core):
//
//	type Config struct {
//		PEs    int      // processing elements; 0 means 1
//		Args   []string // the program's own arguments, passed to the main chare
//		Logger *slog.Logger
//		// Timeout, if set, aborts a job that has not ended after that long
//		// (tests use it so that a hang fails loudly).
//		Timeout time.Duration
//		// Nodes, if more than 1, runs the job as that many processes on this
//		// machine (charmrun ++local): this process is node 0 and starts the
//		// others by running Launch (by default, this program with its
//		// arguments). The PEs are split between the nodes.
//		Nodes  int
//		Launch []string
//		// Node, if set, makes this process one node of a job whose nodes are
//		// started by hand, on one or several hosts (see ParseArgs: -nodelist).
//		Node *actor.NodeConfig
//		// TLS, if set, secures the connections of a local launch (Nodes).
//		TLS *actor.TLSFiles
//		// Restart, if set, restarts the program from the checkpoint in this
//		// directory (see Checkpoint) instead of creating the main chare and
//		// running start.
//		Restart string
//		// Trace, if set, writes the run as a timeline to this file (the
//		// runtime flag -trace FILE sets Flags["trace"], which has the same
//		// effect); see package trace.
//		Trace string
//		// TraceMax is the most events each process of a traced job records
//		// (the runtime flag -tracemax N); 0 means trace.EventLimit. When it
//		// is reached, recording stops, and the trace and standard error say
//		// so.
//		TraceMax int
//		// Flags holds the values of flags that other packages registered
//		// with RegisterFlag (lb: -balancer, -lbperiod...), by name.
//		Flags map[string]string
//		// OnEnd, if set, is called once, as soon as the job ends, with what
//		// Run will return: before Run stops the PEs and waits for the other
//		// nodes (which takes up to a few seconds when a node is lost). Main
//		// prints an abort's reason with it, so that a lost node is named at
//		// once.
//		OnEnd func(code int, err error)
//		// MaxInFlight bounds the backlog of messages that the PEs of this
//		// process may post to one PE's mailbox: a sender that finds it full
//		// waits (its PE processes nothing meanwhile) until half of it has been
//		// processed; no message is dropped. 0 means actor.DefaultMaxInFlight,
//		// a negative value no bound. See actor.Config.MaxInFlight.
//		MaxInFlight int
//		// MaxRemoteInFlight bounds, in bytes, the messages that the PEs of
//		// this process have sent to another process and that it has not
//		// processed yet: a sender at the bound waits; nothing is dropped.
//		// 0 means actor.DefaultMaxRemoteInFlight, a negative value no bound.
//		// See actor.Config.MaxRemoteInFlight.
//		MaxRemoteInFlight int
//		// MaxRemoteMessage bounds, in bytes, one message between processes
//		// (with the frame around it); a longer one ends the job with an error
//		// naming it. It bounds a whole frame, which may hold many messages:
//		// a value below a frame (3 MiB, wire.MaxFrame) is an error. 0 means
//		// actor.DefaultMaxRemoteMessage (1 GiB). Messages longer than a frame
//		// travel in fragments. See
//		// actor.Config.MaxRemoteMessage.
//		MaxRemoteMessage int
//		// FailAfter is, in a job of several processes, how long a node may
//		// stay silent (no heartbeat, no frame) before the others declare it
//		// lost and the job aborts (actor.NodeConfig.FailAfter); 0 means 3 s.
//		// Raise it where processes outnumber cores under a heavy load. Every
//		// node should have the same: nodes of a local launch run this program
//		// with its command line (-failafter), so they do if it is set the same
//		// way there. A negative value is an error, and so is one that differs
//		// from a FailAfter set in Node.
//		FailAfter time.Duration
//		// Wait is what a PE does when it has no message to handle (the
//		// runtime flag -wait active|passive): actor.WaitActive (the zero
//		// value) keeps the PE's core while its messages come microseconds
//		// apart, as Charm++'s PEs do, and parks it when they stop;
//		// actor.WaitPassive looks briefly and then parks. See
//		// actor.WaitPolicy.
//		Wait actor.WaitPolicy
//		// Has unexported fields.
//	}
type Config = core.Config

// OnPEStart registers a function that runs on every PE of every job when
// the PE starts, before any message (packages such as lb set up their
// per-PE state with it). Call it in an init function.
func OnPEStart(fn func(pe *PE)) {
	core.OnPEStart(fn)
}

// Chare is embedded in singleton chare types, the main chare among them:
//
//	type Main struct{ chare.Chare[Main] }
//
// Its fields (defined in the runtime, internal/core):
//
//	type Chare[T any] struct {
//		Base
//	}
//
// Its methods (defined in the runtime, internal/core):
//
//	// ThisProxy returns a proxy to the chare itself (thisProxy).
//	func (c *Chare[T]) ThisProxy() Proxy[T]
type Chare[T any] = core.Chare[T]

// Run runs a job: it starts the PEs, creates the main chare T on PE 0 and
// runs start on it as a threaded entry method with cfg.Args. It returns when
// some PE calls Exit (with its code) or the job aborts (code 1 and the
// reason). Returning from start does not end the job.
func Run[T any](cfg Config, start func(main *T, args []string)) (int, error) {
	return core.Run[T](cfg, start)
}

// IsLaunchedNode reports whether this process is a node that another one
// launched (nodes 1..M-1 of a local job); tests use it to skip the checks
// that only node 0, where the main chare runs, can make.
func IsLaunchedNode() bool {
	return core.IsLaunchedNode()
}

// Main is the whole main function of a chare program:
//
//	func main() { os.Exit(chare.Main((*App).Start)) }
//
// It takes the runtime's flags (-p N) out of the command line, runs the
// job, prints the reason if it aborted, and returns the exit code.
func Main[T any](start func(main *T, args []string)) int {
	return core.Main[T](start)
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
	return core.ParseArgs(args)
}

// Job is the chare layer's state of one running program in this process.
//
// Its methods (defined in the runtime, internal/core):
//
//	// Flag returns the value of a registered flag for this job.
//	func (j *Job) Flag(name string) (string, bool)
//
//	// Runtime returns the job's runtime.
//	func (j *Job) Runtime() *actor.Runtime
type Job = core.Job

// Constructor is implemented by the parts of collections whose members
// have constructors: Part calls Construct once, right after NewLocal, when
// the part is stored on its PE. NewLocal makes the members; Construct runs
// their constructors, which may then send to their own collection (to a
// neighbour, say) like any other entry method.
//
// Its methods (defined in the runtime, internal/core):
//
//	type Constructor interface {
//		Construct()
//	}
type Constructor = core.Constructor

// PE is the chare layer's state on one processing element. Only code
// running on that PE touches it.
//
// Its methods (defined in the runtime, internal/core):
//
//	// PendingFutures counts the futures created on this PE whose value has
//	// not been taken by Get: a count that grows from one iteration to the
//	// next is a leak (a future nobody will Get).
//	func (pe *PE) PendingFutures() int
//
//	// SetMeasure turns the timing of entry methods on this PE on or off.
//	func (pe *PE) SetMeasure(on bool)
//
//	// ID returns the PE's number.
//	func (pe *PE) ID() int
//
//	// NumPEs returns the number of PEs in the job.
//	func (pe *PE) NumPEs() int
//
//	// Actor returns the runtime PE underneath.
//	func (pe *PE) Actor() *actor.PE
//
//	// Job returns the job the PE belongs to.
//	func (pe *PE) Job() *Job
//
//	// Fail aborts the job with an error; collection packages call it for
//	// errors found where no caller can receive them (a message for an index
//	// that does not exist, say).
//	func (pe *PE) Fail(err error)
//
//	// TraceInstant records a point event on this PE's track if the job is
//	// traced (cat is its category: "migration", "lb", "tram", "comlib",
//	// "quiescence", "checkpoint"); args holds key, value pairs.
//	func (pe *PE) TraceInstant(cat, name string, args ...any)
type PE = core.PE

// Slot is a place for a value of type T on every PE, for packages that
// keep state per PE (lb, comlib, array's AtSync hook). Declare one as a
// package-level variable and use it only through its address; its value
// on a PE belongs to that PE's goroutine, as everything on the PE does.
//
// Its methods (defined in the runtime, internal/core):
//
//	// Get returns the value s holds on pe, or T's zero value.
//	func (s *Slot[T]) Get(pe *PE) T
//
//	// Set makes v the value s holds on pe.
//	func (s *Slot[T]) Set(pe *PE, v T)
type Slot[T any] = core.Slot[T]

// PortableDelegate is a delegate that travels with its proxy: in
// messages to other processes, in migrated and checkpointed state, in
// callbacks made from the proxy. It exists in every process of the job
// under one identity (a group-like object made collectively), and a proxy
// decoded anywhere is delegated to the instance that its kind's resolver
// returns there. TRAM's delegates and Comlib's instances are portable, so
// a program sends through the same delegate on one process or many. A
// proxy delegated to a delegate that is not portable cannot be encoded:
// the message, migration or checkpoint fails with an error naming the
// delegate, rather than the proxy arriving undelegated.
//
// A program's own delegate becomes portable by implementing DelegateRef
// and registering its kind, in an init function, with a resolver that
// returns the process's instance for an identity.
//
// Its methods (defined in the runtime, internal/core):
//
//	type PortableDelegate interface {
//		Delegate
//		// DelegateRef names the delegate across the job: a kind registered
//		// with RegisterDelegateKind and an identity within that kind.
//		DelegateRef() (kind string, id uint64)
//	}
type PortableDelegate = core.PortableDelegate

// DelegateResolver returns, in the job running on pe, the delegate with
// the given identity.
type DelegateResolver = core.DelegateResolver

// RegisterDelegateKind makes a kind of portable delegate known to this
// process. Call it in an init function, in the same order in every
// process (the same binary does).
func RegisterDelegateKind(kind string, resolve DelegateResolver) {
	core.RegisterDelegateKind(kind, resolve)
}

// DelegateName names a delegate in errors and reports: its type, and its
// String if it has one.
func DelegateName(d Delegate) string {
	return core.DelegateName(d)
}

// Kind says what a proxy addresses.
//
// Its methods (defined in the runtime, internal/core):
//
//	func (k Kind) String() string
//
//	// IsBroadcast reports whether the kind addresses more than one object.
//	func (k Kind) IsBroadcast() bool
type Kind = core.Kind

// The kinds of proxy, of type Kind, with their values.
const (
	KindNone     = core.KindNone     // 0: none (the zero Route)
	KindChare    = core.KindChare    // 1: a singleton chare
	KindBranch   = core.KindBranch   // 2: one branch of a group or node group
	KindGroupAll = core.KindGroupAll // 3: every branch of a group or node group (broadcast)
	KindElement  = core.KindElement  // 4: one element of a chare array
	KindArrayAll = core.KindArrayAll // 5: every element of a chare array (broadcast)
	KindSection  = core.KindSection  // 6: the members of an array section (multicast)
)

// CollID names a collection (a singleton chare, a group, a node group or an
// array) across the job: the creating PE in the high half, a sequence
// number of that PE in the low half.
//
// Its methods (defined in the runtime, internal/core):
//
//	func (c CollID) String() string
type CollID = core.CollID

// Route is where a send goes.
//
// Its fields (defined in the runtime, internal/core):
//
//	type Route struct {
//		Kind    Kind
//		Coll    CollID
//		PE      int      // the PE of a chare or group branch
//		Index   any      // the index of an array element
//		Section *Section // the members of a section
//	}
type Route = core.Route

// Delegate receives the sends made through a delegated proxy (Charm++'s
// CkDelegateMgr). It may forward them with [Forward], aggregate them, or
// route them any way it likes, as long as each arrives once. The Route of
// the envelope says what kind of send it is.
//
// Its methods (defined in the runtime, internal/core):
//
//	type Delegate interface {
//		// Send handles a send to one chare, group branch or array element.
//		Send(from Context, e Envelope) error
//		// Broadcast handles a send to every branch of a group or every
//		// element of an array.
//		Broadcast(from Context, e Envelope) error
//		// Multicast handles a send to the members of an array section.
//		Multicast(from Context, e Envelope) error
//	}
type Delegate = core.Delegate

// Bracketed is implemented by delegates whose strategies work in
// iterations (Comlib's begin/end iteration brackets).
//
// Its methods (defined in the runtime, internal/core):
//
//	type Bracketed interface {
//		BeginIteration(from Context, iteration int) error
//		EndIteration(from Context) error
//	}
type Bracketed = core.Bracketed

// Proxy is a handle to a chare, a group, an array, one of their members or
// a section, through which entry methods of T are invoked. Proxies are
// values: copy them freely, store them, send them in messages.
//
// Its methods (defined in the runtime, internal/core):
//
//	// Route returns where the proxy sends.
//	func (p Proxy[T]) Route() Route
//
//	// IsZero reports whether the proxy was never set.
//	func (p Proxy[T]) IsZero() bool
//
//	// Delegate returns a copy of the proxy whose sends go to d (nil removes
//	// the delegation).
//	func (p Proxy[T]) Delegate(d Delegate) Proxy[T]
//
//	// Undelegate returns a copy of the proxy that sends directly.
//	func (p Proxy[T]) Undelegate() Proxy[T]
//
//	// Delegated returns the proxy's delegate, or nil.
//	func (p Proxy[T]) Delegated() Delegate
//
//	// WithRoute returns a proxy of the same delegation with another route;
//	// collection packages use it to derive element proxies.
//	func (p Proxy[T]) WithRoute(r Route) Proxy[T]
//
//	func (p Proxy[T]) String() string
//
//	// EncodeMsgpack lets a proxy travel in a message, in migrated or
//	// checkpointed state, with its delegate: a PortableDelegate travels as
//	// its reference (kind and identity) and is found again where the proxy
//	// is used; a proxy delegated to any other delegate cannot be encoded,
//	// and the error names the delegate.
//	func (p Proxy[T]) EncodeMsgpack(enc *msgpack.Encoder) error
//
//	// DecodeMsgpack reads a proxy from a message.
//	func (p *Proxy[T]) DecodeMsgpack(dec *msgpack.Decoder) error
type Proxy[T any] = core.Proxy[T]

// Target is anything that can be sent to: Proxy itself, and the group and
// array proxy types that embed it.
type Target[T any] = core.Target[T]

// NewProxy returns a proxy for the route; collection packages use it.
func NewProxy[T any](r Route) Proxy[T] {
	return core.NewProxy[T](r)
}

// BeginIteration starts an iteration on a proxy delegated to a bracketed
// strategy; it does nothing for other proxies.
func BeginIteration[T any](from Context, to Target[T], iteration int) error {
	return core.BeginIteration[T](from, to, iteration)
}

// EndIteration ends the iteration begun by BeginIteration.
func EndIteration[T any](from Context, to Target[T]) error {
	return core.EndIteration[T](from, to)
}

// NewFutureFor creates a future for the result of a reduction with r, of
// the type r delivers: NewFutureFor(m, reducer.GatherOf[int, Cell]())
// is a Future[[]reducer.Pair[int, Cell]]. Pass its Callback to the
// contributors, which contribute with the same reducer. Unlike
// NewFuture[T], a T that does not match the reducer does not compile.
func NewFutureFor[R any](ctx Context, r reducer.Typed[R]) Future[R] {
	return core.NewFutureFor[R](ctx, r)
}

// EntryCallbackFor is EntryCallback for the result of a reduction with r:
// the compiler checks that method takes what r delivers, as in
// EntryCallbackFor(main, reducer.GatherOf[int, Cell](), (*Main).Done) with
// Done(items []reducer.Pair[int, Cell]).
func EntryCallbackFor[T, R any](to Target[T], r reducer.Typed[R], method func(*T, R)) Callback {
	return core.EntryCallbackFor[T, R](to, r, method)
}

// ProgramFlags declares flags (names without the dash) that the program
// parses itself from its arguments although they look like the runtime's:
// a flag of a package it does not import, or a name one letter away from
// a runtime flag. ParseArgs passes them on instead of refusing them. Call
// it before Main (or ParseArgs). A flag defined on flag.CommandLine before
// Main needs no declaration, nor does one that a program parses with a
// flag.FlagSet of its own if its users put it after "--". Flags the runtime
// takes (-p, and those of imported packages, such as lb's -balancer) are
// still taken.
func ProgramFlags(names ...string) {
	core.ProgramFlags(names...)
}

// Section is a subset of an array's elements (Charm++'s CkSectionID): a
// section proxy multicasts to them, and they can reduce among themselves.
//
// Its fields (defined in the runtime, internal/core):
//
//	type Section struct {
//		ID      CollID // names the section's reductions
//		Coll    CollID
//		Members []any
//		N       int // the number of members
//		// Has unexported fields.
//	}
//
// Its methods (defined in the runtime, internal/core):
//
//	// EncodeMsgpack lets a section travel in a message.
//	func (s *Section) EncodeMsgpack(enc *msgpack.Encoder) error
//
//	// DecodeMsgpack reads a section from a message.
//	func (s *Section) DecodeMsgpack(dec *msgpack.Decoder) error
type Section = core.Section

// NewSection makes a section of collection coll from the given member
// indices, which must be distinct.
func NewSection(from Context, coll CollID, members []any) (*Section, error) {
	return core.NewSection(from, coll, members)
}

// Send invokes an entry method asynchronously: chare.Send(w, p, (*Worker).Step, msg).
// The compiler checks that the method belongs to the proxy's chare type and
// that msg is its message type. After Send, the sender must not modify what
// msg references: in one process the message is handed over, not copied.
// A broadcast or multicast hands the same message to every receiver, which
// must treat it as read-only.
//
// The target is a type parameter, not an interface parameter, so that a
// proxy is passed as it is instead of being boxed on the heap per send.
func Send[T, M any, P Target[T]](from Context, to P, method func(*T, M), msg M) error {
	return core.Send[T, M, P](from, to, method, msg)
}

// Send0 invokes an entry method that takes no message.
func Send0[T any, P Target[T]](from Context, to P, method func(*T)) error {
	return core.Send0[T, P](from, to, method)
}

// SendR is Send for an entry method that returns a value (one that Call
// can call): the method runs as Send would run it, and its result is
// dropped. Through a group or array proxy it broadcasts, and through a
// section it multicasts, which Call cannot. The compiler checks the method
// and msg as it does for Send.
//
// Send itself takes only methods without a result: Go has no generic
// parameter that stands for "a method with or without a result" (a type
// set of both func types has no core type, so it could not be called, and
// the result's type could not be inferred for a method without one). So
// the methods with a result have their own functions, SendR and SendR0,
// as they have Call and Call0.
func SendR[T, M, R any](from Context, to Target[T], method func(*T, M) R, msg M) error {
	return core.SendR[T, M, R](from, to, method, msg)
}

// SendR0 is Send0 for an entry method that returns a value: the result is
// dropped. See SendR.
func SendR0[T, R any](from Context, to Target[T], method func(*T) R) error {
	return core.SendR0[T, R](from, to, method)
}

// Call invokes an entry method that returns a value (a Charm++ sync entry
// method) on one chare, branch or element, and returns a future for the
// result; a threaded entry method can wait for it with Get. To invoke it
// and drop the result, or to broadcast it, use SendR.
func Call[T, M, R any](from Context, to Target[T], method func(*T, M) R, msg M) (Future[R], error) {
	return core.Call[T, M, R](from, to, method, msg)
}

// Call0 is Call for an entry method without a message:
// f, err := chare.Call0(from, p, (*Counter).Value).
func Call0[T, R any](from Context, to Target[T], method func(*T) R) (Future[R], error) {
	return core.Call0[T, R](from, to, method)
}

// Forward sends an envelope on the direct path, as if its proxy were not
// delegated. Delegates call it for the sends they do not handle themselves
// and, on the destination PE, to deliver.
func Forward(from Context, e Envelope) error {
	return core.Forward(from, e)
}

// Deliver runs an envelope on this PE right away, as if it had just arrived
// (the last step of a delegate that carried it here itself).
func Deliver(from Context, e Envelope) error {
	return core.Deliver(from, e)
}

// Local returns the object behind an element, branch or chare proxy if it
// lives on the sender's PE (Charm++'s ckLocal), or nil.
func Local[T any](from Context, to Target[T]) *T {
	return core.Local[T](from, to)
}

// SendInline calls the entry method directly when the target lives on the
// sender's PE and the proxy is not delegated (Charm++'s [inline]): the
// method runs before SendInline returns, without a message. Otherwise, or
// for a threaded method, it sends as Send does.
func SendInline[T, M any](from Context, to Target[T], method func(*T, M), msg M) error {
	return core.SendInline[T, M](from, to, method, msg)
}

// Bound is an entry method given by name with its typed function. Go
// compiles a method expression of a generic chare type written inside
// generic code, such as (*branch[C, T]).Recv, to a closure that Send cannot
// recognize; generic libraries (TRAM) bind their methods by name instead.
//
// Its methods (defined in the runtime, internal/core):
//
//	// Send invokes the bound method, as chare.Send does.
//	func (b Bound[T, M]) Send(from Context, to Target[T], msg M) error
type Bound[T, M any] = core.Bound[T, M]

// Bind finds the entry method name of T, which must take an M, and pairs it
// with fn, which must be that method.
func Bind[T, M any](name string, fn func(*T, M)) (Bound[T, M], error) {
	return core.Bind[T, M](name, fn)
}

// AnyPE, given to New or NewWith as the PE, asks the runtime to place
// the singleton chare itself.
const AnyPE = -1

// New creates a singleton chare of type T on PE pe (or AnyPE) and returns
// a proxy to it (Charm++'s ckNew for a chare). The object starts as the
// zero T.
func New[T any](from Context, pe int) (Proxy[T], error) {
	return core.New[T](from, pe)
}

// NewWith creates a singleton chare and runs init(msg) on it before any
// other message (a constructor with arguments).
func NewWith[T, M any](from Context, pe int, init func(*T, M), msg M) (Proxy[T], error) {
	return core.NewWith[T, M](from, pe, init, msg)
}

// Transient declares fields of a chare type that are never packed: they
// do not travel when an object migrates nor go into a checkpoint, and
// they come back (on the new PE, or after a restart) as their zero value.
// Use it for caches rebuilt after a move, handles to per-PE things, and
// counters a test keeps on one PE. Fields are named as PackError reports
// them ("cache", "Stats.last", "Items[].note"); a name covers the fields
// below it ("Stats" drops the whole of Stats). A name that is not a field
// of the type is an error at Register, as is one that goes through an
// interface or into a map's keys (name the interface or the map itself).
// Tagging an exported field `msgpack:"-"` does the same as declaring it
// Transient.
func Transient(fields ...string) Option {
	return core.Transient(fields...)
}

// TypeID numbers a registered chare type; Register assigns them in call
// order, so every process running the same binary agrees on them.
type TypeID = core.TypeID

// EntryID numbers an entry method across the program: the type's ID in the
// high half, the method's position (by name) in the low half.
type EntryID = core.EntryID

// Type describes a registered chare type.
//
// Its fields (defined in the runtime, internal/core):
//
//	type Type struct {
//		ID   TypeID
//		Name string // package-qualified, as "main.Worker"
//		// Has unexported fields.
//	}
//
// Its methods (defined in the runtime, internal/core):
//
//	// PackError returns nil if the objects of the type can be packed for
//	// what (as "migration" or "a checkpoint") without losing state: every
//	// field survives packing, is declared with Transient or tagged
//	// `msgpack:"-"`, or the type implements Packer.
//	func (t *Type) PackError(what string) error
//
//	// Packs reports whether the objects of the type can be packed without
//	// losing state (PackError returns nil): whether they may migrate.
//	func (t *Type) Packs() bool
//
//	// Migrates reports whether the type's objects are of a kind that
//	// migrates (array elements); whether they may is Packs.
//	func (t *Type) Migrates() bool
//
//	// New returns a new zero object of the type.
//	func (t *Type) New() any
//
//	// Entries lists the type's entry methods in ID order.
//	func (t *Type) Entries() []*Entry
//
//	// Entry returns the entry method with the given name.
//	func (t *Type) Entry(name string) (*Entry, error)
type Type = core.Type

// Entry describes one entry method of a chare type.
//
// Its fields (defined in the runtime, internal/core):
//
//	type Entry struct {
//		ID       EntryID
//		Type     *Type
//		Name     string       // the method's name
//		Msg      reflect.Type // nil for a method without a message
//		Result   reflect.Type // nil unless the method returns a value (a sync entry)
//		Threaded bool
//		// NoRuns: every message of the entry method travels in an envelope of
//		// its own, never in a run (NoRuns).
//		NoRuns bool
//		// Has unexported fields.
//	}
//
// Its methods (defined in the runtime, internal/core):
//
//	func (e *Entry) String() string
//
//	// Invoke calls the entry method on obj with msg (nil for a method
//	// without a message) and returns its result, if any.
//	func (e *Entry) Invoke(obj, msg any) (any, error)
type Entry = core.Entry

// Option configures a chare type at registration.
type Option = core.Option

// Fast declares an entry method whose messages from other processes are
// decoded and delivered without reflection (about twice as fast). A
// process of a job of several processes that sends to the method itself
// gets this by its first Send (a job of one process receives from no
// other process, and builds none); Fast is for processes that only
// receive, or that decode envelopes themselves. It is an optimization
// only.
func Fast[T, M any](method func(*T, M)) Option {
	return core.Fast[T, M](method)
}

// Threaded marks entry methods (given as method expressions, such as
// (*Worker).Run) as threaded: they run in their own goroutine and may block
// on futures without blocking their PE (Charm++ [threaded]).
func Threaded(methods ...any) Option {
	return core.Threaded(methods...)
}

// NoRuns marks entry methods whose messages each travel in an envelope of
// their own: consecutive sends to one group branch, or to array elements
// on one PE, do not share a run
// (run.go). Nothing but the cost changes — the order and the delivery are
// the same — so this is for measuring what runs save, or for comparing
// with a runtime that sends one message per call, as Charm++ does.
func NoRuns(methods ...any) Option {
	return core.NoRuns(methods...)
}

// Register makes T a chare type: its exported methods that take a pointer
// receiver and at most one argument become entry methods. Register types
// in the same order in every process (in init functions or at the start of
// main); registering a type again returns the same description.
//
// Register records which fields of T would not survive packing
// (unexported, interface, func and channel fields not declared with
// Transient nor tagged `msgpack:"-"`, unless T implements Packer). A type
// with such fields registers and runs, but its objects cannot migrate nor
// be checkpointed: both are refused with an error naming the type and the
// fields (Type.PackError), and load balancers leave its elements where
// they are. Register panics only on a mistake in the options: a name given
// to Transient that is not a field of T, or a method given to Threaded,
// NoRuns or Fast that is not an entry method of T.
func Register[T any](opts ...Option) *Type {
	return core.Register[T](opts...)
}

// TypeOf returns the registered description of T, or an error naming T if
// it was not registered.
func TypeOf[T any]() (*Type, error) {
	return core.TypeOf[T]()
}

// TypeByID returns the type registered under id. It takes no lock: the
// message path of other processes calls it for every message.
func TypeByID(id TypeID) (*Type, error) {
	return core.TypeByID(id)
}

// EntryOf returns the entry method behind a method expression, or an error
// naming what was passed instead.
func EntryOf(method any) (*Entry, error) {
	return core.EntryOf(method)
}

// Fingerprint identifies the program's chare types and entry methods, so
// that nodes running different programs refuse to form a job.
func Fingerprint() string {
	return core.Fingerprint()
}
