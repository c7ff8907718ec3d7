package wire

import (
	"bytes"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"
)

// sampleFrames holds a frame of every kind and the edge cases of every
// field's encoding (nil against empty, each msgpack length class).
func sampleFrames() []struct {
	name string
	f    Frame
} {
	items := func(n, size int) []Item {
		its := make([]Item, n)
		for i := range its {
			its[i] = Item{PE: int32(i % 7), Kind: uint16(i % 3), Body: bytes.Repeat([]byte{byte(i)}, size)}
		}
		return its
	}
	run := func(pe int32, head string, tails ...string) Item {
		it := Item{PE: pe, Kind: 100, Head: []byte(head), Tails: len(tails)}
		for _, tl := range tails {
			it.Body = AppendTail(it.Body, []byte(tl))
		}
		return it
	}
	return []struct {
		name string
		f    Frame
	}{
		{"data/runs", Frame{Kind: KindData, Token: "job-1", From: 1, Items: []Item{
			run(3, "head", "a", "", "ccc"), {PE: 3, Kind: 7, Body: []byte("lone")}, run(4, "", "x"), run(0, "h", strings.Repeat("y", 300))}}},
		{"data/long run", Frame{Kind: KindData, Token: "t", Items: []Item{run(1, "h", strings.Split(strings.Repeat("tail,", 70000), ",")...)}}},
		{"data", Frame{Kind: KindData, Token: "job-1", From: 1, Seq: 42, Items: items(5, 32)}},
		{"data/empty items", Frame{Kind: KindData, Token: "t", From: 0, Seq: 1, Items: []Item{}}},
		{"data/nil items", Frame{Kind: KindData, Token: "t"}},
		{"data/item bodies nil and empty", Frame{Kind: KindData, Token: "t", Items: []Item{{PE: 3}, {PE: 4, Body: []byte{}}}}},
		{"data/16 items", Frame{Kind: KindData, Token: "t", Items: items(16, 1)}},
		{"data/65536 items", Frame{Kind: KindData, Token: "t", Items: items(1<<16, 0)}},
		{"data/extremes", Frame{Kind: KindData, Token: "t", From: math.MaxInt, Seq: math.MaxUint64, Code: math.MinInt,
			Items: []Item{{PE: math.MaxInt32, Kind: math.MaxUint16, Body: make([]byte, 256)}}}},
		{"hello", Frame{Kind: KindHello, Token: "job-1", From: 2, Body: []byte(`{"addr":"127.0.0.1:7001","pes":4}`)}},
		{"hello/empty body", Frame{Kind: KindHello, Token: "job-1", From: 2, Body: []byte{}}},
		{"table", Frame{Kind: KindTable, Token: "job-1", Seq: 3, Body: bytes.Repeat([]byte("node"), 100)}},
		{"ready", Frame{Kind: KindReady, Token: "job-1", From: 3, Seq: 2}},
		{"start", Frame{Kind: KindStart, Token: "job-1", Seq: 4}},
		{"exit", Frame{Kind: KindExit, Token: "job-1", Seq: 9, Code: 3, Body: []byte("PE 5: index out of range")}},
		{"exit/negative code", Frame{Kind: KindExit, Token: "job-1", Code: -200}},
		{"beat", Frame{Kind: KindBeat, Token: "job-1", From: 7, Seq: 1 << 40}},
		{"part", Frame{Kind: KindPart, Token: "job-1", From: 1, Seq: 5, Body: []byte{4, 0, 'a', 'b'}}},
		{"large body", Frame{Kind: KindTable, Token: "job-1", Body: bytes.Repeat([]byte{0xc1}, 1<<20)}},
		{"long token", Frame{Kind: KindBeat, Token: strings.Repeat("k", 70000)}},
		{"empty token", Frame{Kind: KindBeat}},
	}
}

func encode(t testing.TB, f *Frame) []byte {
	t.Helper()
	b, err := AppendFrame(nil, f)
	require.NoError(t, err)
	return b
}

func TestRoundTrip(t *testing.T) {
	for _, tc := range sampleFrames() {
		t.Run(tc.name, func(t *testing.T) {
			b := encode(t, &tc.f)
			require.Len(t, b, Size(&tc.f))
			got, err := DecodeFrame(b)
			require.NoError(t, err)
			require.Equal(t, &tc.f, got)
		})
	}
}

