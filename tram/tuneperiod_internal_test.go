package tram

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestTunedPeriodTakesTurnsWithTheHeldSize drives the starting PE's tuner
// (stepTuner) with a seeded model of a step's cost per item, in which the
// size is best at its start (256) and the flush period best at a quarter
// of the configured one. The period's factor moves only in its own turns,
// which come only while the size search holds its settled size, and the
// size never moves during them; the factor finds a quarter and stays
// within its band.
func TestTunedPeriodTakesTurnsWithTheHeldSize(t *testing.T) {
	const base, items = 2 * time.Millisecond, 256
	st, err := newStepTuner(items, base, 0, 0)
	require.NoError(t, err)
	require.NotNil(t, st.pt, "a set period is tuned")
	r := rand.New(rand.NewPCG(3, 4))
	cost := func(n int, p time.Duration) float64 {
		f := float64(p) / (float64(base) * float64(n) / items) // the factor
		c := 1 + 0.3*math.Abs(math.Log2(float64(n))-8) + 0.2*math.Abs(math.Log2(f)+2)
		return c * (1 + 0.02*r.NormFloat64())
	}
	type step struct {
		turn   bool // scored for the period
		n      int
		factor float64
		held   bool // the size search held its size when the step began
	}
	var steps []step
	for k := range 1200 {
		held := st.t.Holding()
		turn := st.periodTurn
		n, p := st.next()
		f := st.factor()
		require.InDelta(t, float64(base)*float64(n)/items*f, float64(p), 1, "step %d: the period in force", k)
		require.GreaterOrEqual(t, f, 1.0/tuneBand, "step %d", k)
		require.LessOrEqual(t, f, float64(tuneBand), "step %d", k)
		if !turn {
			// In the size's turns the period is the period search's best.
			want := 1.0
			if v, _, ok := st.pt.Best(); ok {
				want = math.Exp2(v - periodBand)
			}
			require.Equal(t, want, f, "step %d: the period in the size's turn", k)
		}
		steps = append(steps, step{turn, n, f, held})
		require.NoError(t, st.observe(cost(n, p)))
		if turn && !st.periodTurn {
			require.True(t, st.pt.Between(), "step %d: the period gave up its turn within a score", k)
		}
	}
	require.Equal(t, 1.0, steps[0].factor, "the period starts as configured")
	turns, run := 0, 0
	for k := 1; k < len(steps); k++ {
		prev, cur := steps[k-1], steps[k]
		if cur.turn {
			run++
		}
		if cur.turn != prev.turn {
			if cur.turn {
				turns++
				run = 1
				require.True(t, cur.held, "step %d: the period's turn while the size search explores", k)
			} else {
				// A turn is one score: 4 steps, or a try's 4 in turn with
				// the anchor's 4 (tune.Options.Paired).
				require.Contains(t, []int{4, 8}, run, "step %d: a period turn of %d steps", k, run)
			}
			continue
		}
		if cur.turn {
			require.Equal(t, prev.n, cur.n, "step %d: the size moved in the period's turn", k)
		}
	}
	require.Greater(t, turns, 10, "the period had turns")
	v, _, ok := st.pt.Best()
	require.True(t, ok)
	require.InDelta(t, -2, v-periodBand, 0.5, "the factor's best: a quarter")
	n, _, _ := st.best()
	require.Equal(t, items, n, "the size's best: its start")
	bp, ok := st.bestPeriod()
	require.True(t, ok)
	require.InDelta(t, float64(base)/4, float64(bp), float64(base)/4*0.5, "Streamer.BestPeriod's value")
	// -tunedebug's period trajectory is in µs at the configured size.
	pts := st.periodTrajectory()
	require.NotEmpty(t, pts)
	require.InDelta(t, 2000, pts[0].Value, 1e-9)
}

// TestTunedPeriodStaysAboveTheFloor: on a model where a shorter period is
// always cheaper, the search goes down to the least factor that keeps the
// configured period at or above 10 µs, and no lower (a period at the
// floor, or below it, is tried upwards only); no step runs below 10 µs.
func TestTunedPeriodStaysAboveTheFloor(t *testing.T) {
	for _, c := range []struct {
		period time.Duration
		min    float64 // the least factor the search may take
	}{{20 * time.Microsecond, 0.5}, {10 * time.Microsecond, 1}, {5 * time.Microsecond, 1}, {time.Millisecond, 1.0 / tuneBand}} {
		st, err := newStepTuner(256, c.period, 0, 0)
		require.NoError(t, err, "%v", c.period)
		require.NotNil(t, st.pt, "%v", c.period)
		require.Equal(t, 1.0, st.factor(), "%v: the start", c.period)
		r := rand.New(rand.NewPCG(5, 6))
		least := math.Inf(1)
		for range 1500 {
			n, p := st.next()
			require.GreaterOrEqual(t, p, minTunedPeriod, "%v", c.period)
			f := st.factor()
			least = math.Min(least, f)
			cost := (1 + 0.3*math.Abs(math.Log2(float64(n))-8) + 0.2*math.Log2(f)) * (1 + 0.02*r.NormFloat64())
			require.NoError(t, st.observe(cost))
		}
		require.GreaterOrEqual(t, least, c.min-1e-9, "%v: the least factor tried", c.period)
		require.LessOrEqual(t, least, c.min*1.5, "%v: the search went down to the floor", c.period)
	}
}
