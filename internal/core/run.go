package core

import (
	"errors"
	"fmt"
	"github.com/charmgo/charm/trace"
	"math"
	"unsafe"

	"github.com/charmgo/charm/actor"
	"github.com/charmgo/charm/actor/codec"
	"github.com/charmgo/charm/actor/wire"
	"github.com/charmgo/charm/internal/bigbuf"
	"github.com/charmgo/charm/internal/wirekind"
)

// Runs: many small sends of one entry method to one PE.
//
// A loop of chare.Send calls to the branches of a group, or to the
// elements of an array, would give each message an envelope of about 112
// bytes (header, method, message). A run keeps the header once and the
// messages in a []M: while the last message that the sending PE buffered
// for the destination PE (actor.PE.Open) is a run of the same entry method
// to the same branch, or to elements of the same array on that PE, Send
// appends to it. Nothing was buffered for that PE after the run, so the
// order of sends per sender and receiver holds. The run travels and is
// delivered as one message (an actor.Multi that counts as many). A run
// between processes is one wire run (one head, a tail per message) and is
// decoded back into one run, without an envelope per message.
//
// A run to a group branch looks the branch up once and calls the method
// for each message in turn. A run to array elements (an element run) has
// beside its []M an index column: each message's element index and the
// epoch at which the sender believed the element to be on that PE (what a
// single message's header carries, see package location). On its PE each
// message's element is looked up (ElementRunner.Resident); a message for
// an element that is not there (it moved, is on its way, or does not
// exist) becomes an ordinary element envelope with that index and epoch,
// which the location manager forwards or holds exactly as it would a
// single message. Messages for other elements in the run are not held up
// by it.
//
// Runs are used only where nothing needs a message's own envelope: an
// undelegated proxy of a group branch or an array element, an entry method that is not
// threaded nor marked for a delegate nor registered with NoRuns, a PE that
// does not record the communication graph. On a traced PE, a send that
// draws a flow arrow (trace.Sampler: at most trace.FlowsPerWindow a
// window) goes in an envelope of its own, which carries the arrow; the
// others join runs, and the receiver records a slice per message of a run
// as it does per envelope. On the
// receiving side, if the members are not simply there to call (the
// collection is held, an element moved, anything unusual), the run is
// unrolled into ordinary envelopes that take the usual path; a run times
// each message in turn when load is measured (runClock).

// runCap is the least capacity of a new run's slice of messages, and
// runBytes the most bytes one is given at first. A run's slice doubles as
// it grows; the PE remembers the capacity that its runs of each entry
// method reached (PE.runHints), so that in a steady stream of sends a
// run's slice is allocated once, at the size it will need (the actor
// layer posts a destination's buffer at 256 messages). The hint is per
// entry method: a flood of small sends must not make every later run of
// another method, one message each (TRAM's batches, say), start at 16 KiB.
// A method whose runs never grew (a pingpong's ball, a reply) gets a run
// of one, in one allocation with its slices: a run of 16 allocated and
// cleared about a kilobyte per message there.
const (
	runCap   = 1
	runBytes = 16 << 10
)

// run1 carries messages for one entry method func(*T, M) of one branch,
// or of elements of one array on one PE (then idx[i] is msgs[i]'s
// element).
type run1[T, M any] struct {
	envHead
	fn   func(*T, M)
	msgs []M
	idx  []elemKey // nil for a branch's run
	// raw holds the indices of an element run from another process, in
	// their bytes: idx's indices are nil then (a []byte in an any would
	// be an allocation per message).
	raw []rawIndex
	// The message being delivered and its element's index (or, from
	// another process, its bytes and the collection that reads them), for
	// Describe.
	at      int
	cur     any
	curRaw  rawIndex
	curColl *Collection
	// one: the run is the head of a runOfOne, which Release hands back to
	// its entry's pool once delivered.
	one bool
}

// runOfOne is a run of one message decoded from the wire, with the
// slices of its run1 in the same allocation.
type runOfOne[T, M any] struct {
	run run1[T, M]
	msg [1]M
	idx [1]elemKey
	raw [1]rawIndex
}

// elemKey is what an element message's header has of its own: the index
// (as the proxy holds it, or rawIndex from another process) and the epoch
// (Header.Epoch).
type elemKey struct {
	index any
	epoch uint32
}

