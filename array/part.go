package array

import (
	"fmt"

	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/chare/indexcodec"
	"github.com/charmgo/charm/chare/reducer"
	"github.com/charmgo/charm/internal/core"
	"github.com/charmgo/charm/location"
)

// An array's part on one PE is its location manager there: the elements
// that live on the PE, a location.Table (home, cache with epochs, held
// messages), the broadcasts seen, and on PE 0 (the root) the broadcast
// numbering and the count of elements that reductions wait for.

// elem is an element living on this PE.
type elem struct {
	obj   any
	base  *chare.Base
	index any    // its index, for Each's order
	pos   int    // where it is in part.list
	skip  uint32 // broadcasts it saw elsewhere before this PE did: it skips them here
	sync  bool   // it called AtSync and waits for ResumeFromSync
	syncs int    // its AtSync calls so far
}

// histMax bounds the broadcasts a PE keeps for elements that arrive having
// missed some.
const histMax = 1024

// delta changes the number of elements from reduction from on.
type delta struct{ from, d int }

type part[I comparable] struct {
	*info[I]
	coll    *core.Collection
	pe      *chare.PE
	init    func(any)
	unbuilt []*elem // made by NewLocal, waiting for Construct to run init
	tab     *location.Table[I, chare.Envelope]
	elems   map[I]*elem
	list    []*elem // the same elements, to go through them quickly
	ahead   int     // elements with skip > 0

	bseq uint32           // the last broadcast delivered here
	hist []chare.Envelope // the last histMax (or more) broadcasts up to bseq, newest last

	// on the root (PE 0)
	rootSeq uint32
	base    int // elements counted by every reduction
	deltas  []delta

	creating map[I]bool // on the home: insertions into the home under way
	syncing  bool       // a load-balancing step runs here
	cur      *Sync      // that step
	steps    int        // the load-balancing steps done here
	stats    Stats
}

// Stats are one PE's counts for one array.
type Stats struct {
	Local        int      // elements here
	Held         int      // messages held here
	MigratedIn   int      // elements that arrived
	MigratedOut  int      // elements that left
	Forwarded    int      // messages forwarded from here
	Delivered    int      // element messages delivered here
	Hops         [8]int64 // delivered messages by hops taken (the last counts 7 or more)
	CacheUpdates int      // location updates received
}

// build gives an array's collection its NewLocal, index decoder and
// reduction count, here or in another process.
func build[I comparable](c *core.Collection, a *info[I], init func(any)) {
	a.cacheHomes()
	c.Ext = a
	c.DecodeIndex = func(b []byte) (any, error) {
		i, err := a.decode(b)
		if err != nil {
			return nil, err
		}
		return i, nil
	}
	c.Count = func(pe *chare.PE, no int) (int, bool) {
		l, err := core.PartOf(pe, c.ID)
		if err != nil {
			return 0, false
		}
		return l.(*part[I]).count(no), true
	}
	c.Place = func(index any) (int, error) {
		i, err := a.check(index)
		if err != nil {
			return 0, err
		}
		pos := -1
		if !a.sparse {
			pos, _ = a.shape.Pos(i)
		}
		return place(a.m, i, pos, a.shape.Len(), a.npes)
	}
	c.SpecData = func() ([]byte, error) { return encodeSpec(a.shape, a) }
	s := a.shape
	c.NewLocal = func(here *chare.PE) (core.Part, error) {
		l := &part[I]{info: a, coll: c, pe: here, init: init, elems: map[I]*elem{},
			tab: location.New[I, chare.Envelope](here.ID(), a.home, a.maxHops)}
		if c.Spec.Restored {
			return l, nil // the restart brings the elements
		}
		if here.ID() == core.ReductionRoot {
			l.base = s.Len()
		}
		for p := 0; p < s.Len(); p++ {
			idx := s.At(p)
			if a.home(idx) != here.ID() {
				continue
			}
			obj := c.Type.New()
			obj.(binder).bind(here, c, idx, obj)
			el := &elem{obj: obj, base: core.BaseOf(obj)}
			l.add(idx, el)
			l.tab.Arrive(idx, 0)
			if init != nil {
				l.unbuilt = append(l.unbuilt, el)
			}
		}
		return l, nil
	}
}

