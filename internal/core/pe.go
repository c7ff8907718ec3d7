package core

import (
	"fmt"
	"sync"

	"github.com/charmgo/charm/actor"
	"github.com/charmgo/charm/trace"
)

// Job is the chare layer's state of one running program in this process.
type Job struct {
	rt    *actor.Runtime
	colls sync.Map // CollID → *Collection
	args  []string
	flags map[string]string
	trace *jobTrace // nil unless the job is traced
	// funcIDs are the function callbacks the job made in this process,
	// forgotten when it ends (FuncCallback).
	funcMu  sync.Mutex
	funcIDs []uint64
}

// Runtime returns the job's runtime.
func (j *Job) Runtime() *actor.Runtime { return j.rt }

// Part is a collection's part on one PE: the objects that live there and
// the knowledge of where the others are.
type Part interface {
	// Locate returns the PE to which a message for the member with the
	// given index (a PE number for groups) should be sent from here.
	Locate(index any) (int, error)
	// Deliver runs an envelope addressed to the member with the given
	// index, which the route says is on this PE.
	Deliver(pe *PE, e Envelope, index any)
	// DeliverAll runs a broadcast envelope on every local member.
	DeliverAll(pe *PE, e Envelope)
}

// ElementRouter is implemented by the parts of collections whose members
// migrate: SendTo picks the destination PE of a message for one member
// and fills in what the header must carry for the location manager.
type ElementRouter interface {
	SendTo(h *Header) (int, error)
}

// RawDeliverer is implemented by the parts of collections whose members
// are reached by index (arrays): DeliverRaw is Part.Deliver for an
// envelope from another process whose index is still in its wire form,
// which it reads without boxing it in an any. An index that does not
// decode is an error.
type RawDeliverer interface {
	DeliverRaw(pe *PE, e Envelope, raw []byte) error
}

// Constructor is implemented by the parts of collections whose members
// have constructors: Part calls Construct once, right after NewLocal, when
// the part is stored on its PE. NewLocal makes the members; Construct runs
// their constructors, which may then send to their own collection (to a
// neighbour, say) like any other entry method.
type Constructor interface{ Construct() }

// Sequencer is implemented by the parts of collections whose broadcasts
// are numbered at one root PE (arrays, whose elements migrate).
type Sequencer interface {
	// BroadcastRoot is where broadcasts are numbered.
	BroadcastRoot() int
	// Sequence numbers a broadcast that reached the root (Header.Epoch).
	Sequence(pe *PE, e Envelope)
}

// Collection describes a singleton chare, a group, a node group or an
// array, the same in every process.
type Collection struct {
	ID   CollID
	Kind Kind // KindChare, KindBranch (groups) or KindElement (arrays)
	Type *Type
	// NewLocal creates the collection's part on a PE; it runs on that PE
	// the first time a message for the collection arrives there, or when
	// the creation message does.
	NewLocal func(pe *PE) (Part, error)
	// Tree lists the PEs that host members when the collection is made
	// (they get its creation message).
	Tree []int
	// Count returns, on the reduction root, how many members reduction no
	// counts, or false if that is not known yet; nil means len(Tree), one
	// member per PE (groups).
	Count func(pe *PE, no int) (int, bool)
	// Ext holds what the collection package keeps (bounds, map...).
	Ext any
	// Spec describes the collection for other processes.
	Spec Spec
	// DecodeIndex reads an index that came from another process.
	DecodeIndex func([]byte) (any, error)
	// SpecData, if set, describes the collection for a checkpoint when
	// Spec.Data is empty (a job of one process does not announce it).
	SpecData func() ([]byte, error)
	// Place, if set, gives the PE where a restart puts the member with
	// the given index (arrays: its home), or an error if the index is not
	// one of the collection's.
	Place func(index any) (int, error)
}