// ElementRunner is implemented by the parts of collections whose members
// migrate (arrays), so that sends to them can form runs: it does for one
// message what SendTo and Deliver do for an envelope, without one.
type ElementRunner interface {
	ElementRouter
	// Where returns the PE to which a message for the member with the
	// given index goes from here, and the epoch at which this PE believes
	// it is there (SendTo's Header.Epoch).
	Where(index any) (pe int, epoch uint32, err error)
	// Resident returns the member with the given index if it lives on
	// this PE, or nil: then the message takes an envelope's path
	// (forwarded or held).
	Resident(index any) any
	// WhereRaw and ResidentRaw are Where and Resident for an index in
	// its wire form (from another process), which they decode without an
	// allocation; an index that does not decode is an error.
	WhereRaw(raw []byte) (pe int, epoch uint32, err error)
	ResidentRaw(raw []byte) (any, error)
	// Delivered counts a message delivered to a resident member. The run
	// calls it once the member is of the entry method's type: a message
	// that a damaged header sends to another type's entry takes the
	// envelope's path, where the array refuses it uncounted.
	Delivered()
}

// Count implements actor.Multi.
func (r *run1[T, M]) Count() int { return len(r.msgs) }

// Release implements actor.Releaser: a delivered run goes back to its
// entry method's pool, cleared, for a later send of the method to reuse
// (a run of one message whole, a longer one with its slices). Nothing
// holds a delivered run: its messages were called, or copied into
// envelopes of their own.
func (r *run1[T, M]) Release() {
	e := r.h.Entry
	if e == nil {
		return
	}
	if r.one {
		one := (*runOfOne[T, M])(unsafe.Pointer(r)) // run is its first field
		if cap(r.msgs) == 1 {
			*one = runOfOne[T, M]{}
			e.runs.Put(one)
			return
		}
		// It grew out of its own slices: those are dropped, and the run
		// goes on with the new ones.
		one.msg, one.idx, one.raw = [1]M{}, [1]elemKey{}, [1]rawIndex{}
	}
	if c := cap(r.msgs); c < 2 || c > maxPooledRun {
		return
	}
	clear(r.msgs)
	clear(r.idx)
	*r = run1[T, M]{msgs: r.msgs[:0], idx: r.idx[:0]}
	e.runsN.Put(r)
}

// maxPooledRun is the longest run whose slices a delivery hands back for
// reuse: a PE posts a destination's buffer at 256 messages, so runs are
// not longer than twice that.
const maxPooledRun = 512

// Bytes implements actor.Sized: the bound on messages in flight counts a
// run by the memory it holds, not by its messages.
func (r *run1[T, M]) Bytes() int {
	var m M
	return int(unsafe.Sizeof(*r)) + cap(r.msgs)*int(unsafe.Sizeof(m)) + cap(r.idx)*int(unsafe.Sizeof(elemKey{})) + cap(r.raw)*int(unsafe.Sizeof(rawIndex{}))
}

// Describe names the run in an error report.
func (r *run1[T, M]) Describe() string {
	if r.h.Kind == KindElement {
		if r.curRaw != nil && r.curColl != nil && r.curColl.DecodeIndex != nil {
			if v, err := r.curColl.DecodeIndex(r.curRaw); err == nil {
				r.cur = v
			}
		}
		if r.cur != nil { // a panic names the element whose method was running
			return fmt.Sprintf("%s on element %v of array %v (message %d of a run of %d)", r.h.Entry, r.cur, r.h.Coll, r.at, len(r.msgs))
		}
		return fmt.Sprintf("a run of %d messages for %s to elements of array %v", len(r.msgs), r.h.Entry, r.h.Coll)
	}
	return fmt.Sprintf("a run of %d messages for %s on group %v", len(r.msgs), r.h.Entry, r.h.Coll)
}

// objectPart is the part of a collection whose member can be had by index
// (groups: their branch).
type objectPart interface{ Object(index any) any }

