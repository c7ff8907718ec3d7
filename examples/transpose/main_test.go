package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/comlib"
	"github.com/charmgo/charm/internal/extest"
)

// run runs the program in-process with a deadline that fails the test
// loudly, and returns its main chare, exit code and output.
var run = extest.Runner("transpose", &out, (*Main).Start, 60*time.Second)

var okLine = regexp.MustCompile(`^transpose: ok pes=(\d+) grid=(\d+) pencils=(\d+) router=(\S+) iters=(\d+) blocks=(\d+) lost=0 duplicated=0 bad=0 maxdiff=0 migrations=(\d+) recoveries=(\d+) learning=[01] optimized=(\d+) ms_per_iter=\S+$`)

// lastOK checks that the output ends with the ok line and returns its
// fields.
func lastOK(t *testing.T, output string) []string {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(output), "\n")
	mt := okLine.FindStringSubmatch(lines[len(lines)-1])
	require.NotNil(t, mt, "last line of:\n%s", output)
	return mt
}

// TestSequentialMatchesValue: the reference transposes agree with the
// closed form the pencils check their blocks against.
func TestSequentialMatchesValue(t *testing.T) {
	const g = 6
	for iters := 0; iters < 4; iters++ {
		a := Sequential(g, iters)
		for r := 0; r < g; r++ {
			for c := 0; c < g; c++ {
				require.Equal(t, Value(g, iters, r, c), a[r*g+c], "iters %d, (%d, %d)", iters, r, c)
			}
		}
	}
}

// TestPlan: every planned event moves one pencil and swaps two on
// different PEs, so a PE's count changes by the one move only.
func TestPlan(t *testing.T) {
	loc := []int64{0, 0, 1, 1, 2, 2, 3, 3}
	moves := Plan(loc, 4, 12, 3)
	require.Len(t, moves, 3)
	cur := map[int]int{}
	for i, pe := range loc {
		cur[i] = int(pe)
	}
	for k, it := range []int{3, 6, 9} {
		mv := moves[it]
		require.Len(t, mv, 3, "iteration %d: a move and a swap", it)
		a := k % len(loc)
		require.Equal(t, (cur[a]+1)%4, mv[a], "pencil %d goes to the next PE", a)
		var pair []int
		for i := range mv {
			if i != a {
				pair = append(pair, i)
			}
		}
		require.Len(t, pair, 2)
		b, c := pair[0], pair[1]
		require.NotEqual(t, cur[b], cur[c], "the swapped pencils were on different PEs")
		require.Equal(t, cur[b], mv[c])
		require.Equal(t, cur[c], mv[b])
		for i, pe := range mv {
			cur[i] = pe
		}
	}
	require.Empty(t, Plan(loc, 1, 12, 3), "one PE: nowhere to go")
	require.Empty(t, Plan(loc, 4, 12, 0), "-migrate-every 0")
}

// TestTranspose runs the transposes through every router, with
// migrations and swaps, and checks that each migration's iteration was
// recovered and that only those and the first were.
func TestTranspose(t *testing.T) {
	for _, rt := range comlib.Routers() {
		t.Run(rt, func(t *testing.T) {
			m, code, output := run(t, 4, "-router", rt, "-grid", "32", "-pencils", "8", "-iters", "10", "-migrate-every", "3")
			require.Equal(t, 0, code, output)
			mt := lastOK(t, output)
			require.Equal(t, []string{"4", "32", "8", rt, "10", fmt.Sprint(10 * 8 * 7)}, mt[1:7])
			require.Equal(t, "9", mt[7], "3 events of a move and a swap")
			require.Equal(t, "3", mt[8])
			require.Equal(t, append([]int{0}, m.res.MoveIters...), m.res.Recovered)
			require.Equal(t, []int{3, 6, 9}, m.res.MoveIters)
			require.Positive(t, m.res.Stats.Optimized)
		})
	}
}

func TestTransposeOnePEAndUnevenPEs(t *testing.T) {
	for _, pes := range []int{1, 3} {
		m, code, output := run(t, pes, "-grid", "24", "-pencils", "6", "-iters", "7", "-migrate-every", "2", "-router", "tree")
		require.Equal(t, 0, code, output)
		mt := lastOK(t, output)
		if pes == 1 {
			require.Equal(t, "0", mt[7], "nowhere to migrate")
			require.Equal(t, []int{0}, m.res.Recovered)
		} else {
			require.Equal(t, []int{0, 2, 4, 6}, m.res.Recovered)
		}
	}
}

func TestTransposeBadArguments(t *testing.T) {
	for _, args := range [][]string{{"-router", "bogus"}, {"-grid", "10", "-pencils", "3"}, {"-iters", "0"}, {"-migrate-every", "-1"}, {"extra"}} {
		_, code, output := run(t, 2, args...)
		require.NotEqual(t, 0, code, "%v", args)
		require.True(t, strings.HasPrefix(output, "transpose: FAILED bad arguments: "), "%v: %q", args, output)
	}
	_, _, output := run(t, 2, "-router", "bogus")
	for _, r := range comlib.Routers() {
		require.Contains(t, output, r, "the error lists the routers")
	}
}

