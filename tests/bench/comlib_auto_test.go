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
			require.Equal(t, tc.want, sweepOf(sizes, tc.direct, tc.router).winners(sizes, nil))
		})
	}
}

// Router shapes within noise of each other: the cost model decides when it
// predicts them all; Direct within noise of the best keeps Direct.
func TestCalibrationWinnersModelBreaksTies(t *testing.T) {
	sizes := []int{16, 1024, 65536}
	sw := &sweep{cands: []candidate{{key: "strategy=direct"}, {key: "router=sync", router: "sync"}, {key: "router=shift", router: "shift"}, {key: "router=mesh", router: "mesh"}},
		samples: map[int][][]float64{}}
	set := func(size int, vs ...float64) {
		sw.samples[size] = nil
		for _, v := range vs {
			sw.samples[size] = append(sw.samples[size], []float64{v, v, v, v, v})
		}
	}
	// Direct, sync, shift, mesh: sync measures 1 % faster than shift.
	set(16, 400, 100, 101, 500)
	set(1024, 800, 200, 202, 900)
	set(65536, 8000, 2000, 2020, 9000)
	model := func(fast string) func(string, int) (float64, bool) {
		return func(r string, size int) (float64, bool) {
			switch r {
			case fast:
				return 1, true
			case "sync", "shift":
				return 2, true
			}
			return 0, false
		}
	}
	all := func(k string) []string { return []string{k, k, k} }
	require.Equal(t, all("router=sync"), sw.winners(sizes, nil), "no model: the lowest score")
	require.Equal(t, all("router=shift"), sw.winners(sizes, model("shift")), "within noise: the model's choice")
	require.Equal(t, all("router=sync"), sw.winners(sizes, model("sync")))

	// A router the model does not predict among those within noise: the
	// lowest score.
	set(16, 400, 100, 101, 100.5)
	set(1024, 800, 200, 202, 201)
	set(65536, 8000, 2000, 2020, 2010)
	require.Equal(t, all("router=sync"), sw.winners(sizes, model("shift")))

	// Shift far behind: out of the band, the model is not asked.
	set(16, 400, 100, 300, 500)
	set(1024, 800, 200, 600, 900)
	set(65536, 8000, 2000, 6000, 9000)
	require.Equal(t, all("router=sync"), sw.winners(sizes, model("shift")))

	// Sync 12.5 % faster everywhere: its score (3 + the 10 % margin per
	// size) beats Direct's 3.43, but within noise: Direct. At 20 %, sync.
	set(16, 100, 87.5, 300, 500)
	set(1024, 200, 175, 600, 900)
	set(65536, 2000, 1750, 6000, 9000)
	require.Equal(t, all("strategy=direct"), sw.winners(sizes, model("sync")))
	set(16, 100, 80, 300, 500)
	set(1024, 200, 160, 600, 900)
	set(65536, 2000, 1600, 6000, 9000)
	require.Equal(t, all("router=sync"), sw.winners(sizes, model("sync")))
}
