package reducer

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

type meters float64

func TestNumericNames(t *testing.T) {
	for _, tc := range []struct {
		r    Reducer
		name string
	}{
		{SumInt, "sum_int"}, {SumInt32, "sum_int32"}, {SumInt64, "sum_int64"},
		{SumUint64, "sum_uint64"}, {SumFloat32, "sum_float32"}, {SumFloat64, "sum_float64"},
		{ProductInt, "product_int"}, {ProductInt64, "product_int64"}, {ProductFloat64, "product_float64"},
		{MinInt, "min_int"}, {MinInt64, "min_int64"}, {MinFloat64, "min_float64"},
		{MaxInt, "max_int"}, {MaxInt64, "max_int64"}, {MaxFloat64, "max_float64"},
		{Sum[uint8](), "sum_uint8"}, {Max[meters](), "max_reducer.meters"},
	} {
		require.Equal(t, tc.name, tc.r.Name())
		got, err := Lookup(tc.name)
		require.NoError(t, err)
		require.Same(t, tc.r, got, tc.name)
	}
}

func TestNumericConstructorsReturnTheRegisteredReducer(t *testing.T) {
	require.Same(t, SumInt64, Sum[int64]())
	require.Same(t, MaxFloat64, Max[float64]())
	require.Same(t, Min[int16](), Min[int16]())
	require.NotSame(t, Min[int16](), Max[int16]())
}

func TestSumProductMinMaxScalars(t *testing.T) {
	for _, tc := range []struct {
		name string
		r    Reducer
		cs   []contrib
		want any
	}{
		{"SumInt", SumInt, values(3, -5, 10), 8},
		{"SumInt64", SumInt64, values[int64](1<<40, 1<<40, -7), int64(1<<41 - 7)},
		{"SumUint8Wraps", Sum[uint8](), values[uint8](200, 100), uint8(44)},
		{"SumFloat64", SumFloat64, values(0.5, 0.25, 2.0), 2.75},
		{"SumFloat32", SumFloat32, values[float32](1.5, -0.5), float32(1)},
		{"SumNamedType", Sum[meters](), values[meters](1.5, 2), meters(3.5)},
		{"SumSingle", SumInt, values(42), 42},
		{"ProductInt", ProductInt, values(2, -3, 7), -42},
		{"ProductInt64", ProductInt64, values[int64](1<<20, 1<<20), int64(1 << 40)},
		{"ProductFloat64", ProductFloat64, values(0.5, 8.0, -1.5), -6.0},
		{"MinInt", MinInt, values(4, -2, 9, -2), -2},
		{"MinUint64", MinUint64, values[uint64](math.MaxUint64, 3, 7), uint64(3)},
		{"MinFloat64", MinFloat64, values(1.5, -0.25, math.Inf(1)), -0.25},
		{"MaxInt", MaxInt, values(4, -2, 9, -2), 9},
		{"MaxInt64", MaxInt64, values[int64](math.MinInt64, -1), int64(-1)},
		{"MaxFloat64", MaxFloat64, values(1.5, -0.25, math.Inf(-1)), 1.5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, requireOrderIndependent(t, tc.r, tc.cs))
		})
	}
}

func TestSumProductMinMaxSlicesElementWise(t *testing.T) {
	for _, tc := range []struct {
		name string
		r    Reducer
		cs   []contrib
		want any
	}{
		{"SumInt", SumInt, values([]int{1, 2, 3}, []int{10, 20, 30}, []int{100, 200, 300}), []int{111, 222, 333}},
		{"SumFloat64", SumFloat64, values([]float64{0.5, 1}, []float64{0.25, -1}), []float64{0.75, 0}},
		{"ProductInt64", ProductInt64, values([]int64{2, 3}, []int64{5, -1}, []int64{1, 4}), []int64{10, -12}},
		{"MinInt", MinInt, values([]int{5, 1}, []int{2, 8}, []int{9, 0}), []int{2, 0}},
		{"MaxFloat64", MaxFloat64, values([]float64{5, 1}, []float64{2, 8}), []float64{5, 8}},
		{"Empty", SumInt, values([]int{}, []int{}), []int{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, requireOrderIndependent(t, tc.r, tc.cs))
		})
	}
}

