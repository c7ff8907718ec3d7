package fmm

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/group"
	"github.com/charmgo/charm/overlap"
	"github.com/charmgo/charm/tram"
)

// TestPlanInteractionLists: far is symmetric, never a neighbour, always a
// child of a neighbour of the parent; a full level's interior cell has the
// 6³ − 3³ = 189 far cells of the textbook; every cell has one owner.
func TestPlanInteractionLists(t *testing.T) {
	p, err := NewPlan(Size{Name: "full", MinLevel: 2, MaxLevel: 3, Shell: 100}, 3)
	require.NoError(t, err)
	require.Len(t, p.Cells, 64+512)
	owned := 0
	for _, l := range p.Local {
		owned += len(l)
	}
	require.Equal(t, len(p.Cells), owned)
	most := 0
	for i, c := range p.Cells {
		most = max(most, len(c.Far))
		for _, j := range c.Far {
			f := p.Cells[j]
			require.Equal(t, c.Level, f.Level)
			require.Greater(t, cheb(c.X-f.X, c.Y-f.Y, c.Z-f.Z), 1, "cell %d: %d is a neighbour", i, j)
			require.LessOrEqual(t, cheb(c.X/2-f.X/2, c.Y/2-f.Y/2, c.Z/2-f.Z/2), 1, "cell %d: %d's parent is not near", i, j)
			require.Contains(t, f.Far, int32(i), "far is symmetric")
		}
	}
	require.Equal(t, 189, most)
	_, err = NewPlan(Size{MinLevel: 1, MaxLevel: 3}, 2)
	require.Error(t, err)
	_, err = SizeNamed("huge")
	require.ErrorContains(t, err, `"huge"`)
}

type tmain struct{ chare.Chare[tmain] }

func init() { chare.Register[tmain]() }

// claim E04, claim E05
//
// TestE04_OverlapLoopOverTRAM: on 4 PEs, each iteration runs the overlap
// loop on every PE with TRAM carrying the far cells' data; every iteration
// is checked against the sequential computation (so every datum was
// treated exactly once), the tuned p moves from 1 (E05: the search is over
// the computations between tests) and the trajectory has one point per
// iteration.
func TestE04_OverlapLoopOverTRAM(t *testing.T) {
	const iters = 10
	var wrong []int
	var ps []float64
	var traj int
	code, err := chare.Run(chare.Config{PEs: 4, Timeout: 60 * time.Second}, func(m *tmain, _ []string) {
		g, s, err := New(m, Sizes["small"], tram.Options{})
		if err != nil {
			m.Abort(err)
			return
		}
		r := Runner{Ctx: m, G: g, S: s, Size: Sizes["small"]}
		for it := 0; it < iters; it++ {
			mode := Tuned
			if it == iters-1 {
				mode = Static
			}
			res, err := r.Run(IterMsg{It: it, Mode: mode, P: 3.5, Reset: it == 0, Work: 1 + it%2})
			if err != nil {
				m.Abort(err)
				return
			}
			ps = append(ps, res.P)
			_, w, _, err := r.Check(it)
			if err != nil {
				m.Abort(err)
				return
			}
			wrong = append(wrong, w)
		}
		traj = len(group0(m, r).Tuning())
		m.Exit(0)
	})
	require.NoError(t, err)
	require.Equal(t, 0, code)
	require.Equal(t, make([]int, iters), wrong, "cells wrong per iteration")
	require.Equal(t, 1.0, ps[0], "the search starts at p = 1")
	require.Equal(t, 7.0, ps[4], "then tries p = 7, log2(1+p) two higher (n = 4 evaluations each)")
	require.Equal(t, 3.5, ps[iters-1], "a static iteration uses the p given")
	require.Equal(t, iters-1, traj, "one point per tuned iteration")
}

func group0(m *tmain, r Runner) *Part { return group.LocalBranch(m, r.G) }

// ExpectMore makes this part expect n more items per iteration than
// anyone sends: a program bug that leaves data missing (a test's entry
// method).
func (p *Part) ExpectMore(n int) int {
	p.expect += n
	return p.expect
}

