package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/internal/bigbuf"
)

// longFrame encodes a data frame of exactly n bytes (n >= 64): one item
// whose body fills it.
func longFrame(t testing.TB, n int, seed byte) []byte {
	f := &Frame{Kind: KindData, Token: "job", From: 2, Items: []Item{{PE: 9, Kind: 100}}}
	room := n - Size(f) // a nil body takes 1 byte; a body of k bytes 2, 3 or 5 more
	for _, hdr := range []int{2, 3, 5} {
		f.Items[0].Body = make([]byte, room-hdr+1)
		if Size(f) == n {
			break
		}
	}
	require.Equal(t, n, Size(f), "no data frame of %d bytes", n)
	// A marker every 256 bytes says where it is and in which frame: a
	// piece out of place, or of another frame, shows. (Filled by copying,
	// so that 30 MB take little time under -race.)
	body := f.Items[0].Body
	for i := 0; i+8 <= len(body) && i < 256; i += 8 {
		binary.LittleEndian.PutUint64(body[i:], uint64(seed)<<56|uint64(i)*0x9e3779b9)
	}
	for done := min(256, len(body)); done < len(body); done *= 2 {
		copy(body[done:], body[:done])
	}
	for i := 0; i+4 <= len(body); i += 256 {
		binary.LittleEndian.PutUint32(body[i:], uint32(i)^uint32(seed)<<24)
	}
	b, err := AppendFrame(nil, f)
	require.NoError(t, err)
	return b
}

// decodeParts decodes fragments into frames, checking each against max.
func decodeParts(t testing.TB, parts [][]byte, max int) []*Frame {
	frames := make([]*Frame, len(parts))
	for i, p := range parts {
		require.LessOrEqual(t, len(p), max, "fragment %d", i)
		f, err := DecodeFrame(p)
		require.NoError(t, err, "fragment %d", i)
		frames[i] = f
	}
	return frames
}

// A long frame cut by Fragments comes back whole from a Reassembler on its
// last fragment, and only then, for lengths around the budget and far
// over it.
func TestFragmentsRoundTrip(t *testing.T) {
	const small = 1000
	tests := []struct {
		name   string
		max, n int
	}{
		{"budget-1", small, small - 1},
		{"budget", small, small},
		{"budget+1", small, small + 1},
		{"10 x budget", small, 10 * small},
		{"MaxFrame+1", MaxFrame, MaxFrame + 1},
		{"10 x MaxFrame", MaxFrame, 10 * MaxFrame},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := longFrame(t, tc.n, 3)
			parts, err := Fragments(b, "job", 2, 77, tc.max)
			require.NoError(t, err)
			// Each fragment but the last is as full as the budget allows,
			// short of it by what the longest header would take more.
			for i, p := range parts[:len(parts)-1] {
				require.Greater(t, len(p), tc.max-32, "fragment %d", i)
			}
			frames := decodeParts(t, parts, tc.max)
			r := Reassembler{MaxSize: 20 * tc.max, MaxOpen: 1}
			for i, f := range frames {
				require.Equal(t, KindPart, f.Kind)
				require.Equal(t, "job", f.Token)
				require.Equal(t, 2, f.From)
				require.Equal(t, uint64(77), f.Seq)
				got, err := r.Add(f)
				require.NoError(t, err, "fragment %d", i)
				if i < len(frames)-1 {
					require.Nil(t, got, "fragment %d of %d completes nothing", i, len(frames))
					require.Equal(t, 1, r.Open())
					continue
				}
				require.Equal(t, b, got)
				require.Equal(t, 0, r.Open())
				whole, err := DecodeFrame(got)
				require.NoError(t, err)
				require.Equal(t, KindData, whole.Kind)
			}
		})
	}
}

