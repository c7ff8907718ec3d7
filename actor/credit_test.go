package actor_test

import (
	"fmt"
	"runtime"
	"runtime/metrics"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/actor"
)

// floodMsg is a message with a payload large enough that a backlog of a
// few hundred thousand of them would show in the heap.
type floodMsg struct {
	payload [256]byte
	done    func(pe *actor.PE)
}

func (m *floodMsg) Deliver(pe *actor.PE) {
	// Work per message, so that the receiver is slower than its senders.
	h := uint64(0)
	for i := range m.payload {
		h = h*31 + uint64(m.payload[i])
	}
	m.payload[0] = byte(h)
	m.done(pe)
}

// heapPeak samples the bytes of heap objects every half millisecond until
// stop is closed, and returns the highest.
func heapPeak(stop <-chan struct{}) <-chan uint64 {
	out := make(chan uint64, 1)
	go func() {
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		var peak uint64
		t := time.NewTicker(500 * time.Microsecond)
		defer t.Stop()
		for {
			metrics.Read(s)
			peak = max(peak, s[0].Value.Uint64())
			select {
			case <-stop:
				out <- peak
				return
			case <-t.C:
			}
		}
	}()
	return out
}

// Senders that outrun their receiver wait for it instead of filling its
// mailbox: the heap stays far below what the messages sent would take,
// the receiver's backlog stays near the bound, and every message arrives.
// PEs that flood each other, where neither can wait for the other, still
// finish.
func TestSendBackPressure(t *testing.T) {
	const bound = 1024
	cases := []struct {
		name      string
		pes       int
		senders   []int
		receivers []int
		n         int  // messages per sender and receiver
		bounded   bool // the heap and backlog bounds must hold
	}{
		{"one to one", 2, []int{0}, []int{1}, 300_000, true},
		{"three to one", 4, []int{0, 2, 3}, []int{1}, 100_000, true},
		{"each to each", 2, []int{0, 1}, []int{0, 1}, 20_000, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			runtime.GC()
			var base metrics.Sample
			base.Name = "/memory/classes/heap/objects:bytes"
			ms := []metrics.Sample{base}
			metrics.Read(ms)
			before := ms[0].Value.Uint64()
			stop := make(chan struct{})
			peak := heapPeak(stop)

			want := int64(len(c.senders) * c.n)
			var got [8]atomic.Int64
			var arrived atomic.Int64
			var maxBacklog atomic.Int64
			done := func(pe *actor.PE) {
				got[pe.ID()].Add(1)
				_, _, b := pe.Runtime().CreditStats(pe.ID())
				if b > maxBacklog.Load() {
					maxBacklog.Store(b)
				}
				if arrived.Add(1) == want*int64(len(c.receivers)) {
					pe.Runtime().Exit(0)
				}
			}
			rt, err := actor.Start(actor.Config{PEs: c.pes, MaxInFlight: bound}, func(pe *actor.PE) {
				for _, s := range c.senders {
					pe.Send(s, do(func(pe *actor.PE) {
						for i := 0; i < c.n; i++ {
							for _, r := range c.receivers {
								pe.Send(r, &floodMsg{done: done})
							}
						}
					}))
				}
			})
			require.NoError(t, err)
			waitEnd(t, rt, func() string {
				return fmt.Sprintf("%s: %d of %d messages arrived", c.name, arrived.Load(), want*int64(len(c.receivers)))
			})
			close(stop)
			p := <-peak
			for _, r := range c.receivers {
				require.Equal(t, want, got[r].Load(), "messages that reached PE %d", r)
			}
			if !c.bounded {
				return
			}
			// The backlog may pass the bound by what each sender posts at
			// once (a batch of up to 256).
			require.LessOrEqual(t, maxBacklog.Load(), int64(bound+256*len(c.senders)), "receiver backlog")
			// Unbounded, the messages would take len(senders)*n*~280 B
			// (84 MB for one to one).
			total := uint64(len(c.senders)*c.n) * 280
			require.Less(t, p-min(p, before), total/3, "peak heap growth (all the messages take %d MB)", total>>20)
			var parked int64
			for _, r := range c.receivers {
				n, _, _ := rt.CreditStats(r)
				parked += n
			}
			require.Positive(t, parked, "no sender ever waited: the receiver kept up, so the test shows nothing")
		})
	}
}

