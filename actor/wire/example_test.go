package wire_test

import (
	"fmt"
	"math"

	"github.com/charmgo/charm/actor/wire"
)

func Example() {
	out := &wire.Frame{Kind: wire.KindData, Token: "job-42", From: 1, Seq: 7, Items: []wire.Item{
		{PE: 3, Kind: 1, Body: []byte("hello")},
		{PE: 5, Kind: 2, Body: []byte("world")},
	}}
	b, err := wire.AppendFrame(nil, out)
	if err != nil {
		panic(err)
	}

	in, err := wire.DecodeFrame(b)
	if err != nil {
		panic(err)
	}
	fmt.Println(in.Kind, "frame from node", in.From, "seq", in.Seq, "size", len(b))
	for _, it := range in.Items {
		fmt.Printf("PE %d kind %d: %s\n", it.PE, it.Kind, it.Body)
	}

	_, err = wire.DecodeFrame(b[:len(b)-1])
	fmt.Println(err)
	// Output:
	// data frame from node 1 seq 7 size 35
	// PE 3 kind 1: hello
	// PE 5 kind 2: world
	// wire: corrupt frame: item 1: body: truncated: needs 5 bytes, 4 left (at byte 28)
}

func ExampleSplit() {
	items := make([]wire.Item, 200_000)
	for i := range items {
		items[i] = wire.Item{PE: int32(i % 64), Kind: 1, Body: make([]byte, 32)}
	}
	const token, node = "job-42", 0
	budget := wire.MaxFrame - wire.Size(&wire.Frame{Kind: wire.KindData, Token: token, From: node, Seq: math.MaxUint64})
	for i, chunk := range wire.Split(items, budget) {
		b, _ := wire.AppendFrame(nil, &wire.Frame{Kind: wire.KindData, Token: token, From: node, Seq: uint64(i), Items: chunk})
		fmt.Println(len(chunk), "messages,", len(b), "bytes")
	}
	// Output:
	// 85018 messages, 3145685 bytes
	// 85018 messages, 3145685 bytes
	// 29964 messages, 1108685 bytes
}

func ExampleFragments() {
	// A frame with one 10 MB message is longer than MaxFrame: it travels
	// in fragments, and the receiver's Reassembler for node 1 joins them.
	const token, node = "job-42", 1
	long := &wire.Frame{Kind: wire.KindData, Token: token, From: node, Items: []wire.Item{
		{PE: 3, Kind: 1, Body: make([]byte, 10_000_000)},
	}}
	b, _ := wire.AppendFrame(nil, long)
	parts, err := wire.Fragments(b, token, node, 1, wire.MaxFrame)
	if err != nil {
		panic(err)
	}
	fmt.Println(len(b), "bytes in", len(parts), "fragments")

	r := wire.Reassembler{MaxSize: 1 << 30, MaxOpen: 4}
	for _, p := range parts {
		f, err := wire.DecodeFrame(p)
		if err != nil {
			panic(err)
		}
		whole, err := r.Add(f)
		if err != nil {
			panic(err)
		}
		if whole != nil {
			in, _ := wire.DecodeFrame(whole)
			fmt.Println(in.Kind, "frame for PE", in.Items[0].PE, "with", len(in.Items[0].Body), "bytes")
		}
	}

	// A fragment that comes twice is an error, not a second frame.
	f, _ := wire.DecodeFrame(parts[1])
	_, err = r.Add(f)
	fmt.Println(err)
	// Output:
	// 10000023 bytes in 4 fragments
	// data frame for PE 3 with 10000000 bytes
	// wire: corrupt fragment from node 1, frame 1 at offset 3145689: the frame's start never came (or it is complete already)
}
