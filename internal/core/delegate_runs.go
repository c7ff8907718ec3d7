package core

import (
	"sync/atomic"
	"unsafe"

	"github.com/charmgo/charm/actor"
)

// Runs for delegates: a delegate that aggregates (TRAM's) can take the
// element sends of Send and Bound.Send as messages appended to runs it
// holds, instead of one envelope per send that it would keep in its
// buffers. A run is what the direct path sends (run.go): one header and a
// []M, delivered by one call per message and crossing processes as one
// wire run, so a buffered send costs an append.

// RunDelegate is a Delegate that takes element sends as messages in runs.
// Send and Bound.Send give it a send of an entry method that is not
// threaded nor NoRuns, to a group branch or an array element, from a PE
// that is not traced and does not record the communication graph: a send
// whose target is placed on the sending PE goes there as an undelegated
// send would (in a run of the PE's own mailbox); one for a PE that the
// buffer takes (RunBuffer.Take) is appended to the buffer's run for that
// PE. Any other send comes to the delegate's Send in an envelope, and
// so does a send while RunBuffer returns nil, unless it is of a marked
// method that kept a buffer not retired yet (see RunBuffer).
type RunDelegate interface {
	Delegate
	// RunBuffer returns the buffer of pe for sends through the delegate,
	// or nil. Once it returned a buffer, sends of a method marked for the
	// delegate (MarkEntry) may use that buffer without asking again until
	// it is retired: a delegate that gives pe another buffer retires the
	// one before (RunBuffer.Retire).
	RunBuffer(pe *PE) *RunBuffer
}

// RunBuffer holds, on one PE, the sends a RunDelegate took and has not
// posted yet, in runs by destination PE. It belongs to its PE: only code
// running there may use it. A buffered send counts as work for
// quiescence detection from the send until it is delivered.
type RunBuffer struct {
	pe   *PE
	take []bool            // by destination PE: sends for it are appended
	runs [][]actor.Message // by destination PE: the runs not posted yet, in order
	n    []int             // by destination PE: the messages in them
	all  int               // the messages buffered for every PE
	// retired: the delegate gives the PE another buffer; no send is
	// appended here any more.
	retired atomic.Bool
	// buffered is called after a send for PE dest was appended; called
	// after a send for this PE.
	buffered func(dest int)
	called   func()
}

// NewRunBuffer returns an empty run buffer of from's PE that takes sends
// for no PE yet. buffered is called after each send appended for a PE
// (dest), called after each send to this PE; either may post.
func NewRunBuffer(from Context, buffered func(dest int), called func()) (*RunBuffer, error) {
	pe, err := peFrom(from)
	if err != nil {
		return nil, err
	}
	n := pe.NumPEs()
	return &RunBuffer{pe: pe, take: make([]bool, n), runs: make([][]actor.Message, n), n: make([]int, n), buffered: buffered, called: called}, nil
}

// Retire stops sends from being appended to the buffer: its delegate gives
// its PE another one (see RunDelegate). What it holds stays until posted.
func (b *RunBuffer) Retire() { b.retired.Store(true) }

// Retired reports whether the buffer was retired.
func (b *RunBuffer) Retired() bool { return b.retired.Load() }

// Take says whether sends for PE dest are appended to runs (the others go
// to the delegate's Send). Sends for the buffer's own PE are never
// appended.
func (b *RunBuffer) Take(dest int, on bool) {
	if dest >= 0 && dest < len(b.take) && dest != b.pe.ID() {
		b.take[dest] = on
	}
}

// Len returns the messages buffered for PE dest.
func (b *RunBuffer) Len(dest int) int {
	if dest < 0 || dest >= len(b.n) {
		return 0
	}
	return b.n[dest]
}

// Buffered returns the messages buffered for every PE.
func (b *RunBuffer) Buffered() int { return b.all }

// Post sends the runs buffered for PE dest, in the order of their sends,
// and returns how many messages they hold.
func (b *RunBuffer) Post(dest int) int {
	if dest < 0 || dest >= len(b.n) || b.n[dest] == 0 {
		return 0
	}
	ap := b.pe.ap
	rs := b.runs[dest]
	for i, m := range rs {
		// Send counts a run as one message and Grow each of the others, as
		// the direct path counts a run it appends to, so that the bound on
		// a batch and on messages in flight see all of them. Its messages
		// were counted as they were appended (Hold): those counts are
		// given back.
		k := 1
		if r, ok := m.(actor.Multi); ok {
			k = r.Count()
		}
		ap.Send(dest, m)
		for range k - 1 {
			ap.Grow(dest)
		}
		ap.Release(k)
		rs[i] = nil
	}
	n := b.n[dest]
	b.runs[dest], b.n[dest] = rs[:0], 0
	b.all -= n
	return n
}

