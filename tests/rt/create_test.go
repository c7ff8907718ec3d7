package rt_test

import (
	"testing"

	"github.com/charmgo/charm/array"
	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/group"
)

// Collections made away from PE 0: a chare on another PE creates a group,
// an array and a singleton chare, and uses them at once.

type maker struct {
	chare.Chare[maker]
}

type makeMsg struct {
	Array chare.Future[map[int]shapeState[int]]
	Group chare.Future[map[int]grpState]
	Solo  chare.Future[soloWhere]
}

func (mk *maker) Make(m makeMsg) {
	a, err := array.New[shapeElem[int]](mk, array.Dims(7), array.WithMap(array.RoundRobin))
	inJob.NoError(err)
	inJob.NoError(chare.Send0(mk, a, (*shapeElem[int]).Hit))
	inJob.NoError(chare.Send(mk, a, (*shapeElem[int]).Report, m.Array.Callback()))

	g, err := group.NewWith(mk, (*grp).Init, grpInit{Val: 3})
	inJob.NoError(err)
	inJob.NoError(chare.Send(mk, g.At(0), (*grp).Hit, grpHit{}))
	inJob.NoError(chare.Send(mk, g, (*grp).Report, m.Group.Callback()))

	s, err := chare.NewWith(mk, 0, (*solo).Init, soloInit{Val: 8})
	inJob.NoError(err)
	inJob.NoError(chare.Send(mk, s, (*solo).Where, m.Solo.Callback()))
}

func init() { chare.Register[maker]() }

func TestCreateAwayFromPE0(t *testing.T) {
	const pes = 3
	runMain(t, pes, func(m *tmain) {
		mk, err := chare.New[maker](m, 2)
		inJob.NoError(err)
		msg := makeMsg{chare.NewFuture[map[int]shapeState[int]](m), chare.NewFuture[map[int]grpState](m), chare.NewFuture[soloWhere](m)}
		inJob.NoError(chare.Send(m, mk, (*maker).Make, msg))

		arr := get(m, msg.Array)
		inJob.Len(arr, 7)
		for i := 0; i < 7; i++ {
			st := arr[i]
			inJob.Equal(1, st.Hits, "element %d", i)
			inJob.Equal(i%pes, st.PE, "element %d", i)
		}
		grps := get(m, msg.Group)
		inJob.Len(grps, pes)
		for pe := 0; pe < pes; pe++ {
			st := grps[pe]
			inJob.Equal(3, st.Val)
			inJob.Equal(pe == 0, st.Hits == 1, "branch %d", pe)
		}
		w := get(m, msg.Solo)
		inJob.Equal(0, w.PE)
		inJob.Equal(8, w.Val)
	})
}