// Deliver implements actor.Message: it calls the method on the branch for
// each message, or unrolls the run into envelopes if the branch cannot
// simply be called.
func (r *run1[T, M]) Deliver(ap *actor.PE) {
	pe := peOf(ap)
	h := &r.h
	if h.Kind == KindElement {
		r.deliverElements(pe)
		return
	}
	if !h.Entry.Threaded && h.Kind == KindBranch && h.Index == nil && !pe.held(h.Coll) {
		if l, err := PartOf(pe, h.Coll); err == nil {
			if o, ok := l.(objectPart); ok {
				if obj, ok := o.Object(h.PE).(*T); ok && obj != nil {
					r.deliverBranch(pe, obj)
					return
				}
			}
		}
	}
	for i := range r.msgs {
		env := &env1[T, M]{envHead: r.envHead, fn: r.fn, msg: r.msgs[i]}
		pe.route(env)
	}
}

// deliverBranch calls the method on the branch for each message: a traced
// PE records a slice per message, and load measurement times each message
// in turn (runClock), as for an element run.
func (r *run1[T, M]) deliverBranch(pe *PE, obj *T) {
	stopped := pe.job.rt.Stopped
	var lab *trace.Label
	if pe.tr != nil {
		lab = pe.label(r.h.Entry)
	}
	measure := pe.measure
	var clock runClock
	if measure {
		clock.start(pe)
		defer clock.stop()
	}
	for i := range r.msgs {
		r.call(pe, obj, i, lab)
		if measure {
			clock.charge(obj)
		}
		if stopped() {
			return
		}
	}
}

// call runs message i on obj, in a slice of its own if lab is set (a
// traced PE).
func (r *run1[T, M]) call(pe *PE, obj *T, i int, lab *trace.Label) {
	if lab == nil {
		r.fn(obj, r.msgs[i])
		return
	}
	t0, outer := pe.traceBegin()
	r.fn(obj, r.msgs[i])
	pe.traceEnd(lab, traceIndex(obj), t0, outer)
}

// deliverElements calls the method on each message's element if it is
// here, and routes the others as element envelopes.
func (r *run1[T, M]) deliverElements(pe *PE) {
	h := &r.h
	var er ElementRunner
	if !h.Entry.Threaded && !pe.held(h.Coll) && len(r.idx) == len(r.msgs) {
		if l, err := PartOf(pe, h.Coll); err == nil {
			er, _ = l.(ElementRunner)
			r.curColl, _ = pe.collection(h.Coll)
		}
	}
	var lab *trace.Label // a traced PE records a slice per message
	if pe.tr != nil {
		lab = pe.label(h.Entry)
	}
	// Load measurement times each element's message in turn (runClock).
	measure := er != nil && pe.measure
	var clock runClock
	if measure {
		clock.start(pe)
		defer clock.stop()
	}
	stopped := pe.job.rt.Stopped
	for i := range r.msgs {
		var k elemKey
		if i < len(r.idx) {
			k = r.idx[i]
		}
		var raw rawIndex
		if i < len(r.raw) {
			raw = r.raw[i]
		} else if ri, ok := rawOf(k.index); ok { // sent through a proxy from another process
			raw = ri
		}
		if er != nil {
			var obj any
			if raw != nil {
				obj, _ = er.ResidentRaw(raw) // a bad index: the envelope's path names it
			} else {
				obj = er.Resident(k.index)
			}
			if obj, ok := obj.(*T); ok && obj != nil {
				er.Delivered()
				r.at, r.cur, r.curRaw = i, k.index, raw
				r.call(pe, obj, i, lab)
				if measure {
					clock.charge(obj)
				}
				r.cur, r.curRaw = nil, nil
				if stopped() {
					return
				}
				continue
			}
		}
		env := &env1[T, M]{envHead: r.envHead, fn: r.fn, msg: r.msgs[i]}
		env.h.Index, env.h.Epoch = k.index, k.epoch
		if raw != nil {
			env.h.Index = raw
		}
		pe.route(env)
		if stopped() {
			return
		}
		if measure {
			clock.restart()
		}
	}
}

// WireKind, AppendWireTailAt: a run crosses processes as a wire run of
// envelopes (actor.WireMulti); AppendWireHead comes with envHead.
func (r *run1[T, M]) WireKind() uint16 { return wirekind.Envelope }

