package actor

import (
	"sync"
	"sync/atomic"
	"time"
)

// Back-pressure between the PEs of one process.
//
// A PE that sends faster than its receivers run would otherwise fill their
// mailboxes until the process runs out of memory. Each PE counts the
// messages posted to its mailbox by local PEs and not yet processed (its
// backlog; it takes the processed ones off in folds, see consumed). A PE
// about to post a batch to a PE whose backlog has reached
// Config.MaxInFlight waits — its goroutine parks, so the PE processes
// nothing meanwhile — until that backlog falls below half the bound.
// Nothing is dropped: the sender resumes and posts what it holds.
//
// Waiting must not deadlock: two PEs that send to each other could both
// wait for the other to run. So a PE marks itself waiting before it looks
// at its receiver, and it does not wait for a receiver that is waiting
// itself; it posts anyway and goes on. Of the PEs in any cycle of waits the
// last to mark itself sees the one it sends to marked, so no cycle forms;
// the bound is exceeded by what such a PE sends while its receiver waits.
// A PE never waits for itself, nor for a PE of another process (messages to
// other nodes are not bounded here), and waiting ends when the job does.

// DefaultMaxInFlight is the backlog, in messages (see Sized), at which a local sender
// waits for its receiver when Config.MaxInFlight is 0.
const DefaultMaxInFlight = 1 << 14

// creditState is a PE's side of the back-pressure: its backlog and the
// senders waiting for it to shrink.
//
// The senders add to backlog at each post; the PE takes off what it
// processed in folds of up to foldAt (see consumed), so that while one
// sender and its receiver pass messages back and forth the line of
// backlog stays with the sender instead of moving between their cores at
// each message. backlog sits alone on its cache line for that.
type creditState struct {
	_       [64]byte
	backlog atomic.Int64 // messages posted here by local PEs, not yet taken off by a fold
	_       [56]byte

	unfolded atomic.Int64 // processed, not yet taken off backlog (written by the PE only)
	waiting  atomic.Bool  // this PE is parked in awaitCredit
	parked   atomic.Bool  // someone waits on wake

	mu      sync.Mutex
	wake    chan struct{} // closed when the backlog falls below the low mark
	waits   atomic.Int64  // times a sender parked for this PE (for tests and benchmarks)
	overrun atomic.Int64  // batches posted over the bound because this PE's receiver was waiting
}

// lowMark is the backlog below which parked senders resume: half the
// bound, and at least 1 (a bound of 1 would otherwise wait for a backlog
// below zero).
func lowMark(bound int64) int64 { return max(1, bound/2) }

// foldAt returns how much of its backlog a PE processes before it takes
// it off (consumed): a sixteenth of the bound, up to 64 envelopes.
func foldAt(bound int64) int64 {
	if bound == 0 {
		return 64
	}
	return max(1, min(64, bound/16))
}

// inFlightBound returns the bound, or 0 if there is none.
func (rt *Runtime) inFlightBound() int64 {
	switch n := rt.cfg.MaxInFlight; {
	case n < 0:
		return 0
	case n == 0:
		return DefaultMaxInFlight
	default:
		return int64(n)
	}
}

// recheck is how often a parked sender looks again without being woken:
// its receiver may have started waiting itself meanwhile, which wakes
// nobody.
const recheck = 2 * time.Millisecond

// park waits until ch is closed or recheck has passed, on the caller's
// timer *t (made on first use); false if the job ended meanwhile.
func (rt *Runtime) park(ch <-chan struct{}, t **time.Timer) bool {
	if *t == nil {
		*t = time.NewTimer(recheck)
	} else {
		(*t).Reset(recheck)
	}
	select {
	case <-ch:
	case <-(*t).C:
	case <-rt.done:
		return false
	}
	return true
}

func stopTimer(t **time.Timer) {
	if *t != nil {
		(*t).Stop()
	}
}

// awaitCredit parks the calling PE while d's backlog is at or over the
// bound, as described above.
func (pe *PE) awaitCredit(d *PE) {
	limit := pe.rt.bound
	if limit == 0 || d == pe || d.credit.backlog.Load() < limit {
		return
	}
	low := lowMark(limit)
	pe.startWaiting()
	defer pe.credit.waiting.Store(false)
	var t *time.Timer
	defer stopTimer(&t)
	for {
		if d.credit.waiting.Load() {
			pe.credit.overrun.Add(1)
			return
		}
		if d.credit.backlog.Load() < low || pe.rt.stopped.Load() {
			return
		}
		d.credit.mu.Lock()
		if d.credit.wake == nil {
			d.credit.wake = make(chan struct{})
		}
		ch := d.credit.wake
		d.credit.parked.Store(true)
		d.credit.mu.Unlock()
		// Looked at again after parked is set: d's wake-up cannot be lost
		// between the first look and the wait.
		if d.credit.backlog.Load() < low || d.credit.waiting.Load() {
			continue
		}
		d.credit.waits.Add(1)
		if !pe.rt.park(ch, &t) {
			return
		}
	}
}

// startWaiting marks pe as waiting and wakes the senders parked for it:
// they no longer wait for it, and should not sleep until their next look
// to find that out.
func (pe *PE) startWaiting() {
	pe.credit.waiting.Store(true)
	if pe.credit.parked.Load() {
		pe.wakeSenders()
	}
}

// consumed lowers pe's backlog by n processed messages, in folds: at
// once when senders are parked for pe, otherwise once foldAt are
// processed; it wakes the parked senders once the backlog is below the
// low mark. Until a fold the backlog counts fewer than foldAt more than
// is unprocessed (under a sixteenth of the bound).
func (pe *PE) consumed(n int) {
	u := pe.credit.unfolded.Load() + int64(n)
	if u < pe.rt.foldAt && !pe.credit.parked.Load() {
		pe.credit.unfolded.Store(u)
		return
	}
	pe.credit.unfolded.Store(0)
	b := pe.credit.backlog.Add(-u)
	if b >= lowMark(pe.rt.bound) || !pe.credit.parked.Load() {
		return
	}
	pe.wakeSenders()
}

// wakeSenders wakes the senders parked for pe.
func (pe *PE) wakeSenders() {
	pe.credit.mu.Lock()
	if pe.credit.wake != nil {
		close(pe.credit.wake)
		pe.credit.wake = nil
	}
	pe.credit.parked.Store(false)
	pe.credit.mu.Unlock()
}

// CreditStats reports, for PE i of this process, how many times a sender
// parked because of its backlog and how many batches were posted to it over
// the bound because their sender's own receiver was waiting (see
// Config.MaxInFlight), and its backlog now.
func (rt *Runtime) CreditStats(i int) (parked, overruns, backlog int64) {
	pe := rt.PE(i)
	if pe == nil {
		return 0, 0, 0
	}
	return pe.credit.waits.Load(), pe.credit.overrun.Load(), pe.credit.backlog.Load() - pe.credit.unfolded.Load()
}