// PE is the chare layer's state on one processing element. Only code
// running on that PE touches it.
type PE struct {
	ap     *actor.PE
	job    *Job
	locals map[CollID]Part
	seq    uint32 // collection, section and future sequence numbers

	ents entryCache // the entry methods that sends from here named last
	// The run buffer that the delegate of the entry mark lastMark gave
	// this PE (sendFast): later sends of marked methods skip the call to
	// RunBuffer while the mark and the buffer hold.
	lastMark *entryMark
	lastBuf  *RunBuffer

	slabs         map[*Entry]any // *envSlab per entry method sent from here
	lastSlab      any            // the cache of slabs
	lastSlabEntry *Entry
	runHints      map[*Entry]int // the capacity that runs of sends reached, per entry method (run.go)
	secWhere      []memberAt     // sendSectionRun's scratch: its members' places
	dynFree       []envDyn       // callback envelopes not handed out yet (newEnvDyn)
	dynN          int            // the length of the next such array

	futures  map[uint64]*futureSlot
	pending  map[CollID][]heldWork // work waiting for a collection's announcement
	reds     map[redKey]*redAcc
	lastDesc *Collection // the cache of collection

	lastColl CollID // the cache of Part
	lastPart Part

	lastRed  redKey // the cache of redAcc
	lastAcc  *redAcc
	spareAcc *redAcc   // a finished redAcc, for the next reduction (newAcc)
	owed     owedCount // redOwed's count, and its add method made once
	owedAdd  func(any)

	measure    bool        // entry methods are timed (see PE.SetMeasure)
	measureCPU bool        // and charged their CPU time
	slots      map[any]any // other packages' per-PE state, by *Slot
	commOn     bool        // messages between elements are counted
	comm       map[commKey]int

	ckpt    *ckptRun    // on PE 0, a checkpoint being written
	restart *restartRun // on PE 0, a restart under way
	redNext map[redStream]*redOrder
	ctx     Base // the PE itself as a Context

	tr     *trace.Buffer // nil unless the job is traced (trace.go)
	labels map[*Entry]*trace.Label
}

func peOf(ap *actor.PE) *PE { return ap.Ext.(*PE) }

func newPE(ap *actor.PE, job *Job) *PE {
	pe := &PE{ap: ap, job: job, locals: map[CollID]Part{}, futures: map[uint64]*futureSlot{},
		reds: map[redKey]*redAcc{}, redNext: map[redStream]*redOrder{}}
	pe.ctx.pe, pe.ctx.me, pe.ctx.npes = pe, ap.ID(), ap.NumPEs()
	ap.Ext = pe
	return pe
}

// ID returns the PE's number.
func (pe *PE) ID() int { return pe.ap.ID() }

// NumPEs returns the number of PEs in the job.
func (pe *PE) NumPEs() int { return pe.ap.NumPEs() }

// Actor returns the runtime PE underneath.
func (pe *PE) Actor() *actor.PE { return pe.ap }

// Job returns the job the PE belongs to.
func (pe *PE) Job() *Job { return pe.job }

// ContextOf returns a Context for code running on pe outside any chare
// (function callbacks, runtime handlers).
func ContextOf(pe *PE) Context { return &pe.ctx }

func (pe *PE) nextSeq() uint32 {
	pe.seq++
	return pe.seq
}

// NewCollID returns a new collection ID, unique across the job.
func NewCollID(pe *PE) CollID { return CollID(uint64(pe.ID())<<32 | uint64(pe.nextSeq())) }

// AddCollection makes a collection known to the job. The creating PE calls
// it before any message for the collection is sent.
func AddCollection(pe *PE, c *Collection) {
	c.Spec.ID, c.Spec.Kind, c.Spec.Tree = c.ID, c.Kind, c.Tree
	if c.Type != nil {
		c.Spec.Type = c.Type.ID
	}
	pe.job.colls.Store(c.ID, c)
	if pe.job.rt.NumNodes() > 1 {
		pe.announce(c)
	}
}

// JobCollection returns the description of a collection of job j.
func JobCollection(j *Job, id CollID) (*Collection, error) {
	if c, ok := j.colls.Load(id); ok {
		return c.(*Collection), nil
	}
	return nil, fmt.Errorf("chare: no collection %v exists", id)
}

// collection returns a collection's description, or errPending if it was
// created in another process and its announcement has not arrived yet.
func (pe *PE) collection(id CollID) (*Collection, error) {
	if c := pe.lastDesc; c != nil && c.ID == id {
		return c, nil // sends come in runs for one collection
	}
	c, err := JobCollection(pe.job, id)
	if err == nil {
		pe.lastDesc = c
	} else {
		creator := int(uint64(id) >> 32)
		// (A restart on fewer PEs keeps the IDs of collections made on
		// PEs that no longer exist; node 0 announces them.)
		if rt := pe.job.rt; rt.NumNodes() > 1 && (creator >= pe.NumPEs() || !rt.IsLocal(creator)) {
			return nil, errPending // its announcement is on its way
		}
		return nil, err
	}
	return c, nil
}