// TestTransposeTwoProcesses runs the transposes as two processes
// (-nodes 2), so that pencils migrate between processes, with two routers.
func TestTransposeTwoProcesses(t *testing.T) {
	for _, rt := range []string{"mesh", "hypercube"} {
		t.Run(rt, func(t *testing.T) {
			code, output := extest.RunProcesses(t, &out, (*Main).Start, chare.Config{PEs: 4, Nodes: 2,
				Args: []string{"-router", rt, "-grid", "32", "-pencils", "8", "-iters", "10", "-migrate-every", "3"}, Timeout: 60 * time.Second})
			require.Equal(t, 0, code, output)
			mt := lastOK(t, output)
			require.Equal(t, []string{rt, "10", "560", "9", "3"}, []string{mt[4], mt[5], mt[6], mt[7], mt[8]})
		})
	}
}

// TestTransposeOnePencil: a lone pencil has nothing to exchange and runs
// ahead of the strategy's lists while it moves; nothing is lost and the
// result is still the sequential one.
func TestTransposeOnePencil(t *testing.T) {
	m, code, output := run(t, 2, "-pencils", "1", "-grid", "8", "-iters", "9", "-migrate-every", "2", "-router", "hypercube")
	require.Equal(t, 0, code, output)
	mt := lastOK(t, output)
	require.Equal(t, "0", mt[6], "no blocks between pencils")
	require.Equal(t, "4", mt[7])
	require.Equal(t, 0, m.res.Recovered[0])
}

// TestTransposeAuto: -router auto sends the blocks through comlib.Auto
// and the package's default selection tree, declaring their size (S05):
// -explain prints one line per iteration and choice, naming the branches
// pruned when the strategy was made, the msg_size one among them, with
// nothing walked per block; the last line is still the ok line.
func TestTransposeAuto(t *testing.T) {
	m, code, output := run(t, 4, "-router", "auto", "-explain", "-grid", "32", "-pencils", "8", "-iters", "10", "-migrate-every", "3")
	require.Equal(t, 0, code, output)
	mt := lastOK(t, output)
	require.Equal(t, []string{"4", "32", "8", "auto", "10", "560"}, mt[1:7])
	require.Len(t, m.res.Explain, 10, "one choice per iteration: the blocks are all 16+8·16 bytes")
	// "any size", 0 nodes: the declared size pruned the msg_size branch
	// when the instance was made, and no block is sized.
	line := regexp.MustCompile(`^explain: iteration (\d+): (\d+) messages of any size -> (\S+) via collective=alltoall \(pruned\) > .*msg_size\S+ \(pruned\); 0 nodes$`)
	var iters []string
	var total int
	for _, l := range strings.Split(output, "\n") {
		if !strings.HasPrefix(l, "explain: iteration") {
			continue
		}
		mt := line.FindStringSubmatch(l)
		require.NotNil(t, mt, l)
		iters = append(iters, mt[1])
		n := 0
		fmt.Sscan(mt[2], &n)
		total += n
		require.Contains(t, m.res.Served, mt[3])
	}
	require.Equal(t, []string{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"}, iters)
	require.Equal(t, 560, total)
	if m.res.Stats.Iterations > 0 { // the default tree keeps a bracketed strategy here
		require.Equal(t, append([]int{0}, m.res.MoveIters...), m.res.Recovered)
	}

	_, code, output = run(t, 2, "-explain", "-router", "mesh")
	require.NotEqual(t, 0, code)
	require.Contains(t, output, "-explain explains -router auto")
}

// TestS05_TransposeDeclaresItsBlockSize: with a tree that splits by
// msg_size, the declared block size (two ints and (grid/pencils)²
// float64s) chooses the one strategy Auto makes: 48 B blocks go directly,
// 144 B ones through the mesh, and -explain names the branch taken at
// creation.
func TestS05_TransposeDeclaresItsBlockSize(t *testing.T) {
	file := filepath.Join(t.TempDir(), "sel.json")
	require.NoError(t, os.WriteFile(file, []byte(`{"msg_size<=100": {"strategy=direct": {}}, "msg_size=any": {"router=mesh": {}}}`), 0o644))
	for _, tc := range []struct {
		grid, branch, container string
		bracketed               bool
	}{
		{"16", "msg_size<=100", "strategy=direct", false}, // 2×2 floats: 16+32 B
		{"32", "msg_size=any", "router=mesh", true},       // 4×4 floats: 16+128 B
	} {
		t.Run(tc.grid, func(t *testing.T) {
			m, code, output := extest.Run(t, "transpose", &out, (*Main).Start, chare.Config{PEs: 4, Timeout: 60 * time.Second,
				Flags: map[string]string{comlib.FlagSelect: file},
				Args:  []string{"-router", "auto", "-explain", "-grid", tc.grid, "-pencils", "8", "-iters", "6", "-migrate-every", "3"}})
			require.Equal(t, 0, code, output)
			lastOK(t, output)
			require.Equal(t, map[string]int64{tc.container: 6 * 8 * 7}, m.res.Served)
			require.Len(t, m.res.Explain, 6)
			for _, c := range m.res.Explain {
				require.Equal(t, tc.container, c.Container)
				require.Equal(t, tc.branch+" (pruned); 0 nodes", c.Trace)
			}
			require.Equal(t, tc.bracketed, m.res.Stats.Iterations > 0)
		})
	}
}
