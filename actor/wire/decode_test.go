package wire

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"
)

// checkDecode is the property every input must have: DecodeFrame either
// rejects it with an error that wraps ErrCorrupt, or returns a frame that
// encodes to a frame that decodes to the same thing.
func checkDecode(t testing.TB, b []byte) {
	t.Helper()
	f, err := DecodeFrame(b)
	if err != nil {
		require.ErrorIs(t, err, ErrCorrupt)
		require.Nil(t, f)
		return
	}
	enc, err := AppendFrame(nil, f)
	require.NoError(t, err, "a decoded frame must encode")
	require.Len(t, enc, Size(f))
	again, err := DecodeFrame(enc)
	require.NoError(t, err, "a re-encoded frame must decode")
	require.Equal(t, f, again)
}

func marshal(t *testing.T, fields ...any) []byte {
	t.Helper()
	b, err := msgpack.Marshal(fields)
	require.NoError(t, err)
	return b
}

// header is a valid frame up to Body: [Version, KindData, "t", 0, 0, 0, ...
var header = []byte{0x98, 0x02, 0x01, 0xa1, 't', 0x00, 0x00, 0x00}

func cat(parts ...[]byte) []byte {
	var b []byte
	for _, p := range parts {
		b = append(b, p...)
	}
	return b
}

