package actor

import (
	"errors"
	"slices"
	"time"
)

// Thread is a goroutine that runs on behalf of its PE (a Charm++ threaded
// entry method). While it runs, the PE's own goroutine waits; when it calls
// Suspend the PE goes back to its mailbox, and Resume (called on the PE)
// hands the PE back to the thread.
type Thread struct {
	pe    *PE
	run   chan struct{} // PE → thread: the thread holds the PE now
	back  chan struct{} // thread → PE: the thread released the PE
	done  bool
	panic error
	// exited: the job ended while the thread was suspended (Suspend); it no
	// longer holds its PE, whatever its code does after.
	exited bool
}

// errExited unwinds a thread that was suspended when the job ended.
var errExited = errors.New("actor: job ended while the thread was suspended")

// Spawn starts fn as a thread on pe and returns when fn has finished or
// suspended itself. It must be called on pe.
//
// The goroutine that runs fn is one that ran an earlier thread of pe and
// finished, if pe keeps one (up to maxIdleWorkers): a thread's calls go
// deep (a send, a delivery routing on), and a new goroutine grows its
// stack by copying it on the way, on the path of the thread's first
// messages; a goroutine that stays keeps its grown stack, as the PE's own
// does (mailbox.run).
func (pe *PE) Spawn(describe func() string, fn func(t *Thread)) {
	t := &Thread{pe: pe, run: make(chan struct{}), back: make(chan struct{})}
	var w *threadWorker
	if n := len(pe.idleWorkers); n > 0 {
		w = pe.idleWorkers[n-1]
		pe.idleWorkers[n-1] = nil
		pe.idleWorkers = pe.idleWorkers[:n-1]
	} else {
		w = &threadWorker{next: make(chan threadJob, 1)}
		pe.workersStarted++
		pe.rt.goroutines.Add(1)
		go w.loop(pe)
	}
	w.next <- threadJob{t: t, describe: describe, fn: fn} // never blocks: the worker is idle
	pe.switchTo(t)
}

// maxIdleWorkers is how many goroutines of finished threads a PE keeps
// for its next threads.
const maxIdleWorkers = 4

// threadWorker is a goroutine that runs threads of one PE, one after the
// other: between two, it waits in its PE's idleWorkers.
type threadWorker struct {
	next chan threadJob
}

type threadJob struct {
	t        *Thread
	describe func() string
	fn       func(*Thread)
}

// loop runs the threads handed to w until one ends its goroutine (the job
// ended while it was suspended or before it began, or it called
// runtime.Goexit), or the PE stops while w is idle (releaseWorkers).
func (w *threadWorker) loop(pe *PE) {
	defer pe.rt.goroutines.Done()
	for j := range w.next {
		if !w.run(pe, j) {
			return
		}
	}
}

// releaseWorkers ends the goroutines of the PE's idle workers; the PE's
// goroutine calls it once its mailbox is closed, when no thread can be
// spawned on it any more.
func (pe *PE) releaseWorkers() {
	for i, w := range pe.idleWorkers {
		close(w.next)
		pe.idleWorkers[i] = nil
	}
	pe.idleWorkers = nil
}

// run runs one thread and reports whether the goroutine may run another.
// A thread that finished puts w back among its PE's idle workers (if
// there is room) before it hands the PE back, while it still holds it.
func (w *threadWorker) run(pe *PE, j threadJob) (again bool) {
	t := j.t
	select {
	case <-t.run:
	case <-pe.rt.done:
		return false // the job ended before the thread began (switchTo gave up too)
	}
	returned := false
	defer func() {
		r := recover()
		if r == errExited || t.exited {
			// The job ended (even if the thread's code recovered from
			// that): nobody waits for this thread any more, and it does
			// not hold its PE.
			again = false
			return
		}
		if r != nil {
			what := "a threaded entry method"
			if j.describe != nil {
				what = j.describe()
			}
			t.panic = panicError(pe, describedMsg(what), r)
		}
		// Neither returned nor panicked: runtime.Goexit, which goes on
		// ending this goroutine after the deferred calls.
		again = returned || r != nil
		if again && len(pe.idleWorkers) < maxIdleWorkers {
			pe.idleWorkers = append(pe.idleWorkers, w)
		} else {
			again = false
		}
		t.done = true
		t.back <- struct{}{}
	}()
	j.fn(t)
	returned = true
	return true
}

// Current returns the thread holding pe, or nil when pe runs on its own
// goroutine (a plain entry method).
func (pe *PE) Current() *Thread { return pe.cur }

func (pe *PE) switchTo(t *Thread) {
	prev := pe.cur
	pe.cur = t
	select {
	case t.run <- struct{}{}:
	case <-pe.rt.done:
		// The job ended: a suspended thread leaves Suspend by the end
		// instead (its goroutine exits), and nobody would take this.
		pe.cur = prev
		return
	}
	<-t.back
	pe.cur = prev
	if t.panic != nil {
		err := t.panic
		t.panic = nil
		panic(err)
	}
}

// PE returns the PE the thread runs on.
func (t *Thread) PE() *PE { return t.pe }

// Suspend gives the PE back until someone calls Resume. It must be called by
// the thread itself. If the job ends meanwhile, the thread's goroutine exits.
func (t *Thread) Suspend() {
	t.back <- struct{}{}
	select {
	case <-t.run:
	case <-t.pe.rt.done:
		t.exited = true
		panic(errExited)
	}
}

// Resume runs a suspended thread until it suspends again or finishes. It
// must be called on the thread's PE.
func (t *Thread) Resume() {
	if t.done {
		return
	}
	t.pe.switchTo(t)
}

// Done reports whether the thread has finished.
func (t *Thread) Done() bool { return t.done }

type describedMsg string

func (describedMsg) Deliver(*PE)        {}
func (d describedMsg) Describe() string { return string(d) }

// nap is a thread waiting, in Nap, for its PE to handle a message.
type nap struct {
	t     *Thread
	after uint64 // the PE's count of messages when the nap began
	woken bool   // by a message, not the timer
}

// Nap suspends the thread until its PE has handled another message, or d
// has passed (d <= 0: no timer), and reports whether a message woke it. A
// loop that polls (a communication test) naps instead of spinning when a
// poll found nothing: the PE's core is free for the PEs it waits for, and
// the message it waits for wakes it at once. Any message wakes it, the
// PE's own timers too, so the caller looks again at what changed. It must
// be called by the thread itself.
func (t *Thread) Nap(d time.Duration) bool {
	pe := t.pe
	n := &nap{t: t, after: pe.received}
	pe.naps = append(pe.naps, n)
	var tm *time.Timer
	if d > 0 {
		tm = pe.AfterTimer(d, func(pe *PE) {
			if pe.endNap(n) {
				n.t.Resume()
			}
		})
	}
	t.Suspend()
	if tm != nil {
		tm.Stop() // a message came first: no timer left per nap
	}
	return n.woken
}

// endNap takes n off the PE's naps and reports whether it was there (a
// nap ends once: by a message or by its timer).
func (pe *PE) endNap(n *nap) bool {
	for i, x := range pe.naps {
		if x == n {
			pe.naps = slices.Delete(pe.naps, i, i+1) // clears the tail: no thread kept
			return true
		}
	}
	return false
}

// wakeNaps resumes the threads that napped before the message the PE has
// just handled (one that naps again while it runs waits for the next).
func (pe *PE) wakeNaps() {
	for i := 0; i < len(pe.naps); {
		n := pe.naps[i]
		if n.after >= pe.received {
			i++
			continue
		}
		pe.endNap(n)
		n.woken = true
		n.t.Resume()
	}
}
