package actor

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	_ "unsafe" // goyield
)

// A PE's mailbox and the goroutine that runs it.
//
// Every message a PE receives is posted by code of this process: the PEs'
// sends, the node link handing over the frames of other processes
// (remoteBatch), timers and the boot. So a PE needs no actor of
// protoactor-go's (which carries the links between processes): its mailbox
// is a ring of slots that posters claim with one compare-and-swap, and one
// goroutine, living as long as the PE, takes what was posted and handles
// it. A poster that finds the PE idle wakes its goroutine; one that finds
// it running leaves the message for the next take. Per message that is a
// claim, a slot written and, when the PE was idle, a channel send;
// protoactor-go's mailbox added two queues, a scheduling handoff, an actor
// context and its middleware checks per message (about a third of a round
// trip's CPU between two PEs, pprof).
//
// The fields are laid out by who writes them: the posters' position, the
// goroutine's, and what both read, each on cache lines of their own, so
// that between two PEs on two cores a message moves the line of its slot
// and little else (docs/design/latency.md).
//
// A goroutine that stays keeps its grown stack: protoactor-go's default
// dispatcher started a goroutine each time an idle mailbox got a message,
// and with a PE's deep call paths (a bracket advancing, a delivery routing
// on) runtime.copystack/newstack took 38–43 % of comlib/alltoall's CPU.
type mailbox struct {
	// The posters' cache line: tail is the next position of ring a
	// poster claims, and the positions from tail up to limit are free
	// (the goroutine took what they held). A lone sender keeps this line.
	tail  atomic.Uint64
	limit atomic.Uint64
	_     [48]byte

	// The goroutine's line: head is the position it takes next, told to
	// the posters (who read it when they reach limit) once per take;
	// spare is the slice taken last, emptied, for the next take.
	head  atomic.Uint64
	spare []any
	pace  spinPace // under WaitActive; wokenAt is written by the waking poster
	_     [8]byte

	// Read by both, written rarely.
	ring    []slot        // ringSize slots
	ovf     atomic.Bool   // posts go to over (see post)
	closed  atomic.Bool   // see close
	running atomic.Bool   // the goroutine is handling messages, or about to
	active  bool          // the runtime's WaitActive
	wake    chan struct{} // a token when an idle PE got a message
	// awake counts the mailboxes of the process whose goroutine runs
	// (running set), shared by them; nil in a lone mailbox. See run.
	awake *atomic.Int32

	mu   sync.Mutex
	over []any    // posts made while ovf is set
	_    [40]byte // 256 bytes: a mailbox starts a cache line, and ends one
}

// slot is one position of a mailbox's ring: seq is its position plus one
// once v is posted there (lower: not yet posted).
type slot struct {
	seq atomic.Uint64
	v   any
	_   [8]byte // two slots a cache line
}

// ringSize is how many posts a mailbox holds before posts go to its
// overflow slice (a power of two).
const ringSize = 128

// mailboxYield is how many messages a PE handles before it lets the other
// goroutines of the process run (runtime.Gosched), as protoactor-go's
// mailbox did every 300: with more PEs than cores, a PE that always has
// work does not hold its core until the scheduler preempts it.
const mailboxYield = 300

// maxSpare is the longest slice a mailbox keeps for reuse: a burst must not
// hold its memory for good.
const maxSpare = 4096

func newMailbox(awake *atomic.Int32, active bool) *mailbox {
	mb := &mailbox{ring: make([]slot, ringSize), wake: make(chan struct{}, 1), awake: awake, active: active, pace: spinPace{long: active}}
	mb.limit.Store(ringSize)
	return mb
}

// setRunning marks the goroutine running (or about to run) if it was
// idle, and reports whether it did.
func (mb *mailbox) setRunning() bool {
	if mb.running.Load() || !mb.running.CompareAndSwap(false, true) {
		return false
	}
	if mb.awake != nil {
		mb.awake.Add(1)
	}
	return true
}

// setIdle marks the goroutine idle.
func (mb *mailbox) setIdle() {
	if mb.awake != nil {
		mb.awake.Add(-1)
	}
	mb.running.Store(false)
}

// post adds m to the mailbox and wakes the goroutine if it was idle; any
// goroutine may call it. It reports whether it woke the goroutine. After
// close, m is dropped (the job has ended).
//
// A post claims the ring's next position and writes its slot: with one
// sender, a post takes no lock and no cache line that the goroutine
// writes but the slot's. A post that finds the ring full sets ovf and
// appends to over, behind mu, as does every post while ovf is set, so
// that the posts of one sender are taken in the order made.
func (mb *mailbox) post(m any) (woke bool) {
	if mb.closed.Load() {
		return false
	}
	if mb.ovf.Load() || !mb.push(m) {
		mb.mu.Lock()
		if mb.closed.Load() {
			mb.mu.Unlock()
			return false
		}
		mb.over = append(mb.over, m)
		mb.ovf.Store(true)
		mb.mu.Unlock()
	}
	if mb.setRunning() {
		if mb.active {
			mb.pace.wokenAt = clock() // read by the goroutine after the token
		}
		mb.wake <- struct{}{} // never blocks: one token per idle period
		return true
	}
	return false
}

