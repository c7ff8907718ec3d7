package main

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSettleCountsToTheFirstWindowThatStays: a step from 2 to 1 after 10
// evaluations, without noise, settles at the end of the first window of 4
// wholly after it; the tolerance stays the fixed one.
func TestSettleCountsToTheFirstWindowThatStays(t *testing.T) {
	xs := make([]float64, 60)
	for i := range xs {
		xs[i] = 1
		if i < 10 {
			xs[i] = 2
		}
	}
	n, tol := settle(xs, 20, 4, 0.15, settleZ)
	require.Equal(t, 14, n)
	require.Equal(t, 0.15, tol)
	xs[30] = 1.7 // windows of 4 holding it are off by 17.5 %: settled only after them
	n, _ = settle(xs, 20, 4, 0.15, settleZ)
	require.Equal(t, 35, n)
}

// TestSettleToleratesTheNoiseItMeasures: a level that never changes, with
// 15 % noise per evaluation (as on the 2-core VM at times), settles within
// a window or two with the tolerance widened to 3 standard errors; with the
// fixed 15 % alone it would wander far (a window's mean strays by 7.5 %
// at random, and 60 windows give it room).
func TestSettleToleratesTheNoiseItMeasures(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	var ns, fixed, tols []float64
	for range 200 {
		xs := make([]float64, 60)
		for i := range xs {
			xs[i] = 1 + 0.15*r.NormFloat64()
		}
		n, tol := settle(xs, 20, 4, 0.15, settleZ)
		ns, tols = append(ns, float64(n)), append(tols, tol)
		f, _ := settle(xs, 20, 4, 0.15, 0)
		fixed = append(fixed, float64(f))
	}
	require.Greater(t, median(tols), 0.2, "the tolerance widened")
	require.LessOrEqual(t, median(ns), 8.0, "noise-aware settle")
	require.Greater(t, median(fixed), 2*median(ns), "a fixed 15 %% should settle later under this noise (else the test shows nothing)")
}

// TestSettleStillSeesATransient: under moderate noise (8 %) the widened
// tolerance still counts a 30 % transient of 15 evaluations: the median
// settle over seeded runs falls at its end, not before.
func TestSettleStillSeesATransient(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	var ns []float64
	for range 200 {
		xs := make([]float64, 60)
		for i := range xs {
			level := 1.0
			if i < 15 {
				level = 1.3
			}
			xs[i] = level * (1 + 0.08*r.NormFloat64())
		}
		n, _ := settle(xs, 20, 4, 0.15, settleZ)
		ns = append(ns, float64(n))
	}
	require.GreaterOrEqual(t, median(ns), 15.0)
	require.LessOrEqual(t, median(ns), 22.0)
}
