package tram

import (
	"bytes"
	"math/rand/v2"
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
	b.Final = []pair{{A: 5}, {B: [3]uint16{9, 8, 7}}, {A: -3}}
	require.Equal(t, b, roundTrip(t, b), "with last-hop items")
	n := batch[named]{Items: []Envelope[named]{{Dest: 1, Item: named{"x"}}}, From: 5}
	require.Equal(t, n, roundTrip(t, n))
	n.Final = []named{{"y"}, {"z"}}
	require.Equal(t, n, roundTrip(t, n), "with last-hop items")
	o := batch[own]{Items: []Envelope[own]{{Dest: 2, Item: own{41}}}, Final: []own{{7}}}
	require.Equal(t, o, roundTrip(t, o))
	f := batch[uint64]{Final: []uint64{1, 2, 3}, From: 1} // the last hop only: no envelopes
	got := roundTrip(t, f)
	require.Empty(t, got.Items)
	require.Equal(t, f.Final, got.Final)
	e := batch[[8]byte]{Items: []Envelope[[8]byte]{}, From: 1}
	require.Empty(t, roundTrip(t, e).Items)
}

// TestBatchWireRefusesBadBlocks: a block (of envelopes or of last-hop
// items) that is not a whole number of items, a missing last-hop block,
// a frame of the old four fields, an unknown format and a block for
// item-by-item items are errors that say what was wrong, through both
// decoders (msgpack's and the codec's UnmarshalMsg).
func TestBatchWireRefusesBadBlocks(t *testing.T) {
	frame := func(fields, format int, blocks ...[]byte) []byte {
		var buf bytes.Buffer
		enc := msgpack.NewEncoder(&buf)
		require.NoError(t, enc.EncodeArrayLen(fields))
		require.NoError(t, enc.EncodeInt(int64(format)))
		require.NoError(t, enc.EncodeUint(0))
		require.NoError(t, enc.EncodeInt(0))
		for _, b := range blocks {
			require.NoError(t, enc.EncodeBytes(b))
		}
		return buf.Bytes()
	}
	cases := []struct {
		name  string
		frame []byte
		want  string
	}{
		{"envelopes cut", frame(5, wireBlock, make([]byte, 13), nil), "13 bytes is not a whole number of 12-byte uint64 items"},
		{"last hop cut", frame(5, wireBlock, make([]byte, 12), make([]byte, 13)), "last-hop block of 13 bytes is not a whole number of 8-byte uint64 items"},
		{"no last-hop block", frame(5, wireBlock, make([]byte, 12)), "last-hop"},
		{"four fields", frame(4, wireBlock, make([]byte, 12)), "4 fields, want 5"},
		{"unknown format", frame(5, 7, nil, nil), "format 7"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var u batch[uint64]
			require.ErrorContains(t, msgpack.Unmarshal(c.frame, &u), c.want)
			var v batch[uint64]
			_, err := v.UnmarshalMsg(c.frame)
			require.ErrorContains(t, err, c.want)
		})
	}
	var s batch[named]
	require.ErrorContains(t, msgpack.Unmarshal(frame(5, wireBlock, make([]byte, 12), nil), &s), "travel item by item")
	var u batch[uint64]
	require.NoError(t, msgpack.Unmarshal(frame(5, wireBlock, make([]byte, 24), make([]byte, 24)), &u))
	require.Len(t, u.Items, 2)
	require.Len(t, u.Final, 3)
}

