package reducer

import (
	"bytes"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"
)

func TestCodecNumericScalars(t *testing.T) {
	for _, tc := range []struct {
		r    Reducer
		cs   []contrib
		want any
	}{
		// Small int64 values, which msgpack writes in one byte and would
		// read back into an any as int8.
		{SumInt64, values(int64(1), int64(-2), int64(3)), int64(2)},
		{SumInt64, values(int64(1)<<40, int64(math.MinInt64/2)), int64(1)<<40 + math.MinInt64/2},
		{SumInt, values(1, 2, 300), 303},
		{Sum[int8](), values(int8(100), int8(27)), int8(127)},
		{Sum[uint8](), values(uint8(200), uint8(55)), uint8(255)},
		{Sum[uint16](), values(uint16(1), uint16(2)), uint16(3)},
		{Sum[uintptr](), values(uintptr(7), uintptr(8)), uintptr(15)},
		{SumUint64, values(uint64(math.MaxUint64), uint64(0)), uint64(math.MaxUint64)},
		{SumFloat32, values(float32(1.5), float32(2.25)), float32(3.75)},
		{SumFloat64, values(0.5, 0.25, -8.0), -7.25},
		{Sum[meters](), values(meters(1.5), meters(2)), meters(3.5)},
		{ProductInt64, values(int64(3), int64(-4)), int64(-12)},
		{ProductFloat64, values(1.5, 4.0), 6.0},
		{MinInt32, values(int32(5), int32(-70000), int32(9)), int32(-70000)},
		{MinFloat64, values(math.Inf(1), 2.0, math.Inf(-1)), math.Inf(-1)},
		{MaxUint64, values(uint64(1), uint64(1)<<63), uint64(1) << 63},
		{Max[int16](), values(int16(-5), int16(-6)), int16(-5)},
	} {
		t.Run(tc.r.Name(), func(t *testing.T) {
			require.Equal(t, tc.want, requireCrossProcess(t, tc.r, tc.cs))
		})
	}
}

func TestCodecNumericSlices(t *testing.T) {
	for _, tc := range []struct {
		r    Reducer
		cs   []contrib
		want any
	}{
		{SumInt64, values([]int64{1, 2}, []int64{-3, 1 << 50}), []int64{-2, 2 + 1<<50}},
		// []uint8 must stay an array of numbers, not msgpack's binary.
		{Sum[uint8](), values([]uint8{1, 2, 3}, []uint8{4, 5, 6}), []uint8{5, 7, 9}},
		{SumFloat32, values([]float32{0.5}, []float32{0.25}), []float32{0.75}},
		{Product[meters](), values([]meters{2, 3}, []meters{4, 0.5}), []meters{8, 1.5}},
		{MinInt, values([]int{3, -1}, []int{2, 5}, []int{9, 0}), []int{2, -1}},
		{MaxFloat64, values([]float64{1, -2}, []float64{0, -3}), []float64{1, -2}},
		{SumInt, values([]int{}, []int{}), []int{}},
	} {
		t.Run(tc.r.Name(), func(t *testing.T) {
			require.Equal(t, tc.want, requireCrossProcess(t, tc.r, tc.cs))
		})
	}
}

func TestCodecLogicalAndBits(t *testing.T) {
	for _, tc := range []struct {
		r    Reducer
		cs   []contrib
		want any
	}{
		{And, values(true, true, false), false},
		{Or, values(false, true), true},
		{Xor, values(true, true, true), true},
		{And, values([]bool{true, true}, []bool{true, false}), []bool{true, false}},
		{Xor, values([]bool{true, false}, []bool{true, true}), []bool{false, true}},
		{BitAnd, values(uint64(0b1110), uint64(0b0111)), uint64(0b0110)},
		{BitOr, values(uint64(1), uint64(1)<<63), uint64(1) | uint64(1)<<63},
		{BitXor, values(uint64(math.MaxUint64), uint64(1)), uint64(math.MaxUint64 - 1)},
		{BitOr, values([]uint64{1, 0}, []uint64{2, math.MaxUint64}), []uint64{3, math.MaxUint64}},
	} {
		t.Run(tc.r.Name(), func(t *testing.T) {
			require.Equal(t, tc.want, requireCrossProcess(t, tc.r, tc.cs))
		})
	}
}

func TestCodecNop(t *testing.T) {
	require.Nil(t, requireCrossProcess(t, Nop, values[any](nil, 3, "x")))
	// Nop ignores partial results, so it writes nil whatever it is given.
	got, _, err := decode(Nop, encode(t, Nop, "ignored"))
	require.NoError(t, err)
	require.Nil(t, got)
}

func TestCodecStats(t *testing.T) {
	got := requireCrossProcess(t, Stats, values[any](2, int64(4), 4.0, uint8(4), float32(5), 5, 7, 9))
	require.Equal(t, Statistics{Count: 8, Mean: 5, Variance: 4}, got)
	roundTrip(t, Stats, Moments{})
	roundTrip(t, Stats, Moments{Count: math.MaxInt64, Mean: -1e300, M2: 1e-300})
}

func TestCodecStream(t *testing.T) {
	requireStream(t, SumInt64, int64(1), []int64{2, 3}, int64(-4), []int64(nil))
	requireStream(t, Stats, Moments{Count: 1, Mean: 2}, Moments{Count: 3, Mean: 1, M2: 4})
	requireStream(t, Nop, nil, nil)
}

func TestCodecNilAndEmptySlicesStayApart(t *testing.T) {
	require.Nil(t, roundTrip(t, SumInt, []int(nil)))
	require.NotNil(t, roundTrip(t, SumInt, []int{}))
}

func TestCodecEncodeWrongType(t *testing.T) {
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	err := EncodePartial(enc, SumInt64, 3)
	require.EqualError(t, err, "reducer sum_int64: partial result of type int, want int64 or []int64")
	require.ErrorIs(t, err, ErrType)
	err = EncodePartial(enc, And, []int{1})
	require.EqualError(t, err, "reducer and: partial result of type []int, want bool or []bool")
	err = EncodePartial(enc, Stats, Statistics{})
	require.EqualError(t, err, "reducer stats: partial result of type reducer.Statistics, want reducer.Moments")
	require.ErrorIs(t, err, ErrType)
	require.Zero(t, buf.Len(), "nothing is written for a partial result of the wrong type")
}

func TestCodecDecodeWrongShape(t *testing.T) {
	mp := func(v any) []byte {
		b, err := msgpack.Marshal(v)
		require.NoError(t, err)
		return b
	}
	for _, tc := range []struct {
		r    Reducer
		b    []byte
		want string
	}{
		{SumInt64, mp([]any{2, 5}), "reducer sum_int64: decoding partial result: unknown tag 2"},
		{SumInt64, mp([]any{0}), "reducer sum_int64: decoding partial result: array of 1 values, want 2"},
		{SumInt64, mp([]any{0, "x"}), "reducer sum_int64: decoding partial result: msgpack: invalid code=a1 decoding int64"},
		{SumInt64, mp(7), "reducer sum_int64: decoding partial result: msgpack: invalid code=7 decoding array length"},
		{Stats, mp([]any{-1, 0.0, 0.0}), "reducer stats: decoding partial result: count -1"},
		{Stats, mp([]any{1, 0.0}), "reducer stats: decoding partial result: array of 2 values, want 3"},
		{Nop, mp(0), "reducer nop: decoding partial result: msgpack: invalid code=0 decoding nil"},
	} {
		_, _, err := decode(tc.r, tc.b)
		require.EqualError(t, err, tc.want)
	}
}
