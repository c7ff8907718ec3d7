package lb

import (
	"fmt"

	"github.com/charmgo/charm/array"
	"github.com/charmgo/charm/chare"
)

// Test hooks that force an interleaving of a step's messages on one PE.

// CollectHere takes this PE's snapshot of its objects, as a periodic
// step's collect message does.
func CollectHere(ctx chare.Context) {
	st := state(chare.PEOf(ctx))
	st.reported = array.LocalElements(st.pe, 0)
}

// MoveHere applies a periodic step's order to move element index of coll,
// as found by the last CollectHere, to PE to.
func MoveHere(ctx chare.Context, coll chare.CollID, index any, to int) error {
	st := state(chare.PEOf(ctx))
	for k, e := range st.reported {
		if e.Coll == coll && e.Index == index {
			if !(&stepOrders{Step: -1, Moves: []move{{K: k, To: to}}}).apply(st) {
				return fmt.Errorf("the orders failed")
			}
			return nil
		}
	}
	return fmt.Errorf("element %v of %v is not in PE %d's snapshot", index, coll, st.pe.ID())
}

// MisaddressReport sends a PE's load report, a message for PE 0's
// coordinator, to PE to instead, as a damaged frame could.
func MisaddressReport(ctx chare.Context, to int) {
	chare.PEOf(ctx).Actor().Send(to, &peReport{PE: 0})
}
