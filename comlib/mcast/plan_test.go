package mcast

import (
	"fmt"
	"math/rand"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"
)

// planCase is one kind with its options; opts builds them for n PEs.
type planCase struct {
	name     string
	kind     Kind
	opts     func(n int) Options
	maxDepth func(n, dests int) int // bound on the hops from the root to any destination
}

func ceilLog(x, k int) int { // smallest d with 1 + k + … + k^d >= x
	d, width, total := 0, 1, 1
	for total < x {
		width *= k
		total += width
		d++
	}
	return d
}

func planCases() []planCase {
	with := func(o Options) func(n int) Options {
		return func(n int) Options { o.NumPEs = n; return o }
	}
	cs := []planCase{
		{"direct", Direct, with(Options{}), func(n, d int) int { return 1 }},
		{"ring", Ring, with(Options{}), func(n, d int) int { return d }},
	}
	for _, r := range []int{0, 1, 3, 5} {
		rings := r
		if rings == 0 {
			rings = DefaultRings
		}
		cs = append(cs, planCase{fmt.Sprintf("multiring/%d", r), MultiRing, with(Options{Rings: r}),
			func(n, d int) int { return (d + rings - 1) / rings }})
	}
	for _, k := range []int{0, 2, 3, 8} {
		deg := k
		if deg == 0 {
			deg = DefaultDegree
		}
		cs = append(cs, planCase{fmt.Sprintf("tree/%d", k), Tree, with(Options{Degree: k}),
			func(n, d int) int { return ceilLog(d+1, deg) }})
	}
	cs = append(cs,
		planCase{"dim/default", DimOrdered, with(Options{}), func(n, d int) int { return 2 }},
		planCase{"dim/1d", DimOrdered, func(n int) Options { return Options{NumPEs: n, Dims: []int{n}} }, func(n, d int) int { return 1 }},
		planCase{"dim/4x4x4", DimOrdered, with(Options{Dims: []int{4, 4, 4}}), func(n, d int) int { return 3 }},
		planCase{"dim/2x3x2x6", DimOrdered, with(Options{Dims: []int{2, 3, 2, 6}}), func(n, d int) int { return 4 }},
		planCase{"node/blocks4", NodeAware, with(Options{NodeOf: func(pe int) int { return pe / 4 }}), func(n, d int) int { return 2 }},
		planCase{"node/cyclic3", NodeAware, with(Options{NodeOf: func(pe int) int { return pe % 3 }}), func(n, d int) int { return 2 }},
		planCase{"node/one", NodeAware, with(Options{NodeOf: func(pe int) int { return 0 }}), func(n, d int) int { return 1 }},
	)
	return cs
}

// randomDests picks a sorted set of distinct PEs below n; about one set in four includes root.
func randomDests(rng *rand.Rand, n, root int) []int {
	var out []int
	p := rng.Float64()
	for pe := 0; pe < n; pe++ {
		if pe == root {
			if rng.Intn(4) == 0 {
				out = append(out, pe)
			}
			continue
		}
		if rng.Float64() < p {
			out = append(out, pe)
		}
	}
	return out
}

// spread follows Children from the root and returns how often each PE received the message and
// the hops to the farthest one.
func spread(t *testing.T, k Kind, o Options, root int, dests []int) (map[int]int, int) {
	got := map[int]int{}
	depth := 0
	frontier := []int{root}
	for hop := 1; len(frontier) > 0; hop++ {
		var next []int
		for _, pe := range frontier {
			cs, err := Children(k, o, root, dests, pe)
			if err != nil {
				t.Fatalf("PE %d: %v", pe, err)
			}
			for _, c := range cs {
				got[c]++
				if got[c] == 1 {
					next = append(next, c)
				}
			}
		}
		if len(next) > 0 {
			depth = hop
		}
		frontier = next
		require.LessOrEqual(t, hop, 70, "the plan does not end")
	}
	return got, depth
}

// Every destination is reached exactly once, nothing else is (the root never receives, and no
// kind, DimOrdered included, passes through a PE that is not a destination), and the depth stays
// within each kind's bound.
func TestPlansReachEveryDestinationOnce(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for _, c := range planCases() {
		t.Run(c.name, func(t *testing.T) {
			for n := 1; n <= 64; n++ {
				o := c.opts(n)
				for trial := 0; trial < 5; trial++ {
					root := rng.Intn(n)
					dests := randomDests(rng, n, root)
					got, depth := spread(t, c.kind, o, root, dests)
					want := map[int]int{}
					for _, d := range dests {
						if d != root {
							want[d] = 1
						}
					}
					require.Equal(t, want, got, "n=%d root=%d dests=%v", n, root, dests)
					require.LessOrEqual(t, depth, c.maxDepth(n, len(want)), "n=%d root=%d dests=%v", n, root, dests)

					plan, err := Plan(c.kind, o, root, dests)
					require.NoError(t, err)
					edges := 0
					for _, cs := range plan {
						edges += len(cs)
					}
					require.Equal(t, len(want), edges, "Plan has one edge per destination")
				}
			}
		})
	}
}

