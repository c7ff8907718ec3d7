package route_test

import (
	"fmt"

	"github.com/charmgo/charm/comlib/route"
)

// An all-to-all among 10 participants over the 2-D mesh (rows 0-3, 4-7 and the partial 8-9):
// at stage 0 participant 7 sorts what it holds by next hop and sends one combined message to each
// stage peer. Participant 9 has no column 2 in its row, so its message for 2 goes to 6, the
// column-2 member of the row above, and then up the column.
func Example() {
	r, err := route.New("mesh", 10, route.Options{})
	if err != nil {
		panic(err)
	}
	fmt.Println(r.Name(), "stages:", r.Stages())
	dests := []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9} // one message for each participant
	byPeer, stay := route.Partition(r, 7, 0, dests)
	for _, p := range r.SendTo(7, 0) {
		fmt.Printf("stage 0: 7 -> %d carries the messages for %v\n", p, pick(dests, byPeer[p]))
	}
	fmt.Println("stage 0: 7 keeps", pick(dests, stay))
	path, _ := route.Path(r, 9, 2)
	fmt.Println("9 -> 2 goes", path)
	// Output:
	// mesh stages: 2
	// stage 0: 7 -> 4 carries the messages for [0 4 8]
	// stage 0: 7 -> 5 carries the messages for [1 5 9]
	// stage 0: 7 -> 6 carries the messages for [2 6]
	// stage 0: 7 keeps [3 7]
	// 9 -> 2 goes [9 6 2]
}

func pick(all []int, idx []int) []int {
	out := []int{}
	for _, i := range idx {
		out = append(out, all[i])
	}
	return out
}
