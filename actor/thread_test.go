package actor_test

import (
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/actor"
)

// Threads borrow their PE: while one is suspended the PE processes other
// messages, and Resume, called on the PE, hands it back.

func TestThreadSuspendResume(t *testing.T) {
	var log []string // touched only on PE 0, by the PE or the thread holding it
	code, err := start(t, 1, func(pe *actor.PE) {
		var th *actor.Thread
		check(pe, pe.Current() == nil, errors.New("a thread holds the PE at boot"))
		pe.Spawn(nil, func(t *actor.Thread) {
			th = t
			check(pe, pe.Current() == t && t.PE() == pe, errors.New("Current is not the running thread"))
			log = append(log, "start")
			// Messages sent while suspended run before it is resumed.
			for i := range 3 {
				pe.Send(0, do(func(*actor.PE) { log = append(log, fmt.Sprint("tick ", i)) }))
			}
			pe.Send(0, do(func(pe *actor.PE) {
				log = append(log, "resume")
				th.Resume()
				log = append(log, "resumed")
			}))
			t.Suspend()
			log = append(log, "woke")
			check(pe, pe.Current() == t, errors.New("Current after Resume"))
		})
		check(pe, pe.Current() == nil, errors.New("Spawn returned while the thread held the PE"))
		check(pe, !th.Done(), errors.New("thread done before it was resumed"))
		pe.Send(0, do(func(pe *actor.PE) {
			check(pe, th.Done(), errors.New("thread not done"))
			th.Resume() // a finished thread: nothing happens
			pe.Runtime().Exit(0)
		}))
	})
	require.NoError(t, err)
	require.Equal(t, 0, code)
	require.Equal(t, []string{"start", "tick 0", "tick 1", "tick 2", "resume", "woke", "resumed"}, log)
}

// TestThreadsInterleave suspends many threads on one PE and resumes them in
// reverse order.
func TestThreadsInterleave(t *testing.T) {
	const n = 50
	var order []int
	code, err := start(t, 1, func(pe *actor.PE) {
		threads := make([]*actor.Thread, n)
		for i := range n {
			pe.Spawn(nil, func(t *actor.Thread) {
				threads[i] = t
				t.Suspend()
				order = append(order, i)
			})
		}
		pe.Send(0, do(func(pe *actor.PE) {
			for i := n - 1; i >= 0; i-- {
				threads[i].Resume()
			}
			pe.Runtime().Exit(0)
		}))
	})
	require.NoError(t, err)
	require.Equal(t, 0, code)
	require.Len(t, order, n)
	for k, i := range order {
		require.Equal(t, n-1-k, i)
	}
}

func TestThreadPanic(t *testing.T) {
	cases := []struct {
		name    string
		suspend bool
	}{{"at once", false}, {"after resuming", true}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, err := start(t, 2, func(pe *actor.PE) {
				pe.Send(1, do(func(pe *actor.PE) {
					pe.Spawn(func() string { return "Worker.Run on element 4" }, func(t *actor.Thread) {
						if c.suspend {
							pe.Send(1, do(func(*actor.PE) { t.Resume() }))
							t.Suspend()
						}
						panic("thread boom")
					})
				}))
			})
			require.Equal(t, 1, code)
			var pe *actor.PanicError
			require.ErrorAs(t, err, &pe)
			require.Equal(t, 1, pe.PE)
			require.Equal(t, "Worker.Run on element 4", pe.What)
			require.Contains(t, err.Error(), "thread boom")
		})
	}
}

// TestSuspendedThreadAtExit ends the job while a thread is suspended: Wait
// returns, and the thread's goroutine unwinds instead of blocking for ever
// or running on.
func TestSuspendedThreadAtExit(t *testing.T) {
	exited := make(chan struct{})
	var ranOn atomic.Bool
	code, err := start(t, 1, func(pe *actor.PE) {
		pe.Spawn(nil, func(t *actor.Thread) {
			defer close(exited)
			pe.Runtime().Exit(2)
			t.Suspend()
			ranOn.Store(true)
		})
	})
	require.NoError(t, err)
	require.Equal(t, 2, code)
	select {
	case <-exited:
	case <-time.After(deadline):
		t.Fatal("the suspended thread's goroutine did not end")
	}
	require.False(t, ranOn.Load())
}

// TestThreadNap: a napping thread wakes once its PE has handled another
// message (after that message's handler), every napping thread at once; a
// thread that naps again while woken waits for the next message, not the
// one that woke it; with nothing coming, the nap's timer ends it.
func TestThreadNap(t *testing.T) {
	var log []string // touched only on PE 0
	code, err := start(t, 1, func(pe *actor.PE) {
		tick := func(s string) actor.Message { return do(func(*actor.PE) { log = append(log, s) }) }
		pe.Spawn(nil, func(t *actor.Thread) {
			pe.Send(0, tick("m1")) // leaves when the thread suspends
			log = append(log, fmt.Sprint("a woken ", t.Nap(0)))
			log = append(log, fmt.Sprint("a again ", t.Nap(0))) // m1 does not wake it twice
			t0 := time.Now()
			woken := t.Nap(20 * time.Millisecond) // nothing comes
			log = append(log, fmt.Sprint("a timer ", woken, " ", time.Since(t0) >= 20*time.Millisecond))
			pe.Runtime().Exit(0)
		})
		pe.Spawn(nil, func(t *actor.Thread) {
			log = append(log, fmt.Sprint("b woken ", t.Nap(time.Minute)))
			pe.Send(0, tick("m2"))
		})
	})
	require.NoError(t, err)
	require.Equal(t, 0, code)
	require.Equal(t, []string{"m1", "a woken true", "b woken true", "m2", "a again true", "a timer false true"}, log)
}

// A thread that naps while a batch of messages is being delivered (it was
// spawned by the batch's first message) is woken by the batch's later
// messages: naps count messages delivered, not mailbox receives.
func TestThreadNapWokenLaterInABatch(t *testing.T) {
	var log []string // touched only on PE 0
	code, err := start(t, 1, func(pe *actor.PE) {
		// Both leave in one batch when this activation ends.
		pe.Send(0, do(func(pe *actor.PE) {
			pe.Spawn(nil, func(t *actor.Thread) {
				log = append(log, fmt.Sprint("woken ", t.Nap(10*time.Second)))
				pe.Runtime().Exit(0)
			})
		}))
		pe.Send(0, do(func(*actor.PE) { log = append(log, "data") }))
	})
	require.NoError(t, err)
	require.Equal(t, 0, code)
	require.Equal(t, []string{"data", "woken true"}, log)
}
