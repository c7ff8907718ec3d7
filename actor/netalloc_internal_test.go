package actor

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/charmgo/charm/actor/wire"

	"github.com/charmgo/charm/internal/alloctest"
	"github.com/charmgo/charm/internal/mpcheck"
)

// allocated returns the bytes f allocates.
var allocated = alloctest.Bytes

// testSliceMsg is a protocol message with a slice, as array, lb and chare
// register theirs.
type testSliceMsg struct{ Vals []int64 }

func (*testSliceMsg) Deliver(*PE) {}

const kindTestSlice = 0x7ff0

// testWideMsg's elements take 4 KiB each in memory, and one byte (nil)
// on the wire.
type testWideMsg struct{ Blocks [][4096]byte }

func (*testWideMsg) Deliver(*PE) {}

const kindTestWide = 0x7ff1

func init() {
	RegisterStruct[testSliceMsg](kindTestSlice, "test slice message")
	RegisterStruct[testWideMsg](kindTestWide, "test wide message")
}

// A RegisterStruct kind's body is checked before msgpack/v5 decodes it:
// unchecked, 6 bytes made it allocate 64 MiB (8 Mi int64s) before failing,
// and nesting deep enough exhausts the stack.
func TestStructKindBodiesChecked(t *testing.T) {
	pe := &PE{id: 3}
	cases := []struct {
		name, want string
		body       []byte
	}{
		{"huge count", "claims 8388608 values", []byte{0x91, 0xdd, 0x00, 0x80, 0x00, 0x00}},
		// An unknown field (struct as a map) is skipped, by recursion.
		{"deep unknown field", "nested deeper", append([]byte{0x81, 0xa1, 'X'}, append(bytes.Repeat([]byte{0x91}, 10001), 0xc0)...)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			n := allocated(func() { _, err = pe.decodeItem(wire.Item{Kind: kindTestSlice, Body: tc.body}) })
			require.ErrorContains(t, err, "decoding a test slice message on PE 3")
			require.ErrorContains(t, err, tc.want)
			require.Less(t, n, uint64(1<<20), "decoding %d crafted bytes allocated %d bytes", len(tc.body), n)
		})
	}
	// Valid bodies still decode.
	m, err := pe.decodeItem(wire.Item{Kind: kindTestSlice, Body: []byte{0x91, 0x92, 0x01, 0x02}})
	require.NoError(t, err)
	require.Equal(t, &testSliceMsg{Vals: []int64{1, 2}}, m)
}

// A checked kind's body is checked where it lies: a copy cost an
// allocation the size of the body (and one unpreemptible memmove for a
// long one) before msgpack decoded it again.
func TestCheckedKindBodyNotCopied(t *testing.T) {
	pe := &PE{id: 1}
	const n = 1 << 20
	body := append([]byte{0x91, 0xdd, 0x00, 0x10, 0x00, 0x00}, bytes.Repeat([]byte{0x01}, n)...) // {Vals: 1 Mi ones}
	var m Message
	var err error
	got := allocated(func() { m, err = pe.decodeItem(wire.Item{Kind: kindTestSlice, Body: body}) })
	require.NoError(t, err)
	require.Len(t, m.(*testSliceMsg).Vals, n)
	// Against msgpack/v5 decoding the same bytes alone: the copy of the
	// body was 1 MiB more.
	dec := msgpack.NewDecoder(bytes.NewReader(body))
	alone := allocated(func() { require.NoError(t, dec.Decode(new(testSliceMsg))) })
	require.Less(t, got, alone+n/2, "decoding a %d-byte body allocated %d bytes, msgpack alone %d", len(body), got, alone)
	require.Nil(t, pe.decBody, "the PE keeps no reference to the body it decoded")
}

// A RegisterStruct kind's body is checked against the type it decodes
// into: 16 KiB of nils passed the count check (one byte an element) and
// made msgpack/v5 allocate 64 MiB of zeroed 4 KiB arrays (found in
// review).
func TestStructKindExpansionRefused(t *testing.T) {
	pe := &PE{id: 2}
	const n = 16 << 10
	body := append([]byte{0x81, 0xa6, 'B', 'l', 'o', 'c', 'k', 's', 0xdd, 0, 0, n >> 8, n & 0xff}, bytes.Repeat([]byte{0xc0}, n)...)
	var err error
	got := allocated(func() { _, err = pe.decodeItem(wire.Item{Kind: kindTestWide, Body: body}) })
	require.ErrorContains(t, err, "decoding a test wide message on PE 2")
	require.ErrorContains(t, err, "would allocate at least")
	require.Less(t, got, uint64(1<<20), "%d bytes allocated", got)
	// A real one decodes.
	m, err := pe.decodeItem(wire.Item{Kind: kindTestWide, Body: append([]byte{0x81, 0xa6, 'B', 'l', 'o', 'c', 'k', 's', 0x91, 0xc5, 0x10, 0x00}, make([]byte, 4096)...)})
	require.NoError(t, err)
	require.Len(t, m.(*testWideMsg).Blocks, 1)
}

// Node frames (exit, hello, table) are checked too: exitInfo.Lost is a
// slice that msgpack/v5 made for four billion elements from 5 bytes.
func TestNodeFrameBodiesChecked(t *testing.T) {
	var e exitInfo
	var err error
	body := []byte{0x81, 0xa4, 'L', 'o', 's', 't', 0xdd, 0x00, 0x80, 0x00, 0x00}
	n := allocated(func() { err = mpcheck.Unmarshal(body, &e) })
	require.ErrorContains(t, err, "claims 8388608 values")
	require.Less(t, n, uint64(1<<20), "decoding %d crafted bytes allocated %d bytes", len(body), n)
	var addrs []string
	require.NoError(t, mpcheck.Unmarshal([]byte{0x92, 0xa1, 'a', 0xa1, 'b'}, &addrs))
	require.Equal(t, []string{"a", "b"}, addrs)
}
