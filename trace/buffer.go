package trace

import (
	"math"
	"sync"
	"time"
)

// Kind is the kind of an event.
type Kind uint8

const (
	Slice     Kind = iota + 1 // an entry method that ran: TS, Dur
	FlowStart                 // a sampled send: TS (the start of the slice that sends), ID
	FlowEnd                   // its delivery: TS (the start of the slice that runs it), ID
	Instant                   // a point event: TS, Label, Args
)

// Label names a slice or an instant. The runtime makes one per entry
// method and keeps it, so that recording a slice allocates nothing.
type Label struct {
	Name  string // what the viewer shows: Type.Entry, or the instant's name
	Cat   string // the category: "entry", "migration", "lb", ...
	Type  string // the chare type, for slices
	Entry string // the entry method, for slices
}

// Event is one recorded event. Times are nanoseconds since the Buffer's
// start.
type Event struct {
	Kind    Kind
	TS, Dur int64
	ID      uint64 // a flow's number
	Label   *Label
	Index   any            // a slice's element index or branch PE, if any
	Args    map[string]any // an instant's arguments
}

// FlowWindow and FlowsPerWindow bound the flow arrows a PE draws: at most
// FlowsPerWindow sends in each FlowWindow get one (about 16,000 a second
// per PE); the rest are sent without.
const (
	FlowWindow     = time.Millisecond
	FlowsPerWindow = 16
)

// Sampler decides which sends get a flow arrow: all of them while a PE
// sends fewer than Per in a window of Window nanoseconds, the first Per of
// each window above that rate.
type Sampler struct {
	Window int64 // nanoseconds
	Per    int
	start  int64 // of the current window
	n      int   // arrows taken in it
}

// Take reports whether a send at time now (nanoseconds, not decreasing)
// gets an arrow.
func (s *Sampler) Take(now int64) bool {
	if now-s.start >= s.Window || now < s.start {
		s.start, s.n = now, 0
	}
	if s.n >= s.Per {
		return false
	}
	s.n++
	return true
}

// would reports whether Take(now) would be true, without taking.
func (s *Sampler) would(now int64) bool {
	if now-s.start >= s.Window || now < s.start {
		return s.Per > 0
	}
	return s.n < s.Per
}

// Buffer holds the events of one PE. Only that PE records into it. A
// buffer of a Writer hands its events to the writer as the run goes, a
// chunk at a time, and keeps only the chunk it is filling (and those
// filled while a slice is open, see handOff); a buffer made by NewBuffer
// keeps every event until Recorded reads them.
type Buffer struct {
	// mu guards the events: a PE may still finish an entry method after
	// the job ended, while the buffer is written out.
	mu      sync.Mutex
	closed  bool
	PE      int
	w       *Writer  // nil: the events stay in memory
	cur     *chunk   // the chunk being filled
	full    []*chunk // chunks filled and not handed to the writer (all of them without one)
	n       int      // events recorded
	labels  []*Label
	ids     map[*Label]uint32 // 1 + a label's place in labels
	last    *Label            // the label of the latest slice, and its id
	lastID  uint32
	allow   int // with a writer: events left of what the buffer reserved of the writer's cap
	stopped bool
	Limit   int // without a writer: the most events kept; 0 means no limit
	Dropped int // events not kept because of Limit or the writer's cap
	start   time.Time
	sampler Sampler
	flow    uint32 // the last flow number drawn
	open    int64  // the start of the slice running now, or -1
}

// chunk is eventChunk events at most, and the values their refs point to.
type chunk struct {
	recs []rec
	refs []any // indices that are not ints, instants (see rec)
}

// newChunk returns an empty chunk: one the writer has written and given
// back, or a new one.
func (b *Buffer) newChunk() *chunk {
	if b.w != nil {
		select {
		case c := <-b.w.free:
			return c
		default:
		}
	}
	return &chunk{recs: make([]rec, 0, eventChunk)}
}

// NewBuffer returns an empty buffer for a PE whose times count from start,
// which keeps at most limit events (0: no limit) in memory.
func NewBuffer(pe int, start time.Time, limit int) *Buffer {
	return &Buffer{PE: pe, Limit: limit, start: start, open: -1, sampler: Sampler{Window: int64(FlowWindow), Per: FlowsPerWindow}}
}

