package chare

import (
	"fmt"
	"unsafe"

	"github.com/charmgo/charm/actor"
	"github.com/charmgo/charm/actor/codec"
	"github.com/charmgo/charm/actor/wire"
)

// Runs: many small sends of one entry method to one group branch.
//
// A loop of chare.Send calls to the branches of a group would give each
// message an envelope of about 112 bytes (header, method, message). A run
// keeps the header once and the messages in a []M: while the last message
// that the sending PE buffered for the destination PE (actor.PE.Open) is a
// run of the same entry method to the same branch, Send appends to it.
// Nothing was buffered for that PE after the run, so the order of sends
// per sender and receiver holds. The run travels and is delivered as one
// message (an actor.Multi that counts as many): on its PE the branch is
// looked up once and the method called for each message in turn. A run
// between processes is one wire run (one head, a tail per message) and is
// decoded back into one run, without an envelope per message.
//
// Runs are used only where nothing needs a message's own envelope: an
// undelegated proxy of a group branch, an entry method that is not
// threaded nor marked for a delegate nor registered with NoRuns, and a
// PE that is not traced. On the receiving side, if the branch is not
// simply there to call (load measurement is on, the collection is held,
// anything unusual), the run is unrolled into ordinary envelopes that take
// the usual path.

// runCap is the least capacity of a new run's slice of messages, and
// runBytes the most bytes one is given at first. A run's slice doubles as
// it grows; the PE remembers the capacity that its runs reached
// (PE.runHint), so that in a steady stream of sends a run's slice is
// allocated once, at the size it will need (the actor layer posts a
// destination's buffer at 256 messages).
const (
	runCap   = 16
	runBytes = 16 << 10
)

// run1 carries messages for one entry method func(*T, M) of one branch.
type run1[T, M any] struct {
	envHead
	fn   func(*T, M)
	msgs []M
}

// Count implements actor.Multi.
func (r *run1[T, M]) Count() int { return len(r.msgs) }

// Bytes implements actor.Sized: the bound on messages in flight counts a
// run by the memory it holds, not by its messages.
func (r *run1[T, M]) Bytes() int {
	var m M
	return int(unsafe.Sizeof(*r)) + cap(r.msgs)*int(unsafe.Sizeof(m))
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
	if pe.tr == nil && !pe.measure && !h.Entry.Threaded && h.Kind == KindBranch && h.Index == nil && !pe.held(h.Coll) {
		if l, err := pe.Part(h.Coll); err == nil {
			if o, ok := l.(objectPart); ok {
				if obj, ok := o.Object(h.PE).(*T); ok && obj != nil {
					stopped := pe.job.rt.Stopped
					for i := range r.msgs {
						r.fn(obj, r.msgs[i])
						if stopped() {
							return
						}
					}
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

// WireKind, AppendWireTailAt: a run crosses processes as a wire run of
// envelopes (actor.WireMulti); AppendWireHead comes with envHead.
func (r *run1[T, M]) WireKind() uint16 { return kindEnvelope }

func (r *run1[T, M]) AppendWireTailAt(b []byte, i int) ([]byte, error) {
	b, err := appendEnvTail(b, &r.h, futureRef{})
	if err != nil {
		return b, err
	}
	return appendMsg(b, r.h.Entry, &r.msgs[i])
}

// sendRun sends msg through a run if it can (see above) and reports
// whether it did; if not, the caller sends an envelope.
func sendRun[T, M any](pe *PE, p *Proxy[T], e *Entry, method func(*T, M), msg M) bool {
	r := &p.route
	if p.del != nil || r.Kind != KindBranch || r.Index != nil || pe.tr != nil || e.Threaded || e.NoRuns || e.delegate.Load() != nil {
		return false
	}
	dest := r.PE
	if open, ok := pe.ap.Open(dest).(*run1[T, M]); ok && open.h.Entry == e && open.h.Coll == r.Coll && open.h.PE == dest {
		if len(open.msgs) == cap(open.msgs) {
			pe.runHint = max(pe.runHint, 2*cap(open.msgs))
		}
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
	n := runCap
	if size := int(unsafe.Sizeof(msg)); pe.runHint > n && size > 0 {
		n = max(n, min(pe.runHint, runBytes/size))
	}
	run := &run1[T, M]{fn: method, msgs: make([]M, 1, n)}
	run.h = Header{Route: Route{Kind: KindBranch, Coll: r.Coll, PE: dest}, Entry: e, Src: pe.ID()}
	run.msgs[0] = msg
	pe.ap.Send(dest, run)
	return true
}

// runDecoder reads a whole wire run for one entry method into a run1, or
// returns nil if the run has messages that need their own header.
type runDecoder func(h Header, it wire.Item) (actor.Message, error)

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
		// Only runs whose tails are all plain (no reply, epoch, index or
		// members: flags 0) are read whole; the first tail tells.
		if tail, _, ok := wire.NextTail(it.Body); !ok || len(tail) == 0 || tail[0] != 0 {
			return nil, nil
		}
		run := &run1[T, M]{fn: method, msgs: make([]M, it.Tails)}
		run.h = h
		rest := it.Body
		for i := range run.msgs {
			tail, next, ok := wire.NextTail(rest)
			if !ok {
				return nil, fmt.Errorf("a run of %s ends after %d of %d messages", h.Entry, i, it.Tails)
			}
			rest = next
			if len(tail) == 0 || tail[0] != 0 {
				return nil, nil // a message with more header: read tail by tail
			}
			if err := codec.Decode(c, tail[1:], &run.msgs[i]); err != nil {
				return nil, fmt.Errorf("decoding message %d of a run of %s: %w", i, h.Entry, err)
			}
		}
		return run, nil
	})
	en.wireRun.CompareAndSwap(nil, &f)
}

// decodeEnvRun is the actor.RunAllDecoder of envelopes: a run for an entry
// with a typed run decoder becomes one run1.
func decodeEnvRun(_ *actor.PE, it wire.Item) (actor.Message, error) {
	h, err := parseEnvHead(it.Head)
	if err != nil {
		return nil, err
	}
	dec := h.Entry.wireRun.Load()
	if dec == nil || h.Kind == KindSection {
		return nil, nil
	}
	return (*dec)(h, it)
}
