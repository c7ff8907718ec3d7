package rt_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/array"
	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/chare/reducer"
	"github.com/charmgo/charm/group"
	"github.com/charmgo/charm/internal/core"
)

// User mistakes get an error that names what was wrong, never a panic or a
// hang. Mistakes the compiler catches need no test: a method of another
// chare type than the proxy's, a message of the wrong type for the method,
// an index of the wrong type through array.Proxy.At, a NewWith init method
// whose message type differs from the one given. What is left is checked
// here.

// unregistered is a chare type that was never registered.
type unregistered struct {
	chare.Chare[unregistered]
}

func (u *unregistered) Hit(int) {}

// notEmbedding is registered but embeds no chare base.
type notEmbedding struct{ n int }

func (n *notEmbedding) Hit(int) {}

func init() { chare.Register[notEmbedding]() }

const badPEs = 3

func TestBadInput(t *testing.T) {
	cases := []struct {
		name string
		do   func(m *tmain) error
		want []string // in the error
	}{
		{"array index out of range", func(m *tmain) error {
			a, err := array.New[shapeElem[int]](m, array.Dims(16))
			inJob.NoError(err)
			return chare.Send0(m, a.At(16), (*shapeElem[int]).Hit)
		}, []string{"index 16", "out of range", "shape 16"}},
		{"negative array index", func(m *tmain) error {
			a, err := array.New[shapeElem[int]](m, array.Dims(4))
			inJob.NoError(err)
			return chare.Send0(m, a.At(-1), (*shapeElem[int]).Hit)
		}, []string{"index -1", "out of range"}},
		{"2-D index out of range", func(m *tmain) error {
			a, err := array.New[shapeElem[[2]int]](m, array.Dims2(3, 4))
			inJob.NoError(err)
			return chare.Send0(m, a.At([2]int{1, 4}), (*shapeElem[[2]int]).Hit)
		}, []string{"index [1 4]", "out of range", "shape 3×4"}},
		{"struct index not in the list", func(m *tmain) error {
			a, err := array.New[shapeElem[cellID]](m, array.Indices(cellID{"a", 1}))
			inJob.NoError(err)
			return chare.Send0(m, a.At(cellID{"b", 1}), (*shapeElem[cellID]).Hit)
		}, []string{"{b 1}", "out of range"}},
		{"index of the wrong type", func(m *tmain) error {
			a, err := array.New[shapeElem[int]](m, array.Dims(4))
			inJob.NoError(err)
			forged := a.WithRoute(chare.Route{Kind: chare.KindElement, Coll: a.Route().Coll, Index: "two"})
			return chare.Send0(m, forged, (*shapeElem[int]).Hit)
		}, []string{"index two of type string", "int"}},
		{"damaged index from another process", func(m *tmain) error {
			a, err := array.New[shapeElem[int]](m, array.Dims(4))
			inJob.NoError(err)
			// A proxy whose index bytes were damaged on the way: an
			// array of one where an int should be.
			forged := a.WithRoute(chare.Route{Kind: chare.KindElement, Coll: a.Route().Coll, Index: core.IndexFromKey("\x91\x01")})
			return chare.Send0(m, forged, (*shapeElem[int]).Hit)
		}, []string{"bad int index (2 bytes)", "want an integer, found an array"}},
		{"truncated 2-D index from another process", func(m *tmain) error {
			a, err := array.New[shapeElem[[2]int]](m, array.Dims2(3, 4))
			inJob.NoError(err)
			forged := a.WithRoute(chare.Route{Kind: chare.KindElement, Coll: a.Route().Coll, Index: core.IndexFromKey("\x92\x01")})
			return chare.Send(m, forged, (*shapeElem[[2]int]).Init, shapeInit{}) // a message: an element run
		}, []string{"bad [2]int index (2 bytes)", "integer 1 at byte 2: truncated"}},
		{"zero proxy", func(m *tmain) error {
			var p chare.Proxy[solo]
			return chare.Send0(m, p, (*solo).Ping)
		}, []string{"cannot send through a none proxy"}},
		{"zero array proxy", func(m *tmain) error {
			var a array.Proxy[shapeElem[int], int]
			return chare.Send0(m, a.At(1), (*shapeElem[int]).Hit)
		}, []string{"no collection"}},
		{"zero group proxy", func(m *tmain) error {
			var g group.Proxy[grp]
			return chare.Send(m, g, (*grp).Hit, grpHit{})
		}, []string{"cannot send through a none proxy"}},
		{"forged element proxy", func(m *tmain) error {
			p := chare.NewProxy[shapeElem[int]](chare.Route{Kind: chare.KindElement, Coll: 12345, Index: 0})
			return chare.Send0(m, p, (*shapeElem[int]).Hit)
		}, []string{"no collection", "#0.12345"}},
		{"forged broadcast proxy", func(m *tmain) error {
			p := chare.NewProxy[grp](chare.Route{Kind: chare.KindGroupAll, Coll: 777})
			return chare.Send(m, p, (*grp).Hit, grpHit{})
		}, []string{"no collection", "#0.777"}},
		{"forged chare proxy", func(m *tmain) error {
			p := chare.NewProxy[solo](chare.Route{Kind: chare.KindChare, Coll: 4242, PE: 1})
			return chare.Send0(m, p, (*solo).Ping)
		}, []string{"no collection", "#0.4242"}},
		{"forged branch proxy", func(m *tmain) error {
			p := group.Proxy[grp]{Proxy: chare.NewProxy[grp](chare.Route{Kind: chare.KindGroupAll, Coll: 4243})}
			return chare.Send(m, p.At(1), (*grp).Hit, grpHit{})
		}, []string{"no collection", "#0.4243"}},
		{"forged section", func(m *tmain) error {
			a := array.Proxy[shapeElem[int], int]{Proxy: chare.NewProxy[shapeElem[int]](chare.Route{Kind: chare.KindArrayAll, Coll: 999})}
			_, err := a.Section(m, []int{0})
			return err
		}, []string{"no collection", "#0.999"}},
		{"element proxy forged on a group", func(m *tmain) error {
			g, err := group.New[grp](m)
			inJob.NoError(err)
			p := chare.NewProxy[grp](chare.Route{Kind: chare.KindElement, Coll: g.Route().Coll, Index: 99})
			return chare.Send(m, p, (*grp).Hit, grpHit{})
		}, []string{"PE 99"}},
		{"section of a group with a PE that does not exist", func(m *tmain) error {
			g, err := group.New[grp](m)
			inJob.NoError(err)
			_, err = chare.NewSection(m, g.Route().Coll, []any{1, -1})
			return err
		}, []string{"PE -1"}},
		{"section proxy without a section", func(m *tmain) error {
			p := chare.NewProxy[shapeElem[int]](chare.Route{Kind: chare.KindSection})
			return chare.Send0(m, p, (*shapeElem[int]).Hit)
		}, []string{"without a section"}},
		{"group branch on a PE that does not exist", func(m *tmain) error {
			g, err := group.New[grp](m)
			inJob.NoError(err)
			return chare.Send(m, g.At(badPEs), (*grp).Hit, grpHit{})
		}, []string{"PE 3", "no such PE"}},
		{"function literal as entry method", func(m *tmain) error {
			s, err := chare.New[solo](m, 0)
			inJob.NoError(err)
			return chare.Send0(m, s, func(*solo) {})
		}, []string{"function literal", "method expression"}},
		{"nil entry method", func(m *tmain) error {
			s, err := chare.New[solo](m, 0)
			inJob.NoError(err)
			return chare.Send(m, s, nil, soloInit{})
		}, []string{"not a method expression"}},
		{"method of an unregistered type", func(m *tmain) error {
			p := chare.NewProxy[unregistered](chare.Route{Kind: chare.KindChare, Coll: 1, PE: 0})
			return chare.Send(m, p, (*unregistered).Hit, 1)
		}, []string{"unregistered).Hit", "not an entry method of a registered chare type"}},
		{"new chare of an unregistered type", func(m *tmain) error {
			_, err := chare.New[unregistered](m, 0)
			return err
		}, []string{"unregistered", "not registered"}},
		{"new group of an unregistered type", func(m *tmain) error {
			_, err := group.New[unregistered](m)
			return err
		}, []string{"unregistered", "not registered"}},
		{"new array of an unregistered type", func(m *tmain) error {
			_, err := array.New[unregistered](m, array.Dims(2))
			return err
		}, []string{"unregistered", "not registered"}},
		{"chare type without a chare base", func(m *tmain) error {
			_, err := chare.New[notEmbedding](m, 0)
			return err
		}, []string{"notEmbedding", "must embed chare.Chare"}},
		{"group type without a branch base", func(m *tmain) error {
			_, err := group.New[notEmbedding](m)
			return err
		}, []string{"notEmbedding", "must embed group.Branch"}},
		{"array type without an element base", func(m *tmain) error {
			_, err := array.New[notEmbedding](m, array.Dims(2))
			return err
		}, []string{"notEmbedding", "must embed array.Element"}},
		{"array of a chare type", func(m *tmain) error {
			_, err := array.New[solo](m, array.Dims(2))
			return err
		}, []string{"solo", "must embed array.Element"}},
		{"group of a chare type", func(m *tmain) error {
			_, err := group.New[solo](m)
			return err
		}, []string{"solo", "must embed group.Branch"}},
		{"group of an array element type", func(m *tmain) error {
			_, err := group.New[shapeElem[int]](m)
			return err
		}, []string{"must embed group.Branch"}},
		{"node group of a chare type", func(m *tmain) error {
			_, err := group.NewNode[solo](m)
			return err
		}, []string{"solo", "must embed group.Branch"}},
		{"array of a group type", func(m *tmain) error {
			_, err := array.New[grp](m, array.Dims(2))
			return err
		}, []string{"grp", "must embed array.Element"}},
		{"chare of a group type", func(m *tmain) error {
			_, err := chare.New[grp](m, 0)
			return err
		}, []string{"grp", "must embed chare.Chare"}},
		{"chare of an array element type", func(m *tmain) error {
			_, err := chare.New[shapeElem[int]](m, 0)
			return err
		}, []string{"must embed chare.Chare"}},
		{"array element of another index type", func(m *tmain) error {
			_, err := array.New[shapeElem[int]](m, array.Dims2(2, 2))
			return err
		}, []string{"index type is not [2]int"}},
		{"chare on a PE that does not exist", func(m *tmain) error {
			_, err := chare.New[solo](m, badPEs)
			return err
		}, []string{"PE 3", "0..2"}},
		{"chare on a negative PE", func(m *tmain) error {
			_, err := chare.New[solo](m, -7)
			return err
		}, []string{"PE -7"}},
		{"NewWith with a function literal", func(m *tmain) error {
			_, err := chare.NewWith(m, 0, func(*solo, soloInit) {}, soloInit{})
			return err
		}, []string{"function literal"}},
		{"send with a nil context", func(m *tmain) error {
			s, err := chare.New[solo](m, 0)
			inJob.NoError(err)
			return chare.Send0(nil, s, (*solo).Ping)
		}, []string{chare.ErrNoContext.Error()}},
		{"send from an object the runtime never made", func(m *tmain) error {
			s, err := chare.New[solo](m, 0)
			inJob.NoError(err)
			return chare.Send0(&solo{}, s, (*solo).Ping)
		}, []string{chare.ErrNoContext.Error()}},
		{"create with a nil context", func(m *tmain) error {
			_, err := array.New[shapeElem[int]](nil, array.Dims(2))
			return err
		}, []string{chare.ErrNoContext.Error()}},
		{"map returning a PE that does not exist", func(m *tmain) error {
			_, err := array.New[shapeElem[int]](m, array.Dims(4), array.WithMap(array.MapFunc(func(i, npes int) int { return i + npes - 2 })))
			return err
		}, []string{"PE 3", "index 2", "0..2"}},
		{"map returning a negative PE", func(m *tmain) error {
			_, err := array.New[shapeElem[int]](m, array.Dims(4), array.WithMap(array.MapFunc(func(int, int) int { return -1 })))
			return err
		}, []string{"PE -1"}},
		{"zero shape", func(m *tmain) error {
			var s array.Shape[int]
			_, err := array.New[shapeElem[int]](m, s)
			return err
		}, []string{"bad shape"}},
		{"negative size", func(m *tmain) error {
			_, err := array.New[shapeElem[int]](m, array.Dims(-3))
			return err
		}, []string{"bad shape", "negative size -3"}},
		{"negative size in 2-D", func(m *tmain) error {
			_, err := array.New[shapeElem[[2]int]](m, array.Dims2(4, -1))
			return err
		}, []string{"negative size -1 in dimension 1"}},
		{"duplicate indices in Indices", func(m *tmain) error {
			_, err := array.New[shapeElem[cellID]](m, array.Indices(cellID{"a", 1}, cellID{"b", 2}, cellID{"a", 1}))
			return err
		}, []string{"duplicate"}},
		{"duplicate section members", func(m *tmain) error {
			a, err := array.New[shapeElem[int]](m, array.Dims(8))
			inJob.NoError(err)
			_, err = a.Section(m, []int{1, 5, 1})
			return err
		}, []string{"index 1 appears twice"}},
		{"section member out of range", func(m *tmain) error {
			a, err := array.New[shapeElem[int]](m, array.Dims(8))
			inJob.NoError(err)
			_, err = a.Section(m, []int{1, 8})
			return err
		}, []string{"index 8", "out of range"}},
		{"empty section", func(m *tmain) error {
			a, err := array.New[shapeElem[int]](m, array.Dims(8))
			inJob.NoError(err)
			_, err = a.Section(m, nil)
			return err
		}, []string{"at least one member"}},
		{"contribute with a nil reducer", func(m *tmain) error {
			return m.Contribute(1, nil, chare.IgnoreCallback())
		}, []string{"nil reducer"}},
		{"contribute from a singleton chare", func(m *tmain) error {
			return m.Contribute(1, sumInt{}, chare.IgnoreCallback())
		}, []string{"does not take part in reductions"}},
		{"contribute to a section of another array", func(m *tmain) error {
			return m.ContributeTo(nil, 1, sumInt{}, chare.IgnoreCallback())
		}, []string{"ContributeTo needs a section of the contributor's own array"}},
		{"call to a broadcast", func(m *tmain) error {
			a, err := array.New[shapeElem[int]](m, array.Dims(2))
			inJob.NoError(err)
			_, err = chare.Call(m, chare.NewProxy[futWorker](a.Route()), (*futWorker).Square, 2)
			return err
		}, []string{"Call needs one chare"}},
		{"function callback to a PE that does not exist", func(m *tmain) error {
			return chare.FuncCallback(m, badPEs, func(chare.Context, any) {}).Send(m, nil)
		}, []string{"PE 3", "no such PE"}},
		{"entry callback with a function literal", func(m *tmain) error {
			s, err := chare.New[solo](m, 0)
			inJob.NoError(err)
			return chare.EntryCallback(s, func(*solo, int) {}).Send(m, 1)
		}, []string{"function literal"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			runMain(t, badPEs, func(m *tmain) {
				err := c.do(m)
				inJob.Error(err)
				for _, w := range c.want {
					inJob.Contains(err.Error(), w)
				}
				// The job goes on: a mistake returns an error, nothing else.
				quiesce(m)
			})
		})
	}
}