// TestMissingDataStallsLoudly: a part that waits for an item nobody sends
// naps (chare.Nap) once its computations are done; the loop
// then fails after its stall bound with an error naming the iteration,
// the PE and the items expected and arrived, instead of hanging until the
// job's deadline — with a static p and under the tuner.
// missingItem sets up the small problem with PE pe expecting one item
// that nobody sends, and returns its Runner and how many items pe now
// expects (false: the job was aborted).
func missingItem(m *tmain, pe int) (Runner, int, bool) {
	g, s, err := New(m, Sizes["small"], tram.Options{})
	if err != nil {
		m.Abort(err)
		return Runner{}, 0, false
	}
	f, err := chare.Call(m, g.At(pe), (*Part).ExpectMore, 1)
	n := 0
	if err == nil {
		n, err = f.Get(m)
	}
	if err != nil {
		m.Abort(err)
		return Runner{}, 0, false
	}
	return Runner{Ctx: m, G: g, S: s, Size: Sizes["small"]}, n, true
}

func TestMissingDataStallsLoudly(t *testing.T) {
	for _, mode := range []Mode{Static, Tuned} {
		t.Run(map[Mode]string{Static: "static", Tuned: "tuned"}[mode], func(t *testing.T) {
			const deadline = 20 * time.Second
			t0 := time.Now()
			expect := 0
			_, err := chare.Run(chare.Config{PEs: 4, Timeout: deadline}, func(m *tmain, _ []string) {
				r, n, ok := missingItem(m, 2)
				if !ok {
					return
				}
				expect = n
				_, err := r.Run(IterMsg{It: 0, Mode: mode, P: 1, Reset: true, Stall: 300 * time.Millisecond})
				m.Abort(fmt.Errorf("the iteration ended (%v) with an item missing", err))
			})
			require.Error(t, err)
			t.Log(err)
			require.Less(t, time.Since(t0), deadline/2, "stopped by the stall bound, not the job's deadline: %v", err)
			require.ErrorContains(t, err, "fmm: iteration 0 on PE 2")
			require.ErrorContains(t, err, "overlap: stalled on PE 2")
			require.ErrorContains(t, err, fmt.Sprintf("%d of %d items arrived", expect-1, expect))
			require.ErrorContains(t, err, "is data missing")
			if mode == Tuned {
				require.ErrorContains(t, err, "the tuner's run 1 (p = 1)")
			}
		})
	}
}

// TestRunnerTimeoutNamesWhatIsMissing: a part whose loop never ends (an
// item missing and no stall bound) leaves the Runner without the
// iteration's results: Run returns, after its Timeout, an error that names
// the iteration and what did not come, instead of waiting for ever (it
// used to wait without a deadline).
func TestRunnerTimeoutNamesWhatIsMissing(t *testing.T) {
	// Long enough for the step to start on a loaded machine (else the
	// error names the start, not the results).
	const timeout = time.Second
	var runErr error
	var took time.Duration
	code, err := chare.Run(chare.Config{PEs: 4, Timeout: 20 * time.Second}, func(m *tmain, _ []string) {
		r, _, ok := missingItem(m, 1)
		if !ok {
			return
		}
		r.Timeout = timeout
		t0 := time.Now()
		_, runErr = r.Run(IterMsg{It: 3, Mode: Static, P: 1, Stall: -1})
		took = time.Since(t0)
		m.Exit(0)
	})
	require.NoError(t, err)
	require.Equal(t, 0, code)
	require.ErrorIs(t, runErr, chare.ErrDeadlineExceeded)
	require.ErrorContains(t, runErr, "fmm: iteration 3: the parts' results (one per PE, summed) did not come by")
	require.ErrorContains(t, runErr, "(Runner.Timeout)")
	require.GreaterOrEqual(t, took, timeout)
	require.Less(t, took, 10*timeout)
}

