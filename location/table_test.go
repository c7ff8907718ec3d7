package location

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The unit tests use 4 PEs and element 0, whose home is PE 0 (home = i % 4).
const (
	unitPEs = 4
	elem    = 0
	homePE  = 0
)

func modHome(pes int) func(int) int { return func(i int) int { return i % pes } }

// table returns the table of PE here with the default hop bound.
func table(here int) *Table[int, string] { return New[int, string](here, modHome(unitPEs), 0) }

// tableHops returns the table of PE here with the given hop bound.
func tableHops(here, maxHops int) *Table[int, string] {
	return New[int, string](here, modHome(unitPEs), maxHops)
}

func deliverAt(pe int, epoch uint32) Decision { return Decision{Action: Deliver, PE: pe, Epoch: epoch} }
func forwardTo(pe int, epoch uint32) Decision { return Decision{Action: Forward, PE: pe, Epoch: epoch} }

var (
	hold   = Decision{Action: Hold}
	absent = Decision{Action: Absent}
)

func TestNew(t *testing.T) {
	tb := table(2)
	require.Equal(t, 2, tb.Here())
	require.Equal(t, 1, tb.Home(5))
	require.Equal(t, DefaultMaxHops, tb.MaxHops())
	require.Equal(t, DefaultMaxHops, tableHops(2, -1).MaxHops())
	require.Equal(t, 7, tableHops(2, 7).MaxHops())
	require.Zero(t, tb.NumLocal())
	require.Zero(t, tb.NumHeld())
	_, ok := tb.Known(elem)
	require.False(t, ok)
}

func TestActionString(t *testing.T) {
	require.Equal(t, "deliver", Deliver.String())
	require.Equal(t, "forward", Forward.String())
	require.Equal(t, "hold", Hold.String())
	require.Equal(t, "absent", Absent.String())
	require.Equal(t, "action?", Action(42).String())
}

func TestRouteDeliversLocal(t *testing.T) {
	for _, here := range []int{homePE, 2} {
		tb := table(here)
		tb.Arrive(elem, 4)
		// Whatever the message expected, and however far it came.
		for _, epoch := range []uint32{0, 3, 4, 9} {
			for _, hops := range []int{0, 1, DefaultMaxHops, 100} {
				require.Equal(t, deliverAt(here, 4), tb.Route(elem, epoch, hops),
					"PE %d epoch %d hops %d", here, epoch, hops)
			}
		}
	}
}

func TestRouteHomeWithoutKnowledgeIsAbsent(t *testing.T) {
	tb := table(homePE)
	require.Equal(t, absent, tb.Route(elem, 0, 0))
	require.Equal(t, absent, tb.Route(elem, 5, 2))
	require.Equal(t, absent, tb.Route(elem, 5, 100))
}

func TestRouteHomeGoneIsAbsent(t *testing.T) {
	tb := table(homePE)
	tb.Learn(elem, 2, 3)
	require.True(t, tb.LearnGone(elem, 3))
	require.Equal(t, absent, tb.Route(elem, 0, 0))
	require.Equal(t, absent, tb.Route(elem, 3, 1))

	// Deleted on the home itself.
	tb = table(homePE)
	tb.Arrive(elem, 6)
	require.Equal(t, uint32(6), tb.Delete(elem))
	require.Equal(t, absent, tb.Route(elem, 6, 0))
}

func TestRouteHomeOlderThanMessageHolds(t *testing.T) {
	tb := table(homePE)
	require.True(t, tb.Learn(elem, 2, 3))
	require.Equal(t, hold, tb.Route(elem, 4, 0), "news of epoch 4 is on its way to the home")
	require.Equal(t, hold, tb.Route(elem, 9, 7))
	// Knowledge at least as new as the message: forward, whatever the hops.
	require.Equal(t, forwardTo(2, 3), tb.Route(elem, 3, 0))
	require.Equal(t, forwardTo(2, 3), tb.Route(elem, 0, 0))
	require.Equal(t, forwardTo(2, 3), tb.Route(elem, 1, 100), "the home ignores MaxHops")
}

func TestRouteNonHomeWithoutKnowledge(t *testing.T) {
	tb := table(2)
	require.Equal(t, forwardTo(homePE, 0), tb.Route(elem, 0, 0), "epoch 0: ask the home")
	require.Equal(t, forwardTo(homePE, 0), tb.Route(elem, 0, 100))
	require.Equal(t, hold, tb.Route(elem, 1, 0), "epoch > 0: the element is coming here")
	require.Equal(t, hold, tb.Route(elem, 8, 100))
}

