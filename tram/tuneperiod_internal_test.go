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
	for range 1200 {
		held := st.t.Holding()
		turn := st.periodTurn
		n, p := st.next()
		require.InDelta(t, float64(base)*float64(n)/items*st.factor(), float64(p), 1, "the period in force")
		steps = append(steps, step{turn, n, st.factor(), held})
		require.NoError(t, st.observe(cost(n, p)))
	}
	require.Equal(t, 1.0, steps[0].factor, "the period starts as configured")
	turns := 0
	for k := 1; k < len(steps); k++ {
		prev, cur := steps[k-1], steps[k]
		if cur.turn != prev.turn {
			if cur.turn {
				turns++
				require.True(t, cur.held, "step %d: the period's turn while the size search explores", k)
			}
			continue
		}
		if cur.turn {
			require.Equal(t, prev.n, cur.n, "step %d: the size moved in the period's turn", k)
		} else {
			require.Equal(t, prev.factor, cur.factor, "step %d: the period moved in the size's turn", k)
		}
		require.GreaterOrEqual(t, cur.factor, 1.0/tuneBand)
		require.LessOrEqual(t, cur.factor, float64(tuneBand))
	}
	require.Greater(t, turns, 10, "the period had turns")
	v, _, ok := st.pt.Best()
	require.True(t, ok)
	require.InDelta(t, -2, v-periodBand, 0.5, "the factor's best: a quarter")
	n, _, _ := st.best()
	require.Equal(t, items, n, "the size's best: its start")
	// -tunedebug's period trajectory is in µs at the configured size.
	pts := st.periodTrajectory()
	require.NotEmpty(t, pts)
	require.InDelta(t, 2000, pts[0].Value, 1e-9)
}

// TestHeldSizeHoldsThePeriod: equal bounds hold the size, and the period
// stays the configured one (the control).
func TestHeldSizeHoldsThePeriod(t *testing.T) {
	st, err := newStepTuner(256, time.Millisecond, 256, 256)
	require.NoError(t, err)
	require.Nil(t, st.t)
	require.Nil(t, st.pt)
	for range 20 {
		n, p := st.next()
		require.Equal(t, 256, n)
		require.Equal(t, time.Millisecond, p)
		require.NoError(t, st.observe(1))
	}
}
