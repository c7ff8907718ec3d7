package trace

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"time"
)

// EventLimit is the most events a process keeps, split evenly between its
// PEs (40 bytes each in memory, pointer-free: see rec).
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
		j.Args = map[string]any{"type": e.Label.Type, "entry": e.Label.Entry}
		if e.Index != nil {
			j.Args["index"] = fmt.Sprint(e.Index)
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
// written stops the job before it begins.
type Writer struct {
	Path  string // the job's trace file (node 0's)
	Node  int
	Nodes int
	Start time.Time
	file  *os.File
	bufs  []*Buffer
}

// Open creates the file node writes (NodePath) and returns a Writer for a
// process with pes local PEs.
func Open(path string, node, nodes int) (*Writer, error) {
	p := NodePath(path, node)
	f, err := os.Create(p)
	if err != nil {
		return nil, fmt.Errorf("trace: cannot write the trace file %s: %w", p, err)
	}
	return &Writer{Path: path, Node: node, Nodes: max(nodes, 1), Start: time.Now(), file: f}, nil
}

// Buffer returns a new buffer for a PE of this process; with local PEs
// in all, each keeps its share of EventLimit. Call it before the job runs
// (the runtime does so when it sets each PE up) and under the caller's
// own lock if PEs are set up concurrently.
func (w *Writer) Buffer(pe, local int) *Buffer {
	b := NewBuffer(pe, w.Start, EventLimit/max(local, 1))
	w.bufs = append(w.bufs, b)
	return b
}

// Close writes the events and closes the file. Node 0 first merges the
// files of the other nodes that exist, and removes them.
func (w *Writer) Close() error {
	sort.Slice(w.bufs, func(i, j int) bool { return w.bufs[i].PE < w.bufs[j].PE })
	dropped := 0
	for _, b := range w.bufs {
		b.close()
		dropped += b.Dropped
	}
	events := Events(w.Node, w.bufs)
	other := OtherData{Node: w.Node, StartUnixNano: w.Start.UnixNano(), Dropped: dropped}
	var merged []string
	if w.Node == 0 && w.Nodes > 1 {
		files := []*File{{TraceEvents: events, OtherData: other}}
		for n := 1; n < w.Nodes; n++ {
			f, err := ReadFile(NodePath(w.Path, n))
			if err != nil {
				other.Missing = append(other.Missing, n)
				continue
			}
			files = append(files, f)
			merged = append(merged, NodePath(w.Path, n))
		}
		files[0].OtherData = other // Merge keeps its Missing
		events, other = Merge(files)
	}
	err := Write(w.file, events, other)
	if cerr := w.file.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("trace: writing %s: %w", w.file.Name(), err)
	}
	var rerr error
	for _, p := range merged {
		rerr = errors.Join(rerr, os.Remove(p))
	}
	return rerr
}
