package tram

import (
	"errors"
	"fmt"
	"os"
	"reflect"
	"slices"
	"sync"
	"unsafe"
)

// Envelope is a data item together with its final destination PE. Envelopes are what TRAM
// buffers and what its messages carry, so an intermediate PE knows where each item is going.
type Envelope[T any] struct {
	Dest int
	Item T
}

// Flush is one message to send: the items of one buffer, handed over to the caller, for the peer
// To. Items are envelopes that To passes on; Final (only with Config.Bare) are items whose
// destination is To itself, stored without their Dest. The Aggregator keeps no reference to
// either.
type Flush[T any] struct {
	To    int
	Items []Envelope[T]
	Final []T
}

// Len returns the number of items the message carries.
func (f Flush[T]) Len() int { return len(f.Items) + len(f.Final) }

// Output is what an Insert or Route produces, for the caller to act on in order: messages to send
// to peers, items to send straight to their destination, and items to deliver on this PE.
type Output[T any] struct {
	Flushes []Flush[T]    // buffers to send, each to a peer
	Direct  []Envelope[T] // items too large to aggregate: send each to its Dest in its own message
	Local   []Envelope[T] // items whose destination is this PE: deliver now (claim T08)
}

// Empty reports whether there is nothing to do.
func (o Output[T]) Empty() bool {
	return len(o.Flushes) == 0 && len(o.Direct) == 0 && len(o.Local) == 0
}

// Sizing is how much an Aggregator buffers (claim T11). Charm++ offers two forms — the total
// capacity of a PE (maxNumDataItemsBuffered) or the size of each peer's buffer (bufferSize) —
// and so does Sizing: set one field and the other is derived. Setting both is allowed and uses
// both as given.
type Sizing struct {
	// BufferItems is the capacity of each peer's buffer; a full buffer is sent (claim T06).
	// Derived from TotalCapacity as max(1, TotalCapacity / number of peers).
	BufferItems int
	// TotalCapacity caps the items buffered on the PE; reaching it sends the fullest buffer
	// (claim T07). Derived from BufferItems as BufferItems × number of peers.
	TotalCapacity int
}

// Validate reports a sizing that sets neither field or a negative one.
func (s Sizing) Validate() error {
	switch {
	case s.BufferItems < 0:
		return fmt.Errorf("tram: sizing has %d items per buffer, want at least 1", s.BufferItems)
	case s.TotalCapacity < 0:
		return fmt.Errorf("tram: sizing has total capacity %d, want at least 1", s.TotalCapacity)
	case s.BufferItems == 0 && s.TotalCapacity == 0:
		return errors.New("tram: sizing sets neither BufferItems nor TotalCapacity")
	}
	return nil
}

// resolve fills in the derived field for a PE with npeers peers.
func (s Sizing) resolve(npeers int) Sizing {
	if s.BufferItems == 0 {
		s.BufferItems = max(1, s.TotalCapacity/max(1, npeers))
	}
	if s.TotalCapacity == 0 {
		s.TotalCapacity = s.BufferItems * max(1, npeers)
	}
	return s
}

// Config describes an Aggregator.
type Config[T any] struct {
	Topology *Topology
	PE       int    // the PE whose state this is
	Sizing   Sizing // how much to buffer
	// Size returns an item's size in bytes, for the byte counters and the direct-send cutoff.
	// It must return the same size each time for the same item. Nil counts every item as 0 bytes.
	Size func(T) int
	// DirectCutoff: an item whose Size exceeds it is not aggregated but sent directly to its
	// destination. 0 means no cutoff.
	DirectCutoff int
	// Bare stores the items for the peers that are the last hop of whatever they receive (every
	// peer on a 1-D grid; the peers in the last dimension routed on others) without their Dest,
	// in Flush.Final: the receiver delivers them as its own. Without it every item travels in an
	// Envelope.
	Bare bool
}