func (r *run1[T, M]) AppendWireTailAt(b []byte, i int) ([]byte, error) {
	h := &r.h
	if r.idx != nil { // an element's own index and epoch
		eh := r.h
		eh.Index, eh.Epoch = r.idx[i].index, r.idx[i].epoch
		if i < len(r.raw) {
			eh.Index = r.raw[i]
		}
		h = &eh
	}
	b, err := appendEnvTail(b, h, futureRef{})
	if err != nil {
		return b, err
	}
	return appendMsg(b, r.h.Entry, &r.msgs[i])
}

// sendFast sends msg through a run if it can: the direct path's
// (sendRun) for a proxy that is not delegated and an entry method not
// marked for a delegate, a RunDelegate's (sendToRuns) otherwise. It
// reports whether it did; if not, the caller sends an envelope. The
// delegate is looked up once a send, a mark's RunDelegate was
// converted when the mark was made, and the buffer a mark's delegate
// gave this PE is kept until the mark changes or the buffer is retired.
func sendFast[T, M any](pe *PE, p *Proxy[T], e *Entry, method func(*T, M), msg M) bool {
	if p.del != nil {
		rd, ok := p.del.(RunDelegate)
		if !ok {
			return false
		}
		return sendToRuns(pe, p, rd.RunBuffer(pe), e, method, msg)
	}
	m := e.markIn(pe.job)
	if m == nil {
		return sendRun(pe, p, e, method, msg)
	}
	if m.rd == nil {
		return false
	}
	b := pe.lastBuf
	if m != pe.lastMark || b == nil || b.retired.Load() {
		if b = m.rd.RunBuffer(pe); b != nil && b.pe == pe {
			pe.lastMark, pe.lastBuf = m, b // (sendToRuns refuses another PE's)
		}
	}
	return sendToRuns(pe, p, b, e, method, msg)
}

// sendRun sends msg through a run if it can (see above) and reports
// whether it did; if not, the caller sends an envelope. The caller
// (sendFast) has found no delegate for the send.
func sendRun[T, M any](pe *PE, p *Proxy[T], e *Entry, method func(*T, M), msg M) bool {
	r := &p.route
	if pe.tr != nil && pe.tr.WouldSample() || e.Threaded || e.NoRuns {
		return false
	}
	switch r.Kind {
	case KindBranch:
		if r.Index != nil {
			return false
		}
	case KindElement:
		return sendElemRun(pe, r, e, method, msg)
	case KindSection:
		return sendSectionRun(pe, r, e, method, msg)
	default:
		return false
	}
	dest := r.PE
	if open, ok := pe.ap.Open(dest).(*run1[T, M]); ok && open.h.Entry == e && open.h.Coll == r.Coll && open.h.PE == dest && open.h.Kind == KindBranch {
		open.grow(pe)
		open.msgs = append(open.msgs, msg)
		pe.ap.Grow(dest)
		return true
	}
	// A new run: the checks that pe.send makes of an envelope, once.
	if dest < 0 || dest >= pe.NumPEs() || pe.held(r.Coll) {
		return false
	}
	if _, err := pe.collection(r.Coll); err != nil {
		return false
	}
	run := newRun(pe, *r, e, method, dest, msg, false)
	pe.ap.Send(dest, run)
	return true
}

// sendElemRun is sendRun for a message to an array element: it finds the
// element's PE as pe.send would, and appends the message with its index
// and epoch to the run open for that PE, or starts one. An index that
// came from another process (a proxy in a message) keeps its bytes, which
// the ElementRunner reads without an allocation (package indexcodec).
// Anything unusual (a collection not known or held here, a bad index, the
// communication graph recorded) is left to the envelope's path, which
// reports errors.
func sendElemRun[T, M any](pe *PE, r *Route, e *Entry, method func(*T, M), msg M) bool {
	dest, epoch, ok := elemDest(pe, r)
	if !ok {
		return false
	}
	appendElem(pe, r.Coll, e, method, msg, dest, elemKey{r.Index, epoch})
	return true
}

