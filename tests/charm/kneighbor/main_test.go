package main

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/internal/extest"
)

var run = extest.Runner("kneighbor", &out, (*Main).Start, 60*time.Second)

func TestNeighbours(t *testing.T) {
	// Charm++'s wrap-around: with 2 elements, element 0's K = 3 on the
	// left are -3, -2, -1 and on the right 1, 2, 3, modulo 2.
	require.Equal(t, []int{1, 0, 1, 1, 0, 1}, Neighbours(0, 2))
	require.Equal(t, []int{7, 8, 9, 1, 2, 3}, Neighbours(0, 10))
	require.Equal(t, []int{2, 3, 4, 6, 7, 8}, Neighbours(5, 10))
	require.Equal(t, []int{6, 7, 8, 0, 1, 2}, Neighbours(9, 10))
}

func TestPlace(t *testing.T) {
	var got []int
	for e := range 5 {
		got = append(got, Place(e, 5, 2))
	}
	// ⌊5/2⌋ = 2 elements a block; the fifth wraps to PE 0.
	require.Equal(t, []int{0, 0, 1, 1, 0}, got)
}

func TestMean(t *testing.T) {
	require.Equal(t, 2.0, Mean([]float64{3, 1, 9}), "the fastest len−1 of at most 100")
	times := make([]float64, 150)
	for i := range times {
		times[i] = float64(150 - i)
	}
	require.Equal(t, 50.5, Mean(times), "the fastest 100 of more")
}

func TestKneighbor(t *testing.T) {
	for _, c := range [][]string{{"2", "5", "64"}, {"4", "3", "16384"}, {"-alloc", "new", "2", "3", "1024"}} {
		_, code, output := run(t, 2, c...)
		kv := extest.RequireOK(t, "kneighbor", code, output, "us_per_iteration_avg", "lowest", "median", "highest")
		require.Equal(t, c[len(c)-3], kv["elements"])
		require.Equal(t, c[len(c)-1], kv["msgbytes"])
	}
	_, code, output := run(t, 2, "1", "2", "8")
	kv := extest.RequireOK(t, "kneighbor", code, output, "us_per_iteration_avg")
	require.Equal(t, "2", kv["elements"], "at least one element per PE")
}

func TestKneighborTwoProcesses(t *testing.T) {
	code, output := extest.RunProcesses(t, &out, (*Main).Start, chare.Config{PEs: 2, Nodes: 2, Args: []string{"2", "3", "16384"}, Timeout: 60 * time.Second})
	extest.RequireOK(t, "kneighbor", code, output, "us_per_iteration_avg")
}

func TestKneighborBadArguments(t *testing.T) {
	for _, args := range [][]string{nil, {"2", "1", "64"}, {"2", "5", "x"}, {"2", "5", "64", "1"}, {"-alloc", "pool", "2", "5", "64"}} {
		_, code, output := run(t, 2, args...)
		require.Equal(t, 2, code, "%v", args)
		require.True(t, strings.HasPrefix(output, "kneighbor: FAILED bad arguments: "), "%v: %q", args, output)
	}
}
