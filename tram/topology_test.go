package tram

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// Each TestTnn checks a few sentences of the TRAM manual: claim Tnn in docs/claims.md.

// shapes used across tests: 1-, 2- and 3-D, with size-1 and uneven dimensions.
var shapes = [][]int{{1}, {5}, {2, 2}, {3, 4}, {1, 6}, {2, 3, 4}, {3, 1, 2}, {2, 2, 2}}

func mustTopology(t *testing.T, dims ...int) *Topology {
	t.Helper()
	n := 1
	for _, d := range dims {
		n *= d
	}
	topo, err := NewTopology(dims, n)
	require.NoError(t, err)
	return topo
}

func TestT01_TopologyProductMustMatchPEs(t *testing.T) {
	for _, dims := range shapes {
		topo := mustTopology(t, dims...)
		require.Equal(t, len(dims), topo.NumDims())
		require.Equal(t, dims, topo.Dims())
	}
	tests := []struct {
		dims []int
		npes int
		want string
	}{
		{[]int{2, 3}, 8, "topology 2×3 has 6 PEs, the job has 8"},
		{nil, 4, "topology has no dimensions"},
		{[]int{}, 0, "topology has no dimensions"},
		{[]int{2, 0}, 0, "topology 2×0: dimension 1 has size 0, want at least 1"},
		{[]int{-2, -2}, 4, "topology -2×-2: dimension 0 has size -2"},
		{[]int{1 << 40, 1 << 40}, 4, "too large"},
	}
	for _, tc := range tests {
		_, err := NewTopology(tc.dims, tc.npes)
		require.ErrorContains(t, err, tc.want, "dims %v", tc.dims)
	}
}

func TestTopologyCoordsLastDimensionFastest(t *testing.T) {
	topo := mustTopology(t, 2, 3, 4)
	for pe, want := range map[int][]int{0: {0, 0, 0}, 1: {0, 0, 1}, 4: {0, 1, 0}, 12: {1, 0, 0}, 23: {1, 2, 3}} {
		c, err := topo.Coords(pe)
		require.NoError(t, err)
		require.Equal(t, want, c, "PE %d", pe)
	}
	for _, dims := range shapes {
		topo := mustTopology(t, dims...)
		for pe := range topo.NumPEs() {
			c, err := topo.Coords(pe)
			require.NoError(t, err)
			back, err := topo.PE(c)
			require.NoError(t, err)
			require.Equal(t, pe, back)
		}
	}
}

func TestTopologyBadInput(t *testing.T) {
	topo := mustTopology(t, 2, 3)
	_, err := topo.Coords(6)
	require.ErrorContains(t, err, "PE 6 is outside topology 2×3 (6 PEs)")
	_, err = topo.Coords(-1)
	require.Error(t, err)
	_, err = topo.PE([]int{1})
	require.ErrorContains(t, err, "1 coordinates for 2-dimensional topology 2×3")
	_, err = topo.PE([]int{1, 3})
	require.ErrorContains(t, err, "coordinate 3 of dimension 1 is outside topology 2×3")
	require.False(t, topo.Contains(6))
	require.PanicsWithValue(t, "tram: PE 7 is outside topology 2×3 (6 PEs)", func() { topo.NextHop(0, 7) })
	_, ok := topo.PeerIndex(0).Slot(99)
	require.False(t, ok)
}

func TestT02_PeersDifferInOneDimension(t *testing.T) {
	for _, dims := range shapes {
		topo := mustTopology(t, dims...)
		for j := range topo.NumPEs() {
			peers := map[int]bool{}
			for _, p := range topo.Peers(j) {
				peers[p] = true
			}
			for k := range topo.NumPEs() {
				cj, _ := topo.Coords(j)
				ck, _ := topo.Coords(k)
				diff := 0
				for d := range cj {
					if cj[d] != ck[d] {
						diff++
					}
				}
				require.Equal(t, diff == 1, peers[k], "%v: %d and %d", dims, j, k)
				require.Equal(t, diff == 1, topo.IsPeer(j, k))
			}
		}
	}
}

func TestT03_RoutesAlongGreatestDifferingDimension(t *testing.T) {
	topo := mustTopology(t, 2, 3, 4)
	tests := []struct{ from, to, want []int }{
		{[]int{0, 0, 0}, []int{1, 2, 3}, []int{0, 0, 3}}, // all differ: fix the last first
		{[]int{0, 0, 3}, []int{1, 2, 3}, []int{0, 2, 3}},
		{[]int{0, 2, 3}, []int{1, 2, 3}, []int{1, 2, 3}}, // a peer: straight there
		{[]int{1, 0, 2}, []int{0, 1, 2}, []int{1, 1, 2}}, // dimension 2 agrees: fix 1
		{[]int{1, 1, 1}, []int{1, 1, 1}, []int{1, 1, 1}}, // already there
	}
	for _, tc := range tests {
		from, _ := topo.PE(tc.from)
		to, _ := topo.PE(tc.to)
		got, err := topo.Coords(topo.NextHop(from, to))
		require.NoError(t, err)
		require.Equal(t, tc.want, got, "%v → %v", tc.from, tc.to)
	}
	// The hop is always a peer, and repeating it reaches the destination.
	for _, dims := range shapes {
		topo := mustTopology(t, dims...)
		for j := range topo.NumPEs() {
			for k := range topo.NumPEs() {
				if j != k {
					require.True(t, topo.IsPeer(j, topo.NextHop(j, k)))
				}
			}
		}
	}
}

