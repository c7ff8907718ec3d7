package actor_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/actor"
)

// Completion detection: producers on several PEs produce items, sent as
// messages that travel a few hops before they are consumed elsewhere.
// Started, AllProduced and Finished run on the starting PE, in that order,
// and Finished only once every item was consumed.

// item travels Hops more PEs, then is consumed where it lands.
type item struct {
	ID       actor.DetectorID
	Hops     int
	Seed     uint64 // picks the PEs it travels through
	Consumed *atomic.Int64
}

func (it item) Deliver(pe *actor.PE) {
	if it.Hops > 0 {
		it.Hops--
		pe.Send(rand.New(rand.NewPCG(it.Seed, uint64(it.Hops))).IntN(pe.NumPEs()), it)
		return
	}
	pe.Consume(it.ID, 1)
	it.Consumed.Add(1)
}

type cdEvents struct {
	started, all, finished atomic.Int64
	order                  []string // touched only on the starter
}

func TestCompletionDetection(t *testing.T) {
	cases := []struct {
		pes, starter, items, hops int
		producers                 []int // PEs that produce
	}{
		{1, 0, 50, 3, []int{0}},
		{3, 0, 100, 5, []int{0, 1, 2}},
		{4, 2, 200, 4, []int{1, 3}},
		{6, 5, 60, 20, []int{0, 2, 4, 5}},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%dPEs_from%d_producers%v", c.pes, c.starter, c.producers), func(t *testing.T) {
			var consumed atomic.Int64
			var ev cdEvents
			total := int64(c.items * len(c.producers))
			code, err := start(t, c.pes, func(pe *actor.PE) {
				pe.Send(c.starter, do(func(pe *actor.PE) {
					var id actor.DetectorID
					here := func(q *actor.PE, what string) {
						check(q, q.ID() == c.starter, fmt.Errorf("%s ran on PE %d, not the starter %d", what, q.ID(), c.starter))
						ev.order = append(ev.order, what)
					}
					var err error
					id, err = pe.StartDetection(actor.Detection{
						Producers: int64(len(c.producers)),
						Started: func(q *actor.PE) {
							ev.started.Add(1)
							here(q, "started")
							for k, p := range c.producers {
								q.Send(p, do(func(pp *actor.PE) {
									for i := range c.items {
										pp.Produce(id, 1)
										seed := uint64(k*c.items + i)
										pp.Send(int(seed%uint64(pp.NumPEs())), item{ID: id, Hops: c.hops, Seed: seed, Consumed: &consumed})
									}
									pp.ProducerDone(id, 1)
								}))
							}
						},
						AllProduced: func(q *actor.PE) {
							ev.all.Add(1)
							here(q, "all produced")
						},
						Finished: func(q *actor.PE) {
							ev.finished.Add(1)
							here(q, "finished")
							check(q, consumed.Load() == total, fmt.Errorf("finished after %d of %d items were consumed", consumed.Load(), total))
							q.Runtime().Exit(0)
						},
					})
					check(pe, err == nil, err)
				}))
			})
			require.NoError(t, err)
			require.Equal(t, 0, code)
			require.Equal(t, total, consumed.Load())
			require.Equal(t, []string{"started", "all produced", "finished"}, ev.order)
		})
	}
}

// TestCompletionBatches produces and consumes several items per call, and
// runs two detections at once with separate counts.
func TestCompletionBatches(t *testing.T) {
	const pes = 3
	var finished atomic.Int64
	code, err := start(t, pes, func(pe *actor.PE) {
		for d := range 2 {
			var id actor.DetectorID
			var err error
			id, err = pe.StartDetection(actor.Detection{
				Producers: pes,
				Started: func(q *actor.PE) {
					for p := range pes {
						q.Send(p, do(func(pp *actor.PE) {
							pp.Produce(id, 10)
							// Consumed in two batches on the next PE, the second
							// one late (after more hops).
							next := (pp.ID() + 1) % pes
							pp.Send(next, do(func(c *actor.PE) { c.Consume(id, 4) }))
							pp.Send(next, do(func(c *actor.PE) {
								c.Send((c.ID()+1)%pes, do(func(c2 *actor.PE) {
									c2.Send((c2.ID()+1)%pes, do(func(c3 *actor.PE) { c3.Consume(id, 6) }))
								}))
							}))
							pp.ProducerDone(id, 1)
						}))
					}
				},
				Finished: func(q *actor.PE) {
					if finished.Add(1) == 2 {
						q.Runtime().Exit(0)
					}
				},
			})
			check(pe, err == nil, fmt.Errorf("detection %d: %v", d, err))
		}
	})
	require.NoError(t, err)
	require.Equal(t, 0, code)
	require.Equal(t, int64(2), finished.Load())
}

