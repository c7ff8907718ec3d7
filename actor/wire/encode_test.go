package wire

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"
)

// msgpackFrame is how AppendFrame encoded frames until it wrote them
// itself: with msgpack/v5's encoder, field by field. The wire format did
// not change, byte for byte.
func msgpackFrame(t *testing.T, f *Frame) []byte {
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	require.NoError(t, enc.EncodeArrayLen(frameLen))
	require.NoError(t, enc.EncodeUint(Version))
	require.NoError(t, enc.EncodeUint(uint64(f.Kind)))
	require.NoError(t, enc.EncodeString(f.Token))
	require.NoError(t, enc.EncodeInt(int64(f.From)))
	require.NoError(t, enc.EncodeUint(f.Seq))
	require.NoError(t, enc.EncodeInt(int64(f.Code)))
	require.NoError(t, enc.EncodeBytes(f.Body))
	if f.Items == nil {
		require.NoError(t, enc.EncodeNil())
		return buf.Bytes()
	}
	require.NoError(t, enc.EncodeArrayLen(len(f.Items)))
	for _, it := range f.Items {
		if it.Tails == 0 {
			require.NoError(t, enc.EncodeArrayLen(itemFieldCount))
			require.NoError(t, enc.EncodeInt(int64(it.PE)))
			require.NoError(t, enc.EncodeUint(uint64(it.Kind)))
			require.NoError(t, enc.EncodeBytes(it.Body))
			continue
		}
		require.NoError(t, enc.EncodeArrayLen(runFieldCount))
		require.NoError(t, enc.EncodeInt(int64(it.PE)))
		require.NoError(t, enc.EncodeUint(uint64(it.Kind)))
		require.NoError(t, enc.EncodeBytes(it.Head))
		require.NoError(t, enc.EncodeArrayLen(it.Tails))
		buf.Write(it.Body)
	}
	return buf.Bytes()
}

func TestAppendFrameWritesWhatMsgpackWrites(t *testing.T) {
	for _, tc := range sampleFrames() {
		t.Run(tc.name, func(t *testing.T) {
			got, err := AppendFrame(nil, &tc.f)
			require.NoError(t, err)
			require.Equal(t, msgpackFrame(t, &tc.f), got)
		})
	}
	r := rand.New(rand.NewPCG(3, 4))
	for i := range 2000 {
		f := randomFrame(r)
		got, err := AppendFrame(nil, f)
		require.NoError(t, err)
		require.Equal(t, msgpackFrame(t, f), got, "random frame %d", i)
	}
}

// FrameFragments cuts the same fragments as Fragments of the whole
// encoding, wherever the long bodies are: the frame's own Body, an item's
// Body, a run's tails, several of them, between short ones.
func TestFrameFragmentsCutsTheEncoding(t *testing.T) {
	long := func(n int, seed byte) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(i>>8) ^ byte(i) ^ seed
		}
		return b
	}
	tails := func(n, size int) []byte {
		var body []byte
		for i := range n {
			body = AppendTail(body, long(size, byte(i)))
		}
		return body
	}
	const max = 100 << 10 // small fragments, so that bodies straddle them
	tests := []struct {
		name string
		f    Frame
	}{
		{"frame body", Frame{Kind: KindTable, Body: long(1<<20+3, 1)}},
		{"one long item", Frame{Kind: KindData, Items: []Item{{PE: 2, Kind: 5, Body: long(3<<20+1, 2)}}}},
		{"long items between short ones", Frame{Kind: KindData, Items: []Item{
			{PE: 1, Body: long(10, 3)}, {PE: 2, Body: long(200<<10, 4)}, {PE: 3, Body: nil},
			{PE: 4, Body: long(70<<10, 5)}, {PE: 5, Body: long(300<<10, 6)}, {PE: 6, Body: []byte{}}}}},
		{"a run with long tails", Frame{Kind: KindData, Items: []Item{
			{PE: 7, Kind: 9, Head: []byte("head"), Tails: 3, Body: tails(3, 150<<10)}, {PE: 8, Body: long(5, 7)}}}},
		{"long body and long items", Frame{Kind: KindData, Body: long(65<<10, 8), Items: []Item{{PE: 1, Body: long(65<<10, 9)}}}},
		{"all short", Frame{Kind: KindData, Items: []Item{{PE: 1, Body: long(60<<10, 10)}, {PE: 2, Body: long(60<<10, 11)}}}},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.f.Token, tc.f.From = "job", 3
			whole, err := AppendFrame(nil, &tc.f)
			require.NoError(t, err)
			want, err := Fragments(whole, "job", 3, uint64(i), max)
			require.NoError(t, err)
			got, n, err := FrameFragments(&tc.f, uint64(i), max)
			require.NoError(t, err)
			require.Equal(t, len(whole), n)
			require.Equal(t, len(want), len(got), "fragments")
			for k := range want {
				require.True(t, bytes.Equal(want[k], got[k]), "fragment %d of %d", k, len(want))
			}
			r := Reassembler{MaxSize: len(whole), MaxOpen: 1}
			var joined []byte
			for _, f := range decodeParts(t, got, max) {
				require.Nil(t, joined, "a frame joined before its last fragment")
				joined, err = r.Add(f)
				require.NoError(t, err)
			}
			require.True(t, bytes.Equal(whole, joined), "the fragments join into the frame")
		})
	}
}

func TestFrameFragmentsRefuses(t *testing.T) {
	_, _, err := FrameFragments(&Frame{Kind: KindData, From: -1, Items: []Item{{Body: make([]byte, 10)}}}, 1, MaxFrame)
	require.ErrorContains(t, err, "node -1 is negative")
	_, _, err = FrameFragments(&Frame{Kind: KindData, Token: "t"}, 1, 20)
	require.ErrorContains(t, err, "cannot carry anything")
}