func TestT04_HopsEqualDifferingDimensions(t *testing.T) {
	for _, dims := range shapes {
		topo := mustTopology(t, dims...)
		for j := range topo.NumPEs() {
			for k := range topo.NumPEs() {
				at, messages := j, 0
				for at != k {
					at = topo.NextHop(at, k)
					messages++
					require.LessOrEqual(t, messages, topo.NumDims(), "%v: %d → %d loops", dims, j, k)
				}
				require.Equal(t, topo.Hops(j, k), messages, "%v: %d → %d", dims, j, k)
			}
		}
	}
	topo := mustTopology(t, 2, 3, 4)
	require.Equal(t, 3, topo.Hops(0, 23))
	require.Equal(t, 0, topo.Hops(5, 5))
}

func TestT05_PeerCountIsSumOfSizesMinusOne(t *testing.T) {
	tests := []struct {
		dims []int
		want int
	}{{[]int{1}, 0}, {[]int{5}, 4}, {[]int{2, 2}, 2}, {[]int{3, 4}, 5}, {[]int{2, 3, 4}, 6}, {[]int{16, 16, 16}, 45}}
	for _, tc := range tests {
		topo := mustTopology(t, tc.dims...)
		for _, pe := range []int{0, topo.NumPEs() - 1} {
			require.Equal(t, tc.want, topo.NumPeers(pe), "%v", tc.dims)
			require.Len(t, topo.Peers(pe), tc.want)
		}
	}
}

func TestPeerIndexSlotsRoundTrip(t *testing.T) {
	for _, dims := range shapes {
		topo := mustTopology(t, dims...)
		for pe := range topo.NumPEs() {
			x := topo.PeerIndex(pe)
			require.Equal(t, pe, x.PE())
			require.Equal(t, topo.NumPeers(pe), x.Len())
			for s := range x.Len() {
				got, ok := x.Slot(x.Peer(s))
				require.True(t, ok)
				require.Equal(t, s, got)
			}
			_, ok := x.Slot(pe)
			require.False(t, ok, "a PE is not its own peer")
		}
	}
	x := mustTopology(t, 2, 3).PeerIndex(4) // coordinates (1, 1)
	require.Equal(t, []int{1, 3, 5}, x.Peers())
	_, ok := x.Slot(0) // (0, 0): two dimensions differ
	require.False(t, ok)
}

func TestT29_DefaultTopologyKeepsLastDimensionInProcess(t *testing.T) {
	tests := []struct {
		nodes, ppn, ndims int
		want              []int
	}{
		{2, 2, 1, []int{4}},
		{2, 2, 2, []int{2, 2}},
		{4, 3, 2, []int{4, 3}},
		{4, 2, 3, []int{2, 2, 2}},
		{6, 2, 3, []int{2, 3, 2}},
		{7, 2, 3, []int{1, 7, 2}},
		{1, 8, 3, []int{1, 1, 8}},
		{12, 1, 3, []int{3, 4, 1}},
	}
	for _, tc := range tests {
		topo, err := DefaultTopology(tc.nodes, tc.ppn, tc.ndims)
		require.NoError(t, err)
		require.Equal(t, tc.want, topo.Dims(), "%d×%d in %d-D", tc.nodes, tc.ppn, tc.ndims)
		if tc.ndims == 1 {
			continue
		}
		// The runtime gives node n the PEs n·ppn .. n·ppn+ppn−1: peers along the last dimension
		// are in the same process, and peers along the others are in different ones.
		last := tc.ndims - 1
		for pe := range topo.NumPEs() {
			for _, p := range topo.Peers(pe) {
				c, _ := topo.Coords(pe)
				cp, _ := topo.Coords(p)
				sameNode := pe/tc.ppn == p/tc.ppn
				require.Equal(t, c[last] != cp[last], sameNode, "%v: %d and %d", tc.want, pe, p)
			}
		}
	}
	for _, bad := range []struct{ nodes, ppn, ndims int }{{0, 2, 2}, {2, 0, 2}, {2, 2, 0}, {2, 2, 4}} {
		_, err := DefaultTopology(bad.nodes, bad.ppn, bad.ndims)
		require.Error(t, err, fmt.Sprint(bad))
	}
}
