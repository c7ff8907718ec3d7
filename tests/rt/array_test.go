package rt_test

import (
	"fmt"
	"testing"

	"github.com/charmgo/charm/array"
	"github.com/charmgo/charm/chare"
)

// Chare arrays: 1-D to 6-D shapes and a user-defined index type, the maps
// that place elements (checked through each element's PE), ThisIndex and
// ThisProxy, broadcasts that reach every element once, and NewWith.

// shapeElem is one element type for every index type.
type shapeElem[I comparable] struct {
	array.Element[shapeElem[I], I]
	hits int
	val  int
}

// shapeState is what an element reports.
type shapeState[I comparable] struct {
	Index    I
	PE, Hits int
	Val      int
}

type shapeInit struct{ Val int }

func (e *shapeElem[I]) Init(m shapeInit) { e.val = m.Val }

func (e *shapeElem[I]) Hit() { e.hits++ }

func (e *shapeElem[I]) Report(cb chare.Callback) {
	inJob.NoError(e.Contribute(shapeState[I]{Index: e.ThisIndex(), PE: e.PE(), Hits: e.hits, Val: e.val}, gather[I, shapeState[I]]{}, cb))
}

func init() {
	// The elements of these tests never migrate: their counters stay
	// unexported, and nothing needs declaring.
	chare.Register[shapeElem[int]]()
	chare.Register[shapeElem[[2]int]]()
	chare.Register[shapeElem[[3]int]]()
	chare.Register[shapeElem[[4]int]]()
	chare.Register[shapeElem[[5]int]]()
	chare.Register[shapeElem[[6]int]]()
	chare.Register[shapeElem[cellID]]()
	array.RegisterIndex[cellID]()
	registerReducers(
		gather[int, shapeState[int]]{},
		gather[[2]int, shapeState[[2]int]]{},
		gather[[3]int, shapeState[[3]int]]{},
		gather[[4]int, shapeState[[4]int]]{},
		gather[[5]int, shapeState[[5]int]]{},
		gather[[6]int, shapeState[[6]int]]{},
		gather[cellID, shapeState[cellID]]{},
	)
}

// cellID is a user-defined index type.
type cellID struct {
	Name string
	K    int
}

// shapeOps holds the method expressions of one instance of shapeElem.
// Generic code cannot write them itself: there (*shapeElem[I]).Hit is a
// closure over the instance's dictionary, not the registered method, and
// chare.Send rejects it as a function literal.
type shapeOps[I comparable] struct {
	hit    func(*shapeElem[I])
	report func(*shapeElem[I], chare.Callback)
}

func opsOf[I comparable](hit func(*shapeElem[I]), report func(*shapeElem[I], chare.Callback)) shapeOps[I] {
	return shapeOps[I]{hit, report}
}

var (
	ops1  = opsOf((*shapeElem[int]).Hit, (*shapeElem[int]).Report)
	ops2  = opsOf((*shapeElem[[2]int]).Hit, (*shapeElem[[2]int]).Report)
	ops3  = opsOf((*shapeElem[[3]int]).Hit, (*shapeElem[[3]int]).Report)
	ops4  = opsOf((*shapeElem[[4]int]).Hit, (*shapeElem[[4]int]).Report)
	ops5  = opsOf((*shapeElem[[5]int]).Hit, (*shapeElem[[5]int]).Report)
	ops6  = opsOf((*shapeElem[[6]int]).Hit, (*shapeElem[[6]int]).Report)
	opsID = opsOf((*shapeElem[cellID]).Hit, (*shapeElem[cellID]).Report)
)

func shapeReport[I comparable](m *tmain, a array.Proxy[shapeElem[I], I], ops shapeOps[I]) map[I]shapeState[I] {
	f := chare.NewFuture[map[I]shapeState[I]](m)
	inJob.NoError(chare.Send(m, a, ops.report, f.Callback()))
	return get(m, f)
}

