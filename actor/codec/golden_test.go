package codec

import (
	"encoding/hex"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestGoldenBytes pins the generated encoding of representative values
// byte for byte (every integer form, floats, a string over 31 bytes,
// binary, nil slices, an array of 17 structs), so that a change to the
// writer cannot change what travels between processes unnoticed.
func TestGoldenBytes(t *testing.T) {
	full := wide{B: true, I: -33, I8: -128, I16: 300, I32: math.MinInt32, I64: math.MaxInt64, U: 128, U8: 255, U16: 65535,
		U32: 70000, U64: math.MaxUint64, F32: 1.5, F64: -2.25, S: "héllo, a string of more than 31 bytes",
		Bytes: []byte{1, 2, 3}, Ints: []int32{0, -1, 127, -32, 1 << 20},
		Inner:  inner{Vals: [3]int16{-1, 2, -300}, Key: [8]byte{1, 2, 3, 4, 5, 6, 7, 8}},
		Inners: make([]inner, 17)}
	zeroInner := "9293000000c4080000000000000000"
	cases := []struct {
		v    wide
		want string
	}{
		{full, "dc0012c3d0dfd080cd012cd280000000cf7fffffffffffffffcc80ccffcdffffce00011170cfffffffffffffffff" +
			"ca3fc00000cbc002000000000000d92668c3a96c6c6f2c206120737472696e67206f66206d6f7265207468616e2033312062797465" +
			"73c4030102039500ff7fe0ce001000009293ff02d1fed4c4080102030405060708dc0011" + repeat(zeroInner, 17)},
		{wide{}, "dc0012c200000000000000000000ca00000000cb0000000000000000a0c0c0" + zeroInner + "c0"},
	}
	c := For[wide]()
	require.Equal(t, Generated, c.How())
	for i, tc := range cases {
		b, err := Append(c, nil, &tc.v)
		require.NoError(t, err)
		require.Equal(t, tc.want, hex.EncodeToString(b), "case %d", i)
		var back wide
		require.NoError(t, Decode(c, b, &back))
		require.Equal(t, tc.v, back, "case %d", i)
	}
}

func repeat(s string, n int) string {
	out := ""
	for range n {
		out += s
	}
	return out
}
