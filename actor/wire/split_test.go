package wire

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// itemsSize is the encoded size of a data frame's Items field, measured
// on whole frames rather than with Split's own arithmetic.
func itemsSize(items []Item) int {
	if items == nil {
		items = []Item{}
	}
	return Size(&Frame{Kind: KindData, Items: items}) - Size(&Frame{Kind: KindData}) + 1
}

func itemsOfSizes(sizes ...int) []Item {
	items := make([]Item, len(sizes))
	for i, s := range sizes {
		items[i] = Item{PE: int32(i), Body: make([]byte, s-5)} // 5 = array, PE, kind, bin8 header
		if items[i].Size() != s {
			panic("itemsOfSizes: sizes must be 5..260")
		}
	}
	return items
}

func lens(chunks [][]Item) []int {
	var n []int
	for _, c := range chunks {
		n = append(n, len(c))
	}
	return n
}

func TestSplit(t *testing.T) {
	var (
		three   = itemsOfSizes(37, 37, 37) // 111 bytes + a 1-byte header
		sixteen = itemsOfSizes(10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10)
	)
	tests := []struct {
		name   string
		items  []Item
		budget int
		want   []int // chunk lengths
	}{
		{"nil", nil, 100, nil},
		{"empty", []Item{}, 100, nil},
		{"all fit exactly", three, 112, []int{3}},
		{"one byte short", three, 111, []int{2, 1}},
		{"two per chunk", three, 75, []int{2, 1}},
		{"one per chunk", three, 74, []int{1, 1, 1}},
		{"budget zero: each alone", three, 0, []int{1, 1, 1}},
		{"negative budget: each alone", three, -5, []int{1, 1, 1}},
		// 15 items take a 1-byte header, 16 a 3-byte one.
		{"16 items with a 3-byte header", sixteen, 3 + 160, []int{16}},
		{"header growth pushes the 16th out", sixteen, 2 + 160, []int{15, 1}},
		{"oversized first", itemsOfSizes(200, 10, 10), 50, []int{1, 2}},
		{"oversized in the middle", itemsOfSizes(10, 10, 200, 10), 50, []int{2, 1, 1}},
		{"oversized last", itemsOfSizes(10, 10, 200), 50, []int{2, 1}},
		{"two oversized", itemsOfSizes(200, 200), 50, []int{1, 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			chunks := Split(tc.items, tc.budget)
			require.Equal(t, tc.want, lens(chunks))
			checkChunks(t, tc.items, tc.budget, chunks)
		})
	}
}

// checkChunks checks Split's contract: the chunks are the items in order,
// views of the same array with capacity cut; each fits the budget or is
// one oversized item; and each is as long as it can be.
func checkChunks(t *testing.T, items []Item, budget int, chunks [][]Item) {
	t.Helper()
	off := 0
	for i, c := range chunks {
		require.NotEmpty(t, c, "chunk %d", i)
		require.Same(t, &items[off], &c[0], "chunk %d is not a view of items", i)
		require.Equal(t, len(c), cap(c), "chunk %d capacity", i)
		size := itemsSize(c)
		if size > budget {
			require.Len(t, c, 1, "chunk %d of %d bytes exceeds budget %d", i, size, budget)
		}
		if off+len(c) < len(items) {
			require.Greater(t, itemsSize(items[off:off+len(c)+1]), budget, "chunk %d could take one more item", i)
		}
		off += len(c)
	}
	require.Equal(t, len(items), off)
}

func TestSplitRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for range 300 {
		items := make([]Item, r.IntN(200))
		for i := range items {
			items[i] = Item{PE: int32(r.IntN(100000)), Kind: uint16(r.IntN(1000)), Body: make([]byte, r.IntN(300))}
		}
		budget := r.IntN(3000) - 10
		checkChunks(t, items, budget, Split(items, budget))
	}
}

// The budget recipe in Split's doc keeps whole frames within MaxFrame.
func TestSplitFillsFramesUpToMaxFrame(t *testing.T) {
	items := make([]Item, 200_000)
	for i := range items {
		items[i] = Item{PE: int32(i), Kind: 7, Body: make([]byte, 32)}
	}
	const token = "a-job-token-of-some-length"
	budget := MaxFrame - Size(&Frame{Kind: KindData, Token: token, From: 3, Seq: math.MaxUint64})
	chunks := Split(items, budget)
	require.Greater(t, len(chunks), 1)
	for i, c := range chunks {
		b, err := AppendFrame(nil, &Frame{Kind: KindData, Token: token, From: 3, Seq: uint64(i) << 40, Items: c})
		require.NoError(t, err)
		require.LessOrEqual(t, len(b), MaxFrame, "frame %d", i)
		if i < len(chunks)-1 {
			require.Greater(t, len(b), MaxFrame-100, "frame %d is not full", i)
		}
	}
}
