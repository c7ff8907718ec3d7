package tram_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/group"
	"github.com/charmgo/charm/tram"
	"github.com/charmgo/charm/tune"
	"github.com/charmgo/charm/tune/tunedebug"
)

// TestTuneMovesTheBufferAndDeliversEveryItem: with Options.Tune, steps of
// a histogram (completion and staged, on 1- and 2-D grids) run with the
// buffer sizes the search proposes — the size moves from its start, by
// powers of two in the first tries (E06), each try's steps alternating
// with the start's — and every step's items arrive
// exactly once: the totals grow by exactly each step's items and sum.
// The steps after the first make no function callback (one a step was
// kept until the job ended: a leak in a long run).
func TestTuneMovesTheBufferAndDeliversEveryItem(t *testing.T) {
	cases := []struct {
		dims []int
		mode tram.Mode
	}{{[]int{4}, tram.Completion}, {[]int{2, 2}, tram.Completion}, {[]int{2, 2}, tram.Staged}}
	for _, c := range cases {
		t.Run(fmt.Sprint(c.dims, c.mode), func(t *testing.T) {
			const pes, steps, items = 4, 16, 2000
			var traj []tune.Point
			var sizes []int
			var counts, sums []int64
			dir := t.TempDir()
			code, err := chare.Run(chare.Config{PEs: pes, Timeout: 60 * time.Second, Flags: map[string]string{tunedebug.Flag: dir}}, func(m *tmain, _ []string) {
				g, err := group.New[table](m)
				if err != nil {
					m.Abort(err)
					return
				}
				s, err := tram.New(m, g, (*table).Add, tram.Options{Dims: c.dims, Sizing: tram.Sizing{BufferItems: 16}, FlushPeriod: time.Millisecond, Tune: true})
				if err != nil {
					m.Abort(err)
					return
				}
				if _, _, ok := s.Tuned(m); ok {
					m.Abort(fmt.Errorf("a tuned size before the first step"))
					return
				}
				var callbacks int
				for k := 0; k < steps; k++ {
					if k == 1 {
						callbacks = chare.NumFuncCallbacks()
					}
					st := tram.Step{Mode: c.mode, Producers: pes}
					if c.mode == tram.Staged {
						st.Producers = 1
					}
					tot, err := runStep(m, s, g, st, feedAll(m, g, feedMsg{S: s, Items: items, Seed: int64(k)}))
					if err != nil {
						m.Abort(err)
						return
					}
					n, _, ok := s.Tuned(m)
					if !ok {
						m.Abort(fmt.Errorf("no tuned size after step %d", k))
						return
					}
					sizes = append(sizes, n)
					counts, sums = append(counts, tot[0]), append(sums, tot[1])
				}
				traj = s.Tuning(m)
				if n := chare.NumFuncCallbacks(); n != callbacks {
					m.Abort(fmt.Errorf("%d function callbacks made after the first tuned step, one a step leaks", n-callbacks))
					return
				}
				m.Exit(0)
			})
			require.NoError(t, err)
			require.Equal(t, 0, code)
			var wantN, wantSum int64
			for k := 0; k < steps; k++ {
				n, sum := expected(pes, items, int64(k))
				wantN, wantSum = wantN+n, wantSum+sum
				require.Equal(t, wantN, counts[k], "items after step %d", k)
				require.Equal(t, wantSum, sums[k], "sum after step %d", k)
			}
			require.Len(t, traj, steps)
			// The first n = 4 evaluations are at the start, the next 8
			// alternate between it and twice the size (the first vector, 1
			// in log2, points right; tune.Options.Paired).
			require.Equal(t, []int{16, 16, 16, 16, 16, 32, 16, 32, 16, 32, 16, 32}, sizes[:12])
			// Then ×4 if 32 was better, or back below 16 if it was worse: the
			// search goes on to a third size either way.
			distinct := map[float64]bool{}
			for k, p := range traj {
				require.EqualValues(t, sizes[k], p.Value, "evaluation %d", k)
				require.Greater(t, p.Cost, 0.0)
				distinct[p.Value] = true
			}
			require.GreaterOrEqual(t, len(distinct), 3, "the size moves: %v", sizes)
			// -tunedebug wrote the starting PE's trajectory: a header and a
			// row per evaluation, and its chart.
			csvs, err := filepath.Glob(filepath.Join(dir, "tram-*-pe0.csv"))
			require.NoError(t, err)
			require.Len(t, csvs, 1, "files in %s", dir)
			data, err := os.ReadFile(csvs[0])
			require.NoError(t, err)
			require.Len(t, strings.Split(strings.TrimSpace(string(data)), "\n"), steps+1)
			require.FileExists(t, strings.TrimSuffix(csvs[0], ".csv")+".svg")
		})
	}
}

