package actor

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// A mailbox's two slices stay in use however its goroutine alternates
// between handling messages and finding none: a message posted while the
// goroutine handles the last batch goes into the other slice, without an
// allocation. (Swapping on an empty take dropped a slice at each idle
// period, and every post during handling allocated.)
func TestMailboxKeepsItsSlices(t *testing.T) {
	mb := newMailbox(nil, false)
	handle := func(q []any) {
		clear(q)
		mb.spare = q[:0] // what run does after a batch
	}
	var bad []string // what went wrong in a cycle (require would allocate)
	cycle := func() {
		mb.post(1)
		q, closed := mb.take()
		if closed || len(q) != 1 {
			bad = append(bad, "the first take")
		}
		mb.post(2) // while the batch is handled
		handle(q)
		q, _ = mb.take()
		if len(q) != 1 || q[0] != 2 {
			bad = append(bad, "the message posted during handling")
		}
		handle(q)
		if q, _ = mb.take(); len(q) != 0 { // nothing posted: idle
			bad = append(bad, "the idle take")
		}
	}
	cycle()
	require.Zero(t, testing.AllocsPerRun(100, cycle))
	require.Empty(t, bad)
	require.NotNil(t, mb.spare, "the spare slice survives an empty take")
}

// The count of awake PEs that the yield after a wake and the spin read
// (mailbox.run) follows each mailbox's goroutine: up while it handles
// messages or looks for more, back to zero once every goroutine parked,
// and up again when a post wakes one.
func TestMailboxAwakeCount(t *testing.T) {
	var awake atomic.Int32
	handled := make(chan int, 16)
	var mbs []*mailbox
	for range 2 {
		mb := newMailbox(&awake, false)
		mbs = append(mbs, mb)
		go mb.run(func(m any) bool { handled <- m.(int); return false }, nil)
	}
	defer func() {
		for _, mb := range mbs {
			mb.close()
		}
	}()
	for round := range 3 {
		for i, mb := range mbs {
			require.True(t, mb.post(10*round+i), "a post to a parked mailbox wakes it")
		}
		for range mbs {
			select {
			case <-handled:
			case <-time.After(10 * time.Second):
				t.Fatalf("round %d: a posted message was not handled", round)
			}
		}
		// Parked: none counted awake and none marked running (setIdle
		// lowers the count just before it clears running).
		require.Eventually(t, func() bool {
			return awake.Load() == 0 && !mbs[0].running.Load() && !mbs[1].running.Load()
		}, 10*time.Second, time.Millisecond,
			"round %d: the goroutines parked but %d count as awake", round, awake.Load())
	}
	// Closed, twice, with the goroutines gone: none counts as awake.
	for _, mb := range mbs {
		mb.close()
		mb.close()
	}
	require.Eventually(t, func() bool { return awake.Load() == 0 }, 10*time.Second, time.Millisecond,
		"after close, %d mailboxes count as awake", awake.Load())
	require.False(t, mbs[0].post(99), "a post after close is dropped")
	require.Zero(t, awake.Load())
}

// Under WaitActive a mailbox's goroutine spins on for up to spinLong
// before it parks while its waits are short, and only briefly once a wait
// outlasted that: a long spin that found nothing ends the long spins, a
// park that a long spin would have covered (the post that woke it came
// within spinLong, however long the wake-up itself took) starts them
// again, and a wake without a park before it (the first) changes nothing.
func TestSpinPaceFollowsTheWaits(t *testing.T) {
	us := time.Microsecond
	p := newMailbox(nil, true).pace
	wake := func(postedAt time.Duration) { p.wokenAt = postedAt; p.woke() }
	require.True(t, p.long, "a PE starts with long spins")
	wake(100 * us)
	require.True(t, p.long, "a wake without a park before it keeps the pace")
	p.expired()
	require.False(t, p.long, "a long spin that found nothing ends the long spins")
	p.parked(1000 * us)
	wake(1000*us + spinLong - us)
	require.True(t, p.long, "a park that a post ended within spinLong starts them again")
	p.parked(5000 * us)
	wake(5000*us + spinLong)
	require.False(t, p.long, "a park of spinLong or longer ends them")
	wake(9000 * us)
	require.False(t, p.long, "a second wake without a park changes nothing")
}

// A mailbox under WaitActive, whose goroutine spins while posts come a
// few microseconds apart, still hands every post to its handler in order,
// and once they stop ends its long spins and parks. (The count of awake
// PEs starts at GOMAXPROCS-1, as if the other Ps ran PEs, so that the
// goroutine spins at all.)
func TestActiveMailboxHandlesEveryPost(t *testing.T) {
	var awake atomic.Int32
	others := int32(runtime.GOMAXPROCS(0)) - 1
	awake.Store(others)
	const n = 20000
	got := make(chan int, n)
	mb := newMailbox(&awake, true)
	go mb.run(func(m any) bool { got <- m.(int); return false }, nil)
	defer mb.close()
	go func() {
		for i := range n {
			mb.post(i)
			if i%64 == 0 {
				runtime.Gosched()
			}
		}
	}()
	for i := range n {
		select {
		case m := <-got:
			require.Equal(t, i, m, "posts are handled in order")
		case <-time.After(10 * time.Second):
			t.Fatalf("post %d was not handled", i)
		}
	}
	require.Eventually(t, func() bool { return awake.Load() == others && !mb.running.Load() }, 10*time.Second, time.Millisecond,
		"the goroutine parked once the posts stopped")
	require.False(t, mb.pace.long, "the spin that found no more posts ended the long spins")
}