func TestRouteNonHomeForwardsToNewerPointer(t *testing.T) {
	tb := table(2)
	require.True(t, tb.Learn(elem, 3, 5))
	require.Equal(t, forwardTo(3, 5), tb.Route(elem, 0, 0))
	require.Equal(t, forwardTo(3, 5), tb.Route(elem, 4, 1))
	require.Equal(t, forwardTo(3, 5), tb.Route(elem, 5, 2), "equal epoch: the element left")
	require.Equal(t, hold, tb.Route(elem, 6, 0), "older knowledge: the element is coming here")
}

func TestRouteAfterMaxHopsGoesHome(t *testing.T) {
	tb := table(2)
	tb.Learn(elem, 3, 5)
	for hops := range DefaultMaxHops {
		require.Equal(t, forwardTo(3, 5), tb.Route(elem, 5, hops), "hops %d", hops)
	}
	require.Equal(t, forwardTo(homePE, 5), tb.Route(elem, 5, DefaultMaxHops))
	require.Equal(t, forwardTo(homePE, 5), tb.Route(elem, 2, 50))
	// Hold wins over the hop bound: the element is certain to come here.
	require.Equal(t, hold, tb.Route(elem, 6, 50))

	one := tableHops(2, 1)
	one.Learn(elem, 3, 5)
	require.Equal(t, forwardTo(3, 5), one.Route(elem, 5, 0))
	require.Equal(t, forwardTo(homePE, 5), one.Route(elem, 5, 1))
}

func TestRouteNonHomeGoneGoesHome(t *testing.T) {
	tb := table(2)
	tb.Arrive(elem, 2)
	require.Equal(t, uint32(2), tb.Delete(elem))
	require.Equal(t, forwardTo(homePE, 2), tb.Route(elem, 0, 0))
	require.Equal(t, forwardTo(homePE, 2), tb.Route(elem, 2, 0))
	require.Equal(t, forwardTo(homePE, 2), tb.Route(elem, 1, 100))
}

func TestRouteAfterDepart(t *testing.T) {
	tb := table(2)
	tb.Arrive(elem, 1)
	tb.Depart(elem, 3, 2)
	_, local := tb.IsLocal(elem)
	require.False(t, local)
	require.Equal(t, forwardTo(3, 2), tb.Route(elem, 1, 0))
	require.Equal(t, forwardTo(3, 2), tb.Route(elem, 2, 0))
	require.Equal(t, hold, tb.Route(elem, 3, 0), "it will come back here at epoch 3")
	tb.Arrive(elem, 3)
	require.Equal(t, deliverAt(2, 3), tb.Route(elem, 3, 0))
}

func TestLearn(t *testing.T) {
	tb := table(2)
	require.True(t, tb.Learn(elem, 1, 3), "first knowledge")
	requireKnown(t, tb, Loc{PE: 1, Epoch: 3})

	require.False(t, tb.Learn(elem, 3, 2), "older is ignored")
	require.False(t, tb.Learn(elem, 3, 3), "same epoch is ignored")
	requireKnown(t, tb, Loc{PE: 1, Epoch: 3})

	require.True(t, tb.Learn(elem, 3, 4), "newer wins")
	requireKnown(t, tb, Loc{PE: 3, Epoch: 4})

	require.False(t, tb.Learn(elem, 2, 9), "a pointer to this PE is ignored")
	requireKnown(t, tb, Loc{PE: 3, Epoch: 4})

	tb.Arrive(elem, 5)
	require.False(t, tb.Learn(elem, 1, 9), "a local element is ignored")
	e, ok := tb.IsLocal(elem)
	require.True(t, ok)
	require.Equal(t, uint32(5), e)
	_, known := tb.Known(elem)
	require.False(t, known)
}

func TestLearnEpochZeroOnEmptyTable(t *testing.T) {
	tb := table(homePE)
	require.True(t, tb.Learn(elem, 2, 0), "an element first inserted at epoch 0")
	requireKnown(t, tb, Loc{PE: 2, Epoch: 0})
	require.Equal(t, forwardTo(2, 0), tb.Route(elem, 0, 0))
}

func TestLearnAfterGone(t *testing.T) {
	tb := table(2)
	tb.Arrive(elem, 3)
	tb.Delete(elem)
	require.False(t, tb.Learn(elem, 1, 3), "stale news of the deleted incarnation")
	requireKnown(t, tb, Loc{PE: homePE, Epoch: 3, Gone: true})
	require.True(t, tb.Learn(elem, 1, 4), "the next incarnation")
	requireKnown(t, tb, Loc{PE: 1, Epoch: 4})
}