// sendToRuns gives a send to b, the RunBuffer of its delegate (the
// proxy's, or the entry method's mark) for pe, if there is one (see
// RunDelegate), and reports whether it did; if not, the caller sends an
// envelope.
func sendToRuns[T, M any](pe *PE, p *Proxy[T], b *RunBuffer, e *Entry, method func(*T, M), msg M) bool {
	if pe.tr != nil || e.Threaded || e.NoRuns || e.Result != nil {
		return false
	}
	if b == nil || b.pe != pe || b.retired.Load() {
		return false
	}
	r := &p.route
	if pe.held(r.Coll) {
		return false
	}
	me := pe.ID()
	switch r.Kind {
	case KindBranch:
		if r.Index != nil {
			return false
		}
		dest := r.PE
		if dest == me {
			if open, ok := pe.ap.Open(dest).(*run1[T, M]); ok && open.h.Entry == e && open.h.Coll == r.Coll && open.h.PE == dest && open.h.Kind == KindBranch {
				open.grow(pe)
				open.msgs = append(open.msgs, msg)
				pe.ap.Grow(dest)
			} else {
				if _, err := pe.collection(r.Coll); err != nil {
					return false
				}
				pe.ap.Send(dest, newRun(pe, *r, e, method, dest, msg, false))
			}
			b.called()
			return true
		}
		if uint(dest) >= uint(len(b.take)) || !b.take[dest] {
			return false
		}
		if !appendRun(b, r, e, method, msg, dest, elemKey{}, false) {
			if _, err := pe.collection(r.Coll); err != nil {
				return false
			}
			b.start(bufferedRun(pe, *r, e, method, dest, msg, false), dest)
		}
		b.buffered(dest)
		return true
	case KindElement:
		dest, epoch, ok := elemDest(pe, r)
		if !ok {
			return false
		}
		k := elemKey{r.Index, epoch}
		if dest == me {
			appendElem(pe, r.Coll, e, method, msg, dest, k)
			b.called()
			return true
		}
		if !b.take[dest] {
			return false
		}
		if !appendRun(b, r, e, method, msg, dest, k, true) {
			run := bufferedRun(pe, Route{Kind: KindElement, Coll: r.Coll}, e, method, dest, msg, true)
			run.idx[0] = k
			b.start(run, dest)
		}
		b.buffered(dest)
		return true
	}
	return false
}

// appendRun appends msg to the last run buffered for dest if it is a run
// of the same method to the same collection, and reports whether it did.
func appendRun[T, M any](b *RunBuffer, r *Route, e *Entry, method func(*T, M), msg M, dest int, k elemKey, elems bool) bool {
	rs := b.runs[dest]
	if len(rs) == 0 {
		return false
	}
	open, ok := rs[len(rs)-1].(*run1[T, M])
	if !ok || open.h.Entry != e || open.h.Coll != r.Coll || open.h.Kind != r.Kind || len(open.msgs) == cap(open.msgs) {
		return false
	}
	open.msgs = append(open.msgs, msg)
	if elems {
		open.idx = append(open.idx, k)
	}
	b.count(dest)
	return true
}

// bufferedRun returns a run of one message, msg, for PE dest, with room
// for maxPooledRun messages: the run's slices come from its entry's pool
// and go back there once it is delivered. A buffer's runs do not grow
// (a full one is followed by another), nor teach the PE's hint (runHints)
// to make longer runs than a pool keeps.
func bufferedRun[T, M any](pe *PE, r Route, e *Entry, method func(*T, M), dest int, msg M, elems bool) *run1[T, M] {
	n := maxPooledRun
	if size := int(unsafe.Sizeof(msg)); size > 0 {
		n = max(1, min(n, runBytes/size))
	}
	run := pooledRun[T, M](e, n, elems)
	run.first(pe, r, e, method, dest, msg)
	return run
}

// start buffers a new run of one message for dest.
func (b *RunBuffer) start(run actor.Message, dest int) {
	b.runs[dest] = append(b.runs[dest], run)
	b.count(dest)
}

func (b *RunBuffer) count(dest int) {
	b.n[dest]++
	b.all++
	b.pe.ap.Hold(1)
}
