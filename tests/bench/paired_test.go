package main

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestMedianCIOrderStatistics: the interval is the k-th smallest and k-th
// largest sample, k the largest with a sign-test level of at least 0.95.
func TestMedianCIOrderStatistics(t *testing.T) {
	xs := func(n int) []float64 { // n down to 1, so sorting matters
		s := make([]float64, n)
		for i := range s {
			s[i] = float64(n - i)
		}
		return s
	}
	for _, c := range []struct {
		n, k  int
		level float64
	}{
		{5, 1, 1 - 2.0/32},                 // no interval reaches 0.95: the range
		{6, 1, 1 - 2.0/64},                 // k=2 would be 1-2·7/64 = 0.78
		{9, 2, 1 - 2*10.0/512},             // 0.961
		{21, 6, 1 - 2*27896.0/(1<<21)},     // 0.973; k=7 gives 0.92
		{31, 10, 1 - 2*31621024.0/(1<<31)}, // 0.971; k=11 gives 0.93
	} {
		lo, hi, level := medianCI(xs(c.n))
		require.Equal(t, float64(c.k), lo, "n=%d", c.n)
		require.Equal(t, float64(c.n-c.k+1), hi, "n=%d", c.n)
		require.InDelta(t, c.level, level, 1e-12, "n=%d", c.n)
	}
}

// TestMedianCICovers: over many seeded runs of 9 and 21 samples from a
// skewed distribution (the bimodal step times of a 2-core VM: most near 1,
// a sixth 1.3 to 1.4 times slower), the interval holds the true median at
// least as often as its level says.
func TestMedianCICovers(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	draw := func() float64 {
		x := 1 + 0.05*r.NormFloat64()
		if r.IntN(6) == 0 {
			x *= 1.3 + 0.1*r.Float64()
		}
		return x
	}
	// The true median, from a large sample.
	big := make([]float64, 200_000)
	for i := range big {
		big[i] = draw()
	}
	truth := median(big)
	for _, n := range []int{9, 21} {
		const runs = 4000
		hit, level := 0, 0.0
		for range runs {
			xs := make([]float64, n)
			for i := range xs {
				xs[i] = draw()
			}
			lo, hi, l := medianCI(xs)
			level = l
			if lo <= truth && truth <= hi {
				hit++
			}
		}
		// 4000 runs: the standard error of the coverage is under 0.004.
		require.GreaterOrEqual(t, float64(hit)/runs, level-0.015, "n=%d: covered %d of %d, level %.3f", n, hit, runs, level)
	}
}

// TestBinomBelow checks the tail against the sum of the binomial
// coefficients it stands for.
func TestBinomBelow(t *testing.T) {
	require.InDelta(t, 0.5, binomBelow(1, 1), 1e-15)
	require.InDelta(t, 1.0, binomBelow(7, 8), 1e-15)
	require.InDelta(t, (1.0+10+45)/1024, binomBelow(10, 3), 1e-15)
	require.InDelta(t, 0.0, binomBelow(10, 0), 1e-15)
	require.False(t, math.IsNaN(binomBelow(60, 30)))
	// Many pairs: no overflow, and k near n/2 − 1.96·√n/2 (normal
	// approximation of the sign test).
	xs := make([]float64, 3000)
	for i := range xs {
		xs[i] = float64(i + 1)
	}
	lo, hi, level := medianCI(xs)
	require.InDelta(t, 0.95, level, 0.005)
	require.InDelta(t, 1500-1.96*math.Sqrt(3000)/2, lo, 3)
	require.Equal(t, 3001-lo, hi)
}