// checkShape creates an array of the shape, broadcasts to it twice and
// checks that every index of want reported once, with two hits, from the
// PE that place gives for its linear position.
func checkShape[I comparable](t *testing.T, pes int, s array.Shape[I], want []I, ops shapeOps[I]) {
	t.Helper()
	runMain(t, pes, func(m *tmain) {
		inJob.Equal(len(want), s.Len())
		a, err := array.New[shapeElem[I]](m, s)
		inJob.NoError(err)
		inJob.NoError(chare.Send0(m, a, ops.hit))
		inJob.NoError(chare.Send0(m, a, ops.hit))
		got := shapeReport(m, a, ops)
		inJob.Len(got, len(want))
		for p, idx := range want {
			inJob.Equal(idx, s.At(p), "linear position %d", p)
			q, ok := s.Pos(idx)
			inJob.True(ok)
			inJob.Equal(p, q)
			st, ok := got[idx]
			inJob.True(ok, "index %v did not report", idx)
			inJob.Equal(idx, st.Index, "ThisIndex")
			inJob.Equal(2, st.Hits, "index %v: broadcasts received", idx)
			inJob.Equal(p*pes/len(want), st.PE, "index %v: block placement", idx)
		}
	})
}

// rowMajor lists the indices of a shape in row-major order.
func rowMajor(dims ...int) [][]int {
	out := [][]int{nil}
	for _, d := range dims {
		var next [][]int
		for _, prefix := range out {
			for i := 0; i < d; i++ {
				next = append(next, append(append([]int(nil), prefix...), i))
			}
		}
		out = next
	}
	return out
}

func fixed[I [2]int | [3]int | [4]int | [5]int | [6]int](dims ...int) []I {
	var out []I
	for _, r := range rowMajor(dims...) {
		var idx I
		for k := range r {
			idx[k] = r[k]
		}
		out = append(out, idx)
	}
	return out
}

func TestArrayShapes(t *testing.T) {
	const pes = 3
	t.Run("1D", func(t *testing.T) { checkShape(t, pes, array.Dims(7), upTo(7), ops1) })
	t.Run("2D", func(t *testing.T) { checkShape(t, pes, array.Dims2(3, 4), fixed[[2]int](3, 4), ops2) })
	t.Run("3D", func(t *testing.T) { checkShape(t, pes, array.Dims3(2, 3, 2), fixed[[3]int](2, 3, 2), ops3) })
	t.Run("4D", func(t *testing.T) { checkShape(t, pes, array.Dims4(2, 1, 3, 2), fixed[[4]int](2, 1, 3, 2), ops4) })
	t.Run("5D", func(t *testing.T) { checkShape(t, pes, array.Dims5(2, 2, 1, 2, 2), fixed[[5]int](2, 2, 1, 2, 2), ops5) })
	t.Run("6D", func(t *testing.T) {
		checkShape(t, pes, array.Dims6(1, 2, 2, 1, 2, 3), fixed[[6]int](1, 2, 2, 1, 2, 3), ops6)
	})
	t.Run("struct index", func(t *testing.T) {
		ids := []cellID{{"a", 1}, {"b", 1}, {"a", 2}, {"zz", -5}, {"", 0}}
		checkShape(t, pes, array.Indices(ids...), ids, opsID)
	})
	t.Run("more PEs than elements", func(t *testing.T) { checkShape(t, 5, array.Dims(2), upTo(2), ops1) })
}

// The user-defined maps of TestArrayMaps. A job of several processes
// sends a map's name, not its function: they are named, in every process.
const mapsN = 10

func reversePE(i, npes int) int    { return (mapsN - 1 - i) % npes }
func byKPE(c cellID, npes int) int { return (c.K * 2) % npes }

var (
	reverseMap = array.NamedMap("test_reverse", array.MapFunc(reversePE))
	allOn2Map  = array.NamedMap("test_all_on_2", array.MapFunc(func(int, int) int { return 2 }))
	byKMap     = array.NamedMap("test_by_k", array.MapFunc(byKPE))
)