// The callbacks come in their order however fast the session goes: with
// no producers, or with a producer done at once on the starter (its poke
// reaches the root before the session is known everywhere), on one PE
// (the root is the starter and a wave completes at once) or several.
func TestCompletionWithoutProducers(t *testing.T) {
	for _, pes := range []int{1, 2, 4} {
		for _, producers := range []int64{0, 1} {
			t.Run(fmt.Sprintf("%dPEs_%dproducers", pes, producers), func(t *testing.T) {
				var order []string
				code, err := start(t, pes, func(pe *actor.PE) {
					id, err := pe.StartDetection(actor.Detection{
						Producers:   producers,
						Started:     func(*actor.PE) { order = append(order, "started") },
						AllProduced: func(*actor.PE) { order = append(order, "all produced") },
						Finished: func(q *actor.PE) {
							order = append(order, "finished")
							q.Runtime().Exit(0)
						},
					})
					check(pe, err == nil, err)
					if producers > 0 {
						pe.ProducerDone(id, producers)
					}
				})
				require.NoError(t, err)
				require.Equal(t, 0, code)
				require.Equal(t, []string{"started", "all produced", "finished"}, order)
			})
		}
	}
}

// TestCompletionAllProducedWithoutAWave: the root learns of every
// producer's Done from its poke, and AllProduced fires on the last one,
// without waiting for a wave to pass every PE (each of whose hops queues
// behind that PE's messages). Here PE 3 blocks until AllProduced, so that
// no wave can complete before it.
func TestCompletionAllProducedWithoutAWave(t *testing.T) {
	released := make(chan struct{})
	var order []string
	code, err := start(t, 4, func(pe *actor.PE) {
		var id actor.DetectorID
		var err error
		id, err = pe.StartDetection(actor.Detection{
			Producers: 2,
			Started: func(q *actor.PE) {
				order = append(order, "started")
				q.Send(3, do(func(p3 *actor.PE) {
					select {
					case <-released:
					case <-time.After(20 * time.Second):
						p3.Runtime().Abort(errors.New("AllProduced did not fire while PE 3 held up every wave"))
					}
				}))
				for _, p := range []int{1, 2} {
					q.Send(p, do(func(pp *actor.PE) { pp.ProducerDone(id, 1) }))
				}
			},
			AllProduced: func(*actor.PE) {
				order = append(order, "all produced")
				close(released)
			},
			Finished: func(q *actor.PE) {
				order = append(order, "finished")
				q.Runtime().Exit(0)
			},
		})
		check(pe, err == nil, err)
	})
	require.NoError(t, err)
	require.Equal(t, 0, code)
	require.Equal(t, []string{"started", "all produced", "finished"}, order)
}

func TestCompletionErrors(t *testing.T) {
	t.Run("negative producers", func(t *testing.T) {
		code, err := start(t, 1, func(pe *actor.PE) {
			_, err := pe.StartDetection(actor.Detection{Producers: -1})
			check(pe, err != nil && strings.Contains(err.Error(), "-1 producers"), fmt.Errorf("StartDetection with -1 producers: %v", err))
			pe.Runtime().Exit(0)
		})
		require.NoError(t, err)
		require.Equal(t, 0, code)
	})
	t.Run("more producers done than declared", func(t *testing.T) {
		code, err := start(t, 2, func(pe *actor.PE) {
			var id actor.DetectorID
			id, _ = pe.StartDetection(actor.Detection{
				Producers: 1,
				Started: func(q *actor.PE) {
					for p := range 2 {
						q.Send(p, do(func(pp *actor.PE) { pp.ProducerDone(id, 1) }))
					}
				},
				Finished: func(q *actor.PE) { q.Runtime().Exit(0) },
			})
		})
		require.Equal(t, 1, code)
		require.ErrorContains(t, err, "2 producers done, only 1 expected")
	})
}
