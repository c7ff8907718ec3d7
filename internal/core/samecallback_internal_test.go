package core

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// sameCallback decides whether contributions to one reduction agree on
// where the result goes; a callback that crossed processes must still
// match the one made here.
func TestSameCallback(t *testing.T) {
	coll, other := CollID(5), CollID(6)
	fut := func(id uint64) Callback { return Callback{Kind: CallbackFuture, Future: futureRef{PE: 0, ID: id}} }
	elem := func(i any) Callback {
		return Callback{Kind: CallbackEntry, Entry: 3, Route: Route{Kind: KindElement, Coll: coll, Index: i}}
	}
	sec := func(s *Section) Callback {
		return Callback{Kind: CallbackEntry, Entry: 3, Route: Route{Kind: KindSection, Coll: coll, Section: s}}
	}
	key7, err := IndexKey(7)
	require.NoError(t, err)
	for _, c := range []struct {
		name string
		a, b Callback
		same bool
	}{
		{"one future", fut(1), fut(1), true},
		{"two futures", fut(1), fut(2), false},
		{"an index in its wire form", elem(7), elem(IndexFromKey(key7)), true},
		{"two indices", elem(7), elem(8), false},
		{"two [2]int indices", elem([2]int{1, 2}), elem([2]int{1, 3}), false},
		{"one index decoded twice from the wire", elem(IndexFromKey(key7)), elem(IndexFromKey(key7)), true},
		{"two wire forms of one index (two pointers)", elem(new(indexSlab).index([]byte(key7), 1)), elem(new(indexSlab).index([]byte(key7), 1)), true},
		{"an element and a broadcast", elem(7), Callback{Kind: CallbackEntry, Entry: 3, Route: Route{Kind: KindArrayAll, Coll: coll}}, false},
		{"a section that lost its members on the wire", sec(&Section{ID: other, Coll: coll}), sec(nil), true},
		{"two sections", sec(&Section{ID: other, Coll: coll}), sec(&Section{ID: CollID(9), Coll: coll}), false},
		{"ignore and exit", IgnoreCallback(), ExitCallback(0), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			require.Equal(t, c.same, sameCallback(c.a, c.b))
			require.Equal(t, c.same, sameCallback(c.b, c.a))
		})
	}
}
