package mcast_test

import (
	"fmt"

	"github.com/charmgo/charm/comlib/mcast"
)

// A binary-tree multicast from PE 0 to seven PEs: each PE computes its own children from the
// root and the destination list that the message carries.
func ExampleChildren() {
	dests := []int{2, 3, 5, 8, 9, 11, 13}
	for _, pe := range append([]int{0}, dests...) {
		next, err := mcast.Children(mcast.Tree, mcast.Options{Degree: 2}, 0, dests, pe)
		if err != nil {
			panic(err)
		}
		if len(next) > 0 {
			fmt.Println(pe, "->", next)
		}
	}
	// Output:
	// 0 -> [2 3]
	// 2 -> [5 8]
	// 3 -> [9 11]
	// 5 -> [13]
}

// A 5000-byte message in 2 KiB chunks, reassembled from chunks arriving out of order.
func ExampleReassembler() {
	payload := make([]byte, 5000)
	chunks, _ := mcast.Split(payload, 2048)
	re := mcast.NewReassembler(1 << 20)
	for _, i := range []int{2, 0, 1} {
		whole, done, err := re.Add(42, i, len(chunks), chunks[i])
		fmt.Println(len(chunks[i]), done, len(whole), err, re.Pending())
	}
	// Output:
	// 904 false 0 <nil> 1
	// 2048 false 0 <nil> 1
	// 2048 true 5000 <nil> 0
}