// Construct implements chare.Constructor: once the part is stored on its
// PE, it runs the constructors of the elements NewLocal made, in index
// order. Their sends, to this array too, go through the PE's mailbox, so
// every element here is constructed before any message reaches one.
func (l *part[I]) Construct() {
	els := l.unbuilt
	l.unbuilt = nil
	for _, el := range els {
		if l.elems[el.index.(I)] == el {
			l.init(el.obj)
		}
	}
}

// Restore implements core.Restorer: a restart brings back an element.
func (l *part[I]) Restore(pe *chare.PE, index any, data []byte, st chare.MemberState) error {
	i, ok := index.(I)
	if !ok {
		return fmt.Errorf("array: index %v (%T) for %s", index, index, l.name)
	}
	if l.elems[i] != nil {
		return fmt.Errorf("array: element %v of %s restored twice", i, l.name)
	}
	obj := l.coll.Type.New()
	obj.(binder).bind(pe, l.coll, i, obj)
	if err := unpack(obj, data); err != nil {
		return err
	}
	b := core.BaseOf(obj)
	b.SetMemberState(st)
	l.add(i, &elem{obj: obj, base: b})
	l.tab.Arrive(i, 0)
	return nil
}

// add makes el the local element i.
func (l *part[I]) add(i I, el *elem) {
	el.index, el.pos = i, len(l.list)
	l.elems[i] = el
	l.list = append(l.list, el)
}

// remove takes element i, which is local, off this PE, and returns the
// number of broadcasts it has seen.
func (l *part[I]) remove(i I) uint32 {
	el := l.elems[i]
	delete(l.elems, i)
	last := l.list[len(l.list)-1]
	l.list[el.pos], last.pos = last, el.pos
	l.list[len(l.list)-1] = nil
	l.list = l.list[:len(l.list)-1]
	if el.skip > 0 {
		l.ahead--
	}
	return l.bseq + el.skip
}

// RestoreCount sets, on the root, how many elements a restart brought.
func (l *part[I]) RestoreCount(n int) { l.base, l.deltas = n, nil }

// count is, on the root, how many elements reduction no counts.
func (l *part[I]) count(no int) int {
	n := l.base
	for _, d := range l.deltas {
		if d.from <= no {
			n += d.d
		}
	}
	return n
}

func (l *part[I]) Locate(index any) (int, error) {
	pe, _, err := l.Where(index)
	return pe, err
}

// LocateIn is Locate for an index of the array's own type, without
// putting it in an interface (a [2]int, or an int of 256 or more, would
// be an allocation per call): p is a PE's part of an array indexed by I
// (core.PartOf; framework packages only). TRAM's array streamer asks per item.
func LocateIn[I comparable](p core.Part, i I) (int, error) {
	l, ok := p.(*part[I])
	if !ok {
		return 0, fmt.Errorf("array: %T is not the part of an array indexed by %T", p, i)
	}
	pe, _, err := l.whereIndex(i)
	return pe, err
}

// whereIndex is Where for an index of the array's own type.
func (l *part[I]) whereIndex(i I) (int, uint32, error) {
	pos := -1
	if !l.sparse {
		var ok bool
		if pos, ok = l.shape.Pos(i); !ok {
			return 0, 0, l.inShape(i) // names the index and the shape
		}
	}
	// tab.Lookup, with the position found once for the check and the home.
	if pe, epoch, ok := l.tab.Cached(i); ok {
		return pe, epoch, nil
	}
	return l.homeAtPos(i, pos), 0, nil
}

// SendTo implements core.ElementRouter.
func (l *part[I]) SendTo(h *chare.Header) (int, error) {
	pe, epoch, err := l.Where(h.Index)
	if err != nil {
		return 0, err
	}
	h.Epoch, h.Hops = epoch, 0
	return pe, nil
}

// Where implements core.ElementRunner: the PE an element is believed on
// and the epoch of that belief.
func (l *part[I]) Where(index any) (int, uint32, error) {
	i, ok := index.(I)
	if !ok {
		_, err := l.check(index) // names the types
		return 0, 0, err
	}
	return l.whereIndex(i)
}

// WhereRaw implements core.ElementRunner: Where for an index in its wire
// form, decoded without an allocation.
func (l *part[I]) WhereRaw(raw []byte) (int, uint32, error) {
	i, err := l.decode(raw)
	if err != nil {
		return 0, 0, err
	}
	return l.whereIndex(i)
}