// Enter marks the start t0 of a slice that runs now, so that the flows it
// sends start where it starts, and returns what was open before (an entry
// method may run another inline); pass that to Leave when it ends.
func (b *Buffer) Enter(t0 int64) (outer int64) {
	outer, b.open = b.open, t0
	return outer
}

// Leave ends the slice that Enter opened.
func (b *Buffer) Leave(outer int64) { b.open = outer }

// Stopped reports whether this buffer stopped recording because its
// writer's cap was reached: a caller may then skip reading the clock for
// what it records (which is only counted as dropped). Only the buffer's
// PE may call it.
func (b *Buffer) Stopped() bool { return b.stopped }

// Now returns the current time in the buffer's clock.
func (b *Buffer) Now() int64 { return int64(time.Since(b.start)) }

func (b *Buffer) add(r rec) { b.addRef(r, nil) }

// addRef keeps r, and v in the chunk's refs if it is not nil (r.ref then
// points to it), unless the buffer is closed or full.
func (b *Buffer) addRef(r rec, v any) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return
	}
	if !b.room() {
		b.Dropped++
		return
	}
	if b.cur == nil || len(b.cur.recs) == eventChunk {
		if b.cur != nil {
			b.full = append(b.full, b.cur)
		}
		b.cur = b.newChunk()
	}
	if v != nil {
		b.cur.refs = append(b.cur.refs, v)
		r.ref = uint32(len(b.cur.refs))
	}
	b.cur.recs = append(b.cur.recs, r)
	b.n++
	// Hand the filled chunks over between slices only: a slice is
	// recorded when it ends, after the flows it sent, and the writer sorts
	// what it is handed so that the slice comes before them.
	if b.w != nil && b.open < 0 && len(b.full) > 0 {
		b.handOff(b.full)
		b.full = nil
	}
}

// room says whether one more event may be recorded, and counts it.
func (b *Buffer) room() bool {
	if b.w == nil {
		return b.Limit == 0 || b.n < b.Limit
	}
	if b.allow == 0 && !b.stopped {
		b.allow = b.w.reserve(eventChunk)
		if b.allow == 0 {
			b.stopped = true
			b.w.stop(b.PE, b.Now())
		}
	}
	if b.allow == 0 {
		return false
	}
	b.allow--
	return true
}

// handOff gives chunks to the writer; b.mu is held.
func (b *Buffer) handOff(cs []*chunk) {
	b.w.ch <- batch{b: b, chunks: cs, labels: b.labels[:len(b.labels):len(b.labels)]}
}

// eventChunk is the number of events in one chunk of a Buffer: what a PE
// hands to its writer at a time.
const eventChunk = 4096

// rec is an Event as a Buffer keeps it: 40 bytes, without pointers, so
// that the collector never scans the events in flight (with a *Label and
// an index in an interface per event, marking them took a fifth of the
// CPU of a traced trace/manytomany in tests/bench). Labels are numbered
// in the buffer's table, an int index is kept in place, and anything else
// (another index type, an instant's label and arguments) goes to the
// chunk's refs.
type rec struct {
	ts, dur int64
	id      uint64 // a flow's number, or a slice's int index
	label   uint32 // 1 + its place in labels; 0: none
	ref     uint32 // 1 + its place in refs; 0: none
	kind    Kind
	intIdx  bool // id holds the slice's index, an int
}

// labelID returns l's number in the buffer's table, adding it the first
// time. Only the buffer's PE records, so the latest label is kept without
// a lock: a run of slices of one entry method costs one comparison. A
// Label is never written, so PEs may share one.
func (b *Buffer) labelID(l *Label) uint32 {
	if l == nil {
		return 0
	}
	if l == b.last {
		return b.lastID
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	id, ok := b.ids[l]
	if !ok {
		if b.ids == nil {
			b.ids = map[*Label]uint32{}
		}
		b.labels = append(b.labels, l)
		id = uint32(len(b.labels))
		b.ids[l] = id
	}
	b.last, b.lastID = l, id
	return id
}

// Len returns the number of events recorded.
func (b *Buffer) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.n
}

// WouldSample reports whether a FlowFrom now would draw an arrow, without
// drawing it.
func (b *Buffer) WouldSample() bool { return !b.stopped && b.sampler.would(b.sendTime()) }

// sendTime is the time the sampler counts a send at: the start of the
// slice that sends, or now outside any slice. The sends of one slice all
// count in the window where it starts (their arrows start there too), and
// a send costs no reading of the clock.
func (b *Buffer) sendTime() int64 {
	if b.open >= 0 {
		return b.open
	}
	return b.Now()
}

