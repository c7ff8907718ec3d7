package rt_test

import (
	"testing"

	"github.com/charmgo/charm/array"
	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/group"
)

// Entry methods run one at a time on their PE and never inside one
// another: a chare that broadcasts to its own collection (directly or
// through a callback) gets its copy later, as a message, not before its
// Send returns.

// nestState guards against re-entry.
type nestState struct {
	busy bool
	got  int
}

func (s *nestState) enter(who any) func() {
	inJob.False(s.busy, "an entry method of %v started inside another one", who)
	s.busy = true
	return func() { s.busy = false }
}

type nestElem struct {
	array.Element[nestElem, int]
	nestState
}

type nestGo struct {
	Callback bool // broadcast through a callback instead of a proxy
	Done     chare.Callback
}

func (e *nestElem) Go(m nestGo) {
	defer e.enter(e.ThisIndex())()
	before := e.got
	if m.Callback {
		inJob.NoError(chare.EntryCallback(e.ThisProxy(), (*nestElem).Got).Send(e, m.Done))
	} else {
		inJob.NoError(chare.Send(e, e.ThisProxy(), (*nestElem).Got, m.Done))
	}
	inJob.Equal(before, e.got, "element %d got its own broadcast before Send returned", e.ThisIndex())
}

func (e *nestElem) Got(done chare.Callback) {
	defer e.enter(e.ThisIndex())()
	e.got++
	inJob.NoError(e.Contribute(e.got, sumInt{}, done))
}

type nestBranch struct {
	group.Branch[nestBranch]
	nestState
}

func (b *nestBranch) Go(m nestGo) {
	defer b.enter(b.PE())()
	before := b.got
	inJob.NoError(chare.Send(b, b.ThisProxy(), (*nestBranch).Got, m.Done))
	inJob.Equal(before, b.got, "branch %d got its own broadcast before Send returned", b.PE())
}

func (b *nestBranch) Got(done chare.Callback) {
	defer b.enter(b.PE())()
	b.got++
	inJob.NoError(b.Contribute(b.got, sumInt{}, done))
}

func init() {
	chare.Register[nestElem]()
	chare.Register[nestBranch]()
}

func TestBroadcastDoesNotNest(t *testing.T) {
	for _, viaCallback := range []bool{false, true} {
		name := "proxy"
		if viaCallback {
			name = "callback"
		}
		t.Run("array_"+name, func(t *testing.T) {
			runMain(t, 2, func(m *tmain) {
				const n = 6
				a, err := array.New[nestElem](m, array.Dims(n))
				inJob.NoError(err)
				f := chare.NewFuture[int](m)
				// Element 0 lives on PE 0, with others: it broadcasts.
				inJob.NoError(chare.Send(m, a.At(0), (*nestElem).Go, nestGo{Callback: viaCallback, Done: f.Callback()}))
				inJob.Equal(n, get(m, f))
			})
		})
	}
	t.Run("group", func(t *testing.T) {
		runMain(t, 3, func(m *tmain) {
			g, err := group.New[nestBranch](m)
			inJob.NoError(err)
			f := chare.NewFuture[int](m)
			inJob.NoError(chare.Send(m, g.At(1), (*nestBranch).Go, nestGo{Done: f.Callback()}))
			inJob.Equal(3, get(m, f))
		})
	})
}

// TestBroadcastKeepsSenderOrder sends a message to one element and then a
// broadcast, from the same sender: the element sees them in that order.
func TestBroadcastKeepsSenderOrder(t *testing.T) {
	runMain(t, 2, func(m *tmain) {
		a, err := array.New[shapeElem[int]](m, array.Dims(4))
		inJob.NoError(err)
		for range 3 {
			inJob.NoError(chare.Send0(m, a.At(0), (*shapeElem[int]).Hit))
		}
		// Report is a broadcast: element 0, on PE 0 like the sender, must
		// have had its three hits first.
		got := shapeReport(m, a, ops1)
		inJob.Equal(3, got[0].Hits)
	})
}
