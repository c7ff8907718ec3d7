package rt_test

import (
	"fmt"
	"testing"

	"github.com/charmgo/charm/array"
	"github.com/charmgo/charm/chare"
)

// Sections: a multicast reaches exactly the members, once each; members
// reduce among themselves with ContributeTo; several sections of one array
// (overlapping) work side by side.

type secElem struct {
	array.Element[secElem, int]
	hits map[string]int // multicasts received, by section name
}

type secHit struct{ Name string }

type secReduce struct {
	Sec  *chare.Section
	Done chare.Callback
}

func (e *secElem) Hit(m secHit) {
	if e.hits == nil {
		e.hits = map[string]int{}
	}
	e.hits[m.Name]++
}

func (e *secElem) Report(cb chare.Callback) {
	hits := map[string]int{}
	for k, v := range e.hits {
		hits[k] = v
	}
	inJob.NoError(e.Contribute(hits, gather[int, map[string]int]{}, cb))
}

// Reduce contributes the index and, in a second reduction over the same
// section, its square.
func (e *secElem) Reduce(m secReduce) {
	i := e.ThisIndex()
	inJob.NoError(e.ContributeTo(m.Sec, i, sumInt{}, m.Done))
	inJob.NoError(e.ContributeTo(m.Sec, i*i, sumInt{}, m.Done))
}

func init() {
	chare.Register[secElem]()
	registerReducers(gather[int, map[string]int]{})
}

func TestSectionMulticast(t *testing.T) {
	const n = 20
	sections := map[string][]int{
		"even":  {0, 2, 4, 6, 8, 10, 12, 14, 16, 18},
		"three": {0, 3, 6, 9, 12, 15, 18},
		"one":   {7},
		"tail":  {19, 18, 17}, // not in index order
	}
	for _, pes := range []int{1, 3, 4} {
		t.Run(fmt.Sprintf("%dPEs", pes), func(t *testing.T) {
			runMain(t, pes, func(m *tmain) {
				a, err := array.New[secElem](m, array.Dims(n))
				inJob.NoError(err)
				want := map[int]map[string]int{}
				for name, members := range sections {
					s, err := a.Section(m, members)
					inJob.NoError(err)
					inJob.NoError(chare.Send(m, s, (*secElem).Hit, secHit{name}))
					for _, i := range members {
						if want[i] == nil {
							want[i] = map[string]int{}
						}
						want[i][name]++
					}
				}
				f := chare.NewFuture[map[int]map[string]int](m)
				inJob.NoError(chare.Send(m, a, (*secElem).Report, f.Callback()))
				got := get(m, f)
				inJob.Len(got, n)
				for i := 0; i < n; i++ {
					w := want[i]
					if w == nil {
						w = map[string]int{}
					}
					inJob.Equal(w, got[i], "element %d", i)
				}
			})
		})
	}
}

// secCollect receives the results of section reductions, in order.
type secCollect struct {
	chare.Chare[secCollect]
	results []int
	want    int
	done    chare.Future[[]int]
}

type secCollectInit struct {
	Want int
	Done chare.Future[[]int]
}

func (c *secCollect) Init(m secCollectInit) { c.want, c.done = m.Want, m.Done }

func (c *secCollect) Result(v int) {
	c.results = append(c.results, v)
	if len(c.results) == c.want {
		inJob.NoError(c.done.Send(c, c.results))
	}
}

func init() { chare.Register[secCollect]() }

func TestSectionReductions(t *testing.T) {
	const n = 24
	sections := [][]int{
		{0, 1, 2, 3},
		{5, 11, 17, 23},
		{23},
		{1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23},
		upTo(n),
	}
	for _, pes := range []int{1, 2, 3, 5} {
		t.Run(fmt.Sprintf("%dPEs", pes), func(t *testing.T) {
			runMain(t, pes, func(m *tmain) {
				a, err := array.New[secElem](m, array.Dims(n), array.WithMap(array.RoundRobin))
				inJob.NoError(err)
				var futures []chare.Future[[]int]
				for k, members := range sections {
					s, err := a.Section(m, members)
					inJob.NoError(err)
					f := chare.NewFuture[[]int](m)
					futures = append(futures, f)
					// The collector lives on the last PE, so results cross PEs.
					c, err := chare.NewWith(m, pes-1, (*secCollect).Init, secCollectInit{Want: 2, Done: f})
					inJob.NoError(err)
					cb := chare.EntryCallback(c, (*secCollect).Result)
					inJob.NoError(chare.Send(m, s, (*secElem).Reduce, secReduce{Sec: s.Info(), Done: cb}), "section %d", k)
				}
				for k, members := range sections {
					sum, squares := 0, 0
					for _, i := range members {
						sum += i
						squares += i * i
					}
					inJob.Equal([]int{sum, squares}, get(m, futures[k]), "section %d %v", k, members)
				}
			})
		})
	}
}

func TestSectionOfTwoDimensionalArray(t *testing.T) {
	runMain(t, 3, func(m *tmain) {
		a, err := array.New[shapeElem[[2]int]](m, array.Dims2(4, 4))
		inJob.NoError(err)
		diag := [][2]int{{0, 0}, {1, 1}, {2, 2}, {3, 3}}
		s, err := a.Section(m, diag)
		inJob.NoError(err)
		inJob.NoError(chare.Send0(m, s, (*shapeElem[[2]int]).Hit))
		got := shapeReport(m, a, ops2)
		for i, st := range got {
			want := 0
			if i[0] == i[1] {
				want = 1
			}
			inJob.Equal(want, st.Hits, "element %v", i)
		}
	})
}
