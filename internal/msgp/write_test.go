package msgp

import (
	"bytes"
	"encoding/hex"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"
)

// Integers at every boundary of msgpack's forms.
var (
	uintEdges = []uint64{0, 1, 127, 128, 255, 256, 65535, 65536, math.MaxUint32, math.MaxUint32 + 1,
		math.MaxInt64, math.MaxInt64 + 1, math.MaxUint64}
	intEdges = []int64{0, 1, 127, 128, 255, 256, 65535, 65536, math.MaxUint32, math.MaxUint32 + 1, math.MaxInt64,
		-1, -32, -33, -128, -129, -32768, -32769, math.MinInt32, math.MinInt32 - 1, math.MinInt64}
	lenEdges = []int{0, 1, 15, 16, 31, 32, 255, 256, 65535, 65536, 1 << 20}
)

// theirs is what msgpack/v5's Encoder writes, with compact integers.
func theirs(t *testing.T, write func(e *msgpack.Encoder) error) []byte {
	t.Helper()
	var buf bytes.Buffer
	e := msgpack.NewEncoder(&buf)
	e.UseCompactInts(true)
	require.NoError(t, write(e))
	return buf.Bytes()
}

// TestWriterMatchesMsgpack: every Append writes what msgpack/v5 writes
// for the same value, and every Size says its length.
func TestWriterMatchesMsgpack(t *testing.T) {
	for _, n := range uintEdges {
		got := AppendUint([]byte{0xee}, n)[1:] // appends, leaving what was there
		require.Equal(t, theirs(t, func(e *msgpack.Encoder) error { return e.EncodeUint(n) }), got, "uint %d", n)
		require.Equal(t, len(got), UintSize(n), "uint %d", n)
	}
	for _, n := range intEdges {
		got := AppendInt([]byte{0xee}, n)[1:]
		require.Equal(t, theirs(t, func(e *msgpack.Encoder) error { return e.EncodeInt(n) }), got, "int %d", n)
		require.Equal(t, len(got), IntSize(n), "int %d", n)
	}
	for _, n := range lenEdges {
		got := AppendArrayHeader(nil, n)
		require.Equal(t, theirs(t, func(e *msgpack.Encoder) error { return e.EncodeArrayLen(n) }), got, "array %d", n)
		require.Equal(t, len(got), ArrayHeaderSize(n))
		got = AppendBinHeader(nil, n)
		require.Equal(t, theirs(t, func(e *msgpack.Encoder) error { return e.EncodeBytesLen(n) }), got, "bin %d", n)
		require.Equal(t, len(got), BinHeaderSize(n))
		s := strings.Repeat("x", n)
		got = append(AppendStrHeader(nil, n), s...)
		require.Equal(t, theirs(t, func(e *msgpack.Encoder) error { return e.EncodeString(s) }), got, "string of %d", n)
		require.Equal(t, len(got), StrHeaderSize(n)+n)
	}
	for _, v := range []bool{false, true} {
		require.Equal(t, theirs(t, func(e *msgpack.Encoder) error { return e.EncodeBool(v) }), AppendBool(nil, v))
	}
	for _, v := range []float64{0, -2.25, math.Inf(1), math.MaxFloat64, math.SmallestNonzeroFloat64} {
		require.Equal(t, theirs(t, func(e *msgpack.Encoder) error { return e.EncodeFloat64(v) }), AppendFloat64(nil, v))
		require.Equal(t, theirs(t, func(e *msgpack.Encoder) error { return e.EncodeFloat32(float32(v)) }), AppendFloat32(nil, float32(v)))
	}
}

// TestGoldenBytes pins the writer's output byte for byte: frames, message
// bodies and index keys are built from these, and must not change.
func TestGoldenBytes(t *testing.T) {
	for _, c := range []struct {
		name string
		b    []byte
		want string
	}{
		{"uint 0", AppendUint(nil, 0), "00"},
		{"uint 127", AppendUint(nil, 127), "7f"},
		{"uint 128", AppendUint(nil, 128), "cc80"},
		{"uint 256", AppendUint(nil, 256), "cd0100"},
		{"uint 65536", AppendUint(nil, 65536), "ce00010000"},
		{"uint 2^32", AppendUint(nil, 1<<32), "cf0000000100000000"},
		{"uint max", AppendUint(nil, math.MaxUint64), "cfffffffffffffffff"},
		{"int 300", AppendInt(nil, 300), "cd012c"},
		{"int -1", AppendInt(nil, -1), "ff"},
		{"int -32", AppendInt(nil, -32), "e0"},
		{"int -33", AppendInt(nil, -33), "d0df"},
		{"int -129", AppendInt(nil, -129), "d1ff7f"},
		{"int -32769", AppendInt(nil, -32769), "d2ffff7fff"},
		{"int min", AppendInt(nil, math.MinInt64), "d38000000000000000"},
		{"array 3", AppendArrayHeader(nil, 3), "93"},
		{"array 16", AppendArrayHeader(nil, 16), "dc0010"},
		{"array 65536", AppendArrayHeader(nil, 65536), "dd00010000"},
		{"str 31", AppendStrHeader(nil, 31), "bf"},
		{"str 32", AppendStrHeader(nil, 32), "d920"},
		{"str 256", AppendStrHeader(nil, 256), "da0100"},
		{"str 65536", AppendStrHeader(nil, 65536), "db00010000"},
		{"bin 0", AppendBinHeader(nil, 0), "c400"},
		{"bin 256", AppendBinHeader(nil, 256), "c50100"},
		{"bin 65536", AppendBinHeader(nil, 65536), "c600010000"},
		{"true", AppendBool(nil, true), "c3"},
		{"false", AppendBool(nil, false), "c2"},
		{"float32 1.5", AppendFloat32(nil, 1.5), "ca3fc00000"},
		{"float64 -2.25", AppendFloat64(nil, -2.25), "cbc002000000000000"},
	} {
		require.Equal(t, c.want, hex.EncodeToString(c.b), c.name)
	}
}

func TestTooLong(t *testing.T) {
	require.False(t, TooLong(0))
	require.False(t, TooLong(math.MaxUint32))
	if big := uint64(math.MaxUint32) + 1; big <= math.MaxInt {
		require.True(t, TooLong(int(big)))
	}
}
