package trace

import (
	"bufio"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// EventLimit is the most events a process records by default
// (Options.Max; the runtime flag -tracemax N).
const EventLimit = 4 << 20

// JSONEvent is one event of the trace-event format, as written.
type JSONEvent struct {
	Name string         `json:"name,omitempty"`
	Cat  string         `json:"cat,omitempty"`
	Ph   string         `json:"ph"`
	TS   float64        `json:"ts"` // microseconds
	Dur  *float64       `json:"dur,omitempty"`
	PID  int            `json:"pid"`
	TID  int            `json:"tid"`
	ID   uint64         `json:"id,omitempty"`
	BP   string         `json:"bp,omitempty"` // a flow end binds to the slice enclosing it
	S    string         `json:"s,omitempty"`  // an instant's scope
	Args map[string]any `json:"args,omitempty"`
}

// OtherData is the file's otherData object: what a merge needs.
type OtherData struct {
	Node          int   `json:"charmgo_node"`
	StartUnixNano int64 `json:"charmgo_start_unix_ns"`
	Dropped       int   `json:"dropped_events,omitempty"`
	Max           int   `json:"tracemax,omitempty"` // set when recording stopped at the cap
	Missing       []int `json:"missing_nodes,omitempty"`
}

// File is a trace file read back: its events and otherData.
type File struct {
	TraceEvents     []JSONEvent `json:"traceEvents"`
	DisplayTimeUnit string      `json:"displayTimeUnit,omitempty"`
	OtherData       OtherData   `json:"otherData"`
}

func us(ns int64) float64 { return float64(ns) / 1000 }

// Events converts the buffers of one node (pid) to trace events, metadata
// first.
func Events(node int, bufs []*Buffer) []JSONEvent {
	n := 2 + 2*len(bufs)
	for _, b := range bufs {
		n += b.Len()
	}
	out := make([]JSONEvent, 0, n) // millions, in a busy run: grown, they were copied over and over
	out = append(out, []JSONEvent{
		{Name: "process_name", Ph: "M", PID: node, Args: map[string]any{"name": fmt.Sprintf("node %d", node)}},
		{Name: "process_sort_index", Ph: "M", PID: node, Args: map[string]any{"sort_index": node}},
	}...)
	for _, b := range bufs {
		out = append(out,
			JSONEvent{Name: "thread_name", Ph: "M", PID: node, TID: b.PE, Args: map[string]any{"name": fmt.Sprintf("PE %d", b.PE)}},
			JSONEvent{Name: "thread_sort_index", Ph: "M", PID: node, TID: b.PE, Args: map[string]any{"sort_index": b.PE}})
	}
	meta := len(out)
	for _, b := range bufs {
		ev := b.Recorded()
		sortEvents(ev)
		for i := range ev {
			out = append(out, ev[i].json(node, b.PE))
		}
	}
	byTime(out[meta:])
	return out
}

// byTime sorts events by their times, keeping the order of those of the
// same time. The whole file goes in time order, not PE after PE: Chrome's
// DevTools reads flows in file order and drops a flow's end that comes
// before its start (every arrow to a lower PE, or to node 0).
func byTime(ev []JSONEvent) {
	sort.SliceStable(ev, func(i, j int) bool { return ev[i].TS < ev[j].TS })
}

// CatEntry is the category of the slices of entry methods, and of the
// flows between them: Chrome's DevTools joins a flow to a slice only of
// its own category.
const CatEntry = "entry"

// sortEvents puts a PE's events in the order of their times, slices
// before the flows and instants of the same time, and an enclosing slice
// before one it encloses. A PE records a slice when it ends, after the
// flows it drew and the slices it ran inline; a viewer that reads the
// file in order (Perfetto) binds a flow to the slice open at its time, so
// that slice must come first.
func sortEvents(ev []Event) {
	sort.SliceStable(ev, func(i, j int) bool {
		a, b := &ev[i], &ev[j]
		if a.TS != b.TS {
			return a.TS < b.TS
		}
		if (a.Kind == Slice) != (b.Kind == Slice) {
			return a.Kind == Slice
		}
		return a.Kind == Slice && a.Dur > b.Dur
	})
}

func (e *Event) json(node, pe int) JSONEvent {
	j := JSONEvent{PID: node, TID: pe, TS: us(e.TS)}
	switch e.Kind {
	case Slice:
		d := us(e.Dur)
		j.Ph, j.Dur, j.Name, j.Cat = "X", &d, e.Label.Name, e.Label.Cat
		if e.Index != nil {
			j.Args = map[string]any{"index": fmt.Sprint(e.Index)}
		}
	case FlowStart, FlowEnd:
		j.Ph, j.Name, j.Cat, j.ID = "s", "message", CatEntry, e.ID
		if e.Kind == FlowEnd {
			j.Ph, j.BP = "f", "e"
		}
	case Instant:
		j.Ph, j.S, j.Name, j.Cat, j.Args = "i", "t", e.Label.Name, e.Label.Cat, e.Args
	}
	return j
}

// Write writes a trace file: the events, and otherData that records the
// node and the wall-clock time at which its clocks started.
func Write(w io.Writer, events []JSONEvent, other OtherData) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	if _, err := bw.WriteString(`{"displayTimeUnit":"ns","traceEvents":[`); err != nil {
		return err
	}
	var buf []byte
	for i := range events {
		buf = buf[:0]
		if i > 0 {
			buf = append(buf, ',')
		}
		var err error
		if buf, err = appendEvent(buf, &events[i]); err != nil {
			return fmt.Errorf("trace: encoding event %q: %w", events[i].Name, err)
		}
		if _, err := bw.Write(append(buf, '\n')); err != nil {
			return err
		}
	}
	o, err := json.Marshal(other)
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintf(bw, "],\"otherData\":%s}\n", o); err != nil {
		return err
	}
	return bw.Flush()
}