// The number of fragments steps up exactly where the frame outgrows a
// whole number of pieces.
func TestFragmentsCount(t *testing.T) {
	const max = 1000
	one, err := Fragments(longFrame(t, 500, 0), "job", 2, 1, max)
	require.NoError(t, err)
	require.Len(t, one, 1)
	f, err := DecodeFrame(one[0])
	require.NoError(t, err)
	total, n := binary.Uvarint(f.Body)
	_, m := binary.Uvarint(f.Body[n:])
	require.Equal(t, uint64(500), total)
	// The piece for a frame of this length class: the budget less the
	// fragment's own encoding around it.
	probe, err := Fragments(longFrame(t, 5000, 0), "job", 2, 1, max)
	require.NoError(t, err)
	pf, err := DecodeFrame(probe[0])
	require.NoError(t, err)
	_, n = binary.Uvarint(pf.Body)
	_, m = binary.Uvarint(pf.Body[n:])
	piece := len(pf.Body) - n - m
	for _, k := range []int{2, 3, 4} {
		for _, d := range []int{-1, 0, 1} {
			size := k*piece + d
			parts, err := Fragments(longFrame(t, size, 0), "job", 2, 1, max)
			require.NoError(t, err)
			want := k
			if d > 0 {
				want++
			}
			require.Len(t, parts, want, "a frame of %d bytes in pieces of %d", size, piece)
		}
	}
}

func TestFragmentsRefuses(t *testing.T) {
	_, err := Fragments(nil, "job", 2, 1, 1000)
	require.ErrorContains(t, err, "empty frame")
	_, err = Fragments([]byte{1, 2, 3}, "job", 2, 1, 20)
	require.ErrorContains(t, err, "fragments of at most 20 bytes cannot carry anything")
	_, err = Fragments([]byte{1, 2, 3}, "job", -1, 1, 1000)
	require.ErrorContains(t, err, "negative")
}

// Fragments of many frames, interleaved as the goroutines of one sender
// would interleave them (each frame's own in order), all come back whole.
func TestReassembleInterleaved(t *testing.T) {
	const max, frames = 600, 24
	r := Reassembler{MaxSize: 1 << 20, MaxOpen: frames}
	rng := rand.New(rand.NewPCG(1, 2))
	want := make([][]byte, frames)
	queues := make([][]*Frame, frames)
	for i := range frames {
		want[i] = longFrame(t, 64+rng.IntN(20*max), byte(i))
		parts, err := Fragments(want[i], "job", 2, uint64(1000+i), max)
		require.NoError(t, err)
		queues[i] = decodeParts(t, parts, max)
	}
	got := map[uint64][]byte{}
	for left := frames; left > 0; {
		i := rng.IntN(frames)
		if len(queues[i]) == 0 {
			continue
		}
		f := queues[i][0]
		queues[i] = queues[i][1:]
		b, err := r.Add(f)
		require.NoError(t, err)
		require.LessOrEqual(t, r.Open(), frames)
		if b != nil {
			require.Empty(t, queues[i], "frame %d complete before its last fragment", i)
			require.NotContains(t, got, f.Seq)
			got[f.Seq] = b
			left--
		}
	}
	require.Equal(t, 0, r.Open())
	for i := range frames {
		require.Equal(t, want[i], got[uint64(1000+i)], "frame %d", i)
	}
}

// part builds a fragment frame by hand.
func part(from int, id, total, off uint64, data string) *Frame {
	body := binary.AppendUvarint(nil, total)
	body = binary.AppendUvarint(body, off)
	return &Frame{Kind: KindPart, Token: "job", From: from, Seq: id, Body: append(body, data...)}
}

