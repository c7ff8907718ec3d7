package core

import (
	"errors"
	"fmt"
	"reflect"
	"time"

	"github.com/charmgo/charm/actor"
	"github.com/charmgo/charm/internal/mpcheck"
)

// futureRef names a future: the PE that owns it and its number there.
type futureRef struct {
	PE int
	ID uint64
}

// Future is a value that will arrive later (charm4py's Future, Charm++'s
// CkFuture). Create it on a PE, pass it (or a Callback to it) to whoever
// will produce the value, and wait for it with Get in a threaded entry
// method on the same PE. A future takes one value.
type Future[T any] struct {
	PE int
	ID uint64
}

type futureSlot struct {
	val    any
	set    bool
	waiter *actor.Thread
	waits  uint64 // waits begun on the slot: a deadline resumes only its own
}

// Waitable is a future of any type, for WaitAll and WaitAny.
type Waitable interface {
	ref() futureRef
}

func (f Future[T]) ref() futureRef { return futureRef{f.PE, f.ID} }

// NewFuture creates a future owned by the sender's PE.
func NewFuture[T any](ctx Context) Future[T] {
	pe, err := peFrom(ctx)
	if err != nil {
		return Future[T]{}
	}
	id := uint64(pe.nextSeq())
	pe.futures[id] = &futureSlot{}
	return Future[T]{PE: pe.ID(), ID: id}
}

// IsZero reports whether the future was never created.
func (f Future[T]) IsZero() bool { return f.ID == 0 }

// Send gives the future its value.
func (f Future[T]) Send(from Context, v T) error {
	pe, err := peFrom(from)
	if err != nil {
		return err
	}
	return pe.setFuture(f.ref(), v)
}

// Callback returns a callback that sends its value to the future.
func (f Future[T]) Callback() Callback { return Callback{Kind: CallbackFuture, Future: f.ref()} }

// ErrNotThreaded is returned by Get, WaitAll and WaitAny outside a
// threaded entry method: blocking there would stall the PE.
var ErrNotThreaded = errors.New("chare: waiting for a future needs a threaded entry method (register it with chare.Threaded) or the main function")

// Get waits for the value and returns it. It must run in a threaded entry
// method on the future's PE. The value is taken: a second Get fails.
func (f Future[T]) Get(ctx Context) (T, error) { return f.GetBefore(ctx, time.Time{}) }

// ErrDeadlineExceeded is wrapped by the error of GetBefore when the
// deadline passes before the value arrives (errors.Is finds it).
var ErrDeadlineExceeded = errors.New("chare: deadline exceeded")

// GetBefore is Get with a deadline: if the value has not arrived by then
// it returns an error that wraps ErrDeadlineExceeded and names the future.
// The future stays: a value that comes later waits for the next Get (it
// is not an error). The zero deadline waits without a bound, as Get; a
// deadline already past returns the value if it is there, else the error.
func (f Future[T]) GetBefore(ctx Context, deadline time.Time) (T, error) {
	var zero T
	pe, slot, err := waitable(ctx, f.ref())
	if err != nil {
		return zero, err
	}
	if !slot.set {
		if err := pe.waitUntil(slot, deadline); err != nil {
			return zero, err
		}
		if !slot.set {
			return zero, fmt.Errorf("chare: future %d on PE %d has no value by its deadline (%s): %w",
				f.ID, f.PE, deadline.Format("15:04:05.000"), ErrDeadlineExceeded)
		}
	}
	delete(pe.futures, f.ID)
	if raw, ok := slot.val.(rawValue); ok { // from another process
		var v T
		if err := mpcheck.Unmarshal(raw, &v); err != nil { // lengths, nesting and allocation a decode can afford
			return zero, fmt.Errorf("chare: future %d on PE %d: decoding its value as %s: %w", f.ID, f.PE, typeName(reflect.TypeFor[T]()), err)
		}
		return v, nil
	}
	if slot.val == nil {
		return zero, nil
	}
	v, ok := slot.val.(T)
	if !ok {
		return zero, fmt.Errorf("chare: future %d on PE %d holds a %s, not a %s", f.ID, f.PE, valueTypeName(slot.val), typeName(reflect.TypeFor[T]()))
	}
	return v, nil
}