// PartOf returns the collection's part on pe, creating it on first use.
func PartOf(pe *PE, id CollID) (Part, error) {
	if id == pe.lastColl && pe.lastPart != nil {
		return pe.lastPart, nil // messages come in runs for one collection
	}
	if l := pe.locals[id]; l != nil {
		pe.lastColl, pe.lastPart = id, l
		return l, nil
	}
	c, err := pe.collection(id)
	if err != nil {
		return nil, err
	}
	l, err := c.NewLocal(pe)
	if err != nil {
		return nil, fmt.Errorf("chare: creating the part of %s %v on PE %d: %w", c.Type.Name, id, pe.ID(), err)
	}
	pe.locals[id] = l
	if k, ok := l.(Constructor); ok {
		// Stored first: a constructor that sends to its own collection
		// finds this part instead of building it again.
		k.Construct()
	}
	return l, nil
}

// fail aborts the job with err.
func (pe *PE) fail(err error) { pe.job.rt.Abort(err) }

// Fail aborts the job with an error; collection packages call it for
// errors found where no caller can receive them (a message for an index
// that does not exist, say).
func (pe *PE) Fail(err error) { pe.fail(err) }

// Invoke runs an envelope's entry method on obj, in a thread if the entry
// is threaded.
func Invoke(pe *PE, obj any, e Envelope) {
	if pe.tr != nil {
		pe.invokeTraced(obj, e)
		return
	}
	pe.invoke(obj, e)
}

func (pe *PE) invoke(obj any, e Envelope) {
	if en := e.Header().Entry; en != nil && en.Threaded {
		var describe func() string
		if d, ok := e.(actor.Describer); ok {
			describe = d.Describe
		}
		pe.ap.Spawn(describe, func(*actor.Thread) { e.invoke(pe, obj) })
		return
	}
	if pe.measure {
		pe.invokeMeasured(obj, e)
		return
	}
	e.invoke(pe, obj)
}

// held reports whether messages for a collection wait on this PE for its
// announcement. Those that come later must wait behind them, even once the
// collection is known in this process (the PE hears of it a little
// later): messages stay in order.
func (pe *PE) held(id CollID) bool { return len(pe.pending) > 0 && len(pe.pending[id]) > 0 }

// mustHold reports whether a send must wait (pe.hold) until its
// collection is announced here: looking the collection up gave errPending,
// or succeeded while earlier messages for it still wait (this sender's
// order stays behind them). Otherwise the caller goes on with err. The
// caller makes the closure that hold keeps only when it holds (a closure
// made for every send was an allocation per message).
func (pe *PE) mustHold(coll CollID, err error) bool {
	return err == errPending || err == nil && pe.held(coll)
}

// route handles an envelope that arrived on this PE.
func (pe *PE) route(e Envelope) {
	h := e.Header()
	if pe.held(h.Coll) {
		pe.hold(h.Coll, e, func() { pe.route(e) })
		return
	}
	l, err := PartOf(pe, h.Coll)
	if err == errPending {
		pe.hold(h.Coll, e, func() { pe.route(e) })
		return
	}
	if err != nil {
		pe.fail(fmt.Errorf("%w (message for %s)", err, Describe(e)))
		return
	}
	if h.Kind == KindElement {
		// From another process: an array reads the index from its bytes,
		// without boxing it in the header (an allocation per message).
		if raw, ok := rawOf(h.Index); ok {
			if rd, ok := l.(RawDeliverer); ok {
				if err := rd.DeliverRaw(pe, e, raw); err != nil {
					pe.fail(fmt.Errorf("%w (message for %s)", err, Describe(e)))
				}
				return
			}
		}
	}
	if err := pe.resolveHeader(h); err != nil {
		pe.fail(fmt.Errorf("%w (message for %s)", err, Describe(e)))
		return
	}
	switch h.Kind {
	case KindChare, KindBranch:
		l.Deliver(pe, e, h.PE)
	case KindElement:
		l.Deliver(pe, e, h.Index)
	case KindGroupAll, KindArrayAll:
		if err := pe.checkBroadcast(e); err != nil {
			pe.fail(err)
			return
		}
		if s, ok := l.(Sequencer); ok {
			s.Sequence(pe, e)
		}
		pe.forwardBroadcast(e)
		l.DeliverAll(pe, e)
	case KindSection:
		for _, idx := range h.Members() {
			l.Deliver(pe, e, idx)
		}
	default:
		pe.fail(fmt.Errorf("chare: envelope with bad route kind %v", h.Kind))
	}
}