func TestLearnGone(t *testing.T) {
	tb := table(homePE)
	require.True(t, tb.Learn(elem, 2, 3))
	require.False(t, tb.LearnGone(elem, 2), "older than what is known")
	requireKnown(t, tb, Loc{PE: 2, Epoch: 3})
	require.True(t, tb.LearnGone(elem, 3), "deleted where it was")
	requireKnown(t, tb, Loc{PE: homePE, Epoch: 3, Gone: true})
	exists, next := tb.Exists(elem)
	require.False(t, exists)
	require.Equal(t, uint32(4), next)

	empty := table(homePE)
	require.True(t, empty.LearnGone(elem, 5), "nothing known yet")
	requireKnown(t, empty, Loc{PE: homePE, Epoch: 5, Gone: true})

	local := table(homePE)
	local.Arrive(elem, 7)
	require.False(t, local.LearnGone(elem, 7), "a local element is ignored")
	_, ok := local.IsLocal(elem)
	require.True(t, ok)

	other := table(2) // gone knowledge points at the home
	require.True(t, other.LearnGone(elem, 1))
	requireKnown(t, other, Loc{PE: homePE, Epoch: 1, Gone: true})
}

func TestArriveDepartDelete(t *testing.T) {
	tb := table(2)
	tb.Learn(elem, 1, 1)
	tb.Arrive(elem, 2)
	e, ok := tb.IsLocal(elem)
	require.True(t, ok)
	require.Equal(t, uint32(2), e)
	require.Equal(t, 1, tb.NumLocal())
	_, known := tb.Known(elem)
	require.False(t, known, "Arrive forgets the remote knowledge")

	tb.Arrive(4, 0)
	require.Equal(t, 2, tb.NumLocal())

	tb.Depart(elem, 3, 3)
	_, ok = tb.IsLocal(elem)
	require.False(t, ok)
	require.Equal(t, 1, tb.NumLocal())
	requireKnown(t, tb, Loc{PE: 3, Epoch: 3})

	tb.Arrive(elem, 5)
	require.Equal(t, uint32(5), tb.Delete(elem))
	_, ok = tb.IsLocal(elem)
	require.False(t, ok)
	requireKnown(t, tb, Loc{PE: homePE, Epoch: 5, Gone: true})
	require.Equal(t, 1, tb.NumLocal())
}

func TestExists(t *testing.T) {
	tb := table(homePE)
	exists, next := tb.Exists(elem)
	require.False(t, exists, "never inserted")
	require.Equal(t, uint32(0), next)

	tb.Arrive(elem, 0)
	exists, next = tb.Exists(elem)
	require.True(t, exists)
	require.Equal(t, uint32(1), next)

	tb.Depart(elem, 2, 1)
	tb.Learn(elem, 3, 4)
	exists, next = tb.Exists(elem)
	require.True(t, exists, "elsewhere")
	require.Equal(t, uint32(5), next)

	require.True(t, tb.LearnGone(elem, 4))
	exists, next = tb.Exists(elem)
	require.False(t, exists)
	require.Equal(t, uint32(5), next, "the next incarnation is newer than the deleted one")

	// Inserted again elsewhere, then deleted on the home itself.
	require.True(t, tb.Learn(elem, 1, next))
	exists, next = tb.Exists(elem)
	require.True(t, exists)
	require.Equal(t, uint32(6), next)
	tb.Arrive(elem, 6)
	require.Equal(t, uint32(6), tb.Delete(elem))
	exists, next = tb.Exists(elem)
	require.False(t, exists)
	require.Equal(t, uint32(7), next)
}

func TestLookup(t *testing.T) {
	tb := table(2)
	pe, e := tb.Lookup(elem)
	require.Equal(t, homePE, pe, "unknown: ask the home")
	require.Equal(t, uint32(0), e)

	tb.Learn(elem, 3, 4)
	pe, e = tb.Lookup(elem)
	require.Equal(t, 3, pe)
	require.Equal(t, uint32(4), e)

	tb.Arrive(elem, 5)
	pe, e = tb.Lookup(elem)
	require.Equal(t, 2, pe)
	require.Equal(t, uint32(5), e)

	tb.Delete(elem)
	pe, e = tb.Lookup(elem)
	require.Equal(t, homePE, pe, "gone: ask the home")
	require.Equal(t, uint32(0), e)
}