// ReadFile reads a trace file that Write wrote.
func ReadFile(path string) (*File, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("trace: %w", err)
	}
	var f File
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("trace: %s is not a trace file: %w", path, err)
	}
	return &f, nil
}

// Merge returns the events of several nodes' files on one time line: each
// file's timestamps are shifted by the difference between its start and
// the earliest start, the metadata first and then every event in time
// order; otherData sums the dropped events.
func Merge(files []*File) ([]JSONEvent, OtherData) {
	if len(files) == 0 {
		return nil, OtherData{}
	}
	first := files[0].OtherData.StartUnixNano
	for _, f := range files {
		first = min(first, f.OtherData.StartUnixNano)
	}
	var out []JSONEvent
	other := OtherData{Node: files[0].OtherData.Node, StartUnixNano: first}
	var rest []JSONEvent
	for _, f := range files {
		shift := us(f.OtherData.StartUnixNano - first)
		for _, e := range f.TraceEvents {
			if e.Ph == "M" {
				out = append(out, e)
				continue
			}
			e.TS += shift
			rest = append(rest, e)
		}
		other.Dropped += f.OtherData.Dropped
		other.Max = max(other.Max, f.OtherData.Max)
		other.Missing = append(other.Missing, f.OtherData.Missing...)
	}
	byTime(rest)
	sort.Ints(other.Missing)
	return append(out, rest...), other
}

// NodePath is the file node n writes in a job of several processes, beside
// path (node 0 writes path itself).
func NodePath(path string, node int) string {
	if node == 0 {
		return path
	}
	return fmt.Sprintf("%s.node%d", path, node)
}

// Writer is the trace of one process: its PEs' buffers and the file they
// go to. Open it before the job starts, so that a path that cannot be
// written stops the job before it begins. Its buffers hand their events
// over a chunk at a time, and a goroutine of the writer encodes and
// writes them to the file as the run goes: memory holds the chunks in
// flight, not the run.
type Writer struct {
	Path  string // the job's trace file (node 0's)
	Node  int
	Nodes int
	Start time.Time
	Max   int // the most events the process records (Options.Max)

	file   *os.File // what this process writes as the run goes
	out    []byte   // encoded events not yet written to file
	first  bool     // no event written yet
	bufs   []*Buffer
	mu     sync.Mutex   // guards local: PEs are set up while others run
	local  map[int]bool // the PEs of this process
	ch     chan batch
	free   chan *chunk // chunks written, for the buffers to fill again
	done   chan struct{}
	werr   error // the first error writing the file
	warn   io.Writer
	budget atomic.Int64 // events left to reserve

	stopOnce sync.Once
	stopPE   int   // the PE that found the cap reached, and when
	stopTS   int64 //

	// The writer goroutine's state: flow ends waiting for their start
	// (see writeFlowEnd), the flows started, and the encoded start of each
	// label's slices.
	started  map[uint64]bool
	waiting  map[uint64][]heldEnd
	prefixes map[*Label][]byte
	sorted   []at   // a batch's events, sorted
	pidTID   []byte // `,"pid":N,"tid":P` of the batch's PE
	written  int64  // events written
}