// TestTuneLeavesQuiescenceStepsAlone: a quiescence step is not scored
// (it has no Finished), and its items arrive.
func TestTuneLeavesQuiescenceStepsAlone(t *testing.T) {
	var ok bool
	var got []int64
	code, err := chare.Run(chare.Config{PEs: 2, Timeout: 30 * time.Second}, func(m *tmain, _ []string) {
		g, _ := group.New[table](m)
		s, err := tram.New(m, g, (*table).Add, tram.Options{FlushPeriod: time.Millisecond, Tune: true})
		if err != nil {
			m.Abort(err)
			return
		}
		started := chare.NewFuture[any](m)
		if err := s.Start(m, tram.Step{Mode: tram.Quiescence, Started: started.Callback()}); err != nil {
			m.Abort(err)
			return
		}
		if err := chare.WaitAll(m, started); err != nil {
			m.Abort(err)
			return
		}
		q := chare.NewFuture[any](m)
		_ = chare.Send(m, g, (*table).Feed, feedMsg{S: s, Items: 500, Seed: 3, NoDone: true})
		m.DetectQuiescence(q.Callback())
		if err := chare.WaitAll(m, q); err != nil {
			m.Abort(err)
			return
		}
		_, _, ok = s.Tuned(m)
		tot := chare.NewFuture[[]int64](m)
		_ = chare.Send(m, g, (*table).Totals, tot.Callback())
		got, _ = tot.Get(m)
		m.Exit(0)
	})
	require.NoError(t, err)
	require.Equal(t, 0, code)
	require.False(t, ok, "a quiescence step is not tuned")
	n, sum := expected(2, 500, 3)
	require.Equal(t, []int64{n, sum}, got)
}

// TestTuneBounds: TuneMin and TuneMax bound the sizes the search tries;
// equal bounds hold the size (the control that measures the tuning's own
// cost), while every step is still timed and reported; bounds out of
// order or range are refused with an error that names them.
func TestTuneBounds(t *testing.T) {
	cases := []struct {
		name     string
		lo, hi   int
		min, max int
		err      string
	}{
		{name: "held", lo: 64, hi: 64, min: 64, max: 64},
		{name: "bounded", lo: 16, hi: 48, min: 16, max: 48},
		{name: "reversed", lo: 64, hi: 32, err: "TuneMin=64, TuneMax=32"},
		{name: "too large", hi: 1 << 20, err: "TuneMin=0, TuneMax=1048576"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			const pes, steps, items = 2, 12, 500
			var sizes []int
			var traj []tune.Point
			var newErr error
			code, err := chare.Run(chare.Config{PEs: pes, Timeout: 60 * time.Second}, func(m *tmain, _ []string) {
				g, _ := group.New[table](m)
				s, err := tram.New(m, g, (*table).Add, tram.Options{Sizing: tram.Sizing{BufferItems: 32}, Tune: true, TuneMin: c.lo, TuneMax: c.hi})
				if err != nil {
					newErr = err
					m.Exit(0)
					return
				}
				for k := 0; k < steps; k++ {
					if _, err := runStep(m, s, g, tram.Step{Mode: tram.Completion, Producers: pes}, feedAll(m, g, feedMsg{S: s, Items: items, Seed: int64(k)})); err != nil {
						m.Abort(err)
						return
					}
					n, _, _ := s.Tuned(m)
					sizes = append(sizes, n)
				}
				traj = s.Tuning(m)
				m.Exit(0)
			})
			require.NoError(t, err)
			require.Equal(t, 0, code)
			if c.err != "" {
				require.ErrorContains(t, newErr, c.err)
				return
			}
			require.NoError(t, newErr)
			require.Len(t, traj, steps)
			for k, n := range sizes {
				require.GreaterOrEqual(t, n, c.min, "step %d", k)
				require.LessOrEqual(t, n, c.max, "step %d", k)
				require.EqualValues(t, n, traj[k].Value, "step %d", k)
				require.Greater(t, traj[k].Cost, 0.0, "step %d is timed", k)
			}
		})
	}
}
