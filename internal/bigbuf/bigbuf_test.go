package bigbuf

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func pattern(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7) ^ byte(i>>11) ^ seed
	}
	return b
}

func TestAppendCopyGrow(t *testing.T) {
	for _, tc := range []struct {
		name          string
		prefix, extra int
		spare         int
	}{
		{"short", 10, 100, 0},
		{"short into room", 10, 100, 200},
		{"one piece", 0, Piece, 0},
		{"long after short", 100, 3*Piece + 5, 0},
		{"long after long", 2*Piece + 1, 2*Piece + 3, 0},
		{"long into room", 5, 2 * Piece, 2*Piece + 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dst := append(make([]byte, 0, tc.prefix+tc.spare), pattern(tc.prefix, 1)...)
			src := pattern(tc.extra, 2)
			got := Append(dst, src)
			require.Equal(t, tc.prefix+tc.extra, len(got))
			require.True(t, bytes.Equal(got[:tc.prefix], pattern(tc.prefix, 1)), "the prefix is kept")
			require.True(t, bytes.Equal(got[tc.prefix:], src), "src is appended")
			if tc.spare >= tc.extra {
				require.Equal(t, &dst[:1][0], &got[0], "appended in place when there is room")
			}
			g := Grow(got, 7)
			require.GreaterOrEqual(t, cap(g)-len(g), 7)
			require.True(t, bytes.Equal(g, got), "Grow keeps the bytes")
		})
	}
}

// Clone copies into memory of its own, short or long, and keeps an empty
// slice empty but not nil.
func TestClone(t *testing.T) {
	for _, n := range []int{1, 100, 16 << 10, Piece, 2*Piece + 7} {
		src := pattern(n, 3)
		got := Clone(src)
		require.True(t, bytes.Equal(got, src), "%d bytes", n)
		require.Equal(t, n, cap(got), "%d bytes: as long as its capacity", n)
		got[0] ^= 0xff
		require.Equal(t, pattern(1, 3)[0], src[0], "%d bytes: the copy is not src", n)
	}
	require.NotNil(t, Clone([]byte{}))
	require.Empty(t, Clone([]byte{}))
}

func TestCopyShorterSide(t *testing.T) {
	src := pattern(3*Piece+1, 3)
	dst := make([]byte, 2*Piece+7)
	require.Equal(t, len(dst), Copy(dst, src))
	require.True(t, bytes.Equal(dst, src[:len(dst)]))
	dst = make([]byte, 4*Piece)
	require.Equal(t, len(src), Copy(dst, src))
	require.True(t, bytes.Equal(dst[:len(src)], src))
	require.Zero(t, dst[len(src)], "nothing past src is written")
}

func TestMoveOverlapping(t *testing.T) {
	const n = 3*Piece + 17
	for _, tc := range []struct {
		name     string
		to, from int
		n        int
	}{
		{"right by 3", 3, 0, n},
		{"left by 3", 0, 3, n},
		{"right by more than a piece", Piece + 5, 0, n},
		{"left by more than a piece", 0, Piece + 5, n},
		{"short right", 2, 0, 100},
		{"in place", 4, 4, n},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := pattern(n+2*Piece+10, 4)
			want := append([]byte(nil), b...)
			copy(want[tc.to:tc.to+tc.n], append([]byte(nil), b[tc.from:tc.from+tc.n]...))
			Move(b, tc.to, tc.from, tc.n)
			require.True(t, bytes.Equal(want, b))
		})
	}
}

func TestGrowNegativePanics(t *testing.T) {
	require.Panics(t, func() { Grow(nil, -1) })
}

// Copy, Append and Move yield between pieces, and only for long slices.
func TestYieldsBetweenPieces(t *testing.T) {
	defer func(y func()) { yield = y }(yield)
	var n int
	yield = func() { n++ }
	for _, tc := range []struct {
		name string
		do   func()
		want int
	}{
		{"Copy of one piece", func() { Copy(make([]byte, Piece), make([]byte, Piece)) }, 0},
		{"Copy of 4 pieces and a bit", func() { Copy(make([]byte, 4*Piece+1), make([]byte, 4*Piece+1)) }, 4},
		{"Append of 3 pieces", func() { Append(nil, make([]byte, 3*Piece)) }, 2},
		{"Append of 3 pieces after 2", func() { Append(make([]byte, 2*Piece), make([]byte, 3*Piece)) }, 1 + 2},
		{"Move right", func() { Move(make([]byte, 3*Piece+3), 3, 0, 3*Piece) }, 2},
		{"Move left", func() { Move(make([]byte, 3*Piece+3), 0, 3, 3*Piece) }, 2},
		{"Grow", func() { Grow(make([]byte, 5*Piece), 1) }, 4},
		{"AppendString of 3 pieces", func() { AppendString(nil, string(make([]byte, 3*Piece))) }, 2},
		{"AppendString short", func() { AppendString(make([]byte, 0, 10), "abc") }, 0},
		{"Clone of 3 pieces", func() { Clone(make([]byte, 3*Piece)) }, 2},
		{"Clone of one piece", func() { Clone(make([]byte, Piece)) }, 0},
		{"AppendByte to a full 4 pieces", func() { AppendByte(make([]byte, 4*Piece), 1) }, 3},
		{"AppendByte to a full short slice", func() { AppendByte(make([]byte, 100), 1) }, 0},
		{"Reserve at the end of 4 pieces", func() { Reserve(make([]byte, 4*Piece, 4*Piece+10)) }, 3},
		{"Reserve with room", func() { Reserve(make([]byte, 4*Piece, 4*Piece+64)) }, 0},
	} {
		n = 0
		tc.do()
		require.Equal(t, tc.want, n, tc.name)
	}
}

// AppendString, AppendByte and Reserve keep what they are given.
func TestAppendStringByteReserve(t *testing.T) {
	long := strings.Repeat("abcdefg", Piece/2)
	b := AppendString([]byte("x"), long)
	require.Equal(t, "x"+long, string(b))
	require.Equal(t, "xyz", string(AppendString([]byte("x"), "yz")))
	full := make([]byte, 2*Piece)
	full[7] = 9
	g := AppendByte(full, 42)
	require.Len(t, g, 2*Piece+1)
	require.Equal(t, byte(9), g[7])
	require.Equal(t, byte(42), g[2*Piece])
	require.GreaterOrEqual(t, cap(g)-len(g), 64, "a long full slice grows by more than one byte")
	r := Reserve(full)
	require.Equal(t, full, r)
	require.GreaterOrEqual(t, cap(r)-len(r), 64)
	short := make([]byte, 3, 3)
	require.Equal(t, 3, cap(Reserve(short)), "a short slice is left to append")
}

func TestReaderReadsInPieces(t *testing.T) {
	defer func(y func()) { yield = y }(yield)
	var n int
	yield = func() { n++ }
	src := pattern(3*Piece+5, 9)
	var r Reader
	r.Reset(src)
	got := make([]byte, len(src))
	_, err := io.ReadFull(&r, got)
	require.NoError(t, err)
	require.True(t, bytes.Equal(src, got))
	require.Equal(t, 3, n, "a yield after each full piece")
	b, err := r.ReadByte()
	require.ErrorIs(t, err, io.EOF, "read %d", b)
}
