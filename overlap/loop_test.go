package overlap_test

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/overlap"
)

// TestE04_LoopPriority: arrived data first, then pushes into non-full
// buffers, else local computations.
func TestE04_LoopPriority(t *testing.T) {
	for _, tc := range []struct {
		arrived, pushable bool
		want              overlap.Action
	}{
		{true, true, overlap.Treat},
		{true, false, overlap.Treat},
		{false, true, overlap.Push},
		{false, false, overlap.Compute},
	} {
		require.Equal(t, tc.want, overlap.Decide(tc.arrived, tc.pushable), "%+v", tc)
	}
	require.Equal(t, "compute", overlap.Compute.String())
	require.Equal(t, "Action(9)", overlap.Action(9).String())
}

// TestE05_PComputationsPerTest: a loop with p = 2.5 does 2 or 3 local
// computations per idle test, 2.5 on average, and none on busy turns.
func TestE05_PComputationsPerTest(t *testing.T) {
	l, err := overlap.NewLoop(2.5)
	require.NoError(t, err)
	total := 0
	for i := 0; i < 100; i++ {
		a, n := l.Next(false, false)
		require.Equal(t, overlap.Compute, a)
		require.Contains(t, []int{2, 3}, n)
		total += n
		a, n = l.Next(i%2 == 0, true)
		require.NotEqual(t, overlap.Compute, a)
		require.Zero(t, n)
	}
	require.Equal(t, 250, total)
	require.Equal(t, 2.5, l.P(), "a fixed loop keeps its p")
	_, err = overlap.NewLoop(math.Inf(1))
	require.Error(t, err)
}

// TestE11_FastLoop: after a test that found communication p halves (fast
// decrease); after one that found none it grows by the step.
func TestE11_FastLoop(t *testing.T) {
	l, err := overlap.NewFastLoop(1)
	require.NoError(t, err)
	type turn struct {
		arrived bool
		a       overlap.Action
		n       int
		p       float64
	}
	var got []turn
	for _, arrived := range []bool{false, false, false, true, true, false, false} {
		a, n := l.Next(arrived, false)
		got = append(got, turn{arrived, a, n, l.P()})
	}
	require.Equal(t, []turn{
		{false, overlap.Compute, 2, 2},
		{false, overlap.Compute, 3, 3},
		{false, overlap.Compute, 4, 4},
		{true, overlap.Treat, 0, 2},
		{true, overlap.Treat, 0, 1},
		{false, overlap.Compute, 2, 2},
		{false, overlap.Compute, 3, 3},
	}, got)
	_, err = overlap.NewFastLoop(-1)
	require.ErrorContains(t, err, "step")
	require.True(t, strings.HasPrefix(err.Error(), "overlap:"))
}