// TestRunnerRunsAgainAfterTimeout: after a Run that timed out — before
// the TRAM step started (a deadline already past), or while a part's
// loop waited for an item that comes late — the next Run brings the
// late iteration to its end and then runs its own: both are checked
// right, and PE 0 holds no future of theirs afterwards. Runner used to
// leave the late iteration's futures in PE 0's table and its step open,
// and started the next step over it.
func TestRunnerRunsAgainAfterTimeout(t *testing.T) {
	for _, c := range []struct {
		name    string
		timeout time.Duration
		missing bool // PE 1 expects an item nobody sends until after the timeout
		want    string
	}{
		{"before the step started", time.Nanosecond, false, "iteration 0: the start of TRAM's step did not come"},
		// Long enough for the step to start on a loaded machine.
		{"during the loop", time.Second, true, "iteration 0: the parts' results (one per PE, summed) did not come"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var first error
			var wrong []int
			var before, after int
			code, err := chare.Run(chare.Config{PEs: 4, Timeout: 30 * time.Second}, func(m *tmain, _ []string) {
				r, _, ok := missingItem(m, 1)
				if !ok {
					return
				}
				if !c.missing { // take the extra item back at once
					if err := expectMore(m, r, 1, -1); err != nil {
						m.Abort(err)
						return
					}
				}
				before = chare.PEOf(m).PendingFutures()
				r.Timeout = c.timeout
				_, first = r.Run(IterMsg{It: 0, Mode: Static, P: 1, Stall: -1})
				if c.missing { // the item "arrives": PE 1's loop can end
					if err := expectMore(m, r, 1, -1); err != nil {
						m.Abort(err)
						return
					}
				}
				r.Timeout = 20 * time.Second
				for it := 1; it <= 2; it++ {
					_, w, err := runChecked(&r, IterMsg{It: it, Mode: Static, P: 1})
					if err != nil {
						m.Abort(err)
						return
					}
					wrong = append(wrong, w)
				}
				after = chare.PEOf(m).PendingFutures()
				m.Exit(0)
			})
			require.NoError(t, err)
			require.Equal(t, 0, code)
			require.ErrorIs(t, first, chare.ErrDeadlineExceeded)
			require.ErrorContains(t, first, c.want)
			require.Equal(t, []int{0, 0}, wrong, "cells wrong per iteration after the timeout")
			require.Equal(t, before, after, "futures pending on PE 0 before the timed-out Run and after the next ones")
		})
	}
}

// TestRunnerRefusesWhileLateIterationRuns: while the iteration that
// timed out still cannot end (an item missing for good), the next Run
// starts nothing and fails, naming that iteration.
func TestRunnerRefusesWhileLateIterationRuns(t *testing.T) {
	var errs []error
	code, err := chare.Run(chare.Config{PEs: 4, Timeout: 20 * time.Second}, func(m *tmain, _ []string) {
		r, _, ok := missingItem(m, 2)
		if !ok {
			return
		}
		r.Timeout = time.Second // long enough for the step to start on a loaded machine
		for it := 5; it <= 6; it++ {
			_, err := r.Run(IterMsg{It: it, Mode: Static, P: 1, Stall: -1})
			errs = append(errs, err)
		}
		_, _, _, err := r.Check(5)
		errs = append(errs, err)
		m.Exit(0)
	})
	require.NoError(t, err)
	require.Equal(t, 0, code)
	require.Len(t, errs, 3)
	for _, e := range errs {
		require.ErrorIs(t, e, chare.ErrDeadlineExceeded)
	}
	require.ErrorContains(t, errs[0], "fmm: iteration 5: the parts' results")
	require.ErrorContains(t, errs[1], "fmm: iteration 6 not started: an earlier iteration (5) that timed out has still not ended")
	require.ErrorContains(t, errs[2], "fmm: the check of iteration 5 not started: an earlier iteration (5)")
}

// expectMore calls ExpectMore(n) on PE pe's part.
func expectMore(m *tmain, r Runner, pe, n int) error {
	f, err := chare.Call(m, r.G.At(pe), (*Part).ExpectMore, n)
	if err == nil {
		_, err = f.Get(m)
	}
	return err
}

// TestSmallPNapsInsteadOfSpinning: with p = 0 (no transfer while data
// are due) a part naps after each test that found nothing to treat or
// push, until the next message (an item batch, an acknowledgement); with
// 0 < p < 1 the turns with no transfer due nap too, shortly (ended by the
// next message, or 50 µs doubling to 1 ms), instead of spinning on tests.
// So the tests of turns that moved nothing are at most one per shortest
// nap of the loop's time (a spinning loop tests every few microseconds),
// and the results stay right. (Timers of 50 µs fire late when every PE
// is parked, and on time while a PE looks for messages before it parks:
// the count at p = 0.5 moves between a few and about a hundred with that,
// within the bound.)
func TestSmallPNapsInsteadOfSpinning(t *testing.T) {
	const iters = 3
	ps := []float64{0, 0.1, 0.5}
	tests := map[float64][]float64{}
	loop := map[float64][]float64{}
	var wrong []int
	code, err := chare.Run(chare.Config{PEs: 4, Timeout: 60 * time.Second}, func(m *tmain, _ []string) {
		g, s, err := New(m, Sizes["small"], tram.Options{})
		if err != nil {
			m.Abort(err)
			return
		}
		r := Runner{Ctx: m, G: g, S: s, Size: Sizes["small"]}
		it := 0
		for _, p := range ps {
			for range iters {
				res, w, err := runChecked(&r, IterMsg{It: it, Mode: Static, P: p})
				if err != nil {
					m.Abort(err)
					return
				}
				// The tests of turns that moved nothing: a loop that spins
				// would make thousands.
				tests[p], loop[p] = append(tests[p], res.Tests-res.Moves), append(loop[p], res.Loop)
				wrong = append(wrong, w)
				it++
			}
		}
		m.Exit(0)
	})
	require.NoError(t, err)
	require.Equal(t, 0, code)
	require.Equal(t, make([]int, iters*len(ps)), wrong, "cells wrong per iteration")
	t.Logf("mean tests per PE without a move, by p: %v; loop seconds: %v", tests, loop)
	// A loop that naps tests again at most once per shortest nap (50 µs,
	// overlap's napMin) while nothing moves; one that spins would test
	// every microsecond or so.
	const shortestNap = 50e-6
	for _, p := range ps {
		for i, n := range tests[p] {
			require.Less(t, n, loop[p][i]/shortestNap, "mean tests per PE without a move at p = %v (%v), loops of %v s", p, tests[p], loop[p])
		}
	}
}

