package overlap

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"
)

// loopCost is a synthetic time of one iteration as a function of p: tests
// wasted at small p (a/(p+1)), communication delayed at large p (b·p),
// and a fixed part c.
type loopCost struct{ a, b, c float64 }

func (m loopCost) f(p float64) float64 { return m.a/(p+1) + m.b*p + m.c }

// stall is the heavy-tailed noise of an iteration's wall time on a shared
// machine: 10 % Gaussian, and a quarter of the iterations 1.3–2.5 times
// as long.
func stall(rng *rand.Rand, x float64) float64 {
	x *= 1 + 0.1*rng.NormFloat64()
	if rng.Float64() < 0.25 {
		x *= 1.3 + 1.2*rng.Float64()
	}
	return math.Max(x, 0)
}

// tailCost drives a Tuner for 100 iterations over 100 seeds and returns,
// per seed, the mean cost of the p used in the last 20 relative to p = 1
// (the benchmark's figure), sorted.
func tailCost(t *testing.T, o TunerOptions, m loopCost) []float64 {
	t.Helper()
	var out []float64
	for seed := uint64(1); seed <= 100; seed++ {
		tu, err := NewTuner(o)
		require.NoError(t, err)
		rng := rand.New(rand.NewPCG(seed, 3))
		tail := 0.0
		for it := 0; it < 100; it++ {
			p := tu.P()
			require.GreaterOrEqual(t, p, 0.0)
			if it >= 80 {
				tail += m.f(p) / 20
			}
			require.NoError(t, tu.Observe(stall(rng, m.f(p))))
		}
		pts := tu.Trajectory()
		require.Len(t, pts, 100)
		start := 1.0 // log search: q = 1
		if o.Linear {
			start = 0
		}
		require.Equal(t, start, pts[0].Value, "the trajectory reports p, not log2(1+p)")
		out = append(out, tail/m.f(1))
	}
	sort.Float64s(out)
	return out
}

// claim E06, claim E12
//
// TestE06_LogSearchFindsDistantOptimum: the default search runs over
// log2(1 + p) from p = 1, so each step multiplies 1 + p. With the
// optimum at p = 32 (26 % below p = 1) or 256 (44 % below) and stalled
// times, the p used in iterations 81–100 cost within 5 % of the optimum in
// the median seed and at most 0.85 of p = 1 (the benchmark's target) in 90
// % of the seeds, and less than with the paper's linear search (from p = 0
// by steps of 1, mean of 4) in the median and at p90. Measured: 0.755 and
// p90 0.838 against linear 0.799 / 0.914 for p* = 32; 0.568 / 0.623
// against 0.634 / 0.776 for p* = 256.
func TestE06_LogSearchFindsDistantOptimum(t *testing.T) {
	for _, c := range []struct {
		name   string
		m      loopCost
		best   float64 // f(p*)/f(1)
		within float64
	}{
		{"p*=32", loopCost{a: 1089, b: 1, c: 1302}, 0.740, 0.05},
		{"p*=256", loopCost{a: 66049, b: 1, c: 41000}, 0.561, 0.05},
	} {
		t.Run(c.name, func(t *testing.T) {
			log, lin := tailCost(t, TunerOptions{}, c.m), tailCost(t, TunerOptions{Linear: true}, c.m)
			t.Logf("last 20 / p=1: log median %.3f p90 %.3f; linear median %.3f p90 %.3f; optimum %.3f",
				log[50], log[90], lin[50], lin[90], c.best)
			require.Less(t, log[50], lin[50])
			require.Less(t, log[90], lin[90])
			require.LessOrEqual(t, log[50], c.best*(1+c.within), "median within %v of the optimum", c.within)
			require.LessOrEqual(t, log[90], 0.85, "the benchmark's target in 90 %% of the seeds")
		})
	}
}

// TestE08_LogSearchNearPZero: with the optimum at p = 0 the log search
// walks down from p = 1 and never proposes a negative p (tailCost checks
// every p).
func TestE08_LogSearchNearPZero(t *testing.T) {
	r := tailCost(t, TunerOptions{}, loopCost{a: 0, b: 5, c: 100})
	require.Less(t, r[50], 1.0, "better than p = 1")
}

// reconverge runs the moved-optimum scenario of package tune's E09 test
// through a Tuner: at iteration 60 the optimum moves from p ≈ 6 to 19 and
// the time at the old optimum rises by 70 %. It returns, per seed (sorted),
// the evaluations after the change until the anchor (Best) stays within
// 10 % of the new optimum; 100 means never within the 100 that follow.
func reconverge(t *testing.T, o TunerOptions, stalls bool) []float64 {
	t.Helper()
	before, after := loopCost{a: 100, b: 2, c: 50}, loopCost{a: 400, b: 1, c: 50}
	fBest := after.f(math.Sqrt(after.a/after.b) - 1)
	var took []float64
	for seed := uint64(1); seed <= 100; seed++ {
		tu, err := NewTuner(o)
		require.NoError(t, err)
		rng := rand.New(rand.NewPCG(seed, 5))
		var anchors []float64
		for it := 0; it < 160; it++ {
			m := before
			if it >= 60 {
				m = after
			}
			x := m.f(tu.P())
			if stalls {
				x = stall(rng, x)
			} else {
				x *= 1 + 0.05*rng.NormFloat64()
			}
			require.NoError(t, tu.Observe(x))
			b, _, _ := tu.Best()
			anchors = append(anchors, b)
		}
		r := 0
		for it := 159; it >= 60; it-- {
			if after.f(anchors[it]) > fBest*1.1 {
				r = it - 59
				break
			}
		}
		took = append(took, float64(r))
	}
	sort.Float64s(took)
	return took
}

// claim E09
//
// TestE09_LogSearchReconverges: when the optimum moves (more work per
// computation), the log search re-converges within 30 evaluations in 90 %
// of the seeds at 5 % noise (measured: median 15, p90 23). Under stalls no
// variant meets 30 (a quarter of the times 1.3–2.5× too long: the log
// search's median is 35, p90 95), but it re-converges sooner than the
// paper's linear search (median 91).
func TestE09_LogSearchReconverges(t *testing.T) {
	quiet := reconverge(t, TunerOptions{}, false)
	t.Logf("5 %% noise: evaluations to re-converge: median %v, p90 %v, max %v", quiet[50], quiet[90], quiet[99])
	require.LessOrEqual(t, quiet[90], 30.0)
	log, lin := reconverge(t, TunerOptions{}, true), reconverge(t, TunerOptions{Linear: true}, true)
	t.Logf("stalls: log median %v p90 %v; linear median %v p90 %v", log[50], log[90], lin[50], lin[90])
	require.Less(t, log[50], lin[50])
}
