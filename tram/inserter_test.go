package tram_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/group"
	"github.com/charmgo/charm/tram"
)

// TestInserterDeliversEveryItem: items inserted through each PE's
// Inserter arrive as those of Streamer.Insert do, on the grids and modes
// its fast path takes or leaves (a 1-D completion step without a flush
// period watches for strands; Yield turns the fast path off), over two
// steps with the Inserter found in the first kept for the second.
func TestInserterDeliversEveryItem(t *testing.T) {
	cases := []struct {
		name   string
		pes    int
		dims   []int
		period time.Duration
		yield  int
		mode   tram.Mode
	}{
		{"1d", 4, []int{4}, 2 * time.Millisecond, 0, tram.Completion},
		{"1d/noperiod", 4, []int{4}, 0, 0, tram.Completion},
		{"2d", 4, []int{2, 2}, 2 * time.Millisecond, 0, tram.Completion},
		{"3d/yield", 8, []int{2, 2, 2}, 2 * time.Millisecond, 5, tram.Completion},
		{"2d/quiescence", 4, []int{2, 2}, 2 * time.Millisecond, 0, tram.Quiescence},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			const items = 2000
			var got [][]int64
			code, err := chare.Run(chare.Config{PEs: c.pes, Timeout: 30 * time.Second}, func(m *tmain, _ []string) {
				g, err := group.New[table](m)
				if err != nil {
					m.Abort(err)
					return
				}
				s, err := tram.New(m, g, (*table).Add, tram.Options{Dims: c.dims, Sizing: tram.Sizing{BufferItems: 32}, FlushPeriod: c.period, Yield: c.yield})
				if err != nil {
					m.Abort(err)
					return
				}
				for step := range 2 {
					f := feedMsg{S: s, Items: items, Seed: int64(11 + step), Local: true, NoDone: c.mode == tram.Quiescence}
					st := tram.Step{Mode: c.mode, Producers: c.pes}
					var tot []int64
					if c.mode == tram.Quiescence {
						tot, err = runQuiescent(m, s, g, f)
					} else {
						tot, err = runStep(m, s, g, st, feedAll(m, g, f))
					}
					if err != nil {
						m.Abort(fmt.Errorf("step %d: %w", step, err))
						return
					}
					got = append(got, tot)
				}
				m.Exit(0)
			})
			require.NoError(t, err)
			require.Equal(t, 0, code)
			require.Len(t, got, 2)
			n1, sum1 := expected(c.pes, items, 11)
			n2, sum2 := expected(c.pes, items, 12)
			require.Equal(t, []int64{n1, sum1}, got[0], "first step: items and their sum")
			require.Equal(t, []int64{n1 + n2, sum1 + sum2}, got[1], "second step, with the Inserters of the first")
		})
	}
}

// TestInserterRefusesItemsOutsideAStep: an Inserter refuses items after a
// staged step's producers are all done on its PE, and at once on a PE
// without staged producers (finished as the step begins), as
// Streamer.Insert does; Local needs a context on a PE of the job.
func TestInserterRefusesItemsOutsideAStep(t *testing.T) {
	for _, producers := range []int{1, 0} {
		t.Run(fmt.Sprint(producers, " producers"), func(t *testing.T) {
			var after, plain, noCtx error
			code, err := chare.Run(chare.Config{PEs: 2, Timeout: 30 * time.Second}, func(m *tmain, _ []string) {
				err := func() error {
					g, err := group.New[table](m)
					if err != nil {
						return err
					}
					s, err := tram.New(m, g, (*table).Add, tram.Options{Dims: []int{2}})
					if err != nil {
						return err
					}
					_, noCtx = s.Local(nil)
					started, finished := chare.NewFuture[any](m), chare.NewFuture[any](m)
					if err := s.Start(m, tram.Step{Mode: tram.Staged, Producers: producers, Started: started.Callback(), Finished: finished.Callback()}); err != nil {
						return err
					}
					if err := chare.WaitAll(m, started); err != nil {
						return err
					}
					in, err := s.Local(m)
					if err != nil {
						return err
					}
					if producers > 0 {
						if err := in.Insert(5, 1); err != nil {
							return fmt.Errorf("an insert inside the step: %w", err)
						}
						if err := s.Done(m, 1); err != nil {
							return err
						}
					}
					after, plain = in.Insert(6, 1), s.Insert(m, 6, 1)
					return nil
				}()
				if err != nil {
					m.Abort(err)
					return
				}
				m.Exit(0)
			})
			require.NoError(t, err)
			require.Equal(t, 0, code)
			require.ErrorContains(t, after, "no step accepts items on PE 0", "the Inserter")
			require.ErrorContains(t, plain, "no step accepts items on PE 0", "Streamer.Insert")
			require.ErrorContains(t, noCtx, "no streamer branch here")
		})
	}
}

// runQuiescent runs a quiescence step of s fed by f and returns the
// table's totals once quiescence is detected.
func runQuiescent(m *tmain, s tram.Streamer[table, uint64], g group.Proxy[table], f feedMsg) ([]int64, error) {
	started := chare.NewFuture[any](m)
	if err := s.Start(m, tram.Step{Mode: tram.Quiescence, Started: started.Callback()}); err != nil {
		return nil, err
	}
	if _, err := started.Get(m); err != nil {
		return nil, err
	}
	if err := chare.Send(m, g, (*table).Feed, f); err != nil {
		return nil, err
	}
	qd := chare.NewFuture[any](m)
	m.DetectQuiescence(qd.Callback())
	if _, err := qd.Get(m); err != nil {
		return nil, err
	}
	tot := chare.NewFuture[[]int64](m)
	if err := chare.Send(m, g, (*table).Totals, tot.Callback()); err != nil {
		return nil, err
	}
	return tot.Get(m)
}

// TestZeroInserterRefuses: an Inserter not made by Local (a zero one, as
// one decoded from a message would be) refuses items with an error that
// says why, instead of panicking.
func TestZeroInserterRefuses(t *testing.T) {
	var in tram.Inserter[table, uint64]
	require.ErrorContains(t, in.Insert(1, 0), "not made by Streamer.Local")
}