// at is an event of a batch and its chunk.
type at struct {
	c *chunk
	r *rec
}

// outFlush is how much encoded output the writer gathers before it
// writes it to the file; inFlight is how many batches the buffers may
// hand over before the writer has taken them (then they wait). Tests
// make both small.
var (
	outFlush = 1 << 20
	inFlight = 64
)

// batch is what a buffer hands to its writer: its chunks, and its label
// table as it was then (labels are only appended to).
type batch struct {
	b      *Buffer
	chunks []*chunk
	labels []*Label
}

// heldEnd is the end of a flow written once its start is.
type heldEnd struct {
	pe int
	ts int64
}

// Options configure a Writer.
type Options struct {
	// Max is the most events the process records (0: EventLimit). When
	// it is reached, recording stops: the trace says so in an instant
	// event ("trace stopped") and in otherData (dropped_events, tracemax),
	// and Warn gets a line at once.
	Max int
	// Warn is where the writer says that recording stopped (default
	// os.Stderr).
	Warn io.Writer
}

// Open creates the file node writes (NodePath) and returns a Writer with
// the default Options.
func Open(path string, node, nodes int) (*Writer, error) {
	return OpenWith(path, node, nodes, Options{})
}

// OpenWith creates the file node writes (NodePath; node 0 of a job of
// several processes writes its own events beside it, in NodePath(path,
// 0)+".part", and merges them into path when it closes) and returns a
// Writer for it.
func OpenWith(path string, node, nodes int, o Options) (*Writer, error) {
	if o.Max < 0 {
		return nil, fmt.Errorf("trace: the most events to record, %d, is negative", o.Max)
	}
	if o.Max == 0 {
		o.Max = EventLimit
	}
	if o.Warn == nil {
		o.Warn = os.Stderr
	}
	nodes = max(nodes, 1)
	p := NodePath(path, node)
	if node == 0 && nodes > 1 {
		// Check that path can be written, then write beside it.
		f, err := os.Create(p)
		if err != nil {
			return nil, fmt.Errorf("trace: cannot write the trace file %s: %w", p, err)
		}
		f.Close()
		p += ".part"
	}
	f, err := os.Create(p)
	if err != nil {
		return nil, fmt.Errorf("trace: cannot write the trace file %s: %w", p, err)
	}
	w := &Writer{Path: path, Node: node, Nodes: nodes, Start: time.Now(), Max: o.Max, file: f,
		out: make([]byte, 0, outFlush+4096), first: true, local: map[int]bool{}, ch: make(chan batch, inFlight), free: make(chan *chunk, 2*inFlight),
		done: make(chan struct{}), warn: o.Warn, started: map[uint64]bool{}, waiting: map[uint64][]heldEnd{},
		prefixes: map[*Label][]byte{}}
	w.budget.Store(int64(o.Max))
	w.out = append(w.out, `{"displayTimeUnit":"ns","traceEvents":[`+"\n"...)
	go w.run()
	return w, nil
}

// Buffer returns a new buffer for a PE of this process; local is the
// number of PEs of the process (kept for callers; the cap, Options.Max,
// is shared by all of them). Call it before the job runs (the runtime
// does so when it sets each PE up) and under the caller's own lock if PEs
// are set up concurrently.
func (w *Writer) Buffer(pe, local int) *Buffer {
	b := NewBuffer(pe, w.Start, 0)
	b.w = w
	w.bufs = append(w.bufs, b)
	w.mu.Lock()
	w.local[pe] = true
	w.mu.Unlock()
	return b
}

// reserve takes up to n events of the cap for a buffer, and returns how
// many it got (0 once the cap is reached).
func (w *Writer) reserve(n int) int {
	left := w.budget.Add(-int64(n))
	if left >= 0 {
		return n
	}
	if got := int64(n) + left; got > 0 {
		return int(got)
	}
	return 0
}

