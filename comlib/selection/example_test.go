package selection_test

import (
	_ "embed"
	"fmt"

	"github.com/charmgo/charm/comlib/selection"
)

//go:embed testdata/alltoall.json
var alltoall []byte

// Load a tree once, prune it when a communicator is made (16 PEs in several processes, an
// all-to-all), then select per call by message size alone.
func Example() {
	tree, err := selection.Parse(alltoall, selection.Options{
		Containers: []string{"strategy"},
		Check: func(c selection.Container) error {
			if c.Value != "direct" && c.Value != "eachtomany" {
				return fmt.Errorf("unknown strategy %q", c.Value)
			}
			return nil
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	pruned, err := tree.Prune(selection.CreationFacts{CommSize: 16, CommType: selection.Inter, Collective: selection.Alltoall})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("nodes:", tree.Size(), "->", pruned.Size())
	for _, size := range []int{64, 4096, 1 << 20} {
		c, trace, err := pruned.Select(selection.CallFacts{MsgSize: size})
		if err != nil {
			fmt.Println(err)
			return
		}
		router, _ := c.Param("router")
		fmt.Printf("%d B: %s router=%q\n  %s\n", size, c.Value, router, trace)
	}

	_, err = selection.Parse([]byte(`{"comm_size<=8": {"msg_size<=256": {"strategy=direct": {}}}, "comm_size=any": {"strategy=direct": {}}}`),
		selection.Options{Containers: []string{"strategy"}})
	fmt.Println(err)
	// Output:
	// nodes: 30 -> 6
	// 64 B: eachtomany router="hypercube"
	//   collective=alltoall (pruned) > comm_size=pow2 (pruned) > msg_size<=256; 2 nodes
	// 4096 B: eachtomany router="mesh"
	//   collective=alltoall (pruned) > comm_size=pow2 (pruned) > msg_size<=32768; 3 nodes
	// 1048576 B: direct router=""
	//   collective=alltoall (pruned) > comm_size=pow2 (pruned) > msg_size=any; 4 nodes
	// selection: line 1: comm_size<=8 > msg_size<=256: incomplete subtree: the last branch must be msg_size=any, so that every msg_size has a container
}
