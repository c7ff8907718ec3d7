package tram_test

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/group"
	"github.com/charmgo/charm/internal/jobtest"
	"github.com/charmgo/charm/tram"
)

// twoProcesses runs a job as two processes: this test binary launches a
// copy of itself, running just this test, as node 1.
func twoProcesses(t *testing.T, start func(*tmain, []string)) (int, error) {
	t.Helper()
	return jobtest.Run(t, chare.Config{PEs: 4, Nodes: 2, Timeout: 60 * time.Second}, start)
}

// TestStreamerAcrossProcesses: a completion step on a 2 × 2 grid whose
// second dimension stays inside each process; items cross the processes
// as msgpack in TRAM's batches.
func TestStreamerAcrossProcesses(t *testing.T) {
	const items = 2000
	var got []int64
	code, err := twoProcesses(t, func(m *tmain, _ []string) {
		g, _ := group.New[table](m)
		s, err := tram.New(m, g, (*table).Add, tram.Options{Sizing: tram.Sizing{BufferItems: 64}, FlushPeriod: time.Millisecond})
		if err != nil {
			m.Abort(err)
			return
		}
		if got, err = runStep(m, s, g, tram.Step{Mode: tram.Completion, Producers: 4}, feedAll(m, g, feedMsg{S: s, Items: items, Seed: 11})); err != nil {
			m.Abort(err)
			return
		}
		m.Exit(0)
	})
	require.NoError(t, err)
	require.Equal(t, 0, code)
	n, sum := expected(4, items, 11)
	require.Equal(t, []int64{n, sum}, got)
}

// TestDelegateAcrossProcesses: the delegated proxy the cells get in a
// message stays delegated in node 1: the sends of the elements of both
// processes go over the TRAM delegate, and every message arrives once.
func TestDelegateAcrossProcesses(t *testing.T) {
	const n = 100
	var r chatResult
	code, err := twoProcesses(t, chat(nil, n, false, &r))
	require.NoError(t, err)
	require.Equal(t, 0, code)
	require.Equal(t, wantChat(n), r.totals)
	require.EqualValues(t, 64*n, r.stats.Items)
	// 32 elements in each process (block map: PEs 0 and 1, 2 and 3).
	require.Equal(t, []int64{32 * n, 32 * n}, []int64{r.report.Process[0].Items, r.report.Process[1].Items})
}

type tryStartMsg struct {
	S      tram.Streamer[table, uint64]
	Mode   tram.Mode
	Result chare.Callback // gets the error's text, "" if Start accepted the step
}

// TryStart starts a step of m.S from this PE and reports what Start said.
func (t *table) TryStart(m tryStartMsg) {
	res := ""
	if err := m.S.Start(t, tram.Step{Mode: m.Mode, Producers: t.NumPEs()}); err != nil {
		res = err.Error()
	}
	_ = m.Result.Send(t, res)
}

// TestT25_EveryProcessRefusesAStepThatNeedsFlushing: a step that needs
// periodic flushing on a streamer without it is refused in a process that
// did not create the streamer as in the one that did (issue 14, item 4).
func TestT25_EveryProcessRefusesAStepThatNeedsFlushing(t *testing.T) {
	var said []string
	code, err := twoProcesses(t, func(m *tmain, _ []string) {
		g, _ := group.New[table](m)
		s, err := tram.New(m, g, (*table).Add, tram.Options{Dims: []int{2, 2}})
		if err != nil {
			m.Abort(err)
			return
		}
		for _, mode := range []tram.Mode{tram.Completion, tram.Quiescence} {
			for _, pe := range []int{0, 3} { // node 0, node 1
				f := chare.NewFuture[string](m)
				if err := chare.Send(m, g.At(pe), (*table).TryStart, tryStartMsg{S: s, Mode: mode, Result: f.Callback()}); err != nil {
					m.Abort(err)
					return
				}
				r, err := f.Get(m)
				if err != nil {
					m.Abort(err)
					return
				}
				said = append(said, fmt.Sprintf("%v on PE %d: %s", mode, pe, r))
			}
		}
		m.Exit(0)
	})
	require.NoError(t, err)
	require.Equal(t, 0, code)
	require.Len(t, said, 4)
	for _, s := range said {
		require.Contains(t, s, "needs periodic flushing (Options.FlushPeriod, claim T25)")
	}
}

type bufferingMsg struct {
	S      tram.Streamer[table, uint64]
	Result chare.Callback // gets [PE, items per peer, flush period in ns]
}

// Buffering reports the buffer size and flush period in force on this PE.
func (t *table) Buffering(m bufferingMsg) {
	items, period, ok := m.S.Buffering(t)
	if !ok {
		items = -1
	}
	_ = m.Result.Send(t, []int64{int64(t.PE()), int64(items), int64(period)})
}

// tunedSeen is what a tuned step left: the size and period the tuner
// chose, and what each PE has in force.
type tunedSeen struct {
	n    int
	p    time.Duration
	onPE [][]int64
}

// seenAfterStep reads, after step k, the size and period the tuner chose
// and asks each PE for those in force there ([PE, items per peer, period
// in ns] each).
func seenAfterStep(m *tmain, g group.Proxy[table], s tram.Streamer[table, uint64], pes, k int) (tunedSeen, error) {
	n, p, ok := s.Tuned(m)
	if !ok {
		return tunedSeen{}, fmt.Errorf("no tuned size after step %d", k)
	}
	sn := tunedSeen{n: n, p: p}
	for pe := 0; pe < pes; pe++ {
		f := chare.NewFuture[[]int64](m)
		if err := chare.Send(m, g.At(pe), (*table).Buffering, bufferingMsg{S: s, Result: f.Callback()}); err != nil {
			return tunedSeen{}, err
		}
		r, err := f.Get(m)
		if err != nil {
			return tunedSeen{}, err
		}
		sn.onPE = append(sn.onPE, r)
	}
	return sn, nil
}