// elemDest finds the PE and epoch of the array element r names, as
// pe.send would; ok is false for anything unusual, which the caller leaves
// to the envelope's path.
func elemDest(pe *PE, r *Route) (dest int, epoch uint32, ok bool) {
	if r.Index == nil || pe.commOn || pe.held(r.Coll) {
		return 0, 0, false
	}
	l, err := PartOf(pe, r.Coll)
	if err != nil {
		return 0, 0, false
	}
	er, isRunner := l.(ElementRunner)
	if !isRunner {
		return 0, 0, false
	}
	if raw, isRaw := rawOf(r.Index); isRaw {
		// A proxy from another process: its index stays in its bytes (in
		// the run too, which carries them on as they are), decoded here
		// and on delivery without an allocation.
		dest, epoch, err = er.WhereRaw(raw)
	} else {
		dest, epoch, err = er.Where(r.Index)
	}
	if err != nil || dest < 0 || dest >= pe.NumPEs() {
		return 0, 0, false
	}
	return dest, epoch, true
}

// appendElem appends msg for the element k to the element run open for
// PE dest, or starts one.
func appendElem[T, M any](pe *PE, coll CollID, e *Entry, method func(*T, M), msg M, dest int, k elemKey) {
	if open, ok := pe.ap.Open(dest).(*run1[T, M]); ok && open.h.Entry == e && open.h.Coll == coll && open.h.Kind == KindElement {
		open.grow(pe)
		open.msgs = append(open.msgs, msg)
		open.idx = append(open.idx, k)
		pe.ap.Grow(dest)
		return
	}
	run := newRun(pe, Route{Kind: KindElement, Coll: coll}, e, method, dest, msg, true)
	run.idx[0] = k
	pe.ap.Send(dest, run)
}

// sendSectionRun is sendRun for a multicast through an undelegated
// section proxy whose members are all in this process: each member's copy of the
// message joins the element run open for the member's PE, as if it were
// sent to the member alone (a member that is not there is forwarded or
// held as any element message is; a multicast hop does the same with
// ElementCopy). Consecutive section sends then cost a message and an index
// per member, where a multicast cost a map, a slice of members and an
// envelope per PE per send. Across processes a run would encode the
// message once per member where a multicast hop encodes it once per PE,
// so a section with a member in another process keeps the multicast, and
// so does a message larger than sectionRunMsg bytes: a run holds a copy per
// member, where the multicast holds one per PE.
func sendSectionRun[T, M any](pe *PE, r *Route, e *Entry, method func(*T, M), msg M) bool {
	s := r.Section
	if s == nil || s.Coll != r.Coll || len(s.Members) == 0 || pe.commOn || pe.held(s.Coll) || unsafe.Sizeof(msg) > sectionRunMsg {
		return false
	}
	rt := pe.job.rt
	multi, node := rt.NumNodes() > 1, rt.Node()
	l, err := PartOf(pe, s.Coll)
	if err != nil {
		return false
	}
	er, ok := l.(ElementRunner)
	if !ok {
		return false
	}
	// Every member is placed before any is sent: the envelope's path
	// reports a bad one, and nothing may be sent twice.
	// (The scratch slice is taken while in use, so that a send made
	// meanwhile cannot write over it.)
	where := pe.secWhere[:0]
	pe.secWhere = nil
	defer func() { pe.secWhere = where }()
	for _, m := range s.Members {
		dest, epoch, err := er.Where(m)
		if err != nil || dest < 0 || dest >= pe.NumPEs() || multi && rt.NodeOf(dest) != node {
			return false
		}
		where = append(where, memberAt{dest, epoch})
	}
	for i, m := range s.Members {
		appendElem(pe, s.Coll, e, method, msg, where[i].dest, elemKey{m, where[i].epoch})
	}
	return true
}

// memberAt is where a section member is believed to be (sendSectionRun).
type memberAt struct {
	dest  int
	epoch uint32
}

// grow notes, before a message is appended, that the run is full: the
// PE's next runs of its entry method start at twice its capacity (see
// runHints).
func (r *run1[T, M]) grow(pe *PE) {
	if len(r.msgs) == cap(r.msgs) {
		if pe.runHints == nil {
			pe.runHints = map[*Entry]int{}
		}
		e := r.h.Entry
		pe.runHints[e] = max(pe.runHints[e], 2*cap(r.msgs))
	}
}

