package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/comlib"
	"github.com/charmgo/charm/comlib/selection"
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
		{"the router wins the large size by 25 % and loses far at the others: a declared Auto pays nothing there",
			[]float64{100, 200, 4000}, []float64{900, 1000, 3000}, []string{d, d, m}},
		{"the router wins the large size by 12 %: over the grid, within the noise",
			[]float64{100, 200, 4000}, []float64{900, 1000, 3570}, []string{d, d, d}},
		{"the router wins everywhere",
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

// TestS05_CalibratedTreeServesDeclaredSizes: the file the calibration
// writes, loaded and pruned with a declared message size (what
// comlib/alltoall/auto's Auto declares), is one container at every size of
// the grid — the winner measured there — so a declared Auto runs one
// strategy; undeclared, the pruned tree walks msg_size to the same
// winners, with the bound between two sizes in message bytes.
func TestS05_CalibratedTreeServesDeclaredSizes(t *testing.T) {
	const d, m, h = "strategy=direct", "router=mesh", "router=hypercube"
	res := map[calConfig][]string{
		{4, 1}:  {d, d, d, d, d, d},
		{16, 1}: {m, m, d, d, d, d},
		{16, 2}: {d, d, d, d, h, h},
	}
	tree, err := comlib.ParseSelection(calibratedTree(res))
	require.NoError(t, err)
	for cc, want := range res {
		ct := selection.Intra
		if cc.nodes > 1 {
			ct = selection.Inter
		}
		facts := selection.CreationFacts{CommSize: cc.pes, CommType: ct, Collective: selection.Alltoall}
		undeclared, err := tree.Prune(facts)
		require.NoError(t, err)
		for i, size := range clAutoSizes {
			t.Run(fmt.Sprintf("%dpe/%dproc/%dB", cc.pes, cc.nodes, size), func(t *testing.T) {
				f := facts
				f.MsgSize = clMsgSize(size)
				p, err := tree.Prune(f)
				require.NoError(t, err)
				c, _, ok := p.Fixed()
				require.True(t, ok, "a declared size prunes to one container")
				require.Equal(t, want[i], c.String())
				got, _, err := undeclared.Select(selection.CallFacts{MsgSize: clMsgSize(size)})
				require.NoError(t, err)
				require.Equal(t, want[i], got.String())
			})
		}
	}
	// The bound between 4 KiB and 16 KiB blocks: the geometric mean of
	// their message sizes (24 bytes of ints on top of the data).
	require.Equal(t, 24+4096, clMsgSize(4096))
	require.Contains(t, string(calibratedTree(res)), `"msg_size<=8221"`)
}

func TestPickCandidates(t *testing.T) {
	cands := candidates(16)
	for _, tc := range []struct {
		list, want, err string
	}{
		{list: "router=hypercube,strategy=direct", want: "router=hypercube strategy=direct"},
		{list: "strategy=direct", want: "strategy=direct"},
		{list: "router=nosuch", err: `"router=nosuch" is not a candidate`},
		{list: "strategy=direct,", err: `"" is not a candidate`},
		{list: "router=mesh,router=mesh", err: `"router=mesh" is named twice`},
	} {
		t.Run(tc.list, func(t *testing.T) {
			got, err := pickCandidates(cands, tc.list)
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			var keys []string
			for _, c := range got {
				keys = append(keys, c.key)
			}
			require.Equal(t, tc.want, strings.Join(keys, " "))
		})
	}
}