func TestHoldRelease(t *testing.T) {
	tb := table(2)
	require.Empty(t, tb.Release(elem))
	tb.Hold(elem, "a")
	tb.Hold(4, "x")
	tb.Hold(elem, "b")
	tb.Hold(elem, "c")
	require.Equal(t, 4, tb.NumHeld())
	counts := map[int]int{}
	tb.EachHeld(func(i, n int) { counts[i] = n })
	require.Equal(t, map[int]int{elem: 3, 4: 1}, counts)

	require.Equal(t, []string{"a", "b", "c"}, tb.Release(elem), "arrival order")
	require.Equal(t, 1, tb.NumHeld())
	require.Empty(t, tb.Release(elem), "released once")
	require.Equal(t, 1, tb.NumHeld())

	tb.Hold(elem, "d")
	require.Equal(t, []string{"d"}, tb.Release(elem))
	require.Equal(t, []string{"x"}, tb.Release(4))
	require.Zero(t, tb.NumHeld())
	tb.EachHeld(func(i, n int) { t.Fatalf("nothing is held, got %d for %d", n, i) })
}

// walk routes a message that PE from sends to element i, following the
// tables' decisions until it is delivered; it returns the PEs it visited
// and its hop count. Only Deliver and Forward are expected.
func walk(t *testing.T, tables []*Table[int, string], from, i int) (path []int, hops int) {
	t.Helper()
	pe, epoch := tables[from].Lookup(i)
	for {
		path = append(path, pe)
		d := tables[pe].Route(i, epoch, hops)
		switch d.Action {
		case Deliver:
			return path, hops
		case Forward:
			pe, epoch, hops = d.PE, d.Epoch, hops+1
		default:
			t.Fatalf("unexpected %v at PE %d, path %v", d.Action, pe, path)
		}
		require.Less(t, hops, 100, "path %v", path)
	}
}

// TestHopBoundIsMaxHopsPlusTwo shows that a message may be forwarded
// MaxHops+2 times even when the home knows exactly where the element is:
// MaxHops times along stale caches, then to the home, then from the home
// to the element. The element, whose home is PE 0, went 0→1→2→3→4→5 and
// PE 6 still believes it is on PE 1.
func TestHopBoundIsMaxHopsPlusTwo(t *testing.T) {
	const pes = 7
	tables := make([]*Table[int, string], pes)
	for pe := range tables {
		tables[pe] = New[int, string](pe, modHome(pes), 0)
	}
	tables[0].Arrive(elem, 0)
	for pe := 1; pe <= 5; pe++ {
		tables[pe-1].Depart(elem, pe, uint32(pe))
		tables[pe].Arrive(elem, uint32(pe))
		tables[0].Learn(elem, pe, uint32(pe))
	}
	tables[6].Learn(elem, 1, 1)

	path, hops := walk(t, tables, 6, elem)
	require.Equal(t, []int{1, 2, 3, 4, 0, 5}, path)
	require.Equal(t, DefaultMaxHops+2, hops)

	// With an up-to-date home, MaxHops+2 is the bound: every PE on the
	// path is visited once, and the home forwards straight to the element.
	for from := range pes {
		path, hops := walk(t, tables, from, elem)
		require.LessOrEqual(t, hops, DefaultMaxHops+2, "from %d: %v", from, path)
	}
}

// TestRouteGoneBeforeNewerIncarnation: a PE on which the element was
// deleted at epoch e, and then inserted again (by the home) at epoch e+1,
// receives a message for the new incarnation before the element itself.
// The doc's rule ("this PE's knowledge is older than the message's: the
// element is on its way here: hold") says Hold; forwarding it back to the
// home with epoch e would make the epoch decrease along the chain, and the
// message bounce home→PE→home→... until the insertion lands.
func TestRouteGoneBeforeNewerIncarnation(t *testing.T) {
	home, pe := table(homePE), table(2)
	home.Arrive(elem, 0)
	home.Depart(elem, 2, 1)
	pe.Arrive(elem, 1)
	e := pe.Delete(elem)
	require.True(t, home.LearnGone(elem, e))
	exists, next := home.Exists(elem)
	require.False(t, exists)
	require.True(t, home.Learn(elem, 2, next)) // inserted again on PE 2; "create" in flight
	d := home.Route(elem, 0, 0)
	require.Equal(t, forwardTo(2, next), d)
	require.Equal(t, hold, pe.Route(elem, d.Epoch, 1), "PE 2 must wait for the new incarnation")
}

func requireKnown(t *testing.T, tb *Table[int, string], want Loc) {
	t.Helper()
	got, ok := tb.Known(elem)
	require.True(t, ok, "nothing known")
	require.Equal(t, want, got)
}