func TestPlanShapes(t *testing.T) {
	dests := []int{1, 2, 5, 6, 9, 12, 14}
	cases := []struct {
		name string
		kind Kind
		o    Options
		root int
		want map[int][]int
	}{
		{"direct", Direct, Options{}, 6, map[int][]int{6: {1, 2, 5, 9, 12, 14}}},
		{"ring after the root", Ring, Options{}, 6, map[int][]int{6: {9}, 9: {12}, 12: {14}, 14: {1}, 1: {2}, 2: {5}}},
		{"two rings", MultiRing, Options{}, 6, map[int][]int{6: {9, 1}, 9: {12}, 12: {14}, 1: {2}, 2: {5}}},
		{"binary tree", Tree, Options{Degree: 2}, 6, map[int][]int{6: {1, 2}, 1: {5, 9}, 2: {12, 14}}},
		// 4x4 grid: rows {0..3} {4..7} {8..11} {12..15}. Root 6 (row 1) keeps row 1 and sends
		// to the lowest destination of rows 0, 2, 3; each then covers its row.
		{"dimension ordered", DimOrdered, Options{NumPEs: 16}, 6, map[int][]int{6: {1, 9, 12, 5}, 1: {2}, 12: {14}}},
		// Nodes of 4 PEs: root 6 is on node 1 with 5; leaders 1, 9, 12.
		{"node aware", NodeAware, Options{NodeOf: func(pe int) int { return pe / 4 }}, 6,
			map[int][]int{6: {1, 9, 12, 5}, 1: {2}, 12: {14}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Plan(c.kind, c.o, c.root, dests)
			require.NoError(t, err)
			require.Equal(t, c.want, got)
		})
	}
}

func TestParseKind(t *testing.T) {
	for i, name := range Names() {
		k, err := ParseKind(name)
		require.NoError(t, err)
		require.Equal(t, Kind(i), k)
		require.Equal(t, name, k.String())
	}
	_, err := ParseKind("pipe")
	require.EqualError(t, err, `mcast: unknown multicast kind "pipe" (valid: direct, ring, multiring, tree, dim, node)`)
	require.Equal(t, "Kind(9)", Kind(9).String())
}

func TestChildrenErrors(t *testing.T) {
	node := func(pe int) int { return pe / 2 }
	dests := []int{1, 3, 4}
	cases := []struct {
		name  string
		kind  Kind
		o     Options
		root  int
		dests []int
		self  int
		want  string
	}{
		{"unknown kind", Kind(17), Options{}, 0, dests, 0, "unknown multicast kind 17"},
		{"self off the plan", Ring, Options{}, 0, dests, 2, "PE 2 is not on the plan: neither the root 0 nor a destination"},
		{"unsorted", Direct, Options{}, 0, []int{3, 1}, 0, "1 after 3 at index 1"},
		{"duplicate", Direct, Options{}, 0, []int{1, 1}, 0, "1 after 1 at index 1"},
		{"negative dest", Direct, Options{}, 0, []int{-1, 2}, 0, "destination 0 is PE -1"},
		{"dest beyond NumPEs", Direct, Options{NumPEs: 4}, 0, dests, 0, "destination 2 is PE 4, outside 0..3"},
		{"negative root", Direct, Options{}, -2, dests, -2, "root is PE -2"},
		{"negative NumPEs", Direct, Options{NumPEs: -1}, 0, dests, 0, "NumPEs=-1"},
		{"degree 1", Tree, Options{Degree: 1}, 0, dests, 0, "Degree=1"},
		{"degree negative", Tree, Options{Degree: -4}, 0, dests, 0, "Degree=-4"},
		{"rings negative", MultiRing, Options{Rings: -1}, 0, dests, 0, "Rings=-1"},
		{"dims too small", DimOrdered, Options{NumPEs: 8, Dims: []int{2, 3}}, 0, dests, 0, "Dims [2 3] hold 6 PEs, fewer than NumPEs=8"},
		{"dims zero", DimOrdered, Options{Dims: []int{2, 0}}, 0, dests, 0, "Dims[1]=0"},
		{"dims nor NumPEs", DimOrdered, Options{}, 0, dests, 0, "set Dims or NumPEs"},
		{"outside the grid", DimOrdered, Options{Dims: []int{2, 2}}, 0, []int{1, 4}, 0, "PE 4 outside the grid [2 2]"},
		{"no NodeOf", NodeAware, Options{}, 0, dests, 0, "NodeOf is nil"},
		{"node self off the plan", NodeAware, Options{NodeOf: node}, 0, dests, 5, "PE 5 is not on the plan"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Children(c.kind, c.o, c.root, c.dests, c.self)
			require.Nil(t, got)
			require.ErrorContains(t, err, c.want)
			_, err = Plan(c.kind, c.o, c.root, c.dests)
			if c.self == c.root { // Plan builds from root and dests alone
				require.ErrorContains(t, err, c.want)
			}
		})
	}
}

// Options unused by a kind are not checked: a bad Degree does not stop a ring.
func TestOptionsOnlyForTheirKind(t *testing.T) {
	got, err := Children(Ring, Options{Degree: -1, Rings: -1, Dims: []int{0}}, 0, []int{1, 2}, 0)
	require.NoError(t, err)
	require.Equal(t, []int{1}, got)
}

// The root among the destinations is dropped, and an empty set is a plan with no edges.
func TestRootAmongDestinations(t *testing.T) {
	for _, k := range []Kind{Direct, Ring, MultiRing, Tree} {
		got, err := Children(k, Options{}, 3, []int{3}, 3)
		require.NoError(t, err)
		require.Empty(t, got, "%v", k)
		plan, err := Plan(k, Options{}, 3, nil)
		require.NoError(t, err)
		require.Empty(t, plan, "%v", k)
	}
	got, err := Children(Direct, Options{}, 3, []int{1, 3, 5}, 3)
	require.NoError(t, err)
	require.Equal(t, []int{1, 5}, got)
	require.True(t, sort.IntsAreSorted(got))
}