// Fragments that a correct sender never sends are errors that name the
// sender, the frame and what is wrong; none panics.
func TestReassembleRejects(t *testing.T) {
	tests := []struct {
		name   string
		frames []*Frame // all but the last are accepted
		want   string
		is     error
	}{
		{"not a fragment", []*Frame{{Kind: KindData, From: 3, Seq: 1}}, "not a fragment", ErrCorrupt},
		{"items in a fragment", []*Frame{{Kind: KindPart, From: 3, Seq: 1, Body: []byte{1, 0, 'a'}, Items: []Item{}}}, "not a fragment", ErrCorrupt},
		{"code in a fragment", []*Frame{{Kind: KindPart, From: 3, Seq: 1, Code: 1, Body: []byte{1, 0, 'a'}}}, "not a fragment", ErrCorrupt},
		{"nil body", []*Frame{{Kind: KindPart, From: 3, Seq: 1}}, "no length", ErrCorrupt},
		{"truncated length", []*Frame{{Kind: KindPart, From: 3, Seq: 1, Body: []byte{0x80}}}, "no length", ErrCorrupt},
		{"no offset", []*Frame{{Kind: KindPart, From: 3, Seq: 1, Body: []byte{5}}}, "no offset", ErrCorrupt},
		{"overlong varint", []*Frame{{Kind: KindPart, From: 3, Seq: 1, Body: bytes.Repeat([]byte{0xff}, 11)}}, "no length", ErrCorrupt},
		{"empty frame", []*Frame{part(3, 1, 0, 0, "")}, "an empty frame", ErrCorrupt},
		{"empty fragment", []*Frame{part(3, 1, 10, 0, "")}, "an empty fragment", ErrCorrupt},
		{"overrun", []*Frame{part(3, 1, 3, 0, "abcd")}, "4 bytes overrun the frame's 3", ErrCorrupt},
		{"offset past the end", []*Frame{part(3, 1, 10, 0, "abc"), part(3, 1, 10, 12, "d")}, "past the end", ErrCorrupt},
		{"start missing", []*Frame{part(3, 1, 10, 4, "abc")}, "node 3, frame 1 at offset 4: the frame's start never came", ErrCorrupt},
		{"gap", []*Frame{part(3, 1, 10, 0, "abc"), part(3, 1, 10, 4, "efg")}, "out of order: 3 bytes of the frame had arrived", ErrCorrupt},
		{"out of order", []*Frame{part(3, 1, 9, 0, "abc"), part(3, 1, 9, 6, "ghi")}, "out of order", ErrCorrupt},
		{"duplicate", []*Frame{part(3, 1, 9, 0, "abc"), part(3, 1, 9, 3, "def"), part(3, 1, 9, 3, "def")}, "out of order: 6 bytes", ErrCorrupt},
		{"repeated start", []*Frame{part(3, 1, 9, 0, "abc"), part(3, 1, 9, 0, "abc")}, "started again", ErrCorrupt},
		{"length changes", []*Frame{part(3, 1, 9, 0, "abc"), part(3, 1, 10, 3, "def")}, "it says the frame has 10 bytes, its first fragment said 9", ErrCorrupt},
		{"repeat after complete", []*Frame{part(3, 1, 6, 0, "abc"), part(3, 1, 6, 3, "def"), part(3, 1, 6, 3, "def")}, "start never came (or it is complete already)", ErrCorrupt},
		{"too large", []*Frame{part(3, 8, 1<<20+1, 0, "abc")}, "node 3 sends frame 8 of 1048577 bytes in fragments, over the limit of 1048576 bytes", ErrTooLarge},
		{"too large for int", []*Frame{part(3, 8, 1<<63+5, 0, "abc")}, "over the limit of 1048576 bytes", ErrTooLarge},
		{"too many open", []*Frame{part(3, 1, 9, 0, "a"), part(3, 2, 9, 0, "b"), part(3, 3, 9, 0, "c")},
			"node 3 sends frame 3 in fragments while 2 others are incomplete, over the limit of 2", ErrTooLarge},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := Reassembler{MaxSize: 1 << 20, MaxOpen: 2}
			n := len(tc.frames)
			for i, f := range tc.frames[:n-1] {
				_, err := r.Add(f)
				require.NoError(t, err, "fragment %d", i)
			}
			got, err := r.Add(tc.frames[n-1])
			require.Nil(t, got)
			require.ErrorContains(t, err, tc.want)
			require.ErrorIs(t, err, tc.is)
			if errors.Is(err, ErrCorrupt) {
				require.NotErrorIs(t, err, ErrTooLarge)
			}
		})
	}
}

// A frame that ends in one fragment needs no state; one that a too-large
// error cut short is forgotten, and its next fragment is an error too.
func TestReassembleState(t *testing.T) {
	r := Reassembler{MaxSize: 8, MaxOpen: 1}
	b, err := r.Add(part(1, 5, 3, 0, "abc"))
	require.NoError(t, err)
	require.Equal(t, []byte("abc"), b)
	require.Equal(t, 0, r.Open())

	_, err = r.Add(part(1, 6, 9, 0, "abc"))
	require.ErrorIs(t, err, ErrTooLarge)
	_, err = r.Add(part(1, 6, 8, 3, "def"))
	require.ErrorContains(t, err, "start never came")
	require.Equal(t, 0, r.Open())

	// A bad fragment ends its frame: the same frame id may start afresh.
	_, err = r.Add(part(1, 7, 6, 0, "abc"))
	require.NoError(t, err)
	_, err = r.Add(part(1, 7, 6, 4, "ef"))
	require.ErrorContains(t, err, "out of order")
	require.Equal(t, 0, r.Open())
	_, err = r.Add(part(1, 7, 6, 0, "abc"))
	require.NoError(t, err)
	b, err = r.Add(part(1, 7, 6, 3, "def"))
	require.NoError(t, err)
	require.Equal(t, []byte("abcdef"), b)
}

