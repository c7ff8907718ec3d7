package wire

import "github.com/charmgo/charm/internal/msgp"

// Split cuts items into consecutive chunks, in order, each as long as it can
// be while the encoding of its Items field (the array header plus
// [Item.Size] of each item) stays at most budget bytes.
//
// An item that alone exceeds budget gets a chunk of its own: its frame is
// longer than the budget, and travels as fragments ([Fragments]).
//
// The chunks share items' backing array (each with its capacity cut to its
// length). Split(nil, n) returns nil.
//
// budget covers the Items field only. To fill frames up to [MaxFrame],
// leave room for the other fields, bounded by a header with the largest
// sequence number:
//
//	budget := wire.MaxFrame - wire.Size(&wire.Frame{Kind: wire.KindData, Token: token, From: node, Seq: math.MaxUint64})
func Split(items []Item, budget int) [][]Item {
	if len(items) == 0 {
		return nil
	}
	var chunks [][]Item
	start, size := 0, 0 // size: the items of the current chunk, without header
	for i := range items {
		s := items[i].Size()
		if i > start && msgp.ArrayHeaderSize(i-start+1)+size+s > budget {
			chunks = append(chunks, items[start:i:i])
			start, size = i, 0
		}
		size += s
	}
	return append(chunks, items[start:len(items):len(items)])
}
