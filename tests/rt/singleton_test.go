package rt_test

import (
	"fmt"
	"testing"

	"github.com/charmgo/charm/chare"
)

// Singleton chares: chare.New on a given PE or on AnyPE, chare.NewWith
// running its init method before anything else, and ThisProxy.

type solo struct {
	chare.Chare[solo]
	inited bool
	val    int
	pings  int
}

type soloInit struct{ Val int }

func (s *solo) Init(m soloInit) {
	inJob.False(s.inited, "init ran twice")
	s.inited, s.val = true, m.Val
}

// soloWhere is what Where reports.
type soloWhere struct {
	PE, Val int
	Inited  bool
	Self    chare.Route
	Pings   int
}

func (s *solo) Where(cb chare.Callback) {
	inJob.NoError(cb.Send(s, soloWhere{PE: s.PE(), Val: s.val, Inited: s.inited, Self: s.ThisProxy().Route(), Pings: s.pings}))
}

// PingSelf sends n pings to itself through ThisProxy, then reports.
func (s *solo) PingSelf(m soloPing) {
	for i := 0; i < m.N; i++ {
		inJob.NoError(chare.Send0(s, s.ThisProxy(), (*solo).Ping))
	}
	inJob.NoError(chare.Send(s, s.ThisProxy(), (*solo).Where, m.Done))
}

type soloPing struct {
	N    int
	Done chare.Callback
}

func (s *solo) Ping() { s.pings++ }

func init() { chare.Register[solo]() }

func soloAsk(m *tmain, p chare.Proxy[solo]) soloWhere {
	f := chare.NewFuture[soloWhere](m)
	inJob.NoError(chare.Send(m, p, (*solo).Where, f.Callback()))
	return get(m, f)
}

func TestSingletonOnEachPE(t *testing.T) {
	const pes = 4
	runMain(t, pes, func(m *tmain) {
		for pe := 0; pe < pes; pe++ {
			p, err := chare.New[solo](m, pe)
			inJob.NoError(err)
			inJob.Equal(pe, p.Route().PE)
			w := soloAsk(m, p)
			inJob.Equal(pe, w.PE, "chare created for PE %d", pe)
			inJob.False(w.Inited)
			inJob.Equal(p.Route(), w.Self, "ThisProxy addresses the chare itself")
		}
	})
}

func TestSingletonAnyPE(t *testing.T) {
	for _, pes := range []int{1, 3} {
		t.Run(fmt.Sprintf("%dPEs", pes), func(t *testing.T) {
			runMain(t, pes, func(m *tmain) {
				for i := 0; i < 2*pes; i++ {
					p, err := chare.New[solo](m, chare.AnyPE)
					inJob.NoError(err)
					w := soloAsk(m, p)
					inJob.GreaterOrEqual(w.PE, 0)
					inJob.Less(w.PE, pes)
					inJob.Equal(p.Route().PE, w.PE, "the proxy names the PE the chare lives on")
				}
			})
		})
	}
}

// TestSingletonNewWith checks that the init method has run before the
// first message, also when that message is sent right after creation and
// when the chare lives on another PE.
func TestSingletonNewWith(t *testing.T) {
	runMain(t, 3, func(m *tmain) {
		for pe := 0; pe < 3; pe++ {
			p, err := chare.NewWith(m, pe, (*solo).Init, soloInit{Val: 100 + pe})
			inJob.NoError(err)
			w := soloAsk(m, p)
			inJob.True(w.Inited)
			inJob.Equal(soloWhere{PE: pe, Val: 100 + pe, Inited: true, Self: p.Route()}, w)
		}
	})
}

func TestSingletonThisProxy(t *testing.T) {
	runMain(t, 2, func(m *tmain) {
		p, err := chare.New[solo](m, 1)
		inJob.NoError(err)
		f := chare.NewFuture[soloWhere](m)
		inJob.NoError(chare.Send(m, p, (*solo).PingSelf, soloPing{N: 25, Done: f.Callback()}))
		w := get(m, f)
		inJob.Equal(25, w.Pings, "pings sent through ThisProxy arrive before the later Where")
		inJob.Equal(1, w.PE)
	})
}