// Resident implements core.ElementRunner: the element if it is here (the
// run counts its message with Delivered once it checked the element's
// type).
func (l *part[I]) Resident(index any) any {
	i, ok := index.(I)
	if !ok {
		return nil
	}
	return l.resident(i)
}

// ResidentRaw implements core.ElementRunner: Resident for an index in
// its wire form, decoded without an allocation.
func (l *part[I]) ResidentRaw(raw []byte) (any, error) {
	i, err := l.decode(raw)
	if err != nil {
		return nil, err
	}
	return l.resident(i), nil
}

func (l *part[I]) resident(i I) any {
	if el := l.elems[i]; el != nil {
		return el.obj
	}
	return nil
}

// Delivered implements core.ElementRunner: a run's message (never
// forwarded) delivered to a resident element.
func (l *part[I]) Delivered() {
	l.stats.Delivered++
	l.stats.Hops[0]++
}

// BroadcastRoot implements core.Sequencer.
func (l *part[I]) BroadcastRoot() int { return core.ReductionRoot }

// Sequence implements core.Sequencer.
func (l *part[I]) Sequence(_ *chare.PE, e chare.Envelope) {
	if h := e.Header(); h.Epoch == 0 {
		l.rootSeq++
		h.Epoch = l.rootSeq
	}
}

func (l *part[I]) Deliver(pe *chare.PE, e chare.Envelope, index any) {
	if k := e.Header().Kind; k != chare.KindElement && k != chare.KindSection {
		// A group's or chare's route on an array's ID (a damaged header):
		// its PE number must not pass for an element's index.
		pe.Fail(fmt.Errorf("array: %s reached %s routed as a %v message", core.Describe(e), l.name, k))
		return
	}
	i, ok := index.(I)
	if !ok {
		pe.Fail(fmt.Errorf("array: %s carries index %v (%T) for %s", core.Describe(e), index, index, l.name))
		return
	}
	l.deliver(e, i)
}

// DeliverRaw implements core.RawDeliverer: Deliver for an element
// message from another process, whose index stays in its wire form in
// the header (a built-in index type's value is decoded here without an
// allocation). A user-defined index type's value goes in the header, as
// Deliver would have had it, so that the message is described by it.
func (l *part[I]) DeliverRaw(_ *chare.PE, e chare.Envelope, raw []byte) error {
	i, err := l.decode(raw)
	if err != nil {
		return err
	}
	if !indexcodec.FastType[I]() {
		e.Header().Index = i
	}
	l.deliver(e, i)
	return nil
}

func (l *part[I]) deliver(e chare.Envelope, i I) {
	if e.Header().Kind == chare.KindSection {
		if el := l.elems[i]; el != nil {
			l.invoke(el, e)
			return
		}
		e = core.ElementCopy(e, i) // the member moved: reach it alone
	}
	l.route(e, i)
}

// route applies the location manager's decision to a message for i.
func (l *part[I]) route(e chare.Envelope, i I) {
	h := e.Header()
	if h.Entry != nil && h.Entry.Type != l.coll.Type {
		// A damaged header from another process: refused before it is
		// counted, held or forwarded.
		l.pe.Fail(fmt.Errorf("array: %s: an entry method of %s, not of the elements of %s", core.Describe(e), h.Entry.Type.Name, l.name))
		return
	}
	if el := l.elems[i]; el != nil { // the common case: it is here (the table would say Deliver)
		l.stats.Delivered++
		l.stats.Hops[min(int(h.Hops), len(l.stats.Hops)-1)]++
		if h.Hops > 0 && h.Src != l.pe.ID() && h.Src >= 0 && h.Src < l.npes {
			// Correct the sender's cache, as Charm++ does after a forward.
			epoch, _ := l.tab.IsLocal(i)
			l.pe.Actor().Send(h.Src, &locMsg{target: target{Coll: l.coll.ID, idx: i}, PE: l.pe.ID(), Epoch: epoch})
		}
		l.invoke(el, e)
		return
	}
	d := l.tab.Route(i, h.Epoch, int(h.Hops))
	switch d.Action {
	case location.Deliver:
		l.pe.Fail(fmt.Errorf("array: the location table of %s on PE %d has element %v, the PE does not", l.name, l.pe.ID(), i))
	case location.Forward:
		h.Epoch = d.Epoch
		if h.Hops < 255 {
			h.Hops++
		}
		l.stats.Forwarded++
		l.pe.Actor().Send(d.PE, e)
	case location.Hold:
		l.tab.Hold(i, e)
	case location.Absent:
		if l.demand && !l.creating[i] {
			l.demandCreate(i)
		}
		l.tab.Hold(i, e)
	}
}