// stop records that the cap is reached, once: at PE pe, at ts.
func (w *Writer) stop(pe int, ts int64) {
	w.stopOnce.Do(func() {
		w.stopPE, w.stopTS = pe, ts
		fmt.Fprintf(w.warn, "trace: %s: recording stopped after %d events (-tracemax %d): the rest of the run is not in the trace\n", w.Path, w.Max, w.Max)
	})
}

// run writes what the buffers hand over, until Close closes the channel.
func (w *Writer) run() {
	defer close(w.done)
	for bt := range w.ch {
		if w.werr == nil {
			w.werr = w.writeBatch(bt)
		}
		for _, c := range bt.chunks {
			clear(c.refs)
			c.recs, c.refs = c.recs[:0], c.refs[:0]
			select {
			case w.free <- c:
			default:
			}
		}
	}
}

// writeBatch writes the events of one batch in time order (see sortRecs).
func (w *Writer) writeBatch(bt batch) error {
	pe := bt.b.PE
	w.pidTID = strconv.AppendInt(append(strconv.AppendInt(append(w.pidTID[:0], `,"pid":`...), int64(w.Node), 10), `,"tid":`...), int64(pe), 10)
	// Most batches are one chunk already in order: write it as it is.
	if len(bt.chunks) == 1 && slices.IsSortedFunc(bt.chunks[0].recs, func(x, y rec) int { return cmpRec(&x, &y) }) {
		c := bt.chunks[0]
		for i := range c.recs {
			if err := w.writeRec(at{c, &c.recs[i]}, bt.labels, pe); err != nil {
				return err
			}
		}
		return nil
	}
	all := w.sorted[:0]
	for _, c := range bt.chunks {
		for i := range c.recs {
			all = append(all, at{c, &c.recs[i]})
		}
	}
	slices.SortStableFunc(all, func(x, y at) int { return cmpRec(x.r, y.r) })
	defer func() { clear(all); w.sorted = all[:0] }()
	for _, a := range all {
		if err := w.writeRec(a, bt.labels, pe); err != nil {
			return err
		}
	}
	return nil
}

// writeRec writes one event of PE pe.
func (w *Writer) writeRec(a at, labels []*Label, pe int) error {
	r := a.r
	var err error
	switch r.kind {
	case Slice:
		err = w.writeSlice(r, a.c, labels, pe)
	case FlowStart:
		w.writeFlow(FlowStart, pe, r.ts, r.id)
		if held, ok := w.waiting[r.id]; ok {
			for _, h := range held {
				w.writeFlow(FlowEnd, h.pe, h.ts, r.id)
			}
			delete(w.waiting, r.id)
		} else {
			w.started[r.id] = true
		}
	case FlowEnd:
		w.writeFlowEnd(pe, r.ts, r.id)
	default:
		e := a.c.event(r, labels)
		err = w.writeJSON(e.json(w.Node, pe))
	}
	if err == nil && len(w.out) >= outFlush {
		err = w.flush()
	}
	return err
}

// flush writes the encoded events to the file.
func (w *Writer) flush() error {
	_, err := w.file.Write(w.out)
	w.out = w.out[:0]
	return err
}

// writeFlowEnd writes the end of flow id, or holds it until its start is
// written if the flow comes from a PE of this process: Chrome's DevTools
// reads flows in file order and drops an end that comes before its
// start, and the buffers of different PEs are written in the order they
// fill, not in time order. (A flow from another process is sorted when
// node 0 merges the files.)
func (w *Writer) writeFlowEnd(pe int, ts int64, id uint64) {
	w.mu.Lock()
	local := w.local[flowSrc(id)]
	w.mu.Unlock()
	if local && !w.started[id] {
		w.waiting[id] = append(w.waiting[id], heldEnd{pe, ts})
		return
	}
	delete(w.started, id)
	w.writeFlow(FlowEnd, pe, ts, id)
}

// sep starts an event: a comma after the previous one.
func (w *Writer) sep(b []byte) []byte {
	if w.first {
		w.first = false
		return b
	}
	return append(b, ',', '\n')
}

