package route

import (
	"fmt"
	"math/bits"
	"math/rand"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"
)

// config is one router under test.
type config struct {
	name string
	o    Options
}

func (c config) String() string {
	return fmt.Sprintf("%s/deg%d/direct%d/omega%d", c.name, c.o.Degree, c.o.Direct, c.o.Omega)
}

// configs covers every router, the tree at several degrees and the hypercube with direct stages.
var configs = []config{
	{name: "direct"},
	{name: "mesh"},
	{name: "grid"},
	{name: "hypercube"},
	{name: "hypercube", o: Options{Direct: 1}},
	{name: "hypercube", o: Options{Direct: 2}},
	{name: "hypercube", o: Options{Direct: 3}},
	{name: "hypercube", o: Options{Direct: 9}},
	{name: "tree"},
	{name: "tree", o: Options{Degree: 2}},
	{name: "tree", o: Options{Degree: 3}},
	{name: "tree", o: Options{Degree: 7}},
	{name: "prefix"},
	{name: "shift"},
	{name: "pairwise"},
	{name: "xor"},
	{name: "sync"},
	{name: "group"},
	{name: "group", o: Options{Omega: 1}},
	{name: "group", o: Options{Omega: 3}},
	{name: "group", o: Options{Omega: 100}},
}

const maxN = 64

// forEachRouter runs f for every configuration and every n in 1..maxN.
func forEachRouter(t *testing.T, f func(t *testing.T, r Router)) {
	for _, c := range configs {
		for n := 1; n <= maxN; n++ {
			r, err := New(c.name, n, c.o)
			require.NoError(t, err, "%v n=%d", c, n)
			require.Equal(t, c.name, r.Name())
			require.Equal(t, n, r.N())
			t.Run(fmt.Sprintf("%v/n%d", c, n), func(t *testing.T) { f(t, r) })
		}
	}
}

