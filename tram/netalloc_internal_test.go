package tram

import (
	"bytes"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/internal/alloctest"
)

type sliceItem struct{ Vals []int64 }

type anyItem struct{ V any }

// A batch decoded item by item is checked before msgpack/v5 decodes its
// items: decodeSlice bounds the item count, but inside an item a header of
// 5 bytes made msgpack/v5 allocate 64 MiB (8 Mi int64s), and nesting deep
// enough exhausts the stack.
func TestBatchItemsChecked(t *testing.T) {
	// A batch: fixarray of 5, items format, detector, source, no items,
	// one last-hop item.
	head := []byte{0x90 | batchFields, wireItems, 0x00, 0x00, 0xc0, 0x91}
	t.Run("huge count inside an item", func(t *testing.T) {
		b := append(append([]byte(nil), head...), 0x91, 0xdd, 0x00, 0x80, 0x00, 0x00)
		var m batch[sliceItem]
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := m.UnmarshalMsg(b)
		runtime.ReadMemStats(&after)
		require.ErrorContains(t, err, "claims 8388608 values")
		n := after.TotalAlloc - before.TotalAlloc
		require.Less(t, n, uint64(1<<20), "a batch of %d bytes allocated %d bytes", len(b), n)
	})
	t.Run("deep item", func(t *testing.T) {
		b := append(append(append([]byte(nil), head...), bytes.Repeat([]byte{0x91}, 10002)...), 0xc0)
		var m batch[anyItem]
		_, err := m.UnmarshalMsg(b)
		require.ErrorContains(t, err, "nested deeper")
	})
	t.Run("valid", func(t *testing.T) {
		b := append(append([]byte(nil), head...), 0x91, 0x92, 0x01, 0x02)
		var m batch[sliceItem]
		rest, err := m.UnmarshalMsg(b)
		require.NoError(t, err)
		require.Empty(t, rest)
		require.Equal(t, []sliceItem{{Vals: []int64{1, 2}}}, m.Final)
	})
}

// wideItem travels item by item (its string) and takes 4 KiB in memory.
type wideItem struct {
	S string
	B [4096]byte
}

// An item of one byte (nil) becomes a whole T: a 4 KB batch of nils made
// its receiver allocate about 100 MB, 25 KB a byte (found in review). The
// check counts what the items take (mpcheck.SeqAs) and refuses it.
func TestBatchOfNilItemsRefused(t *testing.T) {
	const n = 4096
	for _, field := range []string{"items", "last-hop items"} {
		t.Run(field, func(t *testing.T) {
			b := []byte{0x90 | batchFields, wireItems, 0x00, 0x00}
			nils := append([]byte{0xdd, 0, 0, n >> 8, n & 0xff}, bytes.Repeat([]byte{0xc0}, n)...)
			if field == "items" {
				b = append(append(b, nils...), 0xc0)
			} else {
				b = append(append(b, 0xc0), nils...)
			}
			var m batch[wideItem]
			var err error
			alloc := alloctest.Bytes(func() { _, err = m.UnmarshalMsg(b) })
			require.ErrorContains(t, err, "would allocate at least")
			require.Less(t, alloc, uint64(64*len(b)+1<<20), "a %d-byte batch allocated %d bytes", len(b), alloc)
		})
	}
	// Real wide items still decode.
	var sent batch[wideItem]
	sent.Items = []Envelope[wideItem]{{Dest: 3, Item: wideItem{S: "x"}}}
	sent.Final = []wideItem{{S: "y"}}
	b, err := sent.MarshalMsg(nil)
	require.NoError(t, err)
	var got batch[wideItem]
	_, err = got.UnmarshalMsg(b)
	require.NoError(t, err)
	require.Equal(t, sent.Items, got.Items)
	require.Equal(t, sent.Final, got.Final)
}