func waitable(ctx Context, r futureRef) (*PE, *futureSlot, error) {
	pe, err := peFrom(ctx)
	if err != nil {
		return nil, nil, err
	}
	if r.ID == 0 {
		return nil, nil, errors.New("chare: waiting for a future that was never created")
	}
	if r.PE != pe.ID() {
		return nil, nil, fmt.Errorf("chare: future %d belongs to PE %d; it can only be waited for there, not on PE %d", r.ID, r.PE, pe.ID())
	}
	slot := pe.futures[r.ID]
	if slot == nil {
		return nil, nil, fmt.Errorf("chare: future %d on PE %d was already taken by Get", r.ID, r.PE)
	}
	return pe, slot, nil
}

// wait suspends the running thread until slot is set.
func (pe *PE) wait(slots ...*futureSlot) error {
	t := pe.ap.Current()
	if t == nil {
		return ErrNotThreaded
	}
	for _, s := range slots {
		s.waiter = t
		s.waits++
	}
	t.Suspend()
	for _, s := range slots {
		s.waiter = nil
	}
	return nil
}

// waitUntil is wait for one slot that also ends at the deadline (the zero
// time: none), with the slot still unset.
func (pe *PE) waitUntil(slot *futureSlot, deadline time.Time) error {
	if deadline.IsZero() {
		return pe.wait(slot)
	}
	t := pe.ap.Current()
	if t == nil {
		return ErrNotThreaded
	}
	d := time.Until(deadline)
	if d <= 0 {
		return nil
	}
	// The timer runs on the PE, so it sees the thread either suspended in
	// this wait or done with it; the count of waits tells a later wait on
	// the same slot (after a missed deadline) from this one.
	this := slot.waits + 1
	tm := pe.ap.AfterTimer(d, func(*actor.PE) {
		if slot.waiter == t && slot.waits == this && !slot.set {
			t.Resume()
		}
	})
	err := pe.wait(slot)
	tm.Stop() // the value came first: no timer left per wait (a fired one finds this wait over)
	return err
}

// WaitAll waits until every future has its value (without taking them).
func WaitAll(ctx Context, fs ...Waitable) error {
	for _, f := range fs {
		pe, slot, err := waitable(ctx, f.ref())
		if err != nil {
			return err
		}
		if !slot.set {
			if err := pe.wait(slot); err != nil {
				return err
			}
		}
	}
	return nil
}

// WaitAny waits until one of the futures has its value and returns its
// position in fs.
func WaitAny(ctx Context, fs ...Waitable) (int, error) {
	if len(fs) == 0 {
		return -1, errors.New("chare: WaitAny on no futures")
	}
	var pe *PE
	slots := make([]*futureSlot, len(fs))
	for i, f := range fs {
		p, slot, err := waitable(ctx, f.ref())
		if err != nil {
			return -1, err
		}
		if slot.set {
			return i, nil
		}
		pe, slots[i] = p, slot
	}
	if err := pe.wait(slots...); err != nil {
		return -1, err
	}
	for i, s := range slots {
		if s.set {
			return i, nil
		}
	}
	return -1, errors.New("chare: WaitAny woke up with no future set")
}

// setFuture sends a value to a future's PE.
func (pe *PE) setFuture(r futureRef, v any) error {
	if r.ID == 0 {
		return errors.New("chare: sending to a future that was never created")
	}
	if r.PE < 0 || r.PE >= pe.NumPEs() {
		return fmt.Errorf("chare: future %d names PE %d, which does not exist", r.ID, r.PE)
	}
	pe.ap.Send(r.PE, &futureMsg{ref: r, val: v})
	return nil
}

func (pe *PE) dropFuture(r futureRef) { delete(pe.futures, r.ID) }

