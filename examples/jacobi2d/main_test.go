package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/internal/extest"
)

// run runs the program in-process with a deadline that fails the test
// loudly, and returns its main chare, exit code and output.
var run = extest.Runner("jacobi2d", &out, (*Main).Start, 60*time.Second)

func TestJacobi2D(t *testing.T) {
	cases := []Params{
		{Grid: 24, Blocks: 3, Iters: 2000, Tol: 1e-3}, // stops on the tolerance
		{Grid: 17, Blocks: 4, Iters: 25, Tol: 0},      // uneven blocks, stops on the count
		{Grid: 8, Blocks: 1, Iters: 10, Tol: 0},       // one block: no ghosts at all
		{Grid: 5, Blocks: 5, Iters: 7, Tol: 0},        // one point per block
	}
	for _, pes := range []int{1, 3} {
		for _, p := range cases {
			t.Run(fmt.Sprintf("pes=%d/grid=%d/blocks=%d", pes, p.Grid, p.Blocks), func(t *testing.T) {
				m, code, output := run(t, pes, "-grid", fmt.Sprint(p.Grid), "-blocks", fmt.Sprint(p.Blocks),
					"-iters", fmt.Sprint(p.Iters), "-tol", fmt.Sprint(p.Tol))
				require.Equal(t, 0, code, output)

				_, iters, residual := Sequential(p)
				if p.Tol == 0 {
					require.Equal(t, p.Iters, iters)
				} else {
					require.Less(t, iters, p.Iters, "the case should stop on the tolerance")
					require.Less(t, residual, p.Tol)
				}
				require.Equal(t, iters, m.res.Iters)
				require.Equal(t, residual, m.res.Residual)
				require.LessOrEqual(t, m.res.MaxDiff, 1e-12)

				lines := strings.Split(strings.TrimSpace(output), "\n")
				require.Len(t, lines, 1, output)
				require.True(t, strings.HasPrefix(lines[0], fmt.Sprintf("jacobi2d: ok grid=%d blocks=%dx%d iters=%d residual=",
					p.Grid, p.Blocks, p.Blocks, iters)), lines[0])
			})
		}
	}
}

// TestSequential checks the reference solver against a property of the
// exact solution: on a square with the top edge at 1 and the others at 0,
// the value at the centre is 1/4 (by symmetry, the four rotations of the
// problem add up to the constant 1).
func TestSequential(t *testing.T) {
	p := Params{Grid: 15, Blocks: 1, Iters: 100000, Tol: 1e-13}
	grid, iters, _ := Sequential(p)
	require.Less(t, iters, p.Iters)
	require.InDelta(t, 0.25, grid[7*15+7], 1e-9)
}

func TestJacobi2DBadFlags(t *testing.T) {
	for _, args := range [][]string{{"-blocks", "0"}, {"-grid", "4", "-blocks", "5"}, {"-iters", "0"}, {"-grid", "8", "-p", "2"}} {
		_, code, output := run(t, 1, args...)
		require.NotEqual(t, 0, code, "%v", args)
		require.True(t, strings.HasPrefix(output, "jacobi2d: FAILED "), "%v: %q", args, output)
	}
}

// TestJacobi2DTwoProcesses runs the stencil as two processes (-nodes 2)
// and checks it against the sequential solve, as the example does.
func TestJacobi2DTwoProcesses(t *testing.T) {
	code, output := extest.RunProcesses(t, &out, (*Main).Start, chare.Config{PEs: 4, Nodes: 2,
		Args: []string{"-grid", "24", "-blocks", "3", "-iters", "200", "-tol", "0"}, Timeout: 60 * time.Second})
	require.Equal(t, 0, code, output)
	require.Contains(t, output, "jacobi2d: ok grid=24 blocks=3x3 iters=200")
	require.Contains(t, output, "maxdiff=0")
}

