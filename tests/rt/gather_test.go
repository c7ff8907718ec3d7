package rt_test

import (
	"testing"

	"github.com/charmgo/charm/array"
	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/chare/reducer"
)

// Typed gathers: reducer.GatherOf[I, T] delivers a []reducer.Pair[I, T]
// sorted by index, to a future made by chare.NewFutureFor and to an entry
// method bound by chare.EntryCallbackFor, whose types the compiler checks
// against the reducer. The targets live on the last PE, in another
// process when the suite runs across processes: the values cross as
// typed structs (an int64 stays an int64, a struct stays a struct).

// gathCell is what each element contributes.
type gathCell struct {
	Big  int64
	Temp float64
	Tag  string
}

func gathValue(ix [2]int) gathCell {
	return gathCell{Big: int64(ix[0])<<40 + int64(ix[1]), Temp: float64(ix[0]) + float64(ix[1])/8, Tag: "cell"}
}

// gathR is registered in every process (an init-time call), so that the
// root can decode the partial results of the others.
var gathR = reducer.GatherOf[[2]int, gathCell]()

type gathElem struct {
	array.Element[gathElem, [2]int]
}

// Go contributes to two gathers, one for each target.
func (e *gathElem) Go(m gathGo) {
	v := gathValue(e.ThisIndex())
	inJob.NoError(e.Contribute(v, gathR, m.ToFuture))
	inJob.NoError(e.Contribute(v, gathR, m.ToEntry))
}

type gathGo struct {
	ToFuture chare.Callback
	ToEntry  chare.Callback
}

// gathTarget waits for a gather in a threaded method, and receives the
// other through a typed entry method; it hands both to the main chare.
type gathTarget struct {
	chare.Chare[gathTarget]
	fromEntry chare.Future[[]reducer.Pair[[2]int, gathCell]]
}

type gathRun struct {
	Array      array.Proxy[gathElem, [2]int]
	FromFuture chare.Future[[]reducer.Pair[[2]int, gathCell]]
	FromEntry  chare.Future[[]reducer.Pair[[2]int, gathCell]]
}

func (c *gathTarget) Run(m gathRun) {
	c.fromEntry = m.FromEntry
	f := chare.NewFutureFor(c, gathR)
	cb := chare.EntryCallbackFor(c.ThisProxy(), gathR, (*gathTarget).Gathered)
	inJob.NoError(chare.Send(c, m.Array, (*gathElem).Go, gathGo{ToFuture: f.Callback(), ToEntry: cb}))
	inJob.NoError(m.FromFuture.Send(c, get(c, f)))
}

// Gathered is the entry method that the second gather goes to.
func (c *gathTarget) Gathered(items []reducer.Pair[[2]int, gathCell]) {
	inJob.NoError(c.fromEntry.Send(c, items))
}

func init() {
	chare.Register[gathElem]()
	chare.Register[gathTarget](chare.Threaded((*gathTarget).Run))
}

func TestGatherOfTypedTargets(t *testing.T) {
	const pes, rows, cols = 3, 4, 3
	runMain(t, pes, func(m *tmain) {
		a, err := array.New[gathElem](m, array.Dims2(rows, cols), array.WithMap(array.RoundRobin))
		inJob.NoError(err)
		target, err := chare.New[gathTarget](m, pes-1)
		inJob.NoError(err)
		fromFuture := chare.NewFutureFor(m, gathR)
		fromEntry := chare.NewFuture[[]reducer.Pair[[2]int, gathCell]](m)
		inJob.NoError(chare.Send(m, target, (*gathTarget).Run, gathRun{Array: a, FromFuture: fromFuture, FromEntry: fromEntry}))

		var want []reducer.Pair[[2]int, gathCell]
		for r := range rows {
			for c := range cols {
				ix := [2]int{r, c}
				want = append(want, reducer.Pair[[2]int, gathCell]{Index: ix, Value: gathValue(ix)})
			}
		}
		inJob.Equal(want, get(m, fromFuture), "through a future")
		inJob.Equal(want, get(m, fromEntry), "through an entry method")
	})
}