// Truncated or corrupted fragment frames fail in DecodeFrame, before a
// Reassembler sees them.
func TestFragmentFramesDecodeStrictly(t *testing.T) {
	parts, err := Fragments(longFrame(t, 3000, 1), "job", 2, 9, 1000)
	require.NoError(t, err)
	p := parts[1]
	for _, cut := range []int{1, 2, len(p) / 2, len(p) - 1} {
		_, err := DecodeFrame(p[:cut])
		require.ErrorIs(t, err, ErrCorrupt, "cut at %d", cut)
	}
	_, err = DecodeFrame(append(append([]byte{}, p...), 0))
	require.ErrorContains(t, err, "trailing")
}

// FuzzReassemble feeds a Reassembler fragments made of arbitrary bytes:
// it must never panic, never hold more frames than MaxOpen, and never
// return a frame longer than MaxSize. The input is a list of fragments,
// each a byte for the frame id, a byte for the body's length, the body.
func FuzzReassemble(f *testing.F) {
	seed := func(frags ...*Frame) []byte {
		var b []byte
		for _, fr := range frags {
			b = append(b, byte(fr.Seq), byte(len(fr.Body)))
			b = append(b, fr.Body...)
		}
		return b
	}
	f.Add(seed(part(1, 1, 6, 0, "abc"), part(1, 2, 2, 0, "x"), part(1, 1, 6, 3, "def"), part(1, 2, 2, 1, "y")))
	f.Add(seed(part(1, 1, 6, 0, "abc"), part(1, 1, 6, 0, "abc")))
	f.Add(seed(part(1, 1, 300, 0, "abc")))
	f.Add([]byte{1, 3, 0x80, 0x80, 0x80})
	f.Fuzz(func(t *testing.T, in []byte) {
		r := Reassembler{MaxSize: 200, MaxOpen: 3}
		for len(in) >= 2 {
			id, n := in[0], int(in[1])
			in = in[2:]
			n = min(n, len(in))
			fr := &Frame{Kind: KindPart, From: 1, Seq: uint64(id % 4), Body: in[:n]}
			in = in[n:]
			b, err := r.Add(fr)
			if err != nil {
				require.True(t, errors.Is(err, ErrCorrupt) || errors.Is(err, ErrTooLarge), "%v", err)
				require.Nil(t, b)
			}
			require.LessOrEqual(t, len(b), 200)
			require.LessOrEqual(t, r.Open(), 3)
		}
	})
}

// A long frame's buffer grows as its fragments arrive, and each growth
// copies what came before in pieces (bigbuf), yielding between them: one
// copy of half a 512 MiB frame held the link actor, which also reads the
// heartbeats, for 0.35–0.55 s.
func TestReassembleCopiesLongBuffersInPieces(t *testing.T) {
	const piece, n = 1 << 20, 16
	r := &Reassembler{MaxSize: n * piece, MaxOpen: 1}
	before := bigbuf.Yields()
	var got []byte
	for i := 0; i < n; i++ {
		data := strings.Repeat(string(rune('a'+i)), piece)
		out, err := r.Add(part(2, 9, n*piece, uint64(i*piece), data))
		require.NoError(t, err)
		if i < n-1 {
			require.Nil(t, out)
		}
		got = out
	}
	require.Len(t, got, n*piece)
	for i := 0; i < n; i++ {
		require.Equal(t, byte('a'+i), got[i*piece], "fragment %d", i)
		require.Equal(t, byte('a'+i), got[(i+1)*piece-1], "fragment %d", i)
	}
	// The buffer doubles from 1 to 16 MiB: copies of 1, 2, 4 and 8 MiB,
	// each yielding between its 1 MiB pieces.
	require.GreaterOrEqual(t, bigbuf.Yields()-before, int64(0+1+3+7))
}