// Tails written in place (BeginTail, EndTail) read back with NextTail,
// whatever their length class.
func TestTails(t *testing.T) {
	var body []byte
	want := [][]byte{{}, []byte("a"), bytes.Repeat([]byte{7}, 255), bytes.Repeat([]byte{8}, 256), bytes.Repeat([]byte{9}, 70000)}
	for i, tl := range want {
		if i%2 == 0 {
			var mark int
			body, mark = BeginTail(body)
			body = append(body, tl...)
			body = EndTail(body, mark)
		} else {
			body = AppendTail(body, tl)
		}
	}
	rest := body
	for i := range want {
		tl, r, ok := NextTail(rest)
		require.True(t, ok, "tail %d", i)
		require.Equal(t, want[i], tl, "tail %d", i)
		rest = r
	}
	require.Empty(t, rest)
	_, _, ok := NextTail(rest)
	require.False(t, ok)
	_, _, ok = NextTail([]byte{0xc4, 5, 1})
	require.False(t, ok, "a truncated tail")

	f := &Frame{Kind: KindData, Token: "t", Items: []Item{{PE: 1, Kind: 2, Head: []byte("h"), Tails: len(want), Body: body}}}
	got, err := DecodeFrame(encode(t, f))
	require.NoError(t, err)
	require.Equal(t, f, got)

	_, err = AppendFrame(nil, &Frame{Kind: KindData, Token: "t", Items: []Item{{PE: 1, Tails: 2, Body: AppendTail(nil, nil)}}})
	require.ErrorContains(t, err, "item 0: its body is not 2 tails")
}

// A run carries its head once: 100 messages for one PE and entry cost
// their tails plus one header.
func TestRunIsCompact(t *testing.T) {
	head := bytes.Repeat([]byte{1}, 30)
	lone := &Frame{Kind: KindData, Token: "t"}
	run := &Frame{Kind: KindData, Token: "t", Items: []Item{{PE: 1, Kind: 100, Head: head, Tails: 100}}}
	for i := range 100 {
		tail := []byte{byte(i), 2, 3}
		lone.Items = append(lone.Items, Item{PE: 1, Kind: 100, Body: append(append([]byte{}, head...), tail...)})
		run.Items[0].Body = AppendTail(run.Items[0].Body, tail)
	}
	require.Less(t, Size(run)*5, Size(lone), "a run is at least 5 times smaller here")
	b := encode(t, run)
	require.Zero(t, testing.AllocsPerRun(10, func() {
		it := run.Items[0]
		rest := it.Body
		for range it.Tails {
			_, rest, _ = NextTail(rest)
		}
	}), "reading a run's tails allocates nothing")
	var perFrame float64 = testing.AllocsPerRun(10, func() { _, _ = DecodeFrame(b) })
	require.LessOrEqual(t, perFrame, 3.0, "decoding a run of 100 allocates per frame, not per message")
}

func TestAppendFrameAppends(t *testing.T) {
	f := &Frame{Kind: KindData, Token: "t", Items: []Item{{PE: 1, Body: []byte("x")}}}
	prefix := []byte("prefix")
	b, err := AppendFrame(prefix, f)
	require.NoError(t, err)
	require.Equal(t, "prefix", string(b[:6]))
	require.Equal(t, encode(t, f), b[6:])
}

func TestDecodedBodiesAliasInput(t *testing.T) {
	f := &Frame{Kind: KindData, Token: "t", Body: []byte("ab"), Items: []Item{{Body: []byte("cd")}, {Body: []byte("ef")}}}
	b := encode(t, f)
	got, err := DecodeFrame(b)
	require.NoError(t, err)
	// Capacity is cut: appending to one body must not overwrite the next.
	require.Equal(t, len(got.Items[0].Body), cap(got.Items[0].Body))
	_ = append(got.Items[0].Body, 'X')
	require.Equal(t, "ef", string(got.Items[1].Body))
	// Aliasing: the bodies are views of b.
	b[bytes.Index(b, []byte("cd"))] = 'z'
	require.Equal(t, "zd", string(got.Items[0].Body))
}

