package reducer

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSetDistinctSortedValues(t *testing.T) {
	for _, tc := range []struct {
		name string
		cs   []contrib
		want []any
	}{
		{"Ints", values(3, 1, 3, 2, 1), []any{1, 2, 3}},
		{"Floats", values(2.5, -1.0, 2.5, 0.0), []any{-1.0, 0.0, 2.5}},
		{"IntsAndFloatsNumerically", values[any](10, 2.5, 3, -0.5), []any{-0.5, 2.5, 3, 10}},
		{"Strings", values("pear", "apple", "fig", "apple"), []any{"apple", "fig", "pear"}},
		{"SliceElements", values([]int{5, 1}, []int{1, 7}, []int{}), []any{1, 5, 7}},
		{"AnySliceElements", values([]any{"b", 2}, []any{"a", 2}), []any{2, "a", "b"}},
		{"SlicesAndScalars", values[any]([]string{"x", "y"}, "x", "z"), []any{"x", "y", "z"}},
		// Equal numbers order by type name: float64, int, int64.
		{"EqualValuesOfTwoTypes", values[any](1, int64(1), 1.0), []any{1.0, 1, int64(1)}},
		{"Others", values[any](point{2, 0}, point{1, 9}, point{2, 0}, true), []any{true, point{1, 9}, point{2, 0}}},
		{"Arrays", values([2]int{1, 0}, [2]int{0, 3}, [2]int{1, 0}), []any{[2]int{0, 3}, [2]int{1, 0}}},
		{"Empty", values[any]([]int{}, []string(nil)), []any{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, requireOrderIndependent(t, Set, tc.cs))
		})
	}
}

func TestSetNegativeZeroAndNaN(t *testing.T) {
	// -0 == +0 in Go, but the set keeps both, in a fixed order, rather
	// than whichever came first; NaNs are all distinct and sort last.
	res := requireOrderIndependent(t, Set, values(0.0, math.Copysign(0, -1), 1.0))
	elems := res.([]any)
	require.Len(t, elems, 3)
	require.True(t, math.Signbit(elems[0].(float64)))
	require.Equal(t, []any{0.0, 1.0}, elems[1:])

	res, err := reduceInOrder(Set, values(math.NaN(), 1.0, math.NaN()))
	require.NoError(t, err)
	elems = res.([]any)
	require.Len(t, elems, 3)
	require.Equal(t, 1.0, elems[0])
	require.True(t, math.IsNaN(elems[1].(float64)) && math.IsNaN(elems[2].(float64)))
}

func TestSetManyOverlappingContributions(t *testing.T) {
	// Contributor i adds i%50 and (i*7)%50: together every number below 50.
	cs := make([]contrib, 400)
	for i := range cs {
		cs[i] = contrib{index: i, value: []int{i % 50, (i * 7) % 50}}
	}
	want := make([]any, 50)
	for i := range want {
		want[i] = i
	}
	require.Equal(t, want, requireOrderIndependent(t, Set, cs))
}

func TestSetErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		value any
		msg   string
	}{
		{"Nil", nil, "reducer set: element of type <nil> is not comparable"},
		{"Map", map[int]int{}, "reducer set: element of type map[int]int is not comparable"},
		{"SliceOfSlices", [][]int{{1}}, "reducer set: element of type []int is not comparable"},
		{"NilInSlice", []any{1, nil}, "reducer set: element of type <nil> is not comparable"},
		{"StructHoldingSlice", struct{ A any }{[]int{1}}, "reducer set: element of type struct { A interface {} } is not comparable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Set.Lift(tc.value, 0)
			require.EqualError(t, err, tc.msg)
			require.ErrorIs(t, err, ErrType)
		})
	}
	_, err := Set.Combine("x", []any{1})
	require.EqualError(t, err, "reducer set: partial result of type string, want []any")
	_, err = Set.Combine([]any{1}, []int{1})
	require.EqualError(t, err, "reducer set: partial result of type []int, want []any")
}

func TestSetCombineDoesNotModifyOperands(t *testing.T) {
	a, b := []any{1, 3}, []any{1, 2}
	got, err := Set.Combine(a, b)
	require.NoError(t, err)
	require.Equal(t, []any{1, 2, 3}, got)
	require.Equal(t, []any{1, 3}, a)
	require.Equal(t, []any{1, 2}, b)
}
