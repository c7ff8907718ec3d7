package rt_test

import (
	"testing"

	"github.com/charmgo/charm/array"
	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/group"
)

// Constructors that send to their own collection (issue 14, item 1): the
// constructor of an array element, a group branch or a singleton chare
// runs when its PE builds its part of the collection, and a send from it
// to the same collection must reach the part being built, not build it
// again (which ran the constructors again, without end).

// ringCtor greets its right neighbour from its constructor; every
// greeting is counted by a reduction over the sender indices.
type ringCtor struct {
	array.Element[ringCtor, int]
	Done chare.Callback
}

type ringCtorInit struct {
	N    int
	Done chare.Callback
}

type ringHello struct{ From int }

func (r *ringCtor) Init(m ringCtorInit) {
	r.Done = m.Done
	inJob.NoError(chare.Send(r, r.ThisProxy().At((r.ThisIndex()+1)%m.N), (*ringCtor).Hello, ringHello{From: r.ThisIndex()}))
}

func (r *ringCtor) Hello(m ringHello) {
	inJob.NoError(r.Contribute(m.From, sumInt{}, r.Done))
}

// grpCtor greets the next branch from its constructor.
type grpCtor struct {
	group.Branch[grpCtor]
	Done chare.Callback
}

func (g *grpCtor) Init(done chare.Callback) {
	g.Done = done
	inJob.NoError(chare.Send(g, g.ThisProxy().At((g.PE()+1)%g.NumPEs()), (*grpCtor).Hello, ringHello{From: g.PE()}))
}

func (g *grpCtor) Hello(m ringHello) {
	inJob.NoError(g.Contribute(m.From, sumInt{}, g.Done))
}

// soloCtor sends to itself from its constructor.
type soloCtor struct{ chare.Chare[soloCtor] }

func (s *soloCtor) Init(f chare.Future[int]) {
	inJob.NoError(chare.Send(s, s.ThisProxy(), (*soloCtor).Echo, f))
}

func (s *soloCtor) Echo(f chare.Future[int]) { inJob.NoError(f.Send(s, s.PE())) }

func init() {
	chare.Register[ringCtor]()
	chare.Register[grpCtor]()
	chare.Register[soloCtor]()
}

func TestConstructorSendsToOwnCollection(t *testing.T) {
	const pes, n = 4, 12
	runMain(t, pes, func(m *tmain) {
		arr := chare.NewFuture[int](m)
		_, err := array.NewWith(m, array.Dims(n), (*ringCtor).Init, ringCtorInit{N: n, Done: arr.Callback()})
		inJob.NoError(err)
		inJob.Equal(n*(n-1)/2, get(m, arr), "every element greeted once")

		grp := chare.NewFuture[int](m)
		_, err = group.NewWith(m, (*grpCtor).Init, grp.Callback())
		inJob.NoError(err)
		inJob.Equal(pes*(pes-1)/2, get(m, grp), "every branch greeted once")

		solo := chare.NewFuture[int](m)
		_, err = chare.NewWith(m, pes-1, (*soloCtor).Init, solo)
		inJob.NoError(err)
		inJob.Equal(pes-1, get(m, solo))
	})
}
