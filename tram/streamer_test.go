package tram_test

import (
	"fmt"
	"math/rand"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/chare/reducer"
	"github.com/charmgo/charm/group"
	"github.com/charmgo/charm/tram"
)

// table is a histogram client: each branch counts the items it gets.
type table struct {
	group.Branch[table]
	count  int
	sum    uint64
	pinged bool
	ins    *tram.Inserter[table, uint64] // Feed with Local: kept from step to step
}

func (t *table) Add(v uint64) { t.count++; t.sum += v }

// Totals reduces the counts and sums of every branch.
func (t *table) Totals(cb chare.Callback) {
	_ = t.Contribute([]int64{int64(t.count), int64(t.sum)}, reducer.SumInt64, cb)
}

type feedMsg struct {
	S      tram.Streamer[table, uint64]
	Items  int
	Seed   int64
	NoDone bool // a quiescence step: no Done
	Local  bool // insert through the PE's Inserter, found on the first Feed
}

// Feed inserts Items random increments for random PEs, then says done.
func (t *table) Feed(m feedMsg) {
	r := rand.New(rand.NewSource(m.Seed + int64(t.PE())))
	insert := func(v uint64, dest int) error { return m.S.Insert(t, v, dest) }
	if m.Local {
		if t.ins == nil {
			var err error
			if t.ins, err = m.S.Local(t); err != nil {
				t.Abort(err)
				return
			}
		}
		insert = t.ins.Insert
	}
	for i := 0; i < m.Items; i++ {
		if err := insert(uint64(r.Intn(1000)), r.Intn(t.NumPEs())); err != nil {
			t.Abort(err)
			return
		}
	}
	if m.NoDone {
		return
	}
	if err := m.S.Done(t, 1); err != nil {
		t.Abort(err)
	}
}

type tmain struct{ chare.Chare[tmain] }

func init() {
	chare.Register[tmain]()
	chare.Register[table]()
	tram.Register((*table).Add)
}

// runStep runs one step of s: it starts it, waits until every PE accepts
// items, calls feed, waits for the Finished callback, and returns the
// table's totals (items, sum).
func runStep(m *tmain, s tram.Streamer[table, uint64], g group.Proxy[table], st tram.Step, feed func() error) ([]int64, error) {
	started, finished := chare.NewFuture[any](m), chare.NewFuture[any](m)
	st.Started, st.Finished = started.Callback(), finished.Callback()
	if err := s.Start(m, st); err != nil {
		return nil, err
	}
	if err := chare.WaitAll(m, started); err != nil {
		return nil, err
	}
	if err := feed(); err != nil {
		return nil, err
	}
	if err := chare.WaitAll(m, finished); err != nil {
		return nil, err
	}
	tot := chare.NewFuture[[]int64](m)
	if err := chare.Send(m, g, (*table).Totals, tot.Callback()); err != nil {
		return nil, err
	}
	return tot.Get(m)
}

// feedAll returns the feed of runStep that makes every branch insert.
func feedAll(m *tmain, g group.Proxy[table], f feedMsg) func() error {
	return func() error { return chare.Send(m, g, (*table).Feed, f) }
}

// expected sums what the feeders send, computed the same way.
func expected(pes, items int, seed int64) (int64, int64) {
	var n, sum int64
	for pe := 0; pe < pes; pe++ {
		r := rand.New(rand.NewSource(seed + int64(pe)))
		for i := 0; i < items; i++ {
			sum += int64(r.Intn(1000))
			r.Intn(pes)
			n++
		}
	}
	return n, sum
}