func TestDecodeRejects(t *testing.T) {
	valid := encode(t, &Frame{Kind: KindData, Token: "t", Items: []Item{{PE: 1, Body: []byte("x")}}})
	item := func(pe, kind any, body any) []any { return []any{pe, kind, body} }
	tests := []struct {
		name string
		in   []byte
		want string // the error message, or a part of it
	}{
		{"empty input", nil, "wire: corrupt frame: frame: truncated (at byte 0)"},
		{"nil", []byte{0xc0}, "an empty frame has no version"},
		{"empty array", []byte{0x90}, "an empty frame has no version"},
		{"not an array", []byte{0x81, 0xa1, 'k', 0x01}, "frame: want an array, found a map"},
		{"an integer", []byte{0x01}, "frame: want an array, found an integer"},
		{"unused code", []byte{0xc1}, "frame: want an array, found the unused code 0xc1"},
		{"wrong version", marshal(t, 7, 1, "t", 0, 0, 0, nil, nil), "wire: frame version 7, this program speaks 2"},
		{"wrong version, other layout", marshal(t, 7, "anything"), "wire: frame version 7, this program speaks 2"},
		{"negative version", marshal(t, -1), "wire: frame version -1, this program speaks 2"},
		{"version as string", marshal(t, "1"), "version: want an integer, found a string"},
		{"version too large", marshal(t, uint64(math.MaxUint64)), "version: 18446744073709551615 exceeds"},
		{"7 fields", marshal(t, 2, 1, "t", 0, 0, 0, nil), "frame: version 2 frame has 7 fields, want 8"},
		{"9 fields", marshal(t, 2, 1, "t", 0, 0, 0, nil, nil, nil), "frame: version 2 frame has 9 fields, want 8"},
		{"kind 0", marshal(t, 2, 0, "t", 0, 0, 0, nil, nil), "kind: unknown kind 0"},
		{"kind 10", marshal(t, 2, 10, "t", 0, 0, 0, nil, nil), "kind: unknown kind 10"},
		{"kind 300", marshal(t, 2, 300, "t", 0, 0, 0, nil, nil), "kind: 300 exceeds 255"},
		{"kind negative", marshal(t, 2, -1, "t", 0, 0, 0, nil, nil), "kind: -1 is negative"},
		{"kind as bool", marshal(t, 2, true, "t", 0, 0, 0, nil, nil), "kind: want an integer, found a bool"},
		{"token as binary", marshal(t, 2, 1, []byte("t"), 0, 0, 0, nil, nil), "token: want a string, found binary"},
		{"token nil", marshal(t, 2, 1, nil, 0, 0, 0, nil, nil), "token: want a string, found nil"},
		{"negative from", marshal(t, 2, 1, "t", -1, 0, 0, nil, nil), "from: -1 is negative"},
		{"from as float", marshal(t, 2, 1, "t", 1.5, 0, 0, nil, nil), "from: want an integer, found a float"},
		{"from too large", marshal(t, 2, 1, "t", uint64(math.MaxUint64), 0, 0, nil, nil), "from: 18446744073709551615 exceeds"},
		{"negative seq", marshal(t, 2, 1, "t", 0, -5, 0, nil, nil), "seq: -5 is negative"},
		{"code too large", marshal(t, 2, 1, "t", 0, 0, uint64(math.MaxUint64), nil, nil), "code: 18446744073709551615 exceeds"},
		{"body as string", marshal(t, 2, 1, "t", 0, 0, 0, "why", nil), "body: want binary, found a string"},
		{"body as array", marshal(t, 2, 1, "t", 0, 0, 0, []int{1}, nil), "body: want binary, found an array"},
		{"items as map", marshal(t, 2, 1, "t", 0, 0, 0, nil, map[string]int{"a": 1}), "items: want an array, found a map"},
		{"items as binary", marshal(t, 2, 1, "t", 0, 0, 0, nil, []byte{1, 2, 3, 4}), "items: want an array, found binary"},
		{"item not an array", marshal(t, 2, 1, "t", 0, 0, 0, nil, []any{"abcd"}), "item 0: item: want an array, found a string"},
		{"item with 2 fields", marshal(t, 2, 1, "t", 0, 0, 0, nil, []any{item(0, 0, nil), []any{1000, 2000}}), "item 1: item: 2 fields, want 3 (a message) or 4 (a run)"},
		{"item with 5 fields", marshal(t, 2, 1, "t", 0, 0, 0, nil, []any{[]any{1, 2, nil, 4, 5}}), "item 0: item: 5 fields, want 3 (a message) or 4 (a run)"},
		{"run without tails", marshal(t, 2, 1, "t", 0, 0, 0, nil, []any{[]any{1, 2, []byte("h"), []any{}}}), "item 0: tails: a run without tails"},
		{"run with nil tails", marshal(t, 2, 1, "t", 0, 0, 0, nil, []any{[]any{1, 2, []byte("h"), nil}}), "item 0: tails: a run without tails"},
		{"run with a nil tail", marshal(t, 2, 1, "t", 0, 0, 0, nil, []any{[]any{1, 2, []byte("h"), []any{[]byte("a"), nil}}}), "item 0: tail: want binary, found nil"},
		{"run with a string tail", marshal(t, 2, 1, "t", 0, 0, 0, nil, []any{[]any{1, 2, []byte("h"), []any{"a"}}}), "item 0: tail: want binary, found a string"},
		{"run head as string", marshal(t, 2, 1, "t", 0, 0, 0, nil, []any{[]any{1, 2, "h", []any{[]byte("a")}}}), "item 0: head: want binary, found a string"},
		{"run tails as binary", marshal(t, 2, 1, "t", 0, 0, 0, nil, []any{[]any{1, 2, []byte("h"), []byte("a")}}), "item 0: tails: want an array, found binary"},
		{"run tail count beyond input", cat(header, []byte{0xc0, 0x91, 0x94, 0x00, 0x00, 0xc0, 0xdc, 0xff, 0xff, 0xc4, 0x00}), "item 0: tails: 65535 tails declared, but only 2 bytes left"},
		{"negative PE", marshal(t, 2, 1, "t", 0, 0, 0, nil, []any{item(0, 0, nil), item(1, 0, nil), item(-1, 0, nil)}), "item 2: PE: -1 is negative"},
		{"PE beyond int32", marshal(t, 2, 1, "t", 0, 0, 0, nil, []any{item(int64(math.MaxInt32)+1, 0, nil)}), "item 0: PE: 2147483648 exceeds 2147483647"},
		{"item kind beyond uint16", marshal(t, 2, 1, "t", 0, 0, 0, nil, []any{item(0, 70000, nil)}), "item 0: kind: 70000 exceeds 65535"},
		{"item body as string", marshal(t, 2, 1, "t", 0, 0, 0, nil, []any{item(0, 0, "x")}), "item 0: body: want binary, found a string"},
		{"item body as extension", cat(header, []byte{0xc0, 0x91, 0x93, 0x00, 0x00, 0xd4, 0x01, 0x02}), "item 0: body: want binary, found an extension"},
		{"trailing byte", cat(valid, []byte{0x00}), "frame: 1 trailing bytes (at byte"},
		{"two frames", cat(valid, valid), "trailing bytes"},
		{"truncated item", valid[:len(valid)-1], "item 0: body: truncated: needs 1 bytes, 0 left"},

		// Declared lengths far beyond the input.
		{"huge frame array", []byte{0xdd, 0x7f, 0xff, 0xff, 0xff, 0x02}, "frame: version 2 frame has 2147483647 fields, want 8"},
		{"huge token", cat(header[:3], []byte{0xdb, 0x7f, 0xff, 0xff, 0xff, 'a'}), "token: truncated: needs 2147483647 bytes, 1 left"},
		{"huge body", cat(header, []byte{0xc6, 0x7f, 0xff, 0xff, 0xff, 0x00}), "body: truncated: needs 2147483647 bytes, 1 left"},
		{"largest body length", cat(header, []byte{0xc6, 0xff, 0xff, 0xff, 0xff, 0x00}), "body: "}, // the reason depends on int's size,
		{"huge item count", cat(header, []byte{0xc0, 0xdd, 0x7f, 0xff, 0xff, 0xff}), "items: 2147483647 items declared, but only 0 bytes left"},
		{"largest item count", cat(header, []byte{0xc0, 0xdd, 0xff, 0xff, 0xff, 0xff}), "items: "},
		{"item count beyond input", cat(header, []byte{0xc0, 0x93, 0x93, 0x00, 0x00, 0xc0}), "items: 3 items declared, but only 4 bytes left"},
		{"array16 item count", cat(header, []byte{0xc0, 0xdc, 0xff, 0xff, 0x93, 0x00}), "items: 65535 items declared, but only 2 bytes left"},
		{"huge item body", cat(header, []byte{0xc0, 0x91, 0x93, 0x00, 0x00, 0xc6, 0x7f, 0xff, 0xff, 0xf0}), "item 0: body: truncated: needs 2147483632 bytes, 0 left"},
		{"truncated length", cat(header, []byte{0xc6, 0xff}), "body: truncated: needs 4 bytes, 1 left"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, err := DecodeFrame(tc.in)
			require.Nil(t, f)
			require.ErrorIs(t, err, ErrCorrupt)
			require.ErrorContains(t, err, tc.want)
			require.Less(t, allocated(func() { _, _ = DecodeFrame(tc.in) }), uint64(4096),
				"a short input must not make the decoder allocate much")
		})
	}
}