// Aggregator is the aggregation state of one PE: one buffer per peer (claim T05). It does no I/O
// and starts no goroutines; it is not safe for concurrent use, since it belongs to its PE.
type Aggregator[T any] struct {
	cfg    Config[T]
	sizing Sizing
	peers  *PeerIndex
	// hop maps dest → slot<<1 | last, where slot is the buffer of its
	// next hop and last says (with Config.Bare) that the next hop is dest
	// itself; -1 for this PE; nil on very large grids.
	hop       []int32
	bufs      [][]Envelope[T]
	fin       [][]T // the last-hop items per slot, without Dest (Config.Bare)
	slotBytes []int // bytes buffered per slot, by Config.Size
	buffered  int
	bytes     int
	stats     Stats
	fixed     int        // bytes per item when Config.Size is nil (setFixedSize)
	fast      bool       // a hop table, no Size function, no cutoff: see add
	flat      bool       // envelopes hold no pointers: Recycle need not clear them
	pool      *sync.Pool // of *[]Envelope[T]: emptied buffers, see Recycle
	finPool   *sync.Pool // of *[]T: emptied last-hop buffers
	// free keeps up to one emptied buffer per peer, which a collection
	// does not take as it empties pool: a step that follows a few
	// collections (the program's own allocations between steps) starts
	// with its buffers at hand instead of allocating them all again.
	free    [][]Envelope[T]
	finFree [][]T
}

// maxHopTable bounds the grids for which an Aggregator keeps a table of
// next-hop slots (4 bytes per PE of the job); larger ones compute it per
// item.
const maxHopTable = 1 << 16

// firstCap bounds the capacity a new buffer starts with: a buffer of many
// thousand items is not allocated whole before it holds that many. One
// that fills its first capacity grows once to the full buffer size (see
// more) rather than by append's steps, each of which copies the items.
const firstCap = 1024

// pools holds one pool of emptied buffers per item type, shared by the
// Aggregators of a process: a batch received from a peer in this process
// is a buffer the peer allocated.
var pools sync.Map // poolKey → *sync.Pool

// poolKey names the pool of *[]Envelope[T] (bare false) or of *[]T.
type poolKey struct {
	t    reflect.Type // T
	bare bool
}

func poolOf[T any]() *sync.Pool { return poolFor(poolKey{reflect.TypeFor[T](), false}) }

// barePoolOf is the pool of emptied last-hop buffers of T.
func barePoolOf[T any]() *sync.Pool { return poolFor(poolKey{reflect.TypeFor[T](), true}) }

func poolFor(key poolKey) *sync.Pool {
	if p, ok := pools.Load(key); ok {
		return p.(*sync.Pool)
	}
	p, _ := pools.LoadOrStore(key, &sync.Pool{})
	return p.(*sync.Pool)
}

// Stats counts an Aggregator's work, for reports on buffer memory and message counts.
type Stats struct {
	Buffered      int // items now buffered
	BufferedBytes int // their bytes, by Config.Size
	Inserted      int // items given to Insert
	Routed        int // items received through Route
	Flushes       int // buffers sent, for any reason
	FullFlushes   int // buffers sent because they were full (T06)
	FullestSent   int // buffers sent because the total capacity was reached (T07)
	Direct        int // items sent directly, over the cutoff
	Local         int // items delivered on this PE
}

// NewAggregator returns the empty aggregation state of cfg.PE.
func NewAggregator[T any](cfg Config[T]) (*Aggregator[T], error) {
	if cfg.Topology == nil {
		return nil, errors.New("tram: aggregator has no topology")
	}
	if !cfg.Topology.Contains(cfg.PE) {
		return nil, fmt.Errorf("tram: aggregator for PE %d outside topology %s (%d PEs)", cfg.PE, cfg.Topology, cfg.Topology.NumPEs())
	}
	if err := cfg.Sizing.Validate(); err != nil {
		return nil, err
	}
	if cfg.DirectCutoff < 0 {
		return nil, fmt.Errorf("tram: direct-send cutoff %d is negative", cfg.DirectCutoff)
	}
	peers := cfg.Topology.PeerIndex(cfg.PE)
	a := &Aggregator[T]{
		cfg:       cfg,
		sizing:    cfg.Sizing.resolve(peers.Len()),
		peers:     peers,
		bufs:      make([][]Envelope[T], peers.Len()),
		fin:       make([][]T, peers.Len()),
		slotBytes: make([]int, peers.Len()),
		pool:      poolOf[T](),
		finPool:   barePoolOf[T](),
		flat:      plainData(reflect.TypeFor[T](), false),
	}
	if n := cfg.Topology.NumPEs(); n <= maxHopTable {
		a.hop = make([]int32, n)
		for dest := range a.hop {
			slot, last := a.slotFor(dest)
			a.hop[dest] = -1
			if slot >= 0 {
				a.hop[dest] = int32(slot<<1 | b2i(last))
			}
		}
	}
	a.fast = a.hop != nil && cfg.Size == nil && cfg.DirectCutoff == 0
	return a, nil
}

