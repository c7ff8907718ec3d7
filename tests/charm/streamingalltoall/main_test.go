package main

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/internal/extest"
)

var run = extest.Runner("streamingalltoall", &out, (*Main).Start, 60*time.Second)

func TestSizes(t *testing.T) {
	require.Equal(t, []int{32, 64, 128}, Sizes(32, 128))
	require.Equal(t, []int{32, 64}, Sizes(32, 100))
	require.Equal(t, []int{64}, Sizes(64, 64))
}

func TestShuffled(t *testing.T) {
	for pe := range 5 {
		nb := Shuffled(pe, 5)
		require.Equal(t, []int{0, 1, 2, 3, 4}, slices.Sorted(slices.Values(nb)), "every PE once")
		require.Equal(t, nb, Shuffled(pe, 5), "the same order every time")
	}
}

func figures(sizes []int) []string {
	var f []string
	for _, how := range []string{"tram", "direct"} {
		for _, b := range sizes {
			f = append(f, fmt.Sprintf("seconds_%s_%dB", how, b))
		}
	}
	return f
}

func TestStreamingAllToAll(t *testing.T) {
	for _, pes := range []int{1, 2, 4} {
		m, code, output := run(t, pes, "32", "4096", "64")
		extest.RequireOK(t, "streamingalltoall", code, output, figures([]int{32, 64, 128, 256, 512, 1024, 2048, 4096})...)
		require.Len(t, m.tram, 8)
	}
	// Far more items than yieldEvery: the threaded senders yield.
	_, code, output := run(t, 2, "65536", "65536")
	extest.RequireOK(t, "streamingalltoall", code, output, figures([]int{65536})...)
}

func TestStreamingAllToAllTwoProcesses(t *testing.T) {
	code, output := extest.RunProcesses(t, &out, (*Main).Start, chare.Config{PEs: 2, Nodes: 2, Args: []string{"32", "1024"}, Timeout: 60 * time.Second})
	extest.RequireOK(t, "streamingalltoall", code, output, figures([]int{32, 64, 128, 256, 512, 1024})...)
}

func TestStreamingAllToAllBadArguments(t *testing.T) {
	for _, args := range [][]string{{"16", "64"}, {"64", "32"}, {"32", "64", "0"}, {"x"}, {"32", "64", "8", "1"}} {
		_, code, output := run(t, 2, args...)
		require.Equal(t, 2, code, "%v", args)
		require.True(t, strings.HasPrefix(output, "streamingalltoall: FAILED bad arguments: "), "%v: %q", args, output)
	}
}