// newRun returns a run of one message, msg, for PE dest, with room for
// as many as the PE's runs of e have needed; an element run (elems) gets an
// index column of one, for the caller to fill in.
func newRun[T, M any](pe *PE, r Route, e *Entry, method func(*T, M), dest int, msg M, elems bool) *run1[T, M] {
	n := runCap
	size := int(unsafe.Sizeof(msg))
	if elems {
		size += int(unsafe.Sizeof(elemKey{}))
	}
	if hint := pe.runHints[e]; hint > n && size > 0 {
		n = max(n, min(hint, runBytes/size))
	}
	var run *run1[T, M]
	if n == 1 {
		// Runs of this method have held one message so far (a request, a
		// reply): the run and its slices in one allocation, one that a
		// delivery released if there is one (Release); a second message
		// reallocates the slices and teaches the hint.
		run = oneRun[T, M](e, elems, false)
	} else {
		run = pooledRun[T, M](e, n, elems)
	}
	run.first(pe, r, e, method, dest, msg)
	return run
}

// pooledRun returns a run of e's pool with room for n messages (and their
// indices, for an element run), or a new one, holding one message.
func pooledRun[T, M any](e *Entry, n int, elems bool) *run1[T, M] {
	run, _ := e.runsN.Get().(*run1[T, M])
	switch {
	case run == nil || cap(run.msgs) < n || elems && cap(run.idx) < n:
		run = &run1[T, M]{msgs: make([]M, 1, n)}
		if elems {
			run.idx = make([]elemKey, 1, n)
		}
	case elems:
		run.msgs, run.idx = run.msgs[:1], run.idx[:1]
	default:
		run.msgs, run.idx = run.msgs[:1], nil
	}
	return run
}

// first fills in the run's header and its first message, msg, for PE
// dest.
func (run *run1[T, M]) first(pe *PE, r Route, e *Entry, method func(*T, M), dest int, msg M) {
	run.fn = method
	run.h = Header{Route: Route{Kind: r.Kind, Coll: r.Coll, PE: dest}, Entry: e, Src: pe.ID()}
	run.msgs[0] = msg
}

// oneRun returns a run of one message of e, its slices in the same
// allocation, one that a delivery released (Release) if there is one; an
// element run (elems) gets an index column, and one decoded from the wire
// (raw) a raw index column too.
func oneRun[T, M any](e *Entry, elems, raw bool) *run1[T, M] {
	one, _ := e.runs.Get().(*runOfOne[T, M])
	if one == nil {
		one = &runOfOne[T, M]{}
	}
	run := &one.run
	run.one = true
	run.msgs = one.msg[:]
	if elems {
		run.idx = one.idx[:]
		if raw {
			run.raw = one.raw[:]
		}
	}
	return run
}

// runDecoder reads a whole wire run for one entry method into a run1, or
// returns nil if the run has messages that need their own header.
type runDecoder func(h Header, it wire.Item) (actor.Message, error)

// sectionRunMsg is the largest message (bytes, as a Go value) that a
// section send copies into its members' element runs.
const sectionRunMsg = 256

// maxRunDecode bounds the memory of one run decoded from the wire.
const maxRunDecode = 64 << 20