// TestTuneAcrossProcesses: Options.Tune on a 2 × 2 grid over two
// processes (PEs 0 and 1 in node 0, 2 and 3 in node 1). Every step's
// items arrive exactly once; after each step, every PE of both processes
// has the buffer size and flush period that the tuner on PE 0 chose for
// it; the size moves as the search goes (E06: the first try doubles it,
// its steps alternating with the start's),
// and the flush period scales with it.
func TestTuneAcrossProcesses(t *testing.T) {
	const pes, steps, items, start = 4, 16, 3000, 32
	period := time.Millisecond
	var per []tunedSeen
	var counts, sums []int64
	code, err := twoProcesses(t, func(m *tmain, _ []string) {
		fail := func(err error) { m.Abort(err) }
		g, err := group.New[table](m)
		if err != nil {
			fail(err)
			return
		}
		s, err := tram.New(m, g, (*table).Add, tram.Options{Dims: []int{2, 2}, Sizing: tram.Sizing{BufferItems: start}, FlushPeriod: period, Tune: true})
		if err != nil {
			fail(err)
			return
		}
		for k := 0; k < steps; k++ {
			tot, err := runStep(m, s, g, tram.Step{Mode: tram.Completion, Producers: pes}, feedAll(m, g, feedMsg{S: s, Items: items, Seed: int64(100 + k)}))
			if err != nil {
				fail(fmt.Errorf("step %d: %w", k, err))
				return
			}
			counts, sums = append(counts, tot[0]), append(sums, tot[1])
			sn, err := seenAfterStep(m, g, s, pes, k)
			if err != nil {
				fail(err)
				return
			}
			per = append(per, sn)
		}
		m.Exit(0)
	})
	require.NoError(t, err)
	require.Equal(t, 0, code)
	require.Len(t, per, steps)
	var wantN, wantSum int64
	sizes := map[int]bool{}
	for k, sn := range per {
		n, sum := expected(pes, items, int64(100+k))
		wantN, wantSum = wantN+n, wantSum+sum
		require.Equal(t, wantN, counts[k], "items after step %d", k)
		require.Equal(t, wantSum, sums[k], "sum after step %d", k)
		// The period scales with the buffer from its configured pair.
		require.Equal(t, time.Duration(float64(period)*float64(sn.n)/start), sn.p, "step %d", k)
		for pe, r := range sn.onPE {
			require.Equal(t, []int64{int64(pe), int64(sn.n), int64(sn.p)}, r, "PE %d after step %d (tuned %d, %v)", pe, k, sn.n, sn.p)
		}
		sizes[sn.n] = true
	}
	// n = 4 evaluations at the start, then 4 at twice the size, each
	// after one at the start (tune.Options.Paired).
	for k := 0; k < 12; k++ {
		want := start
		if k >= 4 && k%2 == 1 {
			want = 2 * start
		}
		require.Equal(t, want, per[k].n, "step %d", k)
	}
	require.GreaterOrEqual(t, len(sizes), 3, "the size moves on: %v", sizes)
}

// TestTunedPeriodAcrossProcesses: once the size search has settled
// (bounds of 16 and 32 items let it settle within a few tries), the flush
// period's factor is tried too, and after every step each PE of both
// processes has the size and period the tuner on PE 0 chose, the period's
// factor included.
func TestTunedPeriodAcrossProcesses(t *testing.T) {
	const pes, steps, items, start = 4, 100, 200, 16
	period := time.Millisecond
	var per []tunedSeen
	code, err := twoProcesses(t, func(m *tmain, _ []string) {
		g, err := group.New[table](m)
		if err != nil {
			m.Abort(err)
			return
		}
		s, err := tram.New(m, g, (*table).Add, tram.Options{Dims: []int{2, 2}, Sizing: tram.Sizing{BufferItems: start}, FlushPeriod: period,
			Tune: true, TuneMin: start, TuneMax: 2 * start})
		if err != nil {
			m.Abort(err)
			return
		}
		for k := 0; k < steps; k++ {
			if _, err := runStep(m, s, g, tram.Step{Mode: tram.Completion, Producers: pes}, feedAll(m, g, feedMsg{S: s, Items: items, Seed: int64(k)})); err != nil {
				m.Abort(fmt.Errorf("step %d: %w", k, err))
				return
			}
			sn, err := seenAfterStep(m, g, s, pes, k)
			if err != nil {
				m.Abort(err)
				return
			}
			per = append(per, sn)
		}
		m.Exit(0)
	})
	require.NoError(t, err)
	require.Equal(t, 0, code)
	require.Len(t, per, steps)
	moved := 0
	for k, sn := range per {
		for pe, r := range sn.onPE {
			require.Equal(t, []int64{int64(pe), int64(sn.n), int64(sn.p)}, r, "PE %d after step %d", pe, k)
		}
		// The factor on the period scaled to the size: a power of √2
		// within 1/8 and 8 (log2 steps of 1, then ½).
		f := float64(sn.p) / (float64(period) * float64(sn.n) / start)
		half := math.Log2(f) * 2
		require.InDelta(t, math.Round(half), half, 1e-3, "step %d: factor %v", k, f) // a period is whole ns
		require.LessOrEqual(t, math.Abs(half), 6.0, "step %d: factor %v", k, f)
		if math.Round(half) != 0 {
			moved++
		}
	}
	require.Positive(t, moved, "the period's factor was tried within %d steps", steps)
}