// TestC01_RoutersDeliverEveryMessage shows that the topological routers strategies may use
// exist and route correctly: an all-to-all exchange (every participant has one message for
// every participant, itself included) is simulated stage by stage, each participant sorting
// what it holds with Partition and sending only to its stage peers; afterwards every message is
// at its destination, exactly once.
func TestC01_RoutersDeliverEveryMessage(t *testing.T) {
	forEachRouter(t, func(t *testing.T, r Router) {
		n := r.N()
		type msg struct{ src, dest int }
		held := make([][]msg, n)
		for s := 0; s < n; s++ {
			for d := 0; d < n; d++ {
				held[s] = append(held[s], msg{s, d})
			}
		}
		for stage := 0; stage < r.Stages(); stage++ {
			next := make([][]msg, n)
			got := map[[2]int]int{} // (from, to) -> combined messages received
			for at := 0; at < n; at++ {
				dests := make([]int, len(held[at]))
				for i, m := range held[at] {
					dests[i] = m.dest
				}
				byPeer, stay := Partition(r, at, stage, dests)
				keys := make([]int, 0, len(byPeer))
				for p := range byPeer {
					keys = append(keys, p)
				}
				sort.Ints(keys)
				if want := r.SendTo(at, stage); !equalInts(want, keys) {
					t.Fatalf("stage %d at %d: Partition's peers %v, SendTo %v", stage, at, keys, want)
				}
				for _, i := range stay {
					next[at] = append(next[at], held[at][i])
				}
				for p, idx := range byPeer {
					got[[2]int{at, p}]++ // one combined message per peer, possibly empty
					for _, i := range idx {
						next[p] = append(next[p], held[at][i])
					}
				}
				if len(held[at]) != len(stay)+countAll(byPeer) {
					t.Fatalf("stage %d at %d: Partition lost a message", stage, at)
				}
			}
			for j := 0; j < n; j++ {
				for _, i := range r.RecvFrom(j, stage) {
					if got[[2]int{i, j}] != 1 {
						t.Fatalf("stage %d: %d expects one message from %d, got %d", stage, j, i, got[[2]int{i, j}])
					}
				}
			}
			held = next
		}
		for at := 0; at < n; at++ {
			if len(held[at]) != n {
				t.Fatalf("participant %d holds %d messages, want %d", at, len(held[at]), n)
			}
			seen := make([]bool, n)
			for _, m := range held[at] {
				if m.dest != at || seen[m.src] {
					t.Fatalf("message %d->%d ended at %d (or twice)", m.src, m.dest, at)
				}
				seen[m.src] = true
			}
		}
	})
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func countAll(m map[int][]int) int {
	c := 0
	for _, v := range m {
		c += len(v)
	}
	return c
}

// SendTo and RecvFrom are sorted sets without self, in range, and mirror each other.
func TestPeersConsistent(t *testing.T) {
	forEachRouter(t, func(t *testing.T, r Router) {
		n := r.N()
		for s := 0; s < r.Stages(); s++ {
			sends := make([]map[int]bool, n)
			for i := 0; i < n; i++ {
				sends[i] = requireSet(t, r.SendTo(i, s), i, n)
				requireSet(t, r.RecvFrom(i, s), i, n)
			}
			for j := 0; j < n; j++ {
				var want []int
				for i := 0; i < n; i++ {
					if sends[i][j] {
						want = append(want, i)
					}
				}
				if got := r.RecvFrom(j, s); !equalInts(want, got) {
					t.Fatalf("stage %d: RecvFrom(%d) = %v, want %v", s, j, got, want)
				}
			}
		}
		// Outside the exchange nobody talks.
		for _, s := range []int{-1, r.Stages()} {
			require.Empty(t, r.SendTo(0, s))
			require.Empty(t, r.RecvFrom(0, s))
		}
	})
}

// requireSet checks that peers are strictly increasing, in range and without self.
func requireSet(t *testing.T, peers []int, self, n int) map[int]bool {
	set := map[int]bool{}
	for k, p := range peers {
		if p < 0 || p >= n || p == self || (k > 0 && peers[k-1] >= p) {
			t.Fatalf("peers of %d: %v: not a sorted set of others in 0..%d", self, peers, n-1)
		}
		set[p] = true
	}
	return set
}

// Every single message follows NextHop to its destination, each hop among the holder's peers
// (Path checks that), and no empty message is wasted: every stage edge of SendTo carries some
// message of a full all-to-all.
func TestPathsReachDestinationOverTightPeers(t *testing.T) {
	forEachRouter(t, func(t *testing.T, r Router) {
		n := r.N()
		used := map[[3]int]bool{}
		for src := 0; src < n; src++ {
			for dest := 0; dest < n; dest++ {
				p, err := Path(r, src, dest)
				require.NoError(t, err)
				if len(p) != r.Stages()+1 || p[0] != src || p[len(p)-1] != dest {
					t.Fatalf("path %d->%d is %v with %d stages", src, dest, p, r.Stages())
				}
				for s := 0; s < r.Stages(); s++ {
					if p[s] != p[s+1] {
						used[[3]int{s, p[s], p[s+1]}] = true
					}
				}
			}
		}
		for s := 0; s < r.Stages(); s++ {
			for i := 0; i < n; i++ {
				for _, j := range r.SendTo(i, s) {
					if !used[[3]int{s, i, j}] {
						t.Fatalf("stage %d: edge %d->%d carries nothing", s, i, j)
					}
				}
			}
		}
	})
}

func log2floor(n int) int { return bits.Len(uint(n)) - 1 }

func TestStageCounts(t *testing.T) {
	treeDepth := func(n, k int) int {
		d, width, total := 0, 1, 1
		for total < n {
			width *= k
			total += width
			d++
		}
		return d
	}
	for n := 1; n <= maxN; n++ {
		pow2 := n&(n-1) == 0
		want := map[string]int{
			"direct": 1,
			"mesh":   2,
			"grid":   3,
			"prefix": 1<<bits.Len(uint(n-1)) - 1,
		}
		for name, st := range want {
			r, err := New(name, n, Options{})
			require.NoError(t, err)
			require.Equal(t, st, r.Stages(), "%s n=%d", name, n)
		}
		for _, direct := range []int{0, 1, 2, 3, 9} {
			k := log2floor(n)
			st := k
			if m := min(direct, k); m >= 2 {
				st = k - m + 1
			}
			if !pow2 {
				st += 2
			}
			r, err := New("hypercube", n, Options{Direct: direct})
			require.NoError(t, err)
			require.Equal(t, st, r.Stages(), "hypercube n=%d direct=%d", n, direct)
		}
		for _, k := range []int{2, 3, 4, 7} {
			r, err := New("tree", n, Options{Degree: k})
			require.NoError(t, err)
			require.Equal(t, 2*treeDepth(n, k), r.Stages(), "tree n=%d k=%d", n, k)
		}
	}
	r, err := New("tree", 21, Options{}) // 1 + 4 + 16 = 21: depth 2 with the default degree 4
	require.NoError(t, err)
	require.Equal(t, 4, r.Stages())
	r, err = New("hypercube", 64, Options{})
	require.NoError(t, err)
	require.Equal(t, 6, r.Stages())
}

// The topological routers trade stages for fewer messages: per exchange a mesh participant
// sends to at most 2(⌈√n⌉−1) peers and a grid participant to at most the sum of its sides − 3,
// against n−1 for direct.
func TestMessagesPerParticipant(t *testing.T) {
	for n := 1; n <= maxN; n++ {
		for _, name := range []string{"mesh", "grid", "hypercube", "prefix"} {
			r, err := New(name, n, Options{})
			require.NoError(t, err)
			limit := n - 1
			switch name {
			case "mesh":
				limit = 2 * (ceilRoot(n, 2) - 1)
			case "grid":
				limit = 0
				for _, s := range r.(dims).Sizes() {
					limit += s - 1
				}
			case "hypercube":
				limit = log2floor(n) + 1 // a folded participant also sends in the fold stage
			}
			for i := 0; i < n; i++ {
				sent := 0
				for s := 0; s < r.Stages(); s++ {
					sent += len(r.SendTo(i, s))
				}
				require.LessOrEqual(t, sent, limit, "%s n=%d participant %d", name, n, i)
			}
		}
	}
}

func TestMeshLayout(t *testing.T) {
	// 7 participants on a 3x3 mesh: rows {0 1 2} {3 4 5} {6}.
	r, err := New("mesh", 7, Options{})
	require.NoError(t, err)
	require.Equal(t, []int{3, 3}, r.(dims).Sizes())
	require.Equal(t, []int{1, 2}, r.SendTo(0, 0))      // along the row
	require.Equal(t, []int{3, 6}, r.SendTo(0, 1))      // along the column
	require.Equal(t, []int{4, 5}, r.SendTo(6, 0))      // the partial row hands columns 1, 2 to the row above
	require.Equal(t, []int{3, 5, 6}, r.RecvFrom(4, 0)) // its row, and 6 for column 1
	p, err := Path(r, 6, 2)
	require.NoError(t, err)
	require.Equal(t, []int{6, 5, 2}, p)
	p, err = Path(r, 2, 6)
	require.NoError(t, err)
	require.Equal(t, []int{2, 0, 6}, p)
}

func TestNewErrors(t *testing.T) {
	cases := []struct {
		name string
		n    int
		o    Options
		want string
	}{
		{"ring", 4, Options{}, `unknown router "ring" (valid: direct, mesh, grid, hypercube, tree, prefix, shift, pairwise, xor, sync, group)`},
		{"", 4, Options{}, "unknown router"},
		{"mesh", 0, Options{}, "mesh router for 0 participants"},
		{"direct", -3, Options{}, "-3 participants"},
		{"tree", 8, Options{Degree: 1}, "Degree=1"},
		{"tree", 8, Options{Degree: -2}, "Degree=-2"},
		{"hypercube", 8, Options{Direct: -1}, "Direct=-1"},
		{"group", 8, Options{Omega: -1}, "group option Omega=-1"},
		{"sync", 0, Options{}, "sync router for 0 participants"},
	}
	for _, c := range cases {
		t.Run(c.name+c.want, func(t *testing.T) {
			r, err := New(c.name, c.n, c.o)
			require.Nil(t, r)
			require.ErrorContains(t, err, c.want)
		})
	}
	require.Equal(t, []string{"direct", "mesh", "grid", "hypercube", "tree", "prefix", "shift", "pairwise", "xor", "sync", "group"}, Names())
}

func TestPathErrors(t *testing.T) {
	r, err := New("mesh", 5, Options{})
	require.NoError(t, err)
	_, err = Path(r, 5, 0)
	require.ErrorContains(t, err, "source 5 outside 0..4")
	_, err = Path(r, 0, -1)
	require.ErrorContains(t, err, "destination -1 outside 0..4")
	// A broken router is caught.
	_, err = Path(broken{r}, 1, 3)
	require.ErrorContains(t, err, "not among its peers")
}

// broken hops straight to the destination whatever the stage's peers are.
type broken struct{ Router }

func (b broken) NextHop(at, dest, stage int) int { return dest }

func TestPartition(t *testing.T) {
	r, err := New("hypercube", 8, Options{})
	require.NoError(t, err)
	// Participant 5 (101) at stage 1 fixes bit 1: dests with bit 1 set go to 7, the others stay.
	byPeer, stay := Partition(r, 5, 1, []int{0, 2, 3, 5, 6, 9, -1})
	require.Equal(t, map[int][]int{7: {1, 2, 4}}, byPeer)
	require.Equal(t, []int{0, 3, 5, 6}, stay) // out-of-range 9 and -1 stay too
	// A peer with nothing still appears, for its empty message.
	byPeer, stay = Partition(r, 5, 0, nil)
	require.Equal(t, map[int][]int{4: nil}, byPeer)
	require.Empty(t, stay)
}

// Beyond 64 the routers still route: sampled pairs and sampled peer lists for a few larger
// sizes, powers of two and their neighbours among them.
func TestLargeSizesSampled(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	for _, c := range configs {
		for _, n := range []int{100, 127, 128, 129, 1000, 4097} {
			if c.name == "direct" && n > 1000 {
				continue // every Path check lists all n peers
			}
			if isSchedule(c.name) && n > 129 {
				continue // a schedule's tables hold all n(n−1) pairs
			}
			r, err := New(c.name, n, c.o)
			require.NoError(t, err)

			for k := 0; k < 300; k++ {
				src, dest := rng.Intn(n), rng.Intn(n)
				if _, err := Path(r, src, dest); err != nil {
					t.Fatalf("%v n=%d: %v", c, n, err)
				}
				i, s := rng.Intn(n), rng.Intn(max(r.Stages(), 1))
				if len(r.SendTo(i, s)) > 64 {
					continue // direct stages have O(n) peers each: n=1..64 checked them all
				}
				for _, j := range r.SendTo(i, s) {
					if !contains(r.RecvFrom(j, s), i) {
						t.Fatalf("%v n=%d stage %d: %d sends to %d, which does not expect it", c, n, s, i, j)
					}
				}
				for _, j := range r.RecvFrom(i, s) {
					if !contains(r.SendTo(j, s), i) {
						t.Fatalf("%v n=%d stage %d: %d expects %d, which does not send", c, n, s, i, j)
					}
				}
			}
		}
	}
}

func isSchedule(name string) bool {
	for _, s := range scheduleNames {
		if s == name {
			return true
		}
	}
	return false
}
