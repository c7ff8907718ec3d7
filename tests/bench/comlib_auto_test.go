package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// sweepOf makes a sweep of Direct and one router from medians by size
// (five rounds each, the same value with ±2 % alternating noise).
func sweepOf(sizes []int, direct, router []float64) *sweep {
	sw := &sweep{cands: []candidate{{key: "strategy=direct"}, {key: "router=mesh", router: "mesh"}}, samples: map[int][][]float64{}}
	rounds := func(v float64) []float64 {
		return []float64{v, v * 1.02, v * 0.98, v * 1.01, v * 0.99}
	}
	for i, size := range sizes {
		sw.samples[size] = [][]float64{rounds(direct[i]), rounds(router[i])}
	}
	return sw
}

func TestCalibrationWinners(t *testing.T) {
	sizes := []int{16, 1024, 65536}
	const d, m = "strategy=direct", "router=mesh"
	for _, tc := range []struct {
		name           string
		direct, router []float64
		want           []string
	}{
		{"the router wins large sizes by far, its empty exchange is cheap",
			[]float64{100, 200, 4000}, []float64{120, 600, 1000}, []string{d, d, m}},
		{"the router wins everywhere by 5 %: within the noise, not worth a part",
			[]float64{100, 200, 4000}, []float64{95, 190, 3800}, []string{d, d, d}},
		{"the router wins everywhere by 15 %",
			[]float64{100, 200, 4000}, []float64{85, 170, 3400}, []string{m, m, m}},
		{"the router wins large sizes, but its idle exchange costs more at the small ones",
			[]float64{100, 200, 4000}, []float64{900, 1000, 3000}, []string{d, d, d}},
		{"the router wins everywhere: no idle part",
			[]float64{300, 600, 4000}, []float64{100, 200, 1000}, []string{m, m, m}},
		{"the router wins the small sizes",
			[]float64{300, 400, 1000}, []float64{100, 200, 4000}, []string{m, m, d}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, sweepOf(sizes, tc.direct, tc.router).winners(sizes))
		})
	}
}
