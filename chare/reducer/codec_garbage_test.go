package reducer

import (
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"
)

// samplePartials are valid partial results of every kind of Codec.
func samplePartials(t *testing.T) []struct {
	r Reducer
	p any
} {
	mk := func(r Reducer, cs []contrib) struct {
		r Reducer
		p any
	} {
		var acc any
		for i, c := range cs {
			p, err := r.Lift(c.value, c.index)
			require.NoError(t, err)
			if i == 0 {
				acc = p
			} else {
				acc, err = r.Combine(acc, p)
				require.NoError(t, err)
			}
		}
		return struct {
			r Reducer
			p any
		}{r, acc}
	}
	return []struct {
		r Reducer
		p any
	}{
		mk(Nop, values[any](nil)),
		mk(SumInt64, values(int64(1)<<40, int64(-3))),
		mk(SumInt64, values([]int64{1, 2, 3}, []int64{-1, 1 << 33, 0})),
		mk(Sum[uint8](), values([]uint8{1, 2, 250})),
		mk(MaxFloat32, values([]float32{1.5, -2})),
		mk(Xor, values([]bool{true, false, true})),
		mk(BitOr, values([]uint64{1 << 63, 5})),
		mk(Stats, values(1.5, 2.5, 9.0)),
		mk(GatherOf[[2]int, cell](), cells()),
		mk(ConcatOf[int, string](), values("a", "bc", "")),
		mk(SetOf[pair](), values(pair{1, "x"}, pair{-1, "y"})),
		mk(SetOf[int32](), values[any]([]int32{5, -7, 1 << 20})),
		mk(Tuple(SumInt, SetOf[string](), Stats), []contrib{{0, []any{[]int{1, 2}, "a", 1}}, {1, []any{[]int{3, 4}, []string{"b", "c"}, 2}}}),
	}
}

func TestCodecTruncatedEncodingsFail(t *testing.T) {
	for _, s := range samplePartials(t) {
		requireTruncationFails(t, s.r, encode(t, s.r, s.p))
	}
}

func TestCodecGarbageNeverPanics(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 8))
	for _, s := range samplePartials(t) {
		valid := encode(t, s.r, s.p)
		for range 300 {
			// A valid encoding with a few bytes changed...
			b := append([]byte(nil), valid...)
			for range 1 + rng.IntN(3) {
				b[rng.IntN(len(b))] = byte(rng.UintN(256))
			}
			require.NotPanics(t, func() { _, _, _ = decode(s.r, b) }, "%s: % x", s.r.Name(), b)
			// ...and random bytes.
			b = make([]byte, rng.IntN(40))
			for i := range b {
				b[i] = byte(rng.UintN(256))
			}
			require.NotPanics(t, func() { _, _, _ = decode(s.r, b) }, "%s: % x", s.r.Name(), b)
		}
	}
}

func TestCodecHugeLengthHeadersAllocateLittle(t *testing.T) {
	// Arrays claiming a million elements, with none following: msgpack
	// v5.4.1 would allocate them all before finding the input short (and
	// a header can claim four billion).
	huge := []byte{0xdd, 0x00, 0x10, 0x00, 0x00}
	for _, tc := range []struct {
		r Reducer
		b []byte
	}{
		{SumInt64, append([]byte{0x92, tagSlice}, huge...)},
		{And, append([]byte{0x92, tagSlice}, huge...)},
		{GatherOf[[2]int, cell](), append([]byte{0x92}, huge...)},
		{GatherOf[int, int](), append([]byte{0x92, 0x90}, huge...)},
		{SetOf[int64](), huge},
		{Tuple(SumInt64), append([]byte{0x91, 0x92, tagSlice}, huge...)},
	} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, _, err := decode(tc.r, tc.b)
		runtime.ReadMemStats(&after)
		require.Error(t, err, tc.r.Name())
		require.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(1<<20), tc.r.Name())
	}
}

func TestCodecDecodeRejectsInvalidPartials(t *testing.T) {
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
		// Combine merges sorted partial results: unsorted ones are refused.
		{GatherOf[int, string](), mp([]any{[]int{2, 1}, []string{"a", "b"}}),
			"reducer gather(int,string): decoding partial result: items out of order"},
		{GatherOf[int, string](), mp([]any{[]int{1, 2}, []string{"a"}}),
			"reducer gather(int,string): decoding partial result: 2 indices for 1 values"},
		{SetOf[int](), mp([]int{3, 1}), "reducer set(int): decoding partial result: elements out of order"},
		{SetOf[int](), mp([]int{1, 1}), "reducer set(int): decoding partial result: repeated elements"},
		// Integers that do not fit are not truncated.
		{Sum[int8](), mp([]any{tagScalar, 300}), "reducer sum_int8: decoding partial result: 300 overflows int8"},
		{Sum[uint16](), mp([]any{tagSlice, []int{1, 70000}}), "reducer sum_uint16: decoding partial result: 70000 overflows uint16"},
		{ConcatOf[int8, int](), mp([]any{[]int{-129}, []int{0}}), "reducer concat(int8,int): decoding partial result: -129 overflows int8"},
	} {
		_, _, err := decode(tc.r, tc.b)
		require.EqualError(t, err, tc.want)
	}
}
