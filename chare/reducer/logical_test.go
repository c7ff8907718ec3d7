package reducer

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestLogicalAndOrXor(t *testing.T) {
	for _, tc := range []struct {
		name string
		r    Reducer
		cs   []contrib
		want any
	}{
		{"AndAllTrue", And, values(true, true, true), true},
		{"AndOneFalse", And, values(true, false, true), false},
		{"OrAllFalse", Or, values(false, false), false},
		{"OrOneTrue", Or, values(false, true, false), true},
		{"XorOdd", Xor, values(true, true, true), true},
		{"XorEven", Xor, values(true, false, true, false), false},
		{"AndSlices", And, values([]bool{true, true, false}, []bool{true, false, false}), []bool{true, false, false}},
		{"OrSlices", Or, values([]bool{true, false, false}, []bool{false, false, true}), []bool{true, false, true}},
		{"XorSlices", Xor, values([]bool{true, true}, []bool{true, false}, []bool{true, false}), []bool{true, true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, requireOrderIndependent(t, tc.r, tc.cs))
		})
	}
}

func TestLogicalErrors(t *testing.T) {
	_, err := And.Lift(1, 0)
	require.EqualError(t, err, "reducer and: contribution of type int, want bool or []bool")
	require.ErrorIs(t, err, ErrType)
	_, err = reduceInOrder(Or, values([]bool{true}, []bool{true, false}))
	require.EqualError(t, err, "reducer or: length mismatch: 1 vs 2")
	require.ErrorIs(t, err, ErrLength)
	_, err = Xor.Combine(true, []bool{true})
	require.ErrorIs(t, err, ErrType)
}

func TestBitAndOrXor(t *testing.T) {
	for _, tc := range []struct {
		name string
		r    Reducer
		cs   []contrib
		want any
	}{
		{"AndScalar", BitAnd, values[uint64](0b1110, 0b0111, 0b1111), uint64(0b0110)},
		{"OrScalar", BitOr, values[uint64](0b0001, 0b0100, 1<<63), uint64(1<<63 | 0b0101)},
		{"XorScalar", BitXor, values[uint64](0b0011, 0b0110, 0b1100), uint64(0b1001)},
		{"AndVector", BitAnd, values([]uint64{^uint64(0), 0xff}, []uint64{0xf0f0, 0x0f}), []uint64{0xf0f0, 0x0f}},
		{"OrVector", BitOr, values([]uint64{1, 0, 0}, []uint64{0, 2, 0}, []uint64{0, 0, 4}), []uint64{1, 2, 4}},
		{"XorVector", BitXor, values([]uint64{5, 5}, []uint64{5, 1}), []uint64{0, 4}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, requireOrderIndependent(t, tc.r, tc.cs))
		})
	}
}

func TestBitVectorOneBitPerContributor(t *testing.T) {
	// The classic use: contributor i sets bit i of a 200-bit vector, and
	// the OR has all of them, the AND none, the XOR all again.
	const n = 200
	cs := make([]contrib, n)
	for i := range cs {
		v := make([]uint64, (n+63)/64)
		v[i/64] |= 1 << (i % 64)
		cs[i] = contrib{index: i, value: v}
	}
	all := []uint64{^uint64(0), ^uint64(0), ^uint64(0), 1<<(n%64) - 1}
	require.Equal(t, all, requireOrderIndependent(t, BitOr, cs))
	require.Equal(t, all, requireOrderIndependent(t, BitXor, cs))
	require.Equal(t, []uint64{0, 0, 0, 0}, requireOrderIndependent(t, BitAnd, cs))
}

func TestBitErrors(t *testing.T) {
	_, err := BitOr.Lift(uint32(1), 0)
	require.EqualError(t, err, "reducer bitor: contribution of type uint32, want uint64 or []uint64")
	_, err = BitXor.Combine([]uint64{1, 2}, []uint64{1})
	require.EqualError(t, err, "reducer bitxor: length mismatch: 2 vs 1")
	require.ErrorIs(t, err, ErrLength)
}

func TestNopIgnoresContributions(t *testing.T) {
	cs := []contrib{{0, nil}, {1, 42}, {2, "x"}, {[2]int{1, 2}, []int{1}}}
	require.Nil(t, requireOrderIndependent(t, Nop, cs))
	res, err := Nop.Result(nil)
	require.NoError(t, err)
	require.Nil(t, res)
}

func TestLogicalBitNopNames(t *testing.T) {
	for name, r := range map[string]Reducer{
		"nop": Nop, "and": And, "or": Or, "xor": Xor,
		"bitand": BitAnd, "bitor": BitOr, "bitxor": BitXor,
	} {
		require.Equal(t, name, r.Name())
		got, err := Lookup(name)
		require.NoError(t, err)
		require.Equal(t, r, got, name)
	}
}
