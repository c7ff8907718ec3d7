package core

import (
	"fmt"
	"strconv"
	"sync"

	"github.com/charmgo/charm/actor"
	"github.com/charmgo/charm/trace"
)

// Tracing: -trace FILE (or Config.Trace) records the run as a timeline in
// the Chrome trace-event format (see package trace). Each PE records into
// its own buffer; when tracing is off the message path pays one nil check
// in Invoke and one in send.

func init() {
	RegisterFlag("trace", true, func(v string) error {
		if v == "" {
			return fmt.Errorf("needs a file name")
		}
		return nil
	})
	RegisterFlag("tracemax", true, func(v string) error {
		_, err := parseTraceMax(v)
		return err
	})
}

// parseTraceMax parses -tracemax's value.
func parseTraceMax(v string) (int, error) {
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("bad number of events %q: want a whole number of at least 1", v)
	}
	return n, nil
}

// jobTrace is a job's trace in this process.
type jobTrace struct {
	mu sync.Mutex
	w  *trace.Writer
}

// openTrace creates the trace file, so that a path that cannot be written
// stops the job before it starts; max is the most events this process
// records (0: trace.EventLimit).
func openTrace(path string, node, nodes, max int) (*jobTrace, error) {
	w, err := trace.OpenWith(path, node, nodes, trace.Options{Max: max})
	if err != nil {
		return nil, fmt.Errorf("chare: -trace: %w", err)
	}
	return &jobTrace{w: w}, nil
}

// setupTrace gives a PE its buffer.
func (pe *PE) setupTrace() {
	jt := pe.job.trace
	if jt == nil {
		return
	}
	rt := pe.job.rt
	lo, hi := actor.PERange(rt.Node(), rt.NumNodes(), pe.NumPEs())
	jt.mu.Lock()
	pe.tr = jt.w.Buffer(pe.ID(), hi-lo)
	jt.mu.Unlock()
	pe.labels = map[*Entry]*trace.Label{}
}

// Tracing reports whether this PE records a trace: packages that record
// instants with TraceInstant check it first when their arguments cost
// something to build.
func Tracing(pe *PE) bool { return pe.tr != nil }

// TraceInstant records a point event on this PE's track if the job is
// traced (cat is its category: "migration", "lb", "tram", "comlib",
// "quiescence", "checkpoint"); args holds key, value pairs.
func (pe *PE) TraceInstant(cat, name string, args ...any) {
	if pe.tr == nil {
		return
	}
	pe.tr.Instant(cat, name, args...)
}

// invokeTraced is Invoke recorded as a slice, with the end of the
// message's flow arrow if it has one.
func (pe *PE) invokeTraced(obj any, e Envelope) {
	h := e.Header()
	t0, outer := pe.traceBegin()
	if h.Flow != 0 {
		pe.tr.FlowTo(h.Src, h.Flow, t0)
	}
	pe.invoke(obj, e)
	pe.traceEnd(pe.label(h.Entry), traceIndex(obj), t0, outer)
}

// traceBegin opens the slice of an entry method that runs now; traceEnd
// closes and records it. A run of messages (run.go) records a slice per
// message with them, as envelopes do through invokeTraced.
// Once the trace's cap is reached (-tracemax), a slice is only counted as
// dropped, without reading the clock.
func (pe *PE) traceBegin() (t0, outer int64) {
	if pe.tr.Stopped() {
		return 0, pe.tr.Enter(0)
	}
	t0 = pe.tr.Now()
	return t0, pe.tr.Enter(t0)
}

func (pe *PE) traceEnd(l *trace.Label, index any, t0, outer int64) {
	pe.tr.Leave(outer)
	if pe.tr.Stopped() {
		pe.tr.Slice(l, nil, 0, 0)
		return
	}
	pe.tr.Slice(l, index, t0, pe.tr.Now())
}

// traceIndex is what a slice names its chare by: the element's index or
// the branch's PE (nothing for a singleton chare).
func traceIndex(obj any) any {
	if c, ok := obj.(Context); ok {
		if b := c.base(); b.coll != nil && b.coll.Kind != KindChare {
			return b.index
		}
	}
	return nil
}

// label returns the trace label of an entry method, made once per PE.
func (pe *PE) label(e *Entry) *trace.Label {
	if l := pe.labels[e]; l != nil {
		return l
	}
	l := &trace.Label{Name: "entry method", Cat: trace.CatEntry}
	if e != nil {
		l.Name, l.Type, l.Entry = e.String(), e.Type.Name, e.Name
	}
	pe.labels[e] = l
	return l
}

// traceSend draws a flow arrow for a message to one chare, branch or
// element, if the PE's sampler takes it.
func (pe *PE) traceSend(h *Header) {
	h.Flow = 0
	switch h.Kind {
	case KindChare, KindBranch, KindElement:
		h.Flow = pe.tr.FlowFrom()
	}
}

// abortTrace ends the trace writer of a job that failed before it ran
// and removes its partial files.
func (j *Job) abortTrace() {
	if j.trace != nil {
		_ = j.trace.w.Abort() // the job's own error is the one to report
	}
}

// closeTrace writes the trace file when the job has ended.
func (j *Job) closeTrace() error {
	if j.trace == nil {
		return nil
	}
	if err := j.trace.w.Close(); err != nil {
		return fmt.Errorf("chare: -trace: %w", err)
	}
	return nil
}
