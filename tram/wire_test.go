package tram

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/charmgo/charm/chare"
)

type pair struct {
	A int32
	B [3]uint16
}

type named struct{ Name string }

// own is fixed-size but encodes itself: it must keep doing so.
type own struct{ V int64 }

func (o own) EncodeMsgpack(enc *msgpack.Encoder) error { return enc.EncodeInt(o.V + 1) }
func (o *own) DecodeMsgpack(dec *msgpack.Decoder) error {
	v, err := dec.DecodeInt64()
	o.V = v - 1
	return err
}

func roundTrip[T any](t *testing.T, m batch[T]) batch[T] {
	t.Helper()
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	enc.UseArrayEncodedStructs(true)
	require.NoError(t, enc.Encode(m))
	var got batch[T]
	require.NoError(t, msgpack.NewDecoder(&buf).Decode(&got))
	return got
}

// TestBatchWire: fixed-size items travel as one block, others item by
// item, and both come back equal.
func TestBatchWire(t *testing.T) {
	require.Equal(t, 8, blockItem[[8]byte]())
	require.Equal(t, 8, blockItem[uint64]())
	require.Equal(t, 12, blockItem[pair]()) // 10 bytes and their padding
	require.Zero(t, blockItem[named]())
	require.Zero(t, blockItem[bool]())
	require.Zero(t, blockItem[[]int]())
	require.Zero(t, blockItem[own]())

	b := batch[pair]{Items: []Envelope[pair]{{Dest: 3, Item: pair{-1, [3]uint16{1, 2, 65535}}}, {Dest: 70000, Item: pair{A: 7}}}, Det: chare.Detector{ID: 1 << 45}, From: 2}
	require.Equal(t, b, roundTrip(t, b))
	n := batch[named]{Items: []Envelope[named]{{Dest: 1, Item: named{"x"}}}, From: 5}
	require.Equal(t, n, roundTrip(t, n))
	o := batch[own]{Items: []Envelope[own]{{Dest: 2, Item: own{41}}}}
	require.Equal(t, o, roundTrip(t, o))
	e := batch[[8]byte]{Items: []Envelope[[8]byte]{}, From: 1}
	require.Empty(t, roundTrip(t, e).Items)
}

// TestBatchWireRefusesBadBlocks: a block that is not a whole number of
// items, an unknown format and a block for item-by-item items are errors
// that say what was wrong.
func TestBatchWireRefusesBadBlocks(t *testing.T) {
	frame := func(format int, block []byte) []byte {
		var buf bytes.Buffer
		enc := msgpack.NewEncoder(&buf)
		require.NoError(t, enc.EncodeArrayLen(4))
		require.NoError(t, enc.EncodeInt(int64(format)))
		require.NoError(t, enc.EncodeUint(0))
		require.NoError(t, enc.EncodeInt(0))
		require.NoError(t, enc.EncodeBytes(block))
		return buf.Bytes()
	}
	var u batch[uint64]
	require.ErrorContains(t, msgpack.Unmarshal(frame(wireBlock, make([]byte, 13)), &u), "13 bytes is not a whole number of 12-byte uint64 items")
	require.ErrorContains(t, msgpack.Unmarshal(frame(7, nil), &u), "format 7")
	var s batch[named]
	require.ErrorContains(t, msgpack.Unmarshal(frame(wireBlock, make([]byte, 12)), &s), "travel item by item")
	require.NoError(t, msgpack.Unmarshal(frame(wireBlock, make([]byte, 24)), &u))
	require.Len(t, u.Items, 2)
}

// TestBatchMarshalMsg: the codec's path (MarshalMsg, UnmarshalMsg) writes
// the bytes EncodeMsgpack writes for a block batch, reads what either
// writes, appends after what b holds, and refuses cut or corrupt frames
// with an error, never a panic.
func TestBatchMarshalMsg(t *testing.T) {
	blk := batch[pair]{Items: []Envelope[pair]{{Dest: 3, Item: pair{-1, [3]uint16{1, 2, 65535}}}, {Dest: 70000, Item: pair{A: 7}}}, Det: chare.Detector{ID: 1 << 45}, From: 2}
	neg := batch[uint64]{Items: []Envelope[uint64]{{Dest: 1, Item: 9}}, From: -1}
	itm := batch[named]{Items: []Envelope[named]{{Dest: 1, Item: named{"x"}}}, From: 5, Det: chare.Detector{ID: 3}}
	prefix := []byte{0xAA, 0xBB}

	out, err := blk.MarshalMsg(append([]byte(nil), prefix...))
	require.NoError(t, err)
	require.Equal(t, prefix, out[:2], "MarshalMsg appends")
	var got batch[pair]
	rest, err := got.UnmarshalMsg(append(out[2:], 0x01))
	require.NoError(t, err)
	require.Equal(t, []byte{0x01}, rest)
	require.Equal(t, blk, got)
	var viaMsgpack batch[pair]
	require.NoError(t, msgpack.Unmarshal(out[2:], &viaMsgpack), "msgpack reads what MarshalMsg writes")
	require.Equal(t, blk, viaMsgpack)

	// What EncodeMsgpack writes (compact integers) reads back too.
	for _, m := range []any{&neg, &itm} {
		var buf bytes.Buffer
		enc := msgpack.NewEncoder(&buf)
		enc.UseCompactInts(true)
		require.NoError(t, enc.Encode(m))
		switch m := m.(type) {
		case *batch[uint64]:
			var g batch[uint64]
			rest, err := g.UnmarshalMsg(buf.Bytes())
			require.NoError(t, err)
			require.Empty(t, rest)
			require.Equal(t, *m, g)
			own, err := m.MarshalMsg(nil)
			require.NoError(t, err)
			var g2 batch[uint64]
			_, err = g2.UnmarshalMsg(own)
			require.NoError(t, err)
			require.Equal(t, *m, g2)
		case *batch[named]:
			var g batch[named]
			rest, err := g.UnmarshalMsg(buf.Bytes())
			require.NoError(t, err)
			require.Empty(t, rest)
			require.Equal(t, *m, g)
			own, err := m.MarshalMsg(nil)
			require.NoError(t, err)
			var g2 batch[named]
			_, err = g2.UnmarshalMsg(own)
			require.NoError(t, err)
			require.Equal(t, *m, g2)
		}
	}

	// Every cut of a good frame, and a wrong block length, is an error.
	for n := 0; n < len(out)-2; n++ {
		var g batch[pair]
		_, err := g.UnmarshalMsg(out[2 : 2+n])
		require.Error(t, err, "a frame cut to %d bytes", n)
	}
	bad := append([]byte(nil), out[2:]...)
	bad[len(bad)-len(blk.Items)*16-1]-- // the block's length, one byte short
	var g batch[pair]
	_, err = g.UnmarshalMsg(bad)
	require.ErrorContains(t, err, "not a whole number of 16-byte")
}
