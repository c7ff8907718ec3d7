package array

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The table of homes that a dense array keeps gives, for every index, the
// PE its map gives; an index outside the shape, a sparse array and an
// array over homeCacheMax elements ask the map.
func TestHomesTableAgreesWithMap(t *testing.T) {
	maps := map[string]Map{
		"block":       Block,
		"round-robin": RoundRobin,
		"func":        MapFunc(func(i [2]int, npes int) int { return (3*i[0] + i[1]) % npes }),
	}
	for name, m := range maps {
		if name == "func" {
			a := &info[[2]int]{shape: Dims2(7, 5), m: m, npes: 3}
			a.cacheHomes()
			require.Len(t, a.homes, 35, name)
			for p := range 35 {
				i := a.shape.At(p)
				require.Equal(t, a.homeAt(i, p), a.home(i), "%s: index %v", name, i)
			}
			continue
		}
		a := &info[int]{shape: Dims(37), m: m, npes: 4}
		a.cacheHomes()
		require.Len(t, a.homes, 37, name)
		seen := map[int]bool{}
		for i := range 37 {
			require.Equal(t, a.homeAt(i, i), a.home(i), "%s: index %d", name, i)
			seen[a.home(i)] = true
		}
		require.Len(t, seen, 4, "%s: every PE is some index's home", name)
		require.Equal(t, a.homeAt(40, 40), a.home(40), "%s: an index outside the shape asks the map", name)
	}

	sparse := &info[int]{shape: Sparse[int](), m: Hash, npes: 4, sparse: true}
	sparse.cacheHomes()
	require.Nil(t, sparse.homes, "a sparse array has no table")
	big := &info[int]{shape: Dims(homeCacheMax + 1), m: Block, npes: 4}
	big.cacheHomes()
	require.Nil(t, big.homes, "an array over homeCacheMax elements has no table")
	require.Equal(t, big.homeAt(homeCacheMax, homeCacheMax), big.home(homeCacheMax))
}