// installRunDecoder gives entry en the decoder of whole runs for method.
func installRunDecoder[T, M any](en *Entry, method func(*T, M)) {
	if en.Result != nil {
		return
	}
	c := codec.For[M]()
	f := runDecoder(func(h Header, it wire.Item) (actor.Message, error) {
		if int(it.Tails) > len(it.Body) { // a tail takes two bytes at least
			return nil, fmt.Errorf("a run of %d messages in %d bytes", it.Tails, len(it.Body))
		}
		if size := uint64(unsafe.Sizeof(*new(M))); uint64(it.Tails)*size > maxRunDecode {
			// A byte or two per message on the wire (a nil) may stand for
			// a large M: a peer's run must not make this process allocate
			// gigabytes. Runs of this size are not formed: a sender closes
			// a run once its tails pass 32 KiB (actor's maxRun), so at most
			// about 16 Ki tails, whatever the frame's length (frames over
			// wire.MaxFrame now cross in fragments, up to
			// MaxRemoteMessage, which a forged run could fill with tails).
			return nil, fmt.Errorf("a run of %d messages of %s, %d bytes each, is more than the %d MiB a decoded run may hold", it.Tails, h.Entry, size, maxRunDecode>>20)
		}
		elems := h.Kind == KindElement
		// Only runs whose tails have no more header than a run keeps are
		// read whole (no reply, flow, members, hops; an index and epoch
		// for each element message, nothing for a branch's); the first
		// tail tells.
		if tail, _, ok := wire.NextTail(it.Body); !ok {
			return nil, fmt.Errorf("a run of %s ends after 0 of %d messages", h.Entry, it.Tails)
		} else if _, _, _, whole, _ := readRunTail(tail, elems); !whole {
			return nil, nil
		}
		var run *run1[T, M]
		if it.Tails == 1 {
			// A lone message (a request, a reply): its run and its slices
			// in one allocation.
			run = oneRun[T, M](en, elems, true)
		} else {
			run = &run1[T, M]{msgs: make([]M, it.Tails)}
			if elems {
				run.idx = make([]elemKey, it.Tails)
				run.raw = make([]rawIndex, it.Tails)
			}
		}
		run.fn, run.h = method, h
		rest := it.Body
		if elems {
			// The indices alias one copy of the body, not the frame
			// (a long one copied in pieces: package bigbuf).
			rest = bigbuf.Clone(rest)
		}
		for i := range run.msgs {
			tail, next, ok := wire.NextTail(rest)
			if !ok {
				return nil, fmt.Errorf("a run of %s ends after %d of %d messages", h.Entry, i, it.Tails)
			}
			rest = next
			idx, epoch, msg, whole, err := readRunTail(tail, elems)
			if err != nil {
				return nil, fmt.Errorf("message %d of a run of %s: %w", i, h.Entry, err)
			}
			if !whole {
				return nil, nil // a message with more header: read tail by tail
			}
			if elems {
				run.idx[i].epoch, run.raw[i] = epoch, idx
			}
			if err := codec.Decode(c, msg, &run.msgs[i]); err != nil {
				return nil, fmt.Errorf("decoding message %d of a run of %s: %w", i, h.Entry, err)
			}
		}
		return run, nil
	})
	en.wireRun.CompareAndSwap(nil, &f)
}

// readRunTail reads the tail of one message of a run (see appendEnvTail)
// if it has only what a run keeps per message: nothing for a branch's,
// an index and maybe an epoch (with 0 hops) for an element's. It returns
// the index (aliasing tail), the epoch and the message's bytes; whole is
// false for a tail with more than that.
func readRunTail(tail []byte, elems bool) (idx rawIndex, epoch uint32, msg []byte, whole bool, err error) {
	if len(tail) == 0 {
		return nil, 0, nil, false, errors.New("an envelope without a tail")
	}
	flags := tail[0]
	if !elems {
		return nil, 0, tail[1:], flags == 0, nil
	}
	if flags&^tailEpoch != tailIndex {
		return nil, 0, nil, false, nil
	}
	r := tailReader{b: tail, off: 1}
	if flags&tailEpoch != 0 {
		ep, err := r.uvarint("epoch")
		if err != nil {
			return nil, 0, nil, false, err
		}
		if ep > math.MaxUint32 || r.off >= len(r.b) {
			return nil, 0, nil, false, errors.New("an envelope's epoch is out of range or its hops are missing")
		}
		if r.b[r.off] != 0 { // forwarded: its hops matter
			return nil, 0, nil, false, nil
		}
		epoch = uint32(ep)
		r.off++
	}
	n, err := r.uvarint("index's length")
	if err != nil {
		return nil, 0, nil, false, err
	}
	if n > uint64(len(r.b)-r.off) {
		return nil, 0, nil, false, fmt.Errorf("an envelope's index of %d bytes, but %d are left", n, len(r.b)-r.off)
	}
	idx = rawIndex(r.b[r.off : r.off+int(n) : r.off+int(n)])
	return idx, epoch, r.b[r.off+int(n):], true, nil
}

// decodeEnvRun is the actor.RunAllDecoder of envelopes: a run for an entry
// with a typed run decoder becomes one run1.
func decodeEnvRun(_ *actor.PE, it wire.Item) (actor.Message, error) {
	h, err := parseEnvHead(it.Head)
	if err != nil {
		return nil, err
	}
	dec := h.Entry.wireRun.Load()
	// NoRuns: the transport merges consecutive envelopes with one header
	// into one wire run; such an entry's messages are read back one
	// envelope each.
	if dec == nil || h.Kind == KindSection || h.Entry.NoRuns {
		return nil, nil
	}
	return (*dec)(h, it)
}