func randomFrame(r *rand.Rand) *Frame {
	bytesOf := func(max int) []byte {
		switch r.IntN(8) {
		case 0:
			return nil
		case 1:
			return []byte{}
		}
		b := make([]byte, r.IntN(max+1))
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		return b
	}
	// Integers spread over every msgpack width.
	u64 := func() uint64 { return r.Uint64() >> r.IntN(64) }
	i64 := func() int64 {
		v := int64(u64() >> 1)
		if r.IntN(2) == 0 {
			v = -v - int64(r.IntN(2))
		}
		return v
	}
	f := &Frame{
		Kind:  FrameKind(1 + r.IntN(int(KindPart))),
		Token: string(bytesOf(300)),
		From:  int(u64() & math.MaxInt),
		Seq:   u64(),
		Code:  int(i64()),
		Body:  bytesOf(1000),
	}
	if r.IntN(4) > 0 {
		f.Items = make([]Item, r.IntN(40))
		for i := range f.Items {
			f.Items[i] = Item{PE: int32(u64() >> 33), Kind: uint16(u64()), Body: bytesOf(100)}
		}
	}
	return f
}

func TestRoundTripRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var buf []byte
	for i := range 3000 {
		f := randomFrame(r)
		var err error
		buf, err = AppendFrame(buf[:0], f)
		require.NoError(t, err)
		require.Len(t, buf, Size(f), "frame %d", i)
		got, err := DecodeFrame(buf)
		require.NoError(t, err, "frame %d", i)
		require.Equal(t, f, got, "frame %d", i)
	}
}

// The encoding is plain msgpack: the library reads it, and frames the
// library writes (in any integer width) decode.
func TestInteropWithMsgpackLibrary(t *testing.T) {
	f := &Frame{Kind: KindExit, Token: "tok", From: 2, Seq: 300, Code: -1, Body: []byte("why"),
		Items: []Item{{PE: 5, Kind: 9, Body: []byte{1, 2}}}}
	var generic []any
	require.NoError(t, msgpack.Unmarshal(encode(t, f), &generic))
	require.Len(t, generic, 8)
	require.EqualValues(t, Version, generic[0])
	require.EqualValues(t, KindExit, generic[1])
	require.Equal(t, "tok", generic[2])
	require.EqualValues(t, 300, generic[4])
	require.EqualValues(t, -1, generic[5])
	require.Equal(t, []byte("why"), generic[6])
	item := generic[7].([]any)[0].([]any)
	require.EqualValues(t, 5, item[0])
	require.Equal(t, []byte{1, 2}, item[2])

	// msgpack.Marshal writes Go ints as 9-byte int64s and uint16 as uint16.
	b, err := msgpack.Marshal([]any{2, uint8(KindExit), "tok", 2, uint64(300), -1, []byte("why"),
		[]any{[]any{int32(5), uint16(9), []byte{1, 2}}}})
	require.NoError(t, err)
	got, err := DecodeFrame(b)
	require.NoError(t, err)
	require.Equal(t, f, got)
}

func TestAppendFrameRejects(t *testing.T) {
	tests := []struct {
		name string
		f    *Frame
		want string
	}{
		{"nil frame", nil, "nil frame"},
		{"kind 0", &Frame{}, "unknown kind 0"},
		{"kind 10", &Frame{Kind: KindPart + 1}, "unknown kind 10"},
		{"negative from", &Frame{Kind: KindBeat, From: -1}, "node -1 is negative"},
		{"negative PE", &Frame{Kind: KindData, Items: []Item{{PE: 1}, {PE: -2}}}, "item 1: PE -2 is negative"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dst := []byte("keep")
			b, err := AppendFrame(dst, tc.f)
			require.ErrorContains(t, err, tc.want)
			require.Equal(t, "keep", string(b))
		})
	}
}

func TestFrameKindString(t *testing.T) {
	require.Equal(t, "data", KindData.String())
	require.Equal(t, "beat", KindBeat.String())
	require.Equal(t, "FrameKind(0)", FrameKind(0).String())
	require.Equal(t, "FrameKind(200)", FrameKind(200).String())
}

// The pool hands each goroutine its own encoder.
func TestAppendFrameConcurrent(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	frames := make([]*Frame, 64)
	want := make([][]byte, len(frames))
	for i := range frames {
		frames[i] = randomFrame(r)
		want[i] = encode(t, frames[i])
	}
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for g := range 4 {
		wg.Go(func() {
			var buf []byte
			for i := range 200 {
				k := (i + g) % len(frames)
				var err error
				if buf, err = AppendFrame(buf[:0], frames[k]); err != nil || !bytes.Equal(buf, want[k]) {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("concurrent encoding differs: %v", err)
	}
}