func TestSumManyContributionsOrderIndependent(t *testing.T) {
	// Integers sum exactly, so every order must give the same slice; 200
	// contributors make deep and lopsided trees likely.
	rng := rand.New(rand.NewPCG(3, 4))
	cs := make([]contrib, 200)
	want := make([]int64, 4)
	for i := range cs {
		v := []int64{rng.Int64N(1000), -rng.Int64N(1000), 1, int64(i)}
		for j := range v {
			want[j] += v[j]
		}
		cs[i] = contrib{index: i, value: v}
	}
	require.Equal(t, want, requireOrderIndependent(t, SumInt64, cs))
	require.Equal(t, []int64{want[0], want[1], 200, 199 * 200 / 2}, want)
}

func TestMinMaxNaNWhateverTheOrder(t *testing.T) {
	cs := values(1.0, math.NaN(), -3.0)
	for seed := range uint64(10) {
		for _, r := range []Reducer{MinFloat64, MaxFloat64} {
			got, err := reduceRandom(r, cs, rand.New(rand.NewPCG(seed, 0)))
			require.NoError(t, err)
			require.True(t, math.IsNaN(got.(float64)), "%s seed %d: %v", r.Name(), seed, got)
		}
	}
}

func TestNumericTypeErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		r     Reducer
		value any
		msg   string
	}{
		{"String", SumInt64, "7", "reducer sum_int64: contribution of type string, want int64 or []int64"},
		{"OtherInt", SumInt64, 7, "reducer sum_int64: contribution of type int, want int64 or []int64"},
		{"Nil", MaxFloat64, nil, "reducer max_float64: contribution of type <nil>, want float64 or []float64"},
		{"OtherSlice", MinInt, []int64{1}, "reducer min_int: contribution of type []int64, want int or []int"},
		{"NamedVsUnderlying", Sum[meters](), 1.5, "reducer sum_reducer.meters: contribution of type float64, want reducer.meters or []reducer.meters"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.r.Lift(tc.value, 0)
			require.EqualError(t, err, tc.msg)
			require.ErrorIs(t, err, ErrType)
		})
	}
}

func TestNumericCombineErrors(t *testing.T) {
	_, err := SumInt.Combine([]int{1, 2, 3}, []int{1, 2})
	require.EqualError(t, err, "reducer sum_int: length mismatch: 3 vs 2")
	require.ErrorIs(t, err, ErrLength)

	_, err = SumInt.Combine(1, []int{1})
	require.EqualError(t, err, "reducer sum_int: cannot combine int with []int")
	require.ErrorIs(t, err, ErrType)

	_, err = SumInt.Combine("x", 1)
	require.EqualError(t, err, "reducer sum_int: partial result of type string, want int or []int")
	_, err = SumInt.Combine(1, 2.0)
	require.EqualError(t, err, "reducer sum_int: partial result of type float64, want int or []int")
	_, err = SumInt.Result(int64(1))
	require.EqualError(t, err, "reducer sum_int: partial result of type int64, want int or []int")

	// Through a whole reduction, as the runtime would see it.
	_, err = reduceInOrder(MaxInt, values([]int{1}, []int{2}, []int{3, 4}))
	require.EqualError(t, err, "reducer max_int: length mismatch: 1 vs 2")
}

func TestNumericDoesNotAlias(t *testing.T) {
	// A contributor may reuse its buffer once it has contributed, and
	// partial results must not change under one another.
	buf := []int{1, 2}
	p, err := SumInt.Lift(buf, 0)
	require.NoError(t, err)
	buf[0] = 100
	require.Equal(t, []int{1, 2}, p)

	a, b := []int{1, 2}, []int{10, 20}
	sum, err := SumInt.Combine(a, b)
	require.NoError(t, err)
	require.Equal(t, []int{11, 22}, sum)
	require.Equal(t, []int{1, 2}, a)
	require.Equal(t, []int{10, 20}, b)
}