// TestRunnerDeadline: a Runner's waits end after its Timeout, by default
// twice the longer of overlap.DefaultStall and the iteration's Stall (so
// that a stalled loop reports itself first); a negative Timeout is none.
func TestRunnerDeadline(t *testing.T) {
	for _, c := range []struct {
		name    string
		timeout time.Duration
		stall   time.Duration
		want    time.Duration // 0: none
	}{
		{"default", 0, 0, 2 * overlap.DefaultStall},
		{"default, a short stall", 0, time.Second, 2 * overlap.DefaultStall},
		{"default, a long stall", 0, 5 * time.Minute, 10 * time.Minute},
		{"default, no stall bound", 0, -1, 2 * overlap.DefaultStall},
		{"given", time.Second, 5 * time.Minute, time.Second},
		{"none", -1, 0, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			t0 := time.Now()
			d := Runner{Timeout: c.timeout}.deadline(c.stall)
			if c.want == 0 {
				require.True(t, d.IsZero())
				return
			}
			require.WithinRange(t, d, t0.Add(c.want), time.Now().Add(c.want))
		})
	}
}

// runChecked runs iteration m.It and checks it: its result and how many
// values came out wrong.
func runChecked(r *Runner, m IterMsg) (Iteration, int, error) {
	res, err := r.Run(m)
	if err != nil {
		return res, 0, err
	}
	_, w, _, err := r.Check(m.It)
	return res, w, err
}

// TestRunnerStartFailureLeavesNothing: a Run whose TRAM step cannot start
// (here a grid of 3 PEs for a job of 4) and a Check whose message cannot
// be sent (a proxy of no group) fail naming the iteration and the cause,
// and leave no future of theirs pending on PE 0; the next Run and Check
// work. Runner used to return Start's error bare and leave the
// iteration's three futures in PE 0's table for good.
func TestRunnerStartFailureLeavesNothing(t *testing.T) {
	var runErr, checkErr error
	var before, after, wrong int
	code, err := chare.Run(chare.Config{PEs: 4, Timeout: 30 * time.Second}, func(m *tmain, _ []string) {
		g, s, err := New(m, Sizes["small"], tram.Options{})
		if err != nil {
			m.Abort(err)
			return
		}
		before = chare.PEOf(m).PendingFutures()
		bad := s
		bad.Dims = []int{3}
		r := Runner{Ctx: m, G: g, S: bad, Size: Sizes["small"], Timeout: 20 * time.Second}
		_, runErr = r.Run(IterMsg{It: 4, Mode: Static, P: 1})
		r.G = group.Proxy[Part]{}
		_, _, _, checkErr = r.Check(4)
		after = chare.PEOf(m).PendingFutures()
		r.G, r.S = g, s
		if _, wrong, err = runChecked(&r, IterMsg{It: 5, Mode: Static, P: 1}); err != nil {
			m.Abort(err)
			return
		}
		m.Exit(0)
	})
	require.NoError(t, err)
	require.Equal(t, 0, code)
	require.Equal(t, before, after, "futures pending on PE 0 before and after the failed Run and Check")
	require.ErrorContains(t, runErr, "fmm: iteration 4: starting TRAM's step: tram: Start:")
	require.ErrorContains(t, checkErr, "fmm: the check of iteration 4 not sent:")
	require.Equal(t, 0, wrong, "cells wrong in the iteration after them")
}
