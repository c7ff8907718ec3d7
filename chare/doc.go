// Package chare is the programming model: chare types and their entry
// methods, proxies and delegation, callbacks, futures, reductions, and the
// main chare that starts a program.
//
// A chare is a Go struct that embeds a base (Chare for singleton chares,
// group.Branch for groups, array.Element for arrays). Its entry methods are
// its exported methods with a pointer receiver and at most one argument;
// register the type once, in the same order in every process:
//
//	type Worker struct {
//		array.Element[Worker, int]
//		Sum float64 // exported: it travels when the element migrates
//	}
//
//	func (w *Worker) Add(x float64) { w.Sum += x }
//
//	func init() { chare.Register[Worker]() }
//
// Entry methods are invoked through proxies with method expressions, so the
// compiler checks both the chare type and the message type; no code is
// generated:
//
//	chare.Send(self, workers.At(3), (*Worker).Add, 1.5)
//
// Send0 sends to a method without a message. A method that returns a value
// (a sync entry method) is called with Call or Call0, which return a
// Future for the value, or sent to with SendR or SendR0, which drop it.
//
// The first argument is the sending Context: the chare that sends (any
// object embedding a base is one). Entry methods of the objects on one PE
// run one at a time, so chare code needs no locks. Messages are handed
// over, not copied, inside a process: do not modify a message after
// sending it, and treat broadcast messages as read-only.
//
// Constructors (the init methods of NewWith, group.NewWith and
// array.NewWith) run once the object's collection exists on its PE: they
// may send to their own collection, to a neighbour say, like any entry
// method.
//
// State: array elements may migrate, and every chare is saved by a
// checkpoint, as msgpack of its exported fields unless its type
// implements Packer (Charm++'s pup). Unexported, interface (any
// included), func and channel fields do not survive that; a time.Time
// keeps its instant but not its zone nor its monotonic reading. A type
// with such fields registers and runs all the same — write an element
// with unexported fields, as a Charm++ chare without a pup routine — but
// its objects are not movable: Migrate and Checkpoint refuse them with an
// error naming the type and each field with what would make it survive
// (Type.PackError), before anything is packed, and load balancers leave
// its elements where they are. To make such a type movable, export the
// fields, implement Packer, or declare with Transient the fields that may
// be lost (caches, per-PE handles): Transient fields are never packed and
// come back as their zero value. A state that does not unpack is an error
// naming the type and the field; an element that cannot be unpacked where
// it migrates stops the job, naming it. See Transient.
//
// Threaded entry methods (register with Threaded) run in their own
// goroutine and may block on futures (Future.Get, WaitAll, WaitAny; with a
// deadline, Future.GetBefore) or sync calls (Call) while their PE goes on
// with other messages. The main
// function runs threaded on PE 0:
//
//	func (m *Main) Start(args []string) { ...; m.Exit(0) }
//	func main() { os.Exit(chare.Main((*Main).Start)) }
//
// Reductions: group branches and array elements Contribute a value with a
// reducer from package reducer and a Callback; the results of successive
// reductions arrive in order. Callbacks go to an entry method (of one
// object, or broadcast), a future, a Go function on a PE, nowhere, or the
// end of the job. For a reducer.Typed reducer (reducer.GatherOf, ConcatOf,
// SetOf), NewFutureFor and EntryCallbackFor make a target whose type the
// compiler checks against the reducer's result.
//
// Delegation: a proxy can be delegated to a Delegate (TRAM, Comlib), which
// then receives every send made through it — element sends, broadcasts and
// section multicasts — and passes the envelopes on with Forward or
// Deliver.
//
// Quiescence (DetectQuiescence) and completion (StartCompletion) detection
// use waves over a spanning tree of PEs and only exchange messages.
//
// Order: between one sender and one receiver, messages arrive in the order
// sent (FIFO); nothing is promised between different senders, nor for a
// broadcast against a direct send.
//
// Cost: consecutive sends of one entry method to one group branch, or to
// array elements on one PE, travel as a run — one header and a slice of
// the messages (with each element's index beside it) — rather than an
// envelope each, in one process and between processes. A sender
// that outruns its receivers waits rather than filling memory (see
// Config.MaxInFlight and Config.MaxRemoteInFlight); nothing is dropped.
//
// This package is what a program uses. The runtime that implements it
// lives in the module's internal/core, which group, array, lb, tram and
// comlib share with it; chare's types are aliases of the runtime's (a
// chare.Proxy[T] is the same type in both) and its functions call the
// runtime's. go doc shows no methods for an alias, so the doc comment of
// each type lists them. Error messages and %T name these types as the
// runtime's (core.Proxy), except the packing errors of migration and
// checkpoints, which name a field's type as a program writes it.
package chare