// TestBatchMarshalMsg: the codec's path (MarshalMsg, UnmarshalMsg) writes
// the bytes EncodeMsgpack writes for a block batch, reads what either
// writes, appends after what b holds, and refuses cut or corrupt frames
// with an error, never a panic.
func TestBatchMarshalMsg(t *testing.T) {
	blk := batch[pair]{Items: []Envelope[pair]{{Dest: 3, Item: pair{-1, [3]uint16{1, 2, 65535}}}, {Dest: 70000, Item: pair{A: 7}}}, Final: []pair{{A: 4}}, Det: chare.Detector{ID: 1 << 45}, From: 2}
	neg := batch[uint64]{Items: []Envelope[uint64]{{Dest: 1, Item: 9}}, Final: []uint64{5, 6}, From: -1}
	itm := batch[named]{Items: []Envelope[named]{{Dest: 1, Item: named{"x"}}}, Final: []named{{"q"}}, From: 5, Det: chare.Detector{ID: 3}}
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
	// The last-hop block's length one short, the frame one byte longer
	// than it says: what is left after it is not the codec's to judge,
	// but the block is not whole.
	bad := append([]byte(nil), out[2:]...)
	bad[len(bad)-len(blk.Final)*12-1]--
	var g batch[pair]
	_, err = g.UnmarshalMsg(bad)
	require.ErrorContains(t, err, "last-hop block of 11 bytes is not a whole number of 12-byte")
}

// wireSeeds are good frames of each form a batch takes: binary blocks of
// envelopes and last-hop items, item by item, empty parts.
func wireSeeds(t testing.TB) [][]byte {
	var frames [][]byte
	add := func(m interface{ MarshalMsg([]byte) ([]byte, error) }) {
		b, err := m.MarshalMsg(nil)
		require.NoError(t, err)
		frames = append(frames, b)
	}
	add(&batch[pair]{Items: []Envelope[pair]{{Dest: 3, Item: pair{A: 1}}}, Final: []pair{{A: 2}, {A: 3}}, Det: chare.Detector{ID: 9}, From: 1})
	add(&batch[pair]{Final: []pair{{A: 2}}})
	add(&batch[pair]{Items: []Envelope[pair]{{Dest: 1}}})
	add(&batch[named]{Items: []Envelope[named]{{Dest: 1, Item: named{"x"}}}, Final: []named{{"y"}}, From: 2})
	return frames
}

// decodeAll decodes b as every batch type the seeds use, through both
// decoders, and reports how many refused it; it must never panic.
func decodeAll(b []byte) (refused int) {
	try := func(err error) {
		if err != nil {
			refused++
		}
	}
	var p batch[pair]
	_, err := p.UnmarshalMsg(b)
	try(err)
	var p2 batch[pair]
	try(msgpack.Unmarshal(b, &p2))
	var n batch[named]
	_, err = n.UnmarshalMsg(b)
	try(err)
	var u batch[uint64]
	_, err = u.UnmarshalMsg(b)
	try(err)
	return refused
}

// TestBatchWireCorruptInput: good frames with bytes flipped, cut, dropped
// or added are refused with errors, never a panic (the frames come from
// the network). A fixed seed makes a failure repeatable.
func TestBatchWireCorruptInput(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 64))
	tries, refused := 0, 0
	for _, seed := range wireSeeds(t) {
		for range 2000 {
			b := append([]byte(nil), seed...)
			switch rng.IntN(4) {
			case 0: // flip bytes
				for range 1 + rng.IntN(3) {
					b[rng.IntN(len(b))] ^= byte(1 + rng.IntN(255))
				}
			case 1: // cut
				b = b[:rng.IntN(len(b))]
			case 2: // drop one byte
				i := rng.IntN(len(b))
				b = append(b[:i], b[i+1:]...)
			case 3: // add one
				i := rng.IntN(len(b) + 1)
				b = append(b[:i], append([]byte{byte(rng.IntN(256))}, b[i:]...)...)
			}
			require.NotPanics(t, func() { refused += decodeAll(b) }, "frame %x", b)
			tries += 4
		}
	}
	// Most corruptions are caught (a flipped item byte is not).
	require.Greater(t, refused, tries/2, "%d of %d decodings refused", refused, tries)
}

// FuzzBatchWire: `go test -fuzz FuzzBatchWire ./tram` searches for a
// frame that panics a decoder; plain `go test` runs the seeds.
func FuzzBatchWire(f *testing.F) {
	for _, s := range wireSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, b []byte) { decodeAll(b) })
}
