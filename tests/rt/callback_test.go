package rt_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/array"
	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/group"
)

// Callbacks of every kind, fired from a chare on the last PE so that they
// cross PEs: to an entry method of a singleton chare, of a group branch and
// of an array element; broadcasts to a group and to an array; to a future;
// to a Go function on a given PE; ignore; and exit.

// firer sends a value through the callback it is given.
type firer struct {
	chare.Chare[firer]
}

type fireMsg struct {
	CB  chare.Callback
	Val int
}

func (f *firer) Fire(m fireMsg) { inJob.NoError(m.CB.Send(f, m.Val)) }

// cbTarget is the singleton target: it passes what it got to a future.
type cbTarget struct {
	chare.Chare[cbTarget]
	out chare.Future[cbGot]
}

// cbGot says who received a callback's value, and where: the index of a
// group branch or array element, -1 for a singleton chare.
type cbGot struct {
	Val, PE, Index int
}

func (c *cbTarget) Init(out chare.Future[cbGot]) { c.out = out }
func (c *cbTarget) Take(v int)                   { inJob.NoError(c.out.Send(c, cbGot{v, c.PE(), -1})) }

// cbBranch and cbElem contribute what they got to a reduction.
type cbBranch struct {
	group.Branch[cbBranch]
	out chare.Callback
}

func (b *cbBranch) Init(out chare.Callback) { b.out = out }
func (b *cbBranch) Take(v int) {
	inJob.NoError(b.Contribute(cbGot{v, b.PE(), b.Index().(int)}, gather[int, cbGot]{}, b.out))
}

type cbElem struct {
	array.Element[cbElem, int]
	out chare.Callback
}

func (e *cbElem) Init(out chare.Callback) { e.out = out }
func (e *cbElem) Take(v int) {
	inJob.NoError(e.Contribute(cbGot{v, e.PE(), e.ThisIndex()}, gather[int, cbGot]{}, e.out))
}

func init() {
	chare.Register[firer]()
	chare.Register[cbTarget]()
	chare.Register[cbBranch]()
	chare.Register[cbElem]()
	registerReducers(gather[int, cbGot]{})
}

const cbPEs = 4

// fire has a firer on the last PE send v through cb.
func fire(m *tmain, cb chare.Callback, v int) { fireFrom(m, cbPEs-1, cb, v) }

// fireFrom has a firer on PE pe send v through cb.
func fireFrom(m *tmain, pe int, cb chare.Callback, v int) {
	f, err := chare.New[firer](m, pe)
	inJob.NoError(err)
	inJob.NoError(chare.Send(m, f, (*firer).Fire, fireMsg{cb, v}))
}

func TestCallbacks(t *testing.T) {
	cases := []struct {
		name string
		fn   func(m *tmain)
	}{
		{"singleton entry", func(m *tmain) {
			out := chare.NewFuture[cbGot](m)
			c, err := chare.NewWith(m, 1, (*cbTarget).Init, out)
			inJob.NoError(err)
			fire(m, chare.EntryCallback(c, (*cbTarget).Take), 11)
			inJob.Equal(cbGot{11, 1, -1}, get(m, out))
		}},
		{"group branch entry", func(m *tmain) {
			out := chare.NewFuture[map[int]cbGot](m)
			g, err := group.NewWith(m, (*cbBranch).Init, out.Callback())
			inJob.NoError(err)
			// A reduction over the group completes only if every branch
			// contributes: fire at every branch, one callback each.
			for pe := 0; pe < cbPEs; pe++ {
				fire(m, chare.EntryCallback(g.At(pe), (*cbBranch).Take), 100+pe)
			}
			got := get(m, out)
			for pe := 0; pe < cbPEs; pe++ {
				inJob.Equal(cbGot{100 + pe, pe, pe}, got[pe])
			}
		}},
		{"array element entry", func(m *tmain) {
			out := chare.NewFuture[map[int]cbGot](m)
			a, err := array.NewWith(m, array.Dims(6), (*cbElem).Init, out.Callback(), array.WithMap(array.RoundRobin))
			inJob.NoError(err)
			for i := 0; i < 6; i++ {
				fire(m, chare.EntryCallback(a.At(i), (*cbElem).Take), 200+i)
			}
			got := get(m, out)
			for i := 0; i < 6; i++ {
				inJob.Equal(cbGot{200 + i, i % cbPEs, i}, got[i])
			}
		}},
		{"group broadcast", func(m *tmain) {
			out := chare.NewFuture[map[int]cbGot](m)
			g, err := group.NewWith(m, (*cbBranch).Init, out.Callback())
			inJob.NoError(err)
			fire(m, chare.EntryCallback(g, (*cbBranch).Take), 5)
			got := get(m, out)
			inJob.Len(got, cbPEs)
			for pe := 0; pe < cbPEs; pe++ {
				inJob.Equal(cbGot{5, pe, pe}, got[pe])
			}
		}},
		{"array broadcast", func(m *tmain) {
			out := chare.NewFuture[map[int]cbGot](m)
			a, err := array.NewWith(m, array.Dims(9), (*cbElem).Init, out.Callback())
			inJob.NoError(err)
			fire(m, chare.EntryCallback(a, (*cbElem).Take), 6)
			got := get(m, out)
			inJob.Len(got, 9)
			for i := 0; i < 9; i++ {
				inJob.Equal(6, got[i].Val)
			}
		}},
		{"future", func(m *tmain) {
			f := chare.NewFuture[int](m)
			fire(m, f.Callback(), 77)
			inJob.Equal(77, get(m, f))
		}},
		{"function on a PE", func(m *tmain) {
			// A Go function can only be called, and its callback fired, in
			// the process that made it: the firer and the targets are the
			// last PEs of the test's own process (PE 3, and PEs 2 and 0,
			// in one process).
			last := node0PEs(cbPEs) - 1
			out := chare.NewFuture[cbGot](m)
			for _, pe := range []int{max(last-1, 0), 0} {
				cb := chare.FuncCallback(m, pe, func(ctx chare.Context, v any) {
					inJob.NoError(out.Send(ctx, cbGot{v.(int), chare.PEOf(ctx).ID(), -1}))
				})
				fireFrom(m, last, cb, 3)
				inJob.Equal(cbGot{3, pe, -1}, get(m, out))
				out = chare.NewFuture[cbGot](m)
			}
		}},
		{"ignore", func(m *tmain) {
			cb := chare.IgnoreCallback()
			inJob.NoError(cb.Send(m, 1))
			fire(m, cb, 2)
			quiesce(m)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { runMain(t, cbPEs, c.fn) })
	}
}

func TestExitCallback(t *testing.T) {
	code := run(t, cbPEs, func(m *tmain, _ []string) {
		fire(m, chare.ExitCallback(7), 0)
	})
	require.Equal(t, 7, code)
}

// TestCallbackZero checks that the zero Callback ignores its value, as
// Charm++'s default-constructed CkCallback does.
func TestCallbackZero(t *testing.T) {
	runMain(t, 1, func(m *tmain) {
		var cb chare.Callback
		inJob.Equal(chare.CallbackIgnore, cb.Kind)
		inJob.NoError(cb.Send(m, 3))
	})
}