// Drop forgets a future whose value will never be taken: one whose
// callback was handed to a call that then failed. Without it the future
// stays in its PE's table (PendingFutures) for the life of the job. A
// value that comes for it afterwards is an error of the PE, as for a
// future already taken: drop only futures nobody will send to. It must
// run on the future's PE; dropping one that is being waited for, or one
// already taken or dropped, is an error that names it.
func (f Future[T]) Drop(ctx Context) error {
	pe, err := peFrom(ctx)
	switch {
	case err != nil:
		return err
	case f.ID == 0:
		return errors.New("chare: dropping a future that was never created")
	case f.PE != pe.ID():
		return fmt.Errorf("chare: future %d belongs to PE %d; it can only be dropped there, not on PE %d", f.ID, f.PE, pe.ID())
	}
	slot := pe.futures[f.ID]
	switch {
	case slot == nil:
		return fmt.Errorf("chare: dropping future %d on PE %d: it was already taken by Get or dropped", f.ID, f.PE)
	case slot.waiter != nil:
		return fmt.Errorf("chare: dropping future %d on PE %d: it is being waited for", f.ID, f.PE)
	}
	pe.dropFuture(f.ref())
	return nil
}

type futureMsg struct {
	ref futureRef
	val any
}

func (m *futureMsg) Describe() string { return fmt.Sprintf("the value of future %d", m.ref.ID) }

func (m *futureMsg) Deliver(ap *actor.PE) {
	pe := peOf(ap)
	slot := pe.futures[m.ref.ID]
	switch {
	case slot == nil:
		pe.fail(fmt.Errorf("chare: a value (%s) arrived for future %d on PE %d, which was already taken or never created", valueTypeName(m.val), m.ref.ID, m.ref.PE))
	case slot.set:
		pe.fail(fmt.Errorf("chare: a second value (%s) arrived for future %d on PE %d; a future takes one value", valueTypeName(m.val), m.ref.ID, m.ref.PE))
	default:
		slot.val, slot.set = m.val, true
		if t := slot.waiter; t != nil {
			t.Resume()
		}
	}
}

// Yield lets the PE process the messages that wait for it, then goes on
// (CthYield). It needs a threaded entry method or the main function;
// elsewhere it returns ErrNotThreaded. Long loops of sends (TRAM's
// insertions) call it now and then so that the PE stays responsive.
func Yield(ctx Context) error {
	pe, err := peFrom(ctx)
	if err != nil {
		return err
	}
	t := pe.ap.Current()
	if t == nil {
		return ErrNotThreaded
	}
	pe.ap.SendControl(pe.ID(), resumeMsg{t}) // behind what waits already
	t.Suspend()
	return nil
}

type resumeMsg struct{ t *actor.Thread }

func (m resumeMsg) Deliver(*actor.PE) { m.t.Resume() }
func (resumeMsg) Describe() string    { return "the end of a yield" }

// Nap suspends the threaded entry method until its PE has handled another
// message, or until the deadline (the zero time: none), and reports
// whether a message woke it. It is the sleep of a loop that polls, as the
// overlap loop does: after a poll that found nothing, Nap frees the PE
// (and its core) instead of spinning, and the next message — data, an
// acknowledgement — wakes it as soon as its entry method has run. Any
// message wakes it, so the caller looks again at what changed. Nothing is
// left behind when it returns (no future, no live timer). A deadline
// already past yields once (as Yield) and reports false.
func Nap(ctx Context, deadline time.Time) (bool, error) {
	pe, err := peFrom(ctx)
	if err != nil {
		return false, err
	}
	t := pe.ap.Current()
	if t == nil {
		return false, ErrNotThreaded
	}
	var d time.Duration
	if !deadline.IsZero() {
		if d = time.Until(deadline); d <= 0 {
			return false, Yield(ctx)
		}
	}
	return t.Nap(d), nil
}

// PendingFutures counts the futures created on this PE whose value has not
// been taken by Get: a count that grows from one iteration to the next is
// a leak (a future nobody will Get).
func (pe *PE) PendingFutures() int { return len(pe.futures) }
