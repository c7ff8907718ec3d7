package actor_test

import (
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/actor"
)

// Quiescence detection at the runtime level: it fires once no counted
// message is in flight or being processed, and only then.

// hop is a token that visits Left more random PEs, counting each visit.
type hop struct {
	Left  int
	Rand  *rand.Rand // used by one message at a time
	Count *atomic.Int64
}

func (h hop) Deliver(pe *actor.PE) {
	h.Count.Add(1)
	if h.Left == 0 {
		return
	}
	h.Left--
	pe.Send(h.Rand.IntN(pe.NumPEs()), h)
}

func tokens(pe *actor.PE, n, hops int, count *atomic.Int64) {
	for k := range n {
		pe.Send(k%pe.NumPEs(), hop{Left: hops - 1, Rand: rand.New(rand.NewPCG(uint64(k), 7)), Count: count})
	}
}

func TestQuiescenceAfterChains(t *testing.T) {
	cases := []struct{ pes, tokens, hops, asker int }{
		{1, 1, 1000, 0},
		{2, 4, 1000, 1},
		{4, 8, 1000, 3},
		{7, 3, 2000, 5},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%dPEs_%dx%d_from%d", c.pes, c.tokens, c.hops, c.asker), func(t *testing.T) {
			var count, fired atomic.Int64
			want := int64(c.tokens * c.hops)
			code, err := start(t, c.pes, func(pe *actor.PE) {
				// The asker starts the chains and asks at once, from the same
				// message: quiescence must wait for all of them.
				pe.Send(c.asker, do(func(pe *actor.PE) {
					tokens(pe, c.tokens, c.hops, &count)
					pe.DetectQuiescence(func(q *actor.PE) {
						fired.Add(1)
						check(q, q.ID() == c.asker, fmt.Errorf("quiescence reported on PE %d, asked on %d", q.ID(), c.asker))
						check(q, count.Load() == want, fmt.Errorf("quiescence after %d of %d hops", count.Load(), want))
						q.Runtime().Exit(0)
					})
				}))
			})
			require.NoError(t, err)
			require.Equal(t, 0, code)
			require.Equal(t, want, count.Load())
			require.Equal(t, int64(1), fired.Load())
		})
	}
}

// TestQuiescenceManyRequests asks from every PE, in the middle of the
// chains; every request fires once, after the last hop.
func TestQuiescenceManyRequests(t *testing.T) {
	const pes, hops = 5, 3000
	var count, fired atomic.Int64
	code, err := start(t, pes, func(pe *actor.PE) {
		tokens(pe, 2, hops, &count)
		for p := range pes {
			pe.Send(p, do(func(pe *actor.PE) {
				for range 2 {
					pe.DetectQuiescence(func(q *actor.PE) {
						check(q, count.Load() == 2*hops, fmt.Errorf("quiescence on PE %d after %d of %d hops", q.ID(), count.Load(), 2*hops))
						if fired.Add(1) == 2*pes {
							q.Runtime().Exit(0)
						}
					})
				}
			}))
		}
	})
	require.NoError(t, err)
	require.Equal(t, 0, code)
	require.Equal(t, int64(2*pes), fired.Load())
}

// TestQuiescenceRepeated runs three phases, each started when the previous
// one is quiescent.
func TestQuiescenceRepeated(t *testing.T) {
	const pes, hops = 3, 500
	var count atomic.Int64
	var phase func(pe *actor.PE, k int)
	phase = func(pe *actor.PE, k int) {
		if k == 3 {
			pe.Runtime().Exit(0)
			return
		}
		tokens(pe, 2, hops, &count)
		pe.DetectQuiescence(func(q *actor.PE) {
			check(q, count.Load() == int64(2*hops*(k+1)), fmt.Errorf("phase %d: quiescence after %d hops", k, count.Load()))
			phase(q, k+1)
		})
	}
	code, err := start(t, pes, func(pe *actor.PE) { phase(pe, 0) })
	require.NoError(t, err)
	require.Equal(t, 0, code)
	require.Equal(t, int64(6*hops), count.Load())
}

func TestQuiescenceWithoutWork(t *testing.T) {
	for _, pes := range []int{1, 6} {
		t.Run(fmt.Sprintf("%dPEs", pes), func(t *testing.T) {
			code, err := start(t, pes, func(pe *actor.PE) {
				pe.DetectQuiescence(func(q *actor.PE) { q.Runtime().Exit(4) })
			})
			require.NoError(t, err)
			require.Equal(t, 4, code)
		})
	}
}

// pingControl bounces between two PEs as a control message until stop is
// set: it does not count for quiescence, which must still be detected.
type pingControl struct {
	stop  *atomic.Bool
	count *atomic.Int64
}

func (p pingControl) Deliver(pe *actor.PE) {
	if p.stop.Load() {
		return
	}
	p.count.Add(1)
	pe.SendControl(1-pe.ID(), p)
}

func TestQuiescenceIgnoresControlMessages(t *testing.T) {
	var stop atomic.Bool
	var pings, hops atomic.Int64
	code, err := start(t, 2, func(pe *actor.PE) {
		pe.SendControl(1, pingControl{&stop, &pings})
		tokens(pe, 1, 200, &hops)
		pe.DetectQuiescence(func(q *actor.PE) {
			stop.Store(true)
			check(q, hops.Load() == 200, fmt.Errorf("quiescence after %d hops", hops.Load()))
			q.Runtime().Exit(0)
		})
	})
	require.NoError(t, err)
	require.Equal(t, 0, code)
}

// TestQuiescenceWithThreads: a thread suspends twenty times, each time
// woken by a chain of messages it started; quiescence comes only after
// its last message was processed.
func TestQuiescenceWithThreads(t *testing.T) {
	var count atomic.Int64
	code, err := start(t, 2, func(pe *actor.PE) {
		pe.Send(1, do(func(pe *actor.PE) {
			pe.Spawn(nil, func(th *actor.Thread) {
				for range 20 {
					// Ask PE 0 to wake us up, through a chain of hops.
					pe.Send(0, do(func(p0 *actor.PE) {
						p0.Send(1, do(func(*actor.PE) { th.Resume() }))
					}))
					th.Suspend()
					count.Add(1)
				}
				pe.Send(0, do(func(*actor.PE) { count.Add(100) }))
			})
		}))
		pe.DetectQuiescence(func(q *actor.PE) {
			check(q, count.Load() == 120, fmt.Errorf("quiescence at count %d", count.Load()))
			q.Runtime().Exit(0)
		})
	})
	require.NoError(t, err)
	require.Equal(t, 0, code)
}