// TestBadInputAtDestination covers mistakes that only the receiving PE
// can see: they abort the job with an error naming them, never hang it.
func TestBadInputAtDestination(t *testing.T) {
	cases := []struct {
		name string
		do   func(m *tmain)
		want []string
	}{
		{"callback value of the wrong type", func(m *tmain) {
			s, err := chare.New[redSink](m, 1)
			inJob.NoError(err)
			inJob.NoError(chare.EntryCallback(s, (*redSink).Int).Send(m, "seven"))
		}, []string{"redSink.Int", "needs a message of type int, got string"}},
		{"callback value of the wrong type for a message of chare's type", func(m *tmain) {
			s, err := chare.New[proxySink](m, 1)
			inJob.NoError(err)
			inJob.NoError(chare.EntryCallback(s, (*proxySink).Got).Send(m, "seven"))
		}, []string{"proxySink.Got", "needs a message of type chare.Proxy[", "proxySink], got string"}},
		{"reductions mixing reducers", func(m *tmain) {
			a, err := array.New[mixElem](m, array.Dims(4))
			inJob.NoError(err)
			inJob.NoError(chare.Send0(m, a, (*mixElem).Go))
		}, []string{"mixes reducers", "test_sum_int", "test_gather"}},
		{"reductions crossed by contribution order", func(m *tmain) {
			a, err := array.New[crossElem](m, array.Dims(4))
			inJob.NoError(err)
			first, second := chare.NewFuture[any](m), chare.NewFuture[any](m)
			inJob.NoError(chare.Send(m, a, (*crossElem).Go, [2]chare.Callback{first.Callback(), second.Callback()}))
		}, []string{"mixes callbacks", "same order"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, err := runJob(t, badPEs, func(m *tmain, _ []string) {
				c.do(m)
				quiesce(m)
				m.Exit(0)
			})
			require.Equal(t, 1, code)
			require.Error(t, err)
			for _, w := range c.want {
				require.Contains(t, err.Error(), w)
			}
			// chare's error names types as programs write them: chare's,
			// never those of the package that implements them.
			_, chareErr, ok := strings.Cut(err.Error(), "chare: ")
			require.True(t, ok, "an error from chare: %v", err)
			require.NotContains(t, chareErr, "core.")
		})
	}
}

