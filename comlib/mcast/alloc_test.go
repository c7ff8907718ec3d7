package mcast

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestChildrenCostDoesNotGrowWithDestinations: every PE on a plan calls
// Children for every multicast, so checking the destinations must not
// allocate per destination (it once formatted an error label for each,
// a third of the CPU of comlib/multicast/16B).
func TestChildrenCostDoesNotGrowWithDestinations(t *testing.T) {
	allocs := func(n int) float64 {
		dests := make([]int, n)
		for i := range dests {
			dests[i] = i + 1
		}
		o := Options{NumPEs: n + 1}
		return testing.AllocsPerRun(50, func() {
			if _, err := Children(Tree, o, 0, dests, 0); err != nil {
				t.Fatal(err)
			}
		})
	}
	few, many := allocs(8), allocs(512)
	require.Equal(t, few, many, "allocations for 8 destinations and for 512")
}