// TestJacobi2DCheckpointRestart checkpoints the stencil mid-run, restarts
// it from the checkpoint on other PE counts (and as two processes), and
// gets the result of an uninterrupted run.
func TestJacobi2DCheckpointRestart(t *testing.T) {
	args := []string{"-grid", "20", "-blocks", "4", "-iters", "40", "-tol", "0"}
	_, code, plain := run(t, 3, args...)
	require.Equal(t, 0, code, plain)
	want := strings.TrimSpace(plain)
	require.True(t, strings.HasPrefix(want, "jacobi2d: ok grid=20 blocks=4x4 iters=40 "), want)

	dir := t.TempDir()
	_, code, output := run(t, 3, append(args, "-checkpoint", dir, "-checkpoint-at", "15")...)
	require.Equal(t, 0, code, output)
	require.Equal(t, "jacobi2d: checkpoint written to "+dir+" after iteration 15\n"+want, strings.TrimSpace(output))

	for _, pes := range []int{1, 2, 5} {
		_, code, output := extest.Run(t, "jacobi2d", &out, (*Main).Start, chare.Config{PEs: pes, Restart: dir, Timeout: 60 * time.Second})
		require.Equal(t, 0, code, output)
		require.Equal(t, fmt.Sprintf("jacobi2d: restarted after iteration 15 on %d PEs\n%s", pes, want), strings.TrimSpace(output))
	}
}

// TestJacobi2DRestartTwoProcesses restarts from a checkpoint of one
// process as a job of two.
func TestJacobi2DRestartTwoProcesses(t *testing.T) {
	dir := t.TempDir()
	var want string
	if !chare.IsLaunchedNode() { // the launched node only joins the job below
		args := []string{"-grid", "12", "-blocks", "3", "-iters", "30", "-tol", "0"}
		_, code, plain := run(t, 2, args...)
		require.Equal(t, 0, code, plain)
		want = strings.TrimSpace(plain)
		_, code, output := run(t, 2, append(args, "-checkpoint", dir, "-checkpoint-at", "9")...)
		require.Equal(t, 0, code, output)
	}
	code, output := extest.RunProcesses(t, &out, (*Main).Start, chare.Config{PEs: 4, Nodes: 2, Restart: dir, Timeout: 60 * time.Second})
	require.Equal(t, 0, code, output)
	require.Contains(t, output, "jacobi2d: restarted after iteration 9 on 4 PEs\n"+want)
}

func TestJacobi2DRestartBadDirectory(t *testing.T) {
	_, err := chare.Run(chare.Config{PEs: 2, Restart: t.TempDir()}, (*Main).Start)
	require.ErrorContains(t, err, "no checkpoint in")
}

// TestJacobi2DLoadBalancing: with imbalance and AtSync steps, the blocks
// migrate between steps (the balancer moves them) and the result is the
// sequential one to the bit.
func TestJacobi2DLoadBalancing(t *testing.T) {
	args := []string{"-grid", "32", "-blocks", "4", "-iters", "60", "-tol", "0", "-imbalance", "4", "-lbevery", "10"}
	for _, bal := range []string{"greedy", "refine", "rotate"} {
		_, code, output := extest.Run(t, "jacobi2d", &out, (*Main).Start, chare.Config{PEs: 3, Args: args,
			Flags: map[string]string{"balancer": bal}, Timeout: 60 * time.Second})
		require.Equal(t, 0, code, output)
		require.Contains(t, output, "jacobi2d: ok grid=32 blocks=4x4 iters=60 ", bal)
		require.Contains(t, output, "maxdiff=0 iter_ms_after_lb=", bal)
	}
	// Periodic steps: the blocks move whenever a step reaches them, in the
	// middle of their iterations (anytime migration).
	_, code, output := extest.Run(t, "jacobi2d", &out, (*Main).Start, chare.Config{PEs: 3,
		Args:  []string{"-grid", "32", "-blocks", "6", "-iters", "150", "-tol", "0", "-imbalance", "3"},
		Flags: map[string]string{"balancer": "greedy", "lbperiod": "2ms"}, Timeout: 60 * time.Second})
	require.Equal(t, 0, code, output)
	require.Contains(t, output, "jacobi2d: ok grid=32 blocks=6x6 iters=150 ")
	require.Contains(t, output, "maxdiff=0")
	_, code, output = run(t, 2, "-imbalance", "0")
	require.NotEqual(t, 0, code)
	require.Contains(t, output, "-imbalance 0")
}