// Recorded returns the events kept in memory (a buffer without a writer),
// in the order they were recorded, in one slice of their own.
func (b *Buffer) Recorded() []Event {
	b.mu.Lock()
	defer b.mu.Unlock()
	cs := b.full
	if b.cur != nil {
		cs = append(cs[:len(cs):len(cs)], b.cur)
	}
	var out []Event
	for _, c := range cs {
		for i := range c.recs {
			out = append(out, c.event(&c.recs[i], b.labels))
		}
	}
	return out
}

// event returns r, a rec of c, as an Event.
func (c *chunk) event(r *rec, labels []*Label) Event {
	e := Event{Kind: r.kind, TS: r.ts, Dur: r.dur}
	if r.label > 0 {
		e.Label = labels[r.label-1]
	}
	switch {
	case r.kind == FlowStart || r.kind == FlowEnd:
		e.ID = r.id
	case r.intIdx:
		e.Index = int(r.id)
	case r.kind == Instant && r.ref > 0:
		if in, ok := c.refs[r.ref-1].(*instant); ok {
			e.Label, e.Args = &in.label, in.args
		}
	case r.ref > 0:
		e.Index = c.refs[r.ref-1]
	}
	return e
}

// Slice records an entry method that ran from t0 to t1 (Now's clock).
func (b *Buffer) Slice(l *Label, index any, t0, t1 int64) {
	r := rec{kind: Slice, ts: t0, dur: t1 - t0, label: b.labelID(l)}
	switch v := index.(type) {
	case nil:
	case int:
		r.id, r.intIdx = uint64(v), true
	default:
		b.addRef(r, v)
		return
	}
	b.add(r)
}

// FlowFrom records, if the sampler takes it, the start of a flow for the
// send happening now, and returns its number (never 0), or 0 for a send
// without an arrow. The number is unique per PE (it does not wrap: after
// MaxUint32 arrows, more than a day of a PE's sends at the sampler's
// rate, sends go without): the receiver joins it with the sending PE to
// find the flow (FlowID).
//
// The flow starts at the start of the slice that sends (Enter), not at
// the send: Chrome's DevTools joins a flow only to a slice that starts at
// the flow's own time, and Perfetto and chrome://tracing draw the arrow
// from the enclosing slice anyway. A send outside any slice starts now.
func (b *Buffer) FlowFrom() uint32 {
	ts := b.sendTime()
	if b.stopped || b.flow == math.MaxUint32 || !b.sampler.Take(ts) {
		return 0
	}
	b.flow++
	b.add(rec{kind: FlowStart, ts: ts, id: FlowID(b.PE, b.flow)})
	return b.flow
}

// FlowTo records the end of flow n from PE src at ts, the start of the
// slice that runs the message.
func (b *Buffer) FlowTo(src int, n uint32, ts int64) {
	b.add(rec{kind: FlowEnd, ts: ts, id: FlowID(src, n)})
}

// FlowID is the job-wide number of flow n drawn on PE src.
func FlowID(src int, n uint32) uint64 { return uint64(src)<<32 | uint64(n) }

// flowSrc is the sending PE of flow id.
func flowSrc(id uint64) int { return int(id >> 32) }

// Instant records a point event now. args holds key, value pairs.
func (b *Buffer) Instant(cat, name string, args ...any) {
	var m map[string]any
	if len(args) > 0 {
		m = make(map[string]any, len(args)/2)
		for i := 0; i+1 < len(args); i += 2 {
			k, _ := args[i].(string)
			m[k] = args[i+1]
		}
	}
	b.addRef(rec{kind: Instant, ts: b.Now()}, &instant{Label{Name: name, Cat: cat}, m})
}

// instant is what an Instant keeps in its chunk's refs (so that a full
// buffer keeps nothing of it).
type instant struct {
	label Label
	args  map[string]any
}

// close stops the recording: what a PE records afterwards is not kept.
// A buffer of a writer hands what it holds to it.
func (b *Buffer) close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	if b.w == nil {
		return
	}
	cs := b.full
	if b.cur != nil && len(b.cur.recs) > 0 {
		cs = append(cs, b.cur)
	}
	b.full, b.cur = nil, nil
	if len(cs) > 0 {
		b.handOff(cs)
	}
}