// claim T12, claim T26
//
// TestT12_CompletionDetectionDeliversEveryItem: a histogram over 1-, 2-
// and 3-D grids, ended by completion detection. The last buffers of each
// PE are partly full: Done and the periodic flush send them at the end of
// the step (claim T26), so every item arrives before Finished.
func TestT12_CompletionDetectionDeliversEveryItem(t *testing.T) {
	cases := []struct {
		pes  int
		dims []int
	}{{4, []int{4}}, {4, []int{2, 2}}, {8, []int{2, 2, 2}}, {6, []int{3, 2}}}
	for _, c := range cases {
		t.Run(fmt.Sprint(c.dims), func(t *testing.T) {
			const items = 3000
			var got []int64
			code, err := chare.Run(chare.Config{PEs: c.pes, Timeout: 30 * time.Second}, func(m *tmain, _ []string) {
				g, err := group.New[table](m)
				if err != nil {
					m.Abort(err)
					return
				}
				s, err := tram.New(m, g, (*table).Add, tram.Options{Dims: c.dims, Sizing: tram.Sizing{BufferItems: 64}, FlushPeriod: 2 * time.Millisecond})
				if err != nil {
					m.Abort(err)
					return
				}
				got, err = runStep(m, s, g, tram.Step{Mode: tram.Completion, Producers: c.pes}, feedAll(m, g, feedMsg{S: s, Items: items, Seed: 7}))
				if err != nil {
					m.Abort(err)
					return
				}
				m.Exit(0)
			})
			require.NoError(t, err)
			require.Equal(t, 0, code)
			n, sum := expected(c.pes, items, 7)
			require.Equal(t, []int64{n, sum}, got, "items and their sum when completion fired")
		})
	}
}

func TestInsertOutsideAStepIsAnError(t *testing.T) {
	code, err := chare.Run(chare.Config{PEs: 2, Timeout: 30 * time.Second}, func(m *tmain, _ []string) {
		g, _ := group.New[table](m)
		s, err := tram.New(m, g, (*table).Add, tram.Options{Dims: []int{2}})
		if err != nil {
			m.Abort(err)
			return
		}
		if err := s.Insert(m, 1, 1); err == nil {
			m.Exit(3)
			return
		}
		_, err = tram.New(m, g, (*table).Add, tram.Options{Dims: []int{3}})
		if err == nil {
			m.Exit(4)
			return
		}
		m.Exit(0)
	})
	require.NoError(t, err)
	require.Equal(t, 0, code)
}

// claim T26
//
// TestT26_CompletionOnAGridDrainsWithoutThePeriod: on a grid of several
// dimensions, items that reach an intermediate PE after its Done would
// wait in its buffers for the periodic flush. Once every producer is done
// (the detector's all-produced), each branch sends what it holds and
// what later messages leave in its buffers, so the step ends although the
// period here is an hour (without the drain, it would end at the job's
// timeout, a failure). Two steps: the second's drain is its own.
func TestT26_CompletionOnAGridDrainsWithoutThePeriod(t *testing.T) {
	cases := []struct {
		pes  int
		dims []int
	}{{4, []int{2, 2}}, {8, []int{2, 2, 2}}, {6, []int{3, 2}}}
	for _, c := range cases {
		t.Run(fmt.Sprint(c.dims), func(t *testing.T) {
			const items, steps = 3000, 2
			var got [steps][]int64
			code, err := chare.Run(chare.Config{PEs: c.pes, Timeout: 20 * time.Second}, func(m *tmain, _ []string) {
				g, err := group.New[table](m)
				if err != nil {
					m.Abort(err)
					return
				}
				s, err := tram.New(m, g, (*table).Add, tram.Options{Dims: c.dims, Sizing: tram.Sizing{BufferItems: 64}, FlushPeriod: time.Hour})
				if err != nil {
					m.Abort(err)
					return
				}
				for i := range steps {
					got[i], err = runStep(m, s, g, tram.Step{Mode: tram.Completion, Producers: c.pes}, feedAll(m, g, feedMsg{S: s, Items: items, Seed: int64(7 + i)}))
					if err != nil {
						m.Abort(err)
						return
					}
				}
				m.Exit(0)
			})
			require.NoError(t, err)
			require.Equal(t, 0, code)
			var n, sum int64
			for i := range steps {
				ni, si := expected(c.pes, items, int64(7+i))
				n, sum = n+ni, sum+si
				require.Equal(t, []int64{n, sum}, got[i], "step %d: items and their sum when completion fired", i+1)
			}
		})
	}
}