// proxySink takes a message of one of chare's own types.
type proxySink struct{ chare.Chare[proxySink] }

func (s *proxySink) Got(chare.Proxy[proxySink]) {}

// mixElem contributes to one reduction with two different reducers.
type mixElem struct {
	array.Element[mixElem, int]
}

func (e *mixElem) Go() {
	r := reducer.Reducer(sumInt{})
	if e.ThisIndex()%2 == 1 {
		r = gather[int, int]{}
	}
	// The mix shows here (two elements on one PE) or where partial
	// results meet.
	inJob.NoError(e.Contribute(e.ThisIndex(), r, chare.IgnoreCallback()))
}

// crossElem contributes to two barriers, the odd elements in the other
// order: the same reducer, crossed callbacks.
type crossElem struct {
	array.Element[crossElem, int]
}

func (e *crossElem) Go(cbs [2]chare.Callback) {
	if e.ThisIndex()%2 == 1 {
		cbs[0], cbs[1] = cbs[1], cbs[0]
	}
	// The errors are dropped, as careless code does: the runtime must end
	// the job by itself, not hang or fire a callback twice.
	_ = e.Contribute(nil, reducer.Nop, cbs[0])
	_ = e.Contribute(nil, reducer.Nop, cbs[1])
}

func init() {
	chare.Register[crossElem]()
	chare.Register[mixElem]()
	chare.Register[proxySink]()
	registerReducers(gather[int, int]{})
}

func TestRunBadMainType(t *testing.T) {
	cases := []struct {
		name string
		run  func(t *testing.T) (int, error)
	}{
		{"group type", func(t *testing.T) (int, error) { return runJob(t, 1, func(*grp, []string) {}) }},
		{"array element type", func(t *testing.T) (int, error) { return runJob(t, 1, func(*shapeElem[int], []string) {}) }},
		{"no chare base", func(t *testing.T) (int, error) { return runJob(t, 1, func(*notEmbedding, []string) {}) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, err := c.run(t)
			require.Equal(t, 1, code)
			require.ErrorContains(t, err, "must embed chare.Chare")
		})
	}
	code, err := runJob(t, -2, func(*tmain, []string) {})
	require.Equal(t, 1, code)
	require.ErrorContains(t, err, "-2")
}
