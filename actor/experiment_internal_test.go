package actor

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/actor/wire"
)

// The experiment knob framePerItem (build tag charmexp_frameperitem) puts
// each item in a frame of its own; every other build coalesces the items
// for one node into as few frames as fit.
func TestFrameBudgetCoalescesUnlessTheExperimentKnobIsOn(t *testing.T) {
	items := make([]wire.Item, 5)
	for i := range items {
		items[i] = wire.Item{PE: int32(i), Kind: 1, Tails: 1, Body: []byte{1, 2, 3}}
	}
	chunks := wire.Split(items, frameBudget())
	if framePerItem {
		require.Len(t, chunks, len(items), "with -tags charmexp_frameperitem every item leaves in a frame of its own")
		return
	}
	require.Len(t, chunks, 1, "the items for one node share a frame")
	require.Greater(t, frameBudget(), 1<<20, "a frame carries up to about wire.MaxFrame")
}