func (w *Writer) writeFlow(k Kind, pe int, ts int64, id uint64) {
	b := w.sep(w.out)
	b = append(b, `{"name":"message","cat":"entry","ph":"`...)
	if k == FlowStart {
		b = append(b, 's')
	} else {
		b = append(b, 'f')
	}
	b = appendMicros(append(b, `","ts":`...), ts)
	b = strconv.AppendInt(append(b, `,"pid":`...), int64(w.Node), 10)
	b = strconv.AppendInt(append(b, `,"tid":`...), int64(pe), 10)
	b = strconv.AppendUint(append(b, `,"id":`...), id, 10)
	if k == FlowEnd {
		b = append(b, `,"bp":"e"`...)
	}
	w.out = append(b, '}')
	w.written++
}

// writeSlice writes a slice as Event.json and appendEvent would, faster:
// the label's part is encoded once.
func (w *Writer) writeSlice(r *rec, c *chunk, labels []*Label, pe int) error {
	var l *Label
	if r.label > 0 {
		l = labels[r.label-1]
	}
	if l == nil {
		e := c.event(r, labels)
		e.Label = &Label{}
		return w.writeJSON(e.json(w.Node, pe))
	}
	pre, ok := w.prefixes[l]
	if !ok {
		pre = appendString(append(pre, `{"name":`...), l.Name)
		if l.Cat != "" {
			pre = appendString(append(pre, `,"cat":`...), l.Cat)
		}
		pre = append(pre, `,"ph":"X","ts":`...)
		w.prefixes[l] = pre
	}
	b := w.sep(w.out)
	b = appendMicros(append(b, pre...), r.ts)
	b = appendMicros(append(b, `,"dur":`...), r.dur)
	b = append(b, w.pidTID...)
	switch {
	case r.intIdx:
		b = append(b, `,"args":{"index":"`...)
		b = strconv.AppendInt(b, int64(int(r.id)), 10)
		b = append(b, '"', '}')
	case r.ref > 0:
		b = appendString(append(b, `,"args":{"index":`...), fmt.Sprint(c.refs[r.ref-1]))
		b = append(b, '}')
	}
	w.out = append(b, '}')
	w.written++
	return nil
}

// writeJSON writes an event through appendEvent.
func (w *Writer) writeJSON(e JSONEvent) error {
	n := len(w.out)
	first := w.first
	b, err := appendEvent(w.sep(w.out), &e)
	if err != nil {
		w.out, w.first = w.out[:n], first
		return fmt.Errorf("trace: encoding event %q: %w", e.Name, err)
	}
	w.out = b
	w.written++
	return nil
}

// appendMicros writes ns nanoseconds as microseconds, as appendFloat
// writes float64(ns)/1000: the digits, and up to three decimals without
// trailing zeros. (Below 10^15 ns, 11 days, the float64 has room for
// the three decimals, so its shortest form is this one.)
func appendMicros(b []byte, ns int64) []byte {
	if ns < 0 || ns >= 1e15 {
		b, _ = appendFloat(b, us(ns))
		return b
	}
	b = strconv.AppendInt(b, ns/1000, 10)
	frac := ns % 1000
	if frac == 0 {
		return b
	}
	d := [4]byte{'.', byte('0' + frac/100), byte('0' + frac/10%10), byte('0' + frac%10)}
	n := 4
	for d[n-1] == '0' {
		n--
	}
	return append(b, d[:n]...)
}

// cmpRec orders a PE's events by time, slices before the flows and
// instants of the same time, and an enclosing slice before one it
// encloses. A PE records a slice when it ends, after the flows it drew
// and the slices it ran inline; a viewer that reads the file in order
// binds a flow to the slice open at its time, so that slice must come
// first.
func cmpRec(a, b *rec) int {
	switch {
	case a.ts != b.ts:
		return cmp.Compare(a.ts, b.ts)
	case (a.kind == Slice) != (b.kind == Slice):
		if a.kind == Slice {
			return -1
		}
		return 1
	case a.kind == Slice:
		return cmp.Compare(b.dur, a.dur)
	}
	return 0
}