// checkBroadcast refuses a broadcast whose header names an entry method
// of another chare type than the collection's (a damaged header from
// another process, or a program's bug), before it is numbered, passed on
// down the tree or run on any member here.
func (pe *PE) checkBroadcast(e Envelope) error {
	h := e.Header()
	if h.Entry == nil {
		return nil
	}
	c, err := pe.collection(h.Coll)
	if err != nil || h.Entry.Type == c.Type {
		return nil // (its part is here, so it is known)
	}
	return fmt.Errorf("chare: %s, a broadcast reaching PE %d: an entry method of %s, not of %s, the type of %v", Describe(e), pe.ID(), h.Entry.Type.Name, c.Type.Name, h.Coll)
}

// Describe names an envelope's entry method and target, for error messages.
func Describe(e Envelope) string {
	if d, ok := e.(actor.Describer); ok {
		return d.Describe()
	}
	return valueTypeName(e)
}

// forwardBroadcast passes a broadcast down the spanning tree rooted at the
// PE where it started.
func (pe *PE) forwardBroadcast(e Envelope) {
	t := actor.PETree{Root: e.Header().Root, N: pe.NumPEs(), Arity: pe.job.rt.Tree().Arity}
	var buf [2 * actor.DefaultArity]int
	children := t.AppendChildren(buf[:0], pe.ID())
	for _, c := range children {
		pe.ap.Send(c, e)
	}
	if len(children) > 0 {
		pe.ap.Flush() // let the subtree start before the local members run
	}
}

// resolveHeader decodes the raw indices of an envelope from another
// process.
func (pe *PE) resolveHeader(h *Header) error {
	switch h.Index.(type) {
	case nil:
		return nil
	case rawIndex, *wireIndex, []any:
		c, err := pe.collection(h.Coll)
		if err != nil {
			return err // errPending: the index waits, in wire form
		}
		i, err := pe.resolve(c, h.Index)
		if err != nil {
			return fmt.Errorf("chare: the index %v of a message for %s %v: %w", h.Index, c.Type.Name, c.ID, err)
		}
		h.Index = i
	}
	return nil
}

// PartOrHold returns the collection's part on this PE. If the collection
// was made in another process and is not announced here yet, it keeps fn
// (which handles the message what) to run once it is, and returns nil.
func PartOrHold(pe *PE, coll CollID, what any, fn func()) (Part, error) {
	if pe.held(coll) {
		pe.hold(coll, what, fn)
		return nil, nil
	}
	l, err := PartOf(pe, coll)
	if err == errPending {
		pe.hold(coll, what, fn)
		return nil, nil
	}
	return l, err
}

// EachPart calls fn on every collection part on this PE.
func EachPart(pe *PE, fn func(id CollID, p Part)) {
	for id, p := range pe.locals {
		fn(id, p)
	}
}

// Slot is a place for a value of type T on every PE, for packages that
// keep state per PE (lb, comlib, array's AtSync hook). Declare one as a
// package-level variable and use it only through its address; its value
// on a PE belongs to that PE's goroutine, as everything on the PE does.
type Slot[T any] struct{ _ byte } // not zero-sized: each Slot has its own address

// Get returns the value s holds on pe, or T's zero value.
func (s *Slot[T]) Get(pe *PE) T {
	v, _ := pe.slots[s].(T)
	return v
}

// Set makes v the value s holds on pe.
func (s *Slot[T]) Set(pe *PE, v T) {
	if pe.slots == nil {
		pe.slots = map[any]any{}
	}
	pe.slots[s] = v
}

// PEFor returns the chare PE that runs on actor PE ap: what a message of
// another package, delivered with the actor's PE, acts on; nil if ap runs
// no chares.
func PEFor(ap *actor.PE) *PE {
	pe, _ := ap.Ext.(*PE)
	return pe
}

// PEForMessage is PEFor for message m of package pkg, delivered on ap: if
// ap runs no chares (a misaddressed or damaged frame), the job aborts with
// an error naming m, and PEForMessage returns nil.
func PEForMessage(ap *actor.PE, pkg string, m interface{ Describe() string }) *PE {
	pe := PEFor(ap)
	if pe == nil {
		ap.Runtime().Abort(fmt.Errorf("%s: %s reached PE %d, which runs no chares", pkg, m.Describe(), ap.ID()))
	}
	return pe
}