func TestArrayMaps(t *testing.T) {
	const pes, n = 3, mapsN
	cases := []struct {
		name string
		m    array.Map
		want func(pos int) int
	}{
		{"block", array.Block, func(p int) int { return p * pes / n }},
		{"round-robin", array.RoundRobin, func(p int) int { return p % pes }},
		{"func", reverseMap, func(p int) int { return reversePE(p, pes) }},
		{"func all on PE 2", allOn2Map, func(int) int { return 2 }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			runMain(t, pes, func(m *tmain) {
				a, err := array.New[shapeElem[int]](m, array.Dims(n), array.WithMap(c.m))
				inJob.NoError(err)
				got := shapeReport(m, a, ops1)
				inJob.Len(got, n)
				for i := 0; i < n; i++ {
					inJob.Equal(c.want(i), got[i].PE, "element %d", i)
				}
			})
		})
	}
	t.Run("func on a struct index", func(t *testing.T) {
		ids := []cellID{{"x", 0}, {"y", 1}, {"z", 2}, {"w", 3}}
		runMain(t, pes, func(m *tmain) {
			a, err := array.New[shapeElem[cellID]](m, array.Indices(ids...), array.WithMap(byKMap))
			inJob.NoError(err)
			got := shapeReport(m, a, opsID)
			for _, id := range ids {
				inJob.Equal(byKPE(id, pes), got[id].PE, "element %v", id)
			}
		})
	})
}

func TestArrayNewWith(t *testing.T) {
	runMain(t, 4, func(m *tmain) {
		a, err := array.NewWith(m, array.Dims2(3, 3), (*shapeElem[[2]int]).Init, shapeInit{Val: 9})
		inJob.NoError(err)
		inJob.NoError(chare.Send0(m, a.At([2]int{1, 1}), (*shapeElem[[2]int]).Hit))
		got := shapeReport(m, a, ops2)
		inJob.Len(got, 9)
		for idx, s := range got {
			inJob.Equal(9, s.Val, "element %v was not initialised", idx)
			wantHits := 0
			if idx == [2]int{1, 1} {
				wantHits = 1
			}
			inJob.Equal(wantHits, s.Hits, "element %v", idx)
		}
	})
}

// chainElem passes a list along the array through ThisProxy().At(next),
// each element adding its ThisIndex; the last one broadcasts through
// ThisProxy and every element answers.
type chainElem struct {
	array.Element[chainElem, [2]int]
	hits int
}

type chainMsg struct {
	Path [][2]int
	Rows int
	Done chare.Callback
}

func (e *chainElem) Pass(m chainMsg) {
	me := e.ThisIndex()
	m.Path = append(m.Path, me)
	next := [2]int{me[0], me[1] + 1}
	if next[1] == 2 {
		next = [2]int{me[0] + 1, 0}
	}
	if next[0] == m.Rows {
		inJob.NoError(chare.Send(e, e.ThisProxy(), (*chainElem).Answer, m))
		return
	}
	inJob.NoError(chare.Send(e, e.ThisProxy().At(next), (*chainElem).Pass, m))
}

func (e *chainElem) Answer(m chainMsg) {
	e.hits++
	inJob.NoError(e.Contribute(len(m.Path)*100+e.hits, gather[[2]int, int]{}, m.Done))
}

func init() {
	chare.Register[chainElem]()
	registerReducers(gather[[2]int, int]{})
}

func TestArrayThisIndexThisProxy(t *testing.T) {
	const rows = 5
	runMain(t, 3, func(m *tmain) {
		a, err := array.New[chainElem](m, array.Dims2(rows, 2), array.WithMap(array.RoundRobin))
		inJob.NoError(err)
		f := chare.NewFuture[map[[2]int]int](m)
		inJob.NoError(chare.Send(m, a.At([2]int{0, 0}), (*chainElem).Pass, chainMsg{Rows: rows, Done: f.Callback()}))
		got := get(m, f)
		inJob.Len(got, 2*rows)
		for idx, v := range got {
			inJob.Equal(2*rows*100+1, v, "element %v", idx)
		}
	})
}

func TestArrayBroadcastOnce(t *testing.T) {
	for _, pes := range []int{1, 2, 4} {
		t.Run(fmt.Sprintf("%dPEs", pes), func(t *testing.T) {
			runMain(t, pes, func(m *tmain) {
				a, err := array.New[shapeElem[int]](m, array.Dims(11))
				inJob.NoError(err)
				const k = 5
				for range k {
					inJob.NoError(chare.Send0(m, a, (*shapeElem[int]).Hit))
				}
				got := shapeReport(m, a, ops1)
				inJob.Len(got, 11)
				for i := 0; i < 11; i++ {
					inJob.Equal(k, got[i].Hits, "element %d", i)
				}
			})
		})
	}
}