// allocated returns the bytes fn allocates. The process-wide counter also
// sees what other goroutines (the runtime, earlier tests' leftovers) allocate
// meanwhile, so it keeps the least of several runs: an fn that really
// allocates much does so every time.
func allocated(fn func()) uint64 {
	least := uint64(math.MaxUint64)
	for range 5 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		fn()
		runtime.ReadMemStats(&after)
		least = min(least, after.TotalAlloc-before.TotalAlloc)
	}
	return least
}

// Every proper prefix of a valid frame is rejected.
func TestDecodeTruncatedEverywhere(t *testing.T) {
	for _, tc := range sampleFrames() {
		t.Run(tc.name, func(t *testing.T) {
			b := encode(t, &tc.f)
			step := 1
			if len(b) > 10000 {
				step = len(b)/1000 + 1 // large frames: a thousand cuts
			}
			for n := 0; n < len(b); n += step {
				f, err := DecodeFrame(b[:n])
				require.ErrorIs(t, err, ErrCorrupt, "cut at %d of %d", n, len(b))
				require.Nil(t, f)
			}
		})
	}
}

// Changing any byte never panics, and whatever still decodes round-trips.
func TestDecodeFlippedBytes(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, tc := range sampleFrames() {
		b := encode(t, &tc.f)
		if len(b) > 10000 {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			mut := make([]byte, len(b))
			for i := range b {
				for _, mask := range []byte{0x01, 0x10, 0x80, 0xff, byte(r.Uint32()) | 1} {
					copy(mut, b)
					mut[i] ^= mask
					checkDecode(t, mut)
				}
			}
		})
	}
}

// Random frames with random damage: several flipped bytes, a cut, an
// extension.
func TestDecodeRandomDamage(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for range 5000 {
		b := encode(t, randomFrame(r))
		for range 1 + r.IntN(4) {
			b[r.IntN(len(b))] = byte(r.Uint32())
		}
		switch r.IntN(3) {
		case 0:
			b = b[:r.IntN(len(b))]
		case 1:
			b = append(b, byte(r.Uint32()))
		}
		checkDecode(t, b)
	}
}