// A mailbox takes the posts of each sender in the order it made them,
// whether they go through the ring or, once the ring is full, through the
// overflow slice, with several senders at once and positions that wrap
// around the ring many times; none is lost or taken twice.
func TestMailboxKeepsEachSendersOrder(t *testing.T) {
	const senders, each = 4, 5000
	type post struct{ from, i int }
	mb := newMailbox(nil, false)
	held := make(chan struct{})
	got := make(chan post, senders*each)
	var overflowed atomic.Bool
	first := true
	go mb.run(func(m any) bool {
		if first {
			first = false
			<-held // the senders fill the ring meanwhile
		}
		got <- m.(post)
		return false
	}, nil)
	defer mb.close()
	for s := range senders {
		go func() {
			for i := range each {
				mb.post(post{s, i})
				if s == 0 && i == 2*ringSize {
					// The handler holds the first post: the ring is full.
					overflowed.Store(mb.ovf.Load())
					close(held)
				}
			}
		}()
	}
	next := make([]int, senders)
	for n := range senders * each {
		select {
		case p := <-got:
			require.Equal(t, next[p.from], p.i, "post %d of sender %d (message %d taken)", next[p.from], p.from, n)
			next[p.from]++
		case <-time.After(10 * time.Second):
			t.Fatalf("%d of %d posts taken; per sender %v", n, senders*each, next)
		}
	}
	require.True(t, overflowed.Load(), "the posts beyond the ring's size went to the overflow")
	require.False(t, mb.ovf.Load(), "the overflow was taken")
}

// Taken without a goroutine: a full ring sends the next posts to the
// overflow, which is taken after the ring, and then posts use the ring
// again, around and around.
func TestMailboxRingAndOverflow(t *testing.T) {
	mb := newMailbox(nil, false)
	for i := range ringSize + 5 {
		mb.post(i)
	}
	require.True(t, mb.ovf.Load(), "a post to a full ring goes to the overflow")
	q, closed := mb.take()
	require.False(t, closed)
	require.Len(t, q, ringSize, "the first take is the ring")
	mb.post(-1) // while the overflow waits: behind it
	q2, _ := mb.take()
	require.Equal(t, []any{ringSize, ringSize + 1, ringSize + 2, ringSize + 3, ringSize + 4, -1}, q2, "then the overflow, in order")
	for i, m := range q {
		require.Equal(t, i, m)
	}
	require.False(t, mb.ovf.Load())
	n := 0
	for round := range 3 * ringSize {
		for range 3 {
			mb.post(n)
			n++
		}
		q, _ := mb.take()
		require.Equal(t, []any{n - 3, n - 2, n - 1}, q, "round %d", round)
		require.False(t, mb.ovf.Load(), "round %d: the ring had room", round)
	}
	q, _ = mb.take()
	require.Empty(t, q)
	mb.post(n) // left in the ring by close
	mb.close()
	tail := mb.tail.Load()
	mb.post(1)
	require.Equal(t, tail, mb.tail.Load(), "a post after close is dropped")
	require.Empty(t, mb.over, "a post after close is dropped")
	_, closed = mb.take()
	require.True(t, closed)
	for i := range mb.ring {
		require.Nil(t, mb.ring[i].v, "slot %d: a closed mailbox keeps no message", i)
	}
}

// The overflow waits for a position claimed before it whose slot is not
// written yet: the ring's posts come first, then the overflow's.
func TestMailboxOverflowWaitsForAClaimedSlot(t *testing.T) {
	mb := newMailbox(nil, false)
	mb.tail.Add(1) // position 0: claimed by a poster that has not written it
	for i := 1; i < ringSize; i++ {
		mb.post(i)
	}
	mb.post("over")
	require.True(t, mb.ovf.Load())
	taken := make(chan []any)
	started := make(chan struct{})
	go func() {
		close(started)
		q, _ := mb.take()
		taken <- q
	}()
	<-started
	mb.ring[0].v = 0 // the poster of position 0 writes its slot
	mb.ring[0].seq.Store(1)
	var q []any
	select {
	case q = <-taken:
	case <-time.After(10 * time.Second):
		t.Fatal("the take did not end once the claimed slot was written")
	}
	require.Len(t, q, ringSize, "the ring first")
	for i, m := range q {
		require.Equal(t, i, m)
	}
	q, _ = mb.take()
	require.Equal(t, []any{"over"}, q, "then the overflow")
}

// A mailbox's ring and the PE's send buffers take whole cache lines.
func TestLineCap(t *testing.T) {
	for _, c := range []struct{ n, size, want int }{
		{1, 16, 4}, {2, 8, 8}, {9, 8, 16}, {2, 24, 8}, {8, 24, 8}, {9, 24, 16}, {1, 64, 1}, {3, 128, 3}, {0, 8, 0},
	} {
		got := lineCap(c.n, c.size)
		require.Equal(t, c.want, got, "lineCap(%d, %d)", c.n, c.size)
		require.Zero(t, got*c.size%64, "lineCap(%d, %d) bytes", c.n, c.size)
	}
	var s slot
	require.Equal(t, uintptr(32), unsafe.Sizeof(s), "two slots a cache line")
}

// A PE takes what it processed off its backlog in folds of a sixteenth of
// the bound, at most 64 envelopes and at least one; with no bound, 64.
func TestFoldAt(t *testing.T) {
	for bound, want := range map[int64]int64{0: 64, 1: 1, 16: 1, 64: 4, 1024: 64, DefaultMaxInFlight: 64} {
		require.Equal(t, want, foldAt(bound), "foldAt(%d)", bound)
	}
}