// loneSized is a Sized Multi of one message that weighs three envelopes.
type loneSized struct{ next func(pe *actor.PE) }

func (m loneSized) Deliver(pe *actor.PE) { m.next(pe) }
func (loneSized) Count() int             { return 1 }
func (loneSized) Bytes() int             { return 3 * actor.EnvelopeBytes }

// A message posted alone is weighed the same way by its sender and its
// receiver: after rounds of lone Sized messages the receiver's backlog is
// back at zero, not below.
func TestLoneSizedMessageLeavesNoBacklog(t *testing.T) {
	const rounds = 50
	var backlog [rounds]int64
	code, err := start(t, 2, func(pe *actor.PE) {
		var ping func(pe *actor.PE, k int)
		ping = func(pe *actor.PE, k int) {
			_, _, backlog[k] = pe.Runtime().CreditStats(1)
			if k == rounds-1 {
				pe.Runtime().Exit(0)
				return
			}
			pe.Send(1, loneSized{func(pe1 *actor.PE) {
				pe1.Send(0, do(func(pe *actor.PE) { ping(pe, k+1) }))
			}})
		}
		ping(pe, 0)
	})
	require.NoError(t, err)
	require.Equal(t, 0, code)
	require.Equal(t, [rounds]int64{}, backlog, "PE 1's backlog each time PE 0 heard back")
}

// The smallest bounds work: with MaxInFlight 1 or 2 a sender of more
// than a batch waits for its receiver and resumes (with a bound of 1 the
// low mark was 0, and a waiting sender waited for a backlog below zero).
func TestSmallestBoundsLetSendersResume(t *testing.T) {
	for _, bound := range []int{1, 2} {
		const n = 3 * 256 // more than a batch: the sender flushes while it sends
		var arrived atomic.Int64
		count := func(pe *actor.PE) {
			if arrived.Add(1) == n {
				pe.Runtime().Exit(0)
			}
		}
		// The first message holds PE 1 until its sender has waited (or
		// 10 s passed), so that the sender surely meets the bound.
		gate := func(pe *actor.PE) {
			for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); runtime.Gosched() {
				if parked, _, _ := pe.Runtime().CreditStats(1); parked > 0 {
					break
				}
			}
			count(pe)
		}
		rt, err := actor.Start(actor.Config{PEs: 2, MaxInFlight: bound}, func(pe *actor.PE) {
			for i := range n {
				done := count
				if i == 0 {
					done = gate
				}
				pe.Send(1, &floodMsg{done: done})
			}
		})
		require.NoError(t, err)
		waitEnd(t, rt, func() string {
			return fmt.Sprintf("MaxInFlight %d: %d of %d messages arrived", bound, arrived.Load(), n)
		})
		parked, _, _ := rt.CreditStats(1)
		require.Positive(t, parked, "MaxInFlight %d: the sender never waited, so the test shows nothing", bound)
	}
}

// waitEnd waits for rt's job to end without an error; at the deadline it
// aborts the job and fails the test, saying what had arrived (arrived).
func waitEnd(t *testing.T, rt *actor.Runtime, arrived func() string) {
	t.Helper()
	ended := make(chan error, 1)
	go func() { _, err := rt.Wait(); ended <- err }()
	select {
	case err := <-ended:
		require.NoError(t, err)
	case <-time.After(deadline):
		rt.Abort(fmt.Errorf("timed out"))
		t.Fatalf("%s within %v", arrived(), deadline)
	}
}