// Close stops the recording, writes what the buffers still hold, the
// tracks' names, the flow ends whose start never came, and otherData, and
// closes the file. Node 0 of a job of several processes then merges its
// events with the files of the other nodes that exist into Path, and
// removes them.
func (w *Writer) Close() error {
	sort.Slice(w.bufs, func(i, j int) bool { return w.bufs[i].PE < w.bufs[j].PE })
	dropped := 0
	for _, b := range w.bufs {
		b.close()
	}
	close(w.ch)
	<-w.done
	stopped := false
	for _, b := range w.bufs {
		b.mu.Lock()
		dropped += b.Dropped
		stopped = stopped || b.stopped
		b.mu.Unlock()
	}
	err := w.werr
	meta := []JSONEvent{
		{Name: "process_name", Ph: "M", PID: w.Node, Args: map[string]any{"name": fmt.Sprintf("node %d", w.Node)}},
		{Name: "process_sort_index", Ph: "M", PID: w.Node, Args: map[string]any{"sort_index": w.Node}},
	}
	for _, b := range w.bufs {
		meta = append(meta,
			JSONEvent{Name: "thread_name", Ph: "M", PID: w.Node, TID: b.PE, Args: map[string]any{"name": fmt.Sprintf("PE %d", b.PE)}},
			JSONEvent{Name: "thread_sort_index", Ph: "M", PID: w.Node, TID: b.PE, Args: map[string]any{"sort_index": b.PE}})
	}
	if stopped {
		meta = append(meta, JSONEvent{Name: fmt.Sprintf("trace stopped: -tracemax %d events reached", w.Max), Cat: "trace", Ph: "i", S: "g",
			TS: us(w.stopTS), PID: w.Node, TID: w.stopPE, Args: map[string]any{"tracemax": w.Max, "dropped_events": dropped}})
	}
	for _, e := range meta {
		if err == nil {
			err = w.writeJSON(e)
		}
	}
	// Ends whose start was not recorded (the cap) or is written later.
	ids := make([]uint64, 0, len(w.waiting))
	for id := range w.waiting {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		for _, h := range w.waiting[id] {
			w.writeFlow(FlowEnd, h.pe, h.ts, id)
		}
	}
	other := OtherData{Node: w.Node, StartUnixNano: w.Start.UnixNano(), Dropped: dropped}
	if stopped {
		other.Max = w.Max
	}
	o, jerr := json.Marshal(other)
	if err == nil {
		err = jerr
	}
	if err == nil {
		w.out = fmt.Appendf(w.out, "\n],\"otherData\":%s}\n", o)
		err = w.flush()
	}
	if cerr := w.file.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("trace: writing %s: %w", w.file.Name(), err)
	}
	if stopped {
		fmt.Fprintf(w.warn, "trace: %s: %d events were not recorded (-tracemax %d)\n", w.Path, dropped, w.Max)
	}
	if w.Node != 0 || w.Nodes == 1 {
		return nil
	}
	return w.merge()
}

// Abort stops the writer without writing a trace: it drops what the
// buffers hold, ends the goroutine that writes, closes the file and
// removes the partial files OpenWith created. It is for a job that fails
// before it runs; use Close at the end of one that ran.
func (w *Writer) Abort() error {
	for _, b := range w.bufs {
		b.mu.Lock()
		b.closed = true
		b.full, b.cur = nil, nil
		b.mu.Unlock()
	}
	close(w.ch)
	<-w.done
	err := w.file.Close()
	if rerr := os.Remove(w.file.Name()); rerr != nil && err == nil {
		err = rerr
	}
	if w.Node == 0 && w.Nodes > 1 {
		if rerr := os.Remove(NodePath(w.Path, 0)); rerr != nil && err == nil {
			err = rerr
		}
	}
	if err != nil {
		return fmt.Errorf("trace: aborting %s: %w", w.file.Name(), err)
	}
	return nil
}

// merge writes Path from node 0's events and the files of the other nodes
// it finds, and removes them.
func (w *Writer) merge() error {
	own := w.file.Name()
	f0, err := ReadFile(own)
	if err != nil {
		return err
	}
	files := []*File{f0}
	merged := []string{own}
	for n := 1; n < w.Nodes; n++ {
		f, err := ReadFile(NodePath(w.Path, n))
		if err != nil {
			f0.OtherData.Missing = append(f0.OtherData.Missing, n)
			continue
		}
		files = append(files, f)
		merged = append(merged, NodePath(w.Path, n))
	}
	events, other := Merge(files)
	out, err := os.Create(w.Path)
	if err != nil {
		return fmt.Errorf("trace: cannot write the trace file %s: %w", w.Path, err)
	}
	err = Write(out, events, other)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("trace: writing %s: %w", w.Path, err)
	}
	var rerr error
	for _, p := range merged {
		rerr = errors.Join(rerr, os.Remove(p))
	}
	return rerr
}
