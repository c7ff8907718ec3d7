package actor

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"

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
