package reducer

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// rev is an index type with its own order, the reverse of its value's.
type rev int

func (r rev) Less(other any) bool { return r > other.(rev) }

// point is an index type with no order of its own: it sorts by fmt.Sprint.
type point struct{ X, Y int }

// shuffled returns the items as contributions, in a random order, so that
// the in-order fold of requireOrderIndependent does not see them sorted.
func shuffled(items []Item, seed uint64) []contrib {
	cs := make([]contrib, len(items))
	for i, it := range items {
		cs[i] = contrib{index: it.Index, value: it.Value}
	}
	rand.New(rand.NewPCG(seed, 1)).Shuffle(len(cs), func(i, j int) { cs[i], cs[j] = cs[j], cs[i] })
	return cs
}

func TestGatherSortsByIndex(t *testing.T) {
	for _, tc := range []struct {
		name string
		want []Item // in the expected order
	}{
		{"Ints", []Item{{-3, "a"}, {0, "b"}, {2, "c"}, {10, "d"}, {11, "e"}}},
		{"Int64s", []Item{{int64(-1), 1}, {int64(5), 2}, {int64(1 << 40), 3}}},
		{"Array2", []Item{{[2]int{0, 5}, 1}, {[2]int{1, 0}, 2}, {[2]int{1, 3}, 3}, {[2]int{2, -1}, 4}}},
		{"Array3", []Item{{[3]int{0, 0, 9}, 1}, {[3]int{0, 1, 0}, 2}, {[3]int{1, 0, 0}, 3}}},
		{"Array4", []Item{{[4]int{0, 0, 0, 1}, 1}, {[4]int{0, 0, 1, 0}, 2}}},
		{"Array5", []Item{{[5]int{1, 2, 3, 4, 4}, 1}, {[5]int{1, 2, 3, 4, 5}, 2}}},
		{"Array6", []Item{{[6]int{0, 0, 0, 0, 0, 7}, 1}, {[6]int{0, 0, 0, 0, 1, 0}, 2}, {[6]int{9, 0, 0, 0, 0, 0}, 3}}},
		{"Strings", []Item{{"", 0}, {"a", 1}, {"ab", 2}, {"b", 3}}},
		{"Lesser", []Item{{rev(9), 1}, {rev(4), 2}, {rev(-1), 3}}},
		{"Sprint", []Item{{point{1, 2}, 1}, {point{1, 3}, 2}, {point{2, 0}, 3}}},
		// Classes in order; in the last, type names order "<nil>" before "reducer.point".
		{"Mixed", []Item{{-1, 1}, {uint8(3), 2}, {[2]int{0, 0}, 3}, {"x", 4}, {rev(2), 5}, {nil, 6}, {point{}, 7}}},
		{"Single", []Item{{7, "only"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for seed := range uint64(5) {
				got := requireOrderIndependent(t, Gather, shuffled(tc.want, seed))
				require.Equal(t, tc.want, got, "seed %d", seed)
			}
		})
	}
}

func TestGatherEqualIndicesAreDeterministic(t *testing.T) {
	// Not a well-formed reduction, but its result must still not depend on
	// the order of combination: ties are ordered by value.
	cs := []contrib{{1, "b"}, {1, "a"}, {0, 2}, {1, int64(5)}, {1, 5}}
	require.Equal(t, []Item{{0, 2}, {1, 5}, {1, int64(5)}, {1, "a"}, {1, "b"}},
		requireOrderIndependent(t, Gather, cs))
}

func TestGatherManyContributors(t *testing.T) {
	const n = 300
	want := make([]Item, n)
	for i := range want {
		want[i] = Item{Index: [2]int{i / 20, i % 20}, Value: fmt.Sprint("v", i)}
	}
	require.Equal(t, want, requireOrderIndependent(t, Gather, shuffled(want, 9)))
}

func TestGatherKeepsValuesAsContributed(t *testing.T) {
	cs := []contrib{{1, []int{1, 2}}, {0, map[string]int{"a": 1}}, {2, nil}}
	require.Equal(t, []Item{{0, map[string]int{"a": 1}}, {1, []int{1, 2}}, {2, nil}},
		requireOrderIndependent(t, Gather, cs))
}

func TestConcatReturnsValuesInIndexOrder(t *testing.T) {
	cs := []contrib{{[2]int{1, 0}, "c"}, {[2]int{0, 1}, "b"}, {[2]int{0, 0}, "a"}, {[2]int{1, 1}, 4.5}}
	require.Equal(t, []any{"a", "b", "c", 4.5}, requireOrderIndependent(t, Concat, cs))
}

func TestGatherCombineDoesNotModifyOperands(t *testing.T) {
	a := []Item{{0, "a"}, {2, "c"}}
	b := []Item{{1, "b"}}
	got, err := Gather.Combine(a, b)
	require.NoError(t, err)
	require.Equal(t, []Item{{0, "a"}, {1, "b"}, {2, "c"}}, got)
	require.Equal(t, []Item{{0, "a"}, {2, "c"}}, a)
	require.Equal(t, []Item{{1, "b"}}, b)
}

func TestGatherTypeErrors(t *testing.T) {
	_, err := Gather.Combine([]Item{}, []any{1})
	require.EqualError(t, err, "reducer gather: partial result of type []interface {}, want []reducer.Item")
	require.ErrorIs(t, err, ErrType)
	_, err = Concat.Combine(1, []Item{})
	require.EqualError(t, err, "reducer concat: partial result of type int, want []reducer.Item")
	_, err = Concat.Result("x")
	require.ErrorIs(t, err, ErrType)
}