// push puts m in the ring, or reports that the ring is full.
func (mb *mailbox) push(m any) bool {
	for {
		pos := mb.tail.Load()
		if pos >= mb.limit.Load() {
			lim := mb.head.Load() + ringSize
			if pos >= lim {
				return false
			}
			for {
				// limit only grows: a slow poster must not lower it.
				old := mb.limit.Load()
				if old >= lim || mb.limit.CompareAndSwap(old, lim) {
					break
				}
			}
		}
		if mb.tail.CompareAndSwap(pos, pos+1) {
			s := &mb.ring[pos&(ringSize-1)]
			s.v = m
			s.seq.Store(pos + 1)
			return true
		}
	}
}

// ready reports whether a post waits to be taken.
func (mb *mailbox) ready() bool {
	h := mb.head.Load()
	return mb.ring[h&(ringSize-1)].seq.Load() == h+1 || mb.ovf.Load()
}

// take returns what was posted since the last take, and whether the
// mailbox was closed: what the ring holds, in the order of its positions,
// or once the ring is empty, the overflow.
func (mb *mailbox) take() ([]any, bool) {
	if mb.closed.Load() {
		mb.drop()
		return nil, true
	}
	q := mb.spare
	h := mb.head.Load()
	for {
		s := &mb.ring[h&(ringSize-1)]
		if s.seq.Load() != h+1 {
			break
		}
		q = append(q, s.v)
		s.v = nil
		h++
	}
	if len(q) > 0 {
		mb.head.Store(h)
		mb.spare = nil
		return q, false
	}
	if !mb.ovf.Load() {
		return nil, false
	}
	// The overflow holds posts made after the ring was found full: it
	// is taken once every position claimed before is taken (a poster
	// may still be writing its slot).
	for mb.tail.Load() != h {
		if mb.ring[h&(ringSize-1)].seq.Load() == h+1 {
			return mb.take()
		}
		mb.yield()
	}
	mb.mu.Lock()
	if mb.closed.Load() {
		mb.mu.Unlock()
		mb.drop()
		return nil, true
	}
	q, mb.over = mb.over, mb.spare
	mb.spare = nil
	mb.ovf.Store(false)
	mb.mu.Unlock()
	return q, false
}

// drop lets go of what the ring holds once the mailbox is closed.
func (mb *mailbox) drop() {
	h := mb.head.Load()
	for {
		s := &mb.ring[h&(ringSize-1)]
		if s.seq.Load() != h+1 {
			break
		}
		s.v = nil
		h++
	}
	mb.head.Store(h)
}

// close makes the goroutine end after the message it is handling; what is
// posted afterwards, or was not taken yet, is dropped.
func (mb *mailbox) close() {
	mb.mu.Lock()
	mb.closed.Store(true)
	mb.over = nil
	mb.mu.Unlock()
	if mb.setRunning() {
		mb.wake <- struct{}{}
	}
}

// spinLooks is how many times a PE whose mailbox ran empty yields and
// then polls its ring spinPolls times before it parks (see spin): a
// count, not a clock, so that a look costs no clock read. Under
// WaitActive, a PE whose pace is long (spinPace) then goes on for up to
// spinLong (and a round's overshoot): rounds of spinLongPolls polls of
// the ring, with a yield to its P's queue every spinLongYield rounds
// and, every spinClock rounds, a look at the clock and a yield to the
// process's queue (runtime.Gosched), so that goroutines waiting there
// (one back from a system call, say) are not kept waiting.
const (
	spinLooks = 20
	spinPolls = 30

	spinLong      = 50 * time.Microsecond
	spinLongPolls = 256
	spinLongYield = 4
	spinClock     = 8
)

// spinPace is what a mailbox's goroutine knows of its own pace under
// WaitActive: whether its next spin may go on for up to spinLong (long).
// It starts long; a long spin that found nothing ends it, and a park
// that a long spin would have covered (the post that woke it came within
// spinLong) starts it again. So a PE whose messages come microseconds
// apart keeps its P and its thread instead of parking (a park lets the
// thread sleep, and the wake after it costs the poster a wake-up of the
// thread and the PE tens of microseconds where idle cores halt), while
// one that waits longer, or is idle, spends one long spin and then parks
// after the short one.
type spinPace struct {
	long     bool
	parkedAt time.Duration // clock() at the park; 0 while not parked
	// wokenAt is clock() when a post found the goroutine parked, written
	// by that poster before it sends the wake token.
	wokenAt time.Duration
}

// parked notes that the goroutine parks at now.
func (p *spinPace) parked(now time.Duration) { p.parkedAt = now }

// woke notes that the goroutine was woken by a post made at wokenAt (not
// when it resumed: the wake-up's own latency is what a long spin saves).
func (p *spinPace) woke() {
	if p.parkedAt != 0 {
		p.long = p.wokenAt-p.parkedAt < spinLong
		p.parkedAt = 0
	}
}