// slotFor computes the buffer slot of dest's next hop, -1 for this PE,
// and whether the item goes there bare (Config.Bare, the next hop is dest).
func (a *Aggregator[T]) slotFor(dest int) (slot int, last bool) {
	if dest == a.cfg.PE {
		return -1, false
	}
	next := a.cfg.Topology.NextHop(a.cfg.PE, dest)
	slot, _ = a.peers.Slot(next) // always a peer
	return slot, a.cfg.Bare && a.lastHopPeer(next)
}

// lastHopPeer reports whether every item sent to peer is for peer: the
// route corrects the highest dimension first, so a peer that differs in
// the last dimension routed (the lowest of size > 1) is the destination
// of whatever reaches it. Only those peers' buffers hold bare items: an
// item for a peer of another dimension keeps its envelope, so that each
// peer has one buffer, not two part-filled ones.
func (a *Aggregator[T]) lastHopPeer(peer int) bool {
	t := a.cfg.Topology
	for _, n := range t.Dims()[:t.DiffDim(a.cfg.PE, peer)] {
		if n > 1 {
			return false
		}
	}
	return true
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// slotLen is the number of items buffered for slot.
func (a *Aggregator[T]) slotLen(slot int) int { return len(a.bufs[slot]) + len(a.fin[slot]) }

// Recycle hands back the item slice of a message received from a peer
// once its items were routed, for later buffers to reuse. The caller
// must not use items afterwards. The Aggregator keeps as many as it has
// buffers (the memory its Sizing reserves, NumBuffers × BufferItems
// items), and as many bare ones with Config.Bare (so up to twice that),
// and passes the others on to the process's pool.
func (a *Aggregator[T]) Recycle(items []Envelope[T]) {
	recycle(a, &a.free, a.pool, items)
}

// RecycleFinal is Recycle for the last-hop items of a message (Flush.Final).
func (a *Aggregator[T]) RecycleFinal(items []T) {
	recycle(a, &a.finFree, a.finPool, items)
}

func recycle[T, E any](a *Aggregator[T], free *[][]E, pool *sync.Pool, items []E) {
	if cap(items) < min(a.sizing.BufferItems, firstCap) {
		return
	}
	if !a.flat {
		clear(items) // no item outlives its delivery through the pool
	}
	items = items[:0]
	if len(*free) < len(a.bufs) {
		*free = append(*free, items)
		return
	}
	pool.Put(&items)
}

// newBuffer returns an empty buffer, recycled if one is at hand.
func (a *Aggregator[T]) newBuffer() []Envelope[T] { return reuse(a, &a.free, a.pool) }

// newFinal returns an empty last-hop buffer, recycled if one is at hand.
func (a *Aggregator[T]) newFinal() []T { return reuse(a, &a.finFree, a.finPool) }

// moreBuffer returns buf with room for one more item, where buf is a
// slot's buffer and full (len == cap): a new buffer in place of none,
// else buf grown to the buffer size at once.
func (a *Aggregator[T]) moreBuffer(buf []Envelope[T]) []Envelope[T] {
	return more(a, buf, &a.free, a.pool)
}

// moreFinal is moreBuffer for a last-hop buffer.
func (a *Aggregator[T]) moreFinal(buf []T) []T { return more(a, buf, &a.finFree, a.finPool) }

func more[T, E any](a *Aggregator[T], buf []E, free *[][]E, pool *sync.Pool) []E {
	if cap(buf) == 0 {
		return reuse(a, free, pool)
	}
	if n := a.sizing.BufferItems; cap(buf) < n {
		return resident(slices.Grow(buf, n-len(buf)))
	}
	return buf // fuller than the buffer size (SetBufferItems): append grows it
}

func reuse[T, E any](a *Aggregator[T], free *[][]E, pool *sync.Pool) []E {
	want := min(a.sizing.BufferItems, firstCap)
	for n := len(*free); n > 0; n = len(*free) {
		buf := (*free)[n-1]
		(*free)[n-1] = nil
		*free = (*free)[:n-1]
		if cap(buf) >= want {
			return buf
		}
		// smaller than the buffers are now (SetBufferItems): dropped
	}
	if p, ok := pool.Get().(*[]E); ok && cap(*p) >= want {
		return *p
	}
	return resident(make([]E, 0, want))
}

// pageBytes is the size of the system's memory pages.
var pageBytes = os.Getpagesize()

// resident makes the pages of b's free room (b[len(b):cap(b)]) resident
// and returns b: it writes the zero value, which the room holds already,
// to one element in each page of it and to the last. A buffer is made
// with room for a full buffer but filled only as items come, and Go's
// allocator hands over memory fresh from the system untouched, so the
// first fill that reached a page took a page fault (about 2 µs here) —
// in a later step, on a recycled buffer that earlier steps filled only
// part way. Written when the buffer is made, the pages are resident for
// every later fill.
func resident[E any](b []E) []E {
	room := b[len(b):cap(b)]
	if len(room) == 0 {
		return b
	}
	var zero E
	step := max(1, pageBytes/max(1, int(unsafe.Sizeof(zero))))
	for i := 0; i < len(room); i += step {
		room[i] = zero
	}
	room[len(room)-1] = zero
	return b
}

// SetBufferItems changes the capacity of each peer's buffer to n (at
// least 1) and the total capacity to n × peers: online tuning sizes the
// buffers between steps. A buffer already fuller than n leaves with the
// next item added to it.
func (a *Aggregator[T]) SetBufferItems(n int) {
	n = max(n, 1)
	a.sizing = Sizing{BufferItems: n, TotalCapacity: n * max(1, a.peers.Len())}
}

// InsertLocal counts an item that the caller delivers on this PE itself,
// without going through Insert: the fast path of local items.
func (a *Aggregator[T]) InsertLocal() {
	a.stats.Inserted++
	a.stats.Local++
}

// PE returns the PE this state belongs to.
func (a *Aggregator[T]) PE() int { return a.cfg.PE }

// Sizing returns the resolved sizing, with both fields set.
func (a *Aggregator[T]) Sizing() Sizing { return a.sizing }

// NumBuffers returns the number of buffers, one per peer: Σ(s_d − 1).
func (a *Aggregator[T]) NumBuffers() int { return len(a.bufs) }

// Peers returns the numbering of buffer slots.
func (a *Aggregator[T]) Peers() *PeerIndex { return a.peers }

// BufferLen returns the number of items buffered for peer, 0 if peer is not a peer.
func (a *Aggregator[T]) BufferLen(peer int) int {
	if s, ok := a.peers.Slot(peer); ok {
		return a.slotLen(s)
	}
	return 0
}

// Stats returns the counters.
func (a *Aggregator[T]) Stats() Stats {
	s := a.stats
	s.Buffered, s.BufferedBytes = a.buffered, a.bytes+a.buffered*a.fixed
	return s
}

// Insert submits item for PE dest (insertData, claim T17) and returns what it triggers.
func (a *Aggregator[T]) Insert(item T, dest int) (Output[T], error) {
	var out Output[T]
	err := a.InsertTo(item, dest, &out)
	return out, err
}

// InsertTo is Insert adding what the item triggers to out, which the
// caller empties and reuses: the streamer's per-item path returns no
// Output by value and allocates nothing.
func (a *Aggregator[T]) InsertTo(item T, dest int, out *Output[T]) error {
	if !a.cfg.Topology.Contains(dest) {
		return fmt.Errorf("tram: PE %d: insert for PE %d outside topology %s (%d PEs)", a.cfg.PE, dest, a.cfg.Topology, a.cfg.Topology.NumPEs())
	}
	a.stats.Inserted++
	if a.fast {
		// add's fast path, written out here: one call less per item. The
		// three appends below are kept apart rather than shared through
		// one helper, which costs a call per item on this path.
		if h := a.hop[dest]; h >= 0 {
			slot, n := int(h>>1), 0
			if h&1 != 0 { // the last hop: the item alone
				fb := a.fin[slot]
				if len(fb) == cap(fb) {
					fb = a.moreFinal(fb)
				}
				fb = append(fb, item)
				a.fin[slot] = fb
				n = len(fb) + len(a.bufs[slot])
			} else {
				buf := a.bufs[slot]
				if len(buf) == cap(buf) {
					buf = a.moreBuffer(buf)
				}
				buf = append(buf, Envelope[T]{Dest: dest, Item: item})
				a.bufs[slot] = buf
				n = len(buf) + len(a.fin[slot])
			}
			a.buffered++
			if n >= a.sizing.BufferItems || a.buffered >= a.sizing.TotalCapacity {
				a.full(slot, out)
			}
			return nil
		}
	}
	a.add(Envelope[T]{Dest: dest, Item: item}, out)
	return nil
}

// Route sorts the items of a message received from a peer into the local buffers, delivering
// those for this PE (claim T08) in Local, which reuses items (the received message's: it is
// overwritten). Envelopes whose destination is outside the grid — corrupt data — are dropped,
// and the error names the first; the others are still routed.
func (a *Aggregator[T]) Route(items []Envelope[T]) (Output[T], error) {
	var out Output[T]
	local, err := a.RouteSplit(items, &out)
	if len(local) > 0 {
		out.Local = local
	}
	return out, err
}

// RouteSplit is Route for a caller that delivers the items for this PE
// itself, in one loop: it routes the items for other PEs into the
// buffers, adding the messages to send and the direct items to out, and
// moves the items for this PE, in order, to the front of items, which it
// returns. items is the caller's (a received message's) and is
// overwritten. Envelopes outside the grid are dropped, and the error
// names the first.
func (a *Aggregator[T]) RouteSplit(items []Envelope[T], out *Output[T]) ([]Envelope[T], error) {
	var err error
	pe, npes := a.cfg.PE, a.cfg.Topology.NumPEs()
	local := 0
	for i := range items {
		e := &items[i]
		switch {
		case e.Dest == pe:
			items[local] = *e // local <= i: an item already read
			local++
		case uint(e.Dest) >= uint(npes):
			if err == nil {
				err = fmt.Errorf("tram: PE %d: received item for PE %d outside topology %s (%d PEs)", pe, e.Dest, a.cfg.Topology, npes)
			}
			continue
		default:
			a.add(*e, out)
		}
		a.stats.Routed++
	}
	a.stats.Local += local
	return items[:local], err
}

// Arrived counts the n last-hop items of a received message (its Final
// part), which the caller delivers on this PE.
func (a *Aggregator[T]) Arrived(n int) {
	a.stats.Routed += n
	a.stats.Local += n
}

func (a *Aggregator[T]) size(item T) int {
	if a.cfg.Size == nil {
		return a.fixed
	}
	return a.cfg.Size(item)
}

// setFixedSize counts every item as n bytes, as a Config.Size that
// returns n would, without a call per item; it replaces Config.Size.
func (a *Aggregator[T]) setFixedSize(n int) {
	a.cfg.Size, a.fixed = nil, n
	a.fast = a.hop != nil && a.cfg.DirectCutoff == 0
}

// add places one envelope: locally, directly, or in the buffer of its next hop, then sends that
// buffer if full (T06) or the fullest buffer if the PE's capacity is reached (T07).
func (a *Aggregator[T]) add(e Envelope[T], out *Output[T]) {
	if a.fast {
		// The common case in a few loads and stores: items of one size,
		// no cutoff, the next hop's slot from the table, no byte counts
		// (Stats derives them).
		// (put written out, as in InsertTo: a call per routed item.)
		if h := a.hop[e.Dest]; h >= 0 {
			slot, n := int(h>>1), 0
			if h&1 != 0 {
				fb := a.fin[slot]
				if len(fb) == cap(fb) {
					fb = a.moreFinal(fb)
				}
				fb = append(fb, e.Item)
				a.fin[slot] = fb
				n = len(fb) + len(a.bufs[slot])
			} else {
				buf := a.bufs[slot]
				if len(buf) == cap(buf) {
					buf = a.moreBuffer(buf)
				}
				buf = append(buf, e)
				a.bufs[slot] = buf
				n = len(buf) + len(a.fin[slot])
			}
			a.buffered++
			if n >= a.sizing.BufferItems || a.buffered >= a.sizing.TotalCapacity {
				a.full(slot, out)
			}
			return
		}
	}
	if e.Dest == a.cfg.PE {
		a.stats.Local++
		out.Local = append(out.Local, e)
		return
	}
	n := a.size(e.Item)
	if a.cfg.DirectCutoff > 0 && n > a.cfg.DirectCutoff {
		a.stats.Direct++
		out.Direct = append(out.Direct, e)
		return
	}
	var slot int
	var last bool
	if a.hop != nil {
		h := a.hop[e.Dest]
		slot, last = int(h>>1), h&1 != 0
	} else {
		slot, last = a.slotFor(e.Dest)
	}
	a.put(slot, last, e)
	a.buffered++
	if a.cfg.Size != nil {
		a.bytes += n
		a.slotBytes[slot] += n
	}
	a.full(slot, out)
}

// put appends e to slot's buffer: bare if last (the next hop is e.Dest).
func (a *Aggregator[T]) put(slot int, last bool, e Envelope[T]) {
	if last {
		fb := a.fin[slot]
		if len(fb) == cap(fb) {
			fb = a.moreFinal(fb)
		}
		a.fin[slot] = append(fb, e.Item)
		return
	}
	buf := a.bufs[slot]
	if len(buf) == cap(buf) {
		buf = a.moreBuffer(buf)
	}
	a.bufs[slot] = append(buf, e)
}

// full sends slot's buffer if it is full (T06), or the fullest buffer if
// the PE's capacity is reached (T07).
func (a *Aggregator[T]) full(slot int, out *Output[T]) {
	switch {
	case a.slotLen(slot) >= a.sizing.BufferItems:
		a.stats.FullFlushes++
		out.Flushes = append(out.Flushes, a.take(slot))
	case a.buffered >= a.sizing.TotalCapacity:
		a.stats.FullestSent++
		out.Flushes = append(out.Flushes, a.take(a.fullest()))
	}
}

// fullest returns the slot holding the most items, the lowest slot on a tie. A linear scan: there
// are Σ(s_d − 1) slots, and it runs only when the capacity is reached.
func (a *Aggregator[T]) fullest() int {
	best, most := 0, a.slotLen(0)
	for s := range a.bufs {
		if n := a.slotLen(s); n > most {
			best, most = s, n
		}
	}
	return best
}

// take empties slot and returns its contents as a message.
func (a *Aggregator[T]) take(slot int) Flush[T] {
	items, final := a.bufs[slot], a.fin[slot]
	a.bufs[slot], a.fin[slot] = nil, nil
	a.buffered -= len(items) + len(final)
	a.bytes -= a.slotBytes[slot]
	a.slotBytes[slot] = 0
	a.stats.Flushes++
	return Flush[T]{To: a.peers.Peer(slot), Items: items, Final: final}
}

// FlushAll empties every non-empty buffer and returns them as messages, in slot order: what
// periodic flushing (claim T24) and the end of a step (claim T26) send.
func (a *Aggregator[T]) FlushAll() []Flush[T] {
	var fs []Flush[T]
	for s := range a.bufs {
		if a.slotLen(s) > 0 {
			fs = append(fs, a.take(s))
		}
	}
	return fs
}

// FlushDim empties the buffers of the peers that differ from this PE in
// dimension d and returns them as messages: staged completion sends one
// dimension at a time (claim T13).
func (a *Aggregator[T]) FlushDim(d int) []Flush[T] {
	var fs []Flush[T]
	for s := range a.bufs {
		if a.slotLen(s) > 0 && a.cfg.Topology.DiffDim(a.cfg.PE, a.peers.Peer(s)) == d {
			fs = append(fs, a.take(s))
		}
	}
	return fs
}
