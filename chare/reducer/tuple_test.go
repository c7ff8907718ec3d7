package reducer

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestTupleReducesEachPosition(t *testing.T) {
	r := Tuple(SumInt64, MaxFloat64, Gather, Set)
	cs := []contrib{
		{2, []any{int64(5), 1.5, "c", []string{"x"}}},
		{0, []any{int64(-2), 9.25, "a", []string{"y", "x"}}},
		{1, []any{int64(10), -3.0, "b", []string{}}},
	}
	got := requireOrderIndependent(t, r, cs)
	require.Equal(t, []any{
		int64(13),
		9.25,
		[]Item{{0, "a"}, {1, "b"}, {2, "c"}}, // Gather sees the tuple's index
		[]any{"x", "y"},
	}, got)
}

func TestTupleOfSlicesAndStats(t *testing.T) {
	r := Tuple(SumInt, Stats)
	got := requireOrderIndependent(t, r, []contrib{
		{0, []any{[]int{1, 2}, 2}},
		{1, []any{[]int{3, 4}, 4}},
	})
	require.Equal(t, []any{[]int{4, 6}, Statistics{Count: 2, Mean: 3, Variance: 1}}, got)
}

func TestTupleNameAndRegistration(t *testing.T) {
	r := Tuple(SumInt64, MaxFloat64)
	require.Equal(t, "tuple(sum_int64,max_float64)", r.Name())
	got, err := Lookup("tuple(sum_int64,max_float64)")
	require.NoError(t, err)
	require.Same(t, r, got)
	// Building it again returns the registered one; registering it again
	// is fine.
	require.Same(t, r, Tuple(Sum[int64](), Max[float64]()))
	require.NoError(t, Register(r))
	// Order matters.
	require.Equal(t, "tuple(max_float64,sum_int64)", Tuple(MaxFloat64, SumInt64).Name())
	require.NotSame(t, r, Tuple(MaxFloat64, SumInt64))
	// Tuples nest.
	require.Equal(t, "tuple(nop,tuple(and,or))", Tuple(Nop, Tuple(And, Or)).Name())
}

func TestTuplePanics(t *testing.T) {
	require.PanicsWithValue(t, "reducer: Tuple: reducer 1 is nil", func() { Tuple(SumInt, nil) })
	name := "tuple(" + uniqueName(t) + ")"
	_, err := User(name, func(a, _ any) (any, error) { return a, nil })
	require.NoError(t, err)
	// The would-be tuple's name is taken by a user reducer.
	member := &user{name: name[len("tuple(") : len(name)-1]}
	require.Panics(t, func() { Tuple(member) })
}

func TestTupleErrors(t *testing.T) {
	r := Tuple(SumInt, And)
	_, err := r.Lift([]any{1}, 0)
	require.EqualError(t, err, "reducer tuple(sum_int,and): contribution holds 1 values, want 2")
	require.ErrorIs(t, err, ErrLength)

	_, err = r.Lift([]int{1, 2}, 0)
	require.EqualError(t, err, "reducer tuple(sum_int,and): contribution of type []int, want []any")
	require.ErrorIs(t, err, ErrType)

	_, err = r.Lift([]any{1, "yes"}, 0)
	require.EqualError(t, err, "reducer tuple(sum_int,and): value 1: reducer and: contribution of type string, want bool or []bool")
	require.ErrorIs(t, err, ErrType)

	_, err = r.Combine([]any{[]int{1}, true}, []any{[]int{1, 2}, true})
	require.EqualError(t, err, "reducer tuple(sum_int,and): value 0: reducer sum_int: length mismatch: 1 vs 2")
	require.ErrorIs(t, err, ErrLength)

	_, err = r.Combine([]any{1, true}, []any{1, true, false})
	require.EqualError(t, err, "reducer tuple(sum_int,and): partial result holds 3 values, want 2")
	_, err = r.Combine([]any{1, true}, "x")
	require.EqualError(t, err, "reducer tuple(sum_int,and): partial result of type string, want []any")
	_, err = r.Result(nil)
	require.EqualError(t, err, "reducer tuple(sum_int,and): partial result of type <nil>, want []any")
	_, err = r.Result([]any{1, 2})
	require.EqualError(t, err, "reducer tuple(sum_int,and): value 1: reducer and: partial result of type int, want bool or []bool")
}
