package tram_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/array"
	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/group"
	"github.com/charmgo/charm/tram"
)

// claim T13, claim T21
//
// TestT13_T21_StagedCompletion: each PE has one local producer; the step ends
// dimension by dimension with no detector and no periodic flushing
// (FlushPeriod 0: claim T21), after every item arrived, on 1-, 2- and 3-D
// grids, for several steps in a row.
func TestT13_T21_StagedCompletion(t *testing.T) {
	cases := []struct {
		pes  int
		dims []int
	}{{4, []int{4}}, {4, []int{2, 2}}, {8, []int{2, 2, 2}}, {6, []int{2, 3}}, {6, []int{3, 1, 2}}}
	for _, c := range cases {
		t.Run(fmt.Sprint(c.dims), func(t *testing.T) {
			const items, steps = 2000, 3
			var got [][]int64
			code, err := chare.Run(chare.Config{PEs: c.pes, Timeout: 30 * time.Second}, func(m *tmain, _ []string) {
				g, err := group.New[table](m)
				if err != nil {
					m.Abort(err)
					return
				}
				s, err := tram.New(m, g, (*table).Add, tram.Options{Dims: c.dims, Sizing: tram.Sizing{BufferItems: 50}})
				if err != nil {
					m.Abort(err)
					return
				}
				for k := 0; k < steps; k++ {
					v, err := runStep(m, s, g, tram.Step{Mode: tram.Staged, Producers: 1}, feedAll(m, g, feedMsg{S: s, Items: items, Seed: int64(k)}))
					if err != nil {
						m.Abort(err)
						return
					}
					got = append(got, v)
				}
				m.Exit(0)
			})
			require.NoError(t, err)
			require.Equal(t, 0, code)
			var n, sum int64
			for k := 0; k < steps; k++ {
				dn, ds := expected(c.pes, items, int64(k))
				n, sum = n+dn, sum+ds
				require.Equal(t, []int64{n, sum}, got[k], "totals when step %d finished", k)
			}
		})
	}
}

// TestT14_PEsWithoutProducersAreDoneAtOnce: PEs with no local producers
// finish their stages without any Done.
func TestT14_PEsWithoutProducersAreDoneAtOnce(t *testing.T) {
	code, err := chare.Run(chare.Config{PEs: 4, Timeout: 30 * time.Second}, func(m *tmain, _ []string) {
		g, _ := group.New[table](m)
		s, err := tram.New(m, g, (*table).Add, tram.Options{Dims: []int{2, 2}})
		if err != nil {
			m.Abort(err)
			return
		}
		finished := chare.NewFuture[any](m)
		if err := s.Start(m, tram.Step{Mode: tram.Staged, Producers: 0, Finished: finished.Callback()}); err != nil {
			m.Abort(err)
			return
		}
		if err := chare.WaitAll(m, finished); err != nil {
			m.Abort(err)
			return
		}
		m.Exit(0)
	})
	require.NoError(t, err)
	require.Equal(t, 0, code)
}

// sender is an array element that feeds the table during a staged step
// whose producers are the array's elements (T14).
type sender struct {
	array.Element[sender, int]
}

type senderFeed struct {
	S     tram.Streamer[table, uint64]
	Items int
}

func (s *sender) Feed(m senderFeed) {
	for i := 0; i < m.Items; i++ {
		if err := m.S.Insert(s, uint64(s.ThisIndex()), i%s.NumPEs()); err != nil {
			s.Abort(err)
			return
		}
	}
	if err := m.S.Done(s, 1); err != nil {
		s.Abort(err)
	}
}

func init() { chare.Register[sender]() }

// TestT14_SenderArrayCountsLocalContributors: with Step.Senders, each PE
// counts its local elements as its producers; PEs without any (an array of
// 2 elements on 4 PEs) are done at once.
func TestT14_SenderArrayCountsLocalContributors(t *testing.T) {
	for _, n := range []int{2, 10} {
		const items = 100
		var got []int64
		code, err := chare.Run(chare.Config{PEs: 4, Timeout: 30 * time.Second}, func(m *tmain, _ []string) {
			g, _ := group.New[table](m)
			senders, err := array.New[sender](m, array.Dims(n))
			if err != nil {
				m.Abort(err)
				return
			}
			s, err := tram.New(m, g, (*table).Add, tram.Options{Dims: []int{2, 2}, Sizing: tram.Sizing{BufferItems: 8}})
			if err != nil {
				m.Abort(err)
				return
			}
			got, err = runStep(m, s, g, tram.Step{Mode: tram.Staged, Senders: senders.Route().Coll}, func() error {
				return chare.Send(m, senders, (*sender).Feed, senderFeed{S: s, Items: items})
			})
			if err != nil {
				m.Abort(err)
				return
			}
			m.Exit(0)
		})
		require.NoError(t, err)
		require.Equal(t, 0, code)
		require.Equal(t, []int64{int64(n * items), int64(n * (n - 1) / 2 * items)}, got, "%d senders", n)
	}
}
