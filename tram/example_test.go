package tram_test

import (
	"fmt"

	"github.com/charmgo/charm/tram"
)

// Items from PE 0 to PE 23 of a 2×3×4 grid travel three hops, fixing the last dimension first.
func ExampleTopology_NextHop() {
	topo, _ := tram.NewTopology([]int{2, 3, 4}, 24)
	for pe := 0; pe != 23; pe = topo.NextHop(pe, 23) {
		c, _ := topo.Coords(pe)
		fmt.Print(c, " → ")
	}
	fmt.Println("[1 2 3] in", topo.Hops(0, 23), "hops;", topo.NumPeers(0), "buffers per PE")
	// Output: [0 0 0] → [0 0 3] → [0 2 3] → [1 2 3] in 3 hops; 6 buffers per PE
}

// An Aggregator returns the messages its inserts trigger; the caller sends them. With Bare,
// the items for a peer of the last dimension routed (here PE 2) travel without their
// destination (Final).
func ExampleAggregator_Insert() {
	topo, _ := tram.NewTopology([]int{2, 2}, 4)
	agg, _ := tram.NewAggregator(tram.Config[string]{Topology: topo, PE: 0, Sizing: tram.Sizing{BufferItems: 2}, Bare: true})
	agg.Insert("a", 3) // via PE 1
	out, _ := agg.Insert("b", 1)
	fmt.Println(out.Flushes)
	agg.Insert("c", 2)
	fmt.Println(agg.FlushAll())
	// Output:
	// [{1 [{3 a} {1 b}] []}]
	// [{2 [] [c]}]
}