// expired notes that a long spin found nothing.
func (p *spinPace) expired() { p.long = false }

// clockBase is the origin of clock.
var clockBase = time.Now()

// clock reads the monotonic clock.
func clock() time.Duration { return time.Since(clockBase) }

// spin looks for a post up to spinLooks times, each time yielding the P
// and then polling the ring (ready) spinPolls times, and
// under WaitActive, while the PE's pace is long (spinPace), on for up to
// spinLong; it reports whether a post came. It looks only while exactly
// procs PEs of the runtime are awake (procs is GOMAXPROCS as it was when
// the PE's goroutine started): with more, a yield would only reorder
// their turns; with fewer, a P may be idle, and each yield would wake an
// OS thread for it. The count assumes the runtime's PEs are what keeps
// the Ps busy; PEs blocked inside a handler (waiting for credit, or
// handing off to a thread) and other goroutines of the process make it
// an estimate, and the bounds keep a wrong estimate cheap: each time the
// mailbox runs empty, spinLooks yields, and under WaitActive while the
// PE's waits are short a spinLong of polling; nothing while the PE is
// parked. Why a spin, and why these bounds: docs/design/latency.md.
func (mb *mailbox) spin(procs int32) bool {
	if mb.awake == nil || mb.awake.Load() != procs {
		return false
	}
	for range spinLooks {
		if mb.look(procs) {
			return mb.ready()
		}
	}
	if !mb.active || !mb.pace.long {
		return false
	}
	end := clock() + spinLong
	for i := 1; ; i++ {
		for range spinLongPolls {
			if mb.ready() {
				return true
			}
		}
		switch {
		case i%spinClock == 0:
			if clock() > end {
				mb.pace.expired()
				return false
			}
			runtime.Gosched()
		case i%spinLongYield == 0:
			goyield()
		}
		if mb.awake.Load() != procs {
			return mb.ready()
		}
	}
}

// look yields the P once (yield) and then polls the ring
// spinPolls times; it reports whether the spin is over: a post came, or
// the count of awake PEs left procs.
func (mb *mailbox) look(procs int32) bool {
	mb.yield()
	for range spinPolls {
		if mb.ready() {
			return true
		}
	}
	return mb.awake.Load() != procs
}

// yield lets the other goroutines waiting for this P run: under
// WaitPassive through the process's run queue (runtime.Gosched), under
// WaitActive through the P's own (goyield), so that two PEs spinning on
// two Ps do not contend for the lock of the process's queue.
func (mb *mailbox) yield() {
	if mb.active {
		goyield()
		return
	}
	runtime.Gosched()
}

// run is the PE's goroutine: handle gets each message in the order posted;
// idle, if not nil, runs each time the mailbox is found empty, before the
// goroutine parks (what it posts, to this mailbox too, is handled first).
// handle reports whether the message's sends woke an idle PE.
//
// A PE that woke another and still has messages to handle yields once
// (yield), while no more PEs of the runtime are awake than
// procs, so that the woken PE can run on this P instead of waiting behind
// its waker's work; a PE whose mailbox ran empty looks for more before it
// parks (spin). The reasons are in docs/design/latency.md.
func (mb *mailbox) run(handle func(m any) (woke bool), idle func()) {
	procs := int32(runtime.GOMAXPROCS(0))
	n := 0
	for range mb.wake {
		if mb.active {
			mb.pace.woke()
		}
		for {
			q, closed := mb.take()
			if closed {
				// Gone: no longer counted awake, and running stays set,
				// so that no later post or close counts it again.
				if mb.awake != nil {
					mb.awake.Add(-1)
				}
				return
			}
			if len(q) == 0 {
				if idle != nil {
					idle()
				}
				if mb.spin(procs) {
					continue // more came while it looked
				}
				// Idle: a poster that appends from now on wakes us. One
				// that appended after the take saw running set and did
				// not: look again.
				mb.setIdle()
				more := mb.ready() || mb.closed.Load()
				if !more || !mb.setRunning() {
					if mb.active {
						mb.pace.parked(clock())
					}
					break // (if the CAS failed, a poster sent a token)
				}
				continue
			}
			for i, m := range q {
				woke := handle(m)
				q[i] = nil
				if n++; n >= mailboxYield {
					n = 0
					runtime.Gosched()
				} else if woke && mb.awake != nil && mb.awake.Load() <= procs && (i+1 < len(q) || mb.ready()) {
					mb.yield() // let the woken PE run here, see above
				}
			}
			if cap(q) <= maxSpare {
				mb.spare = q[:0]
			}
		}
	}
}

// goyield is runtime.Gosched, except that the goroutine waits on its own
// P's run queue instead of the process's: yielding takes no lock that the
// Ps share, and a PE that shares its P with another (whose yield put it
// in the same queue) hands the P to it. The runtime keeps goyield for
// the packages that link to it (go.dev/issue/67401).
//
//go:linkname goyield runtime.goyield
func goyield()