// invoke runs an envelope on a local element.
func (l *part[I]) invoke(el *elem, e chare.Envelope) { core.Invoke(l.pe, el.obj, e) }

// release routes again the messages held for i, in their order.
func (l *part[I]) release(i I) {
	for _, e := range l.tab.Release(i) {
		l.route(e, i)
	}
}

// DeliverAll delivers broadcast number h.Epoch to the local elements that
// have not seen it, and keeps it for elements that arrive having missed it.
func (l *part[I]) DeliverAll(pe *chare.PE, e chare.Envelope) {
	seq := e.Header().Epoch
	if seq != l.bseq+1 {
		pe.Fail(fmt.Errorf("array: broadcast %d of %s reached PE %d after broadcast %d", seq, l.name, pe.ID(), l.bseq))
		return
	}
	l.bseq = seq
	if len(l.hist) == 2*histMax { // keep the last histMax, amortized
		n := copy(l.hist, l.hist[histMax:])
		clear(l.hist[n:])
		l.hist = l.hist[:n]
	}
	l.hist = append(l.hist, e)
	if l.ahead == 0 { // the common case: nobody saw it elsewhere first
		for k := 0; k < len(l.list); k++ {
			l.invoke(l.list[k], e)
		}
		return
	}
	for k := 0; k < len(l.list); k++ {
		el := l.list[k]
		if el.skip > 0 {
			if el.skip--; el.skip == 0 {
				l.ahead--
			}
			continue
		}
		l.invoke(el, e)
	}
}

// catchUp squares an element that just arrived, having seen seen
// broadcasts, with this PE: it delivers the broadcasts this PE has seen and
// it has not, or makes it skip those it saw before this PE did.
func (l *part[I]) catchUp(i I, el *elem, seen uint32) {
	if seen > l.bseq {
		el.skip = seen - l.bseq
		l.ahead++
		return
	}
	for ; seen < l.bseq; seen++ {
		k := len(l.hist) - int(l.bseq-seen)
		if k < 0 {
			l.pe.Fail(fmt.Errorf("array: element %v of %s arrived on PE %d having missed broadcast %d, which the PE no longer keeps (it keeps the last %d)", i, l.name, l.pe.ID(), seen+1, histMax))
			return
		}
		l.invoke(el, l.hist[k])
		if l.elems[i] != el {
			return // it left or was deleted meanwhile
		}
	}
}

func (l *part[I]) NumLocal() int { return len(l.elems) }

func (l *part[I]) Object(index any) any {
	i, ok := index.(I)
	if !ok {
		return nil
	}
	if el := l.elems[i]; el != nil {
		return el.obj
	}
	return nil
}

// Each calls fn on every element on this PE (libraries such as TRAM use it
// to deliver an item to all local elements).
func (l *part[I]) Each(fn func(obj any)) {
	for _, el := range l.list {
		fn(el.obj)
	}
}

func (l *part[I]) snapshotStats() Stats {
	s := l.stats
	s.Local, s.Held = len(l.elems), l.tab.NumHeld()
	return s
}

// NumHeld returns how many messages wait here for elements (a checkpoint
// refuses to lose them).
func (l *part[I]) NumHeld() int { return l.tab.NumHeld() }

// Add returns the sum of two PEs' counts.
func (s Stats) Add(o Stats) Stats {
	s.Local += o.Local
	s.Held += o.Held
	s.MigratedIn += o.MigratedIn
	s.MigratedOut += o.MigratedOut
	s.Forwarded += o.Forwarded
	s.Delivered += o.Delivered
	s.CacheUpdates += o.CacheUpdates
	for h := range s.Hops {
		s.Hops[h] += o.Hops[h]
	}
	return s
}

// SumStats is the reducer that adds up the Stats that each PE
// contributes (its LocalStats), in one process or across processes.
var SumStats = func() reducer.Reducer {
	r, err := reducer.UserWithCodec("array.stats", nil,
		func(a, b any) (any, error) { return a.(Stats).Add(b.(Stats)), nil }, nil, reducer.CodecOf[Stats]())
	if err != nil {
		panic(err)
	}
	return r
}()
