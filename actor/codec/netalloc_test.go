package codec

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/internal/alloctest"
)

// allocated returns the bytes f allocates (it runs on one goroutine, and
// the test does not run in parallel).
var allocated = alloctest.Bytes

// A map field leaves the type to reflection (msgpack/v5).
type reflVals struct {
	Vals []int64
	M    map[string]int
}

type reflAny struct{ V any }

type genBlocks struct{ Blocks [][4096]byte }

// A map field leaves it to reflection.
type reflBlocks struct {
	Blocks [][4096]byte
	M      map[string]int
}

// A crafted body of a few bytes (or of n bytes for n elements) must be
// refused without allocating in proportion to what its headers claim: the
// unchecked decoders allocated 64 to 128 MiB for each case below before
// failing.
func TestCraftedBodiesAllocateLittle(t *testing.T) {
	filler := bytes.Repeat([]byte{0xc0}, 1<<14)
	cases := []struct {
		name string
		c    *Codec
		into func() any
		body []byte
	}{
		// msgpack/v5 never applies its slice limit (a flag test that is
		// always true): 8 Mi int64s from 6 bytes.
		{"reflection slice", For[reflVals](), func() any { return new(reflVals) },
			[]byte{0x92, 0xdd, 0x00, 0x80, 0x00, 0x00}},
		// An []any is made for its header's count.
		{"reflection []any", For[reflAny](), func() any { return new(reflAny) },
			[]byte{0x91, 0xdd, 0x00, 0x40, 0x00, 0x00}},
		// 16 Ki elements, one byte each on the wire, 4 KiB each in memory.
		{"generated slice of byte arrays", For[genBlocks](), func() any { return new(genBlocks) },
			append([]byte{0x91, 0xdc, 0x40, 0x00}, filler...)},
		// The same by reflection: the count fits the bytes, but msgpack/v5
		// decodes each nil into a zeroed 4 KiB array (64 MiB; found in
		// review), so the check counts elements at their Go size.
		{"reflection slice of byte arrays", For[reflBlocks](), func() any { return new(reflBlocks) },
			append(append([]byte{0x92, 0xdc, 0x40, 0x00}, filler...), 0xc0)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := tc.into()
			var err error
			n := allocated(func() { err = tc.c.DecodeValue(tc.body, reflect.ValueOf(v)) })
			require.Error(t, err)
			require.Less(t, n, uint64(1<<20), "decoding %d crafted bytes allocated %d bytes (%v)", len(tc.body), n, err)
		})
	}
	require.Equal(t, Reflection, For[reflVals]().How())
	require.Equal(t, Reflection, For[reflAny]().How())
	require.Equal(t, Generated, For[genBlocks]().How())
	require.Equal(t, Reflection, For[reflBlocks]().How())
}

// Nesting deeper than mpcheck.MaxDepth is refused before msgpack/v5
// recurses into it (millions of levels, a few megabytes, exhaust the
// stack: a fatal error that no recover catches).
func TestDeepBodyRefused(t *testing.T) {
	const depth = 10001
	body := append(bytes.Repeat([]byte{0x91}, depth+1), 0xc0)
	var v reflAny
	err := For[reflAny]().DecodeValue(body, reflect.ValueOf(&v))
	require.ErrorContains(t, err, "nested deeper")
}

// The bound of the generated slices refuses no valid input: slices of
// the smallest elements the decoders accept still decode.
func TestGeneratedSliceOfSmallestElements(t *testing.T) {
	type pair struct {
		A []int
		S string
	}
	type msg struct {
		P []pair
		B [][4]byte
	}
	in := msg{P: make([]pair, 300), B: make([][4]byte, 300)}
	c := For[msg]()
	require.Equal(t, Generated, c.How())
	b, err := Append(c, nil, &in)
	require.NoError(t, err)
	var out msg
	require.NoError(t, Decode(c, b, &out))
	require.Equal(t, in, out)
	// One element short of its bytes is refused by the count check.
	bad := []byte{0x92, 0xc0, 0xdc, 0x00, 0x02, 0xc4, 0x04, 1, 2, 3, 4}
	require.ErrorContains(t, Decode(c, bad, &out), "2 elements declared, of at least 5 bytes each, but only 6 bytes left")
}

func TestMinWire(t *testing.T) {
	type two struct {
		A int
		B [3]byte
		c int // unexported: not on the wire
	}
	cases := []struct {
		t    reflect.Type
		want int
	}{
		{reflect.TypeFor[int](), 1},
		{reflect.TypeFor[string](), 1},
		{reflect.TypeFor[[]int](), 1},
		{reflect.TypeFor[[4096]byte](), 4097},
		{reflect.TypeFor[[3]int32](), 4},
		{reflect.TypeFor[two](), 1 + 1 + 4},
		{reflect.TypeFor[[2]two](), 1 + 2*6},
		{reflect.TypeFor[[1 << 20][1 << 20]byte](), 1 << 30},
	}
	for _, tc := range cases {
		require.Equal(t, tc.want, minWire(tc.t), "%v", tc.t)
	}
}
