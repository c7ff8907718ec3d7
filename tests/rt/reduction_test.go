package rt_test

import (
	"fmt"
	"testing"

	"github.com/charmgo/charm/array"
	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/chare/reducer"
	"github.com/charmgo/charm/group"
)

// Reductions over arrays and groups on 1 to 5 PEs, several in flight at
// once (results in reduction order), and typed targets: a callback to an
// entry method whose parameter is the result's type, or another numeric
// type.

type redElem struct {
	array.Element[redElem, int]
}

type redBranch struct {
	group.Branch[redBranch]
}

// redGo asks for Rounds reductions in a row: in round r, the contributor
// with index i contributes redValue(i, r), or a quarter of it as a float64
// if Float is set.
type redGo struct {
	Rounds int
	Float  bool
	Done   chare.Callback
}

func redValue(i, r int) int { return i + r*1000 }

func redContribute(b *chare.Base, i int, m redGo) {
	for r := 0; r < m.Rounds; r++ {
		if m.Float {
			inJob.NoError(b.Contribute(float64(redValue(i, r))/4, sumFloat{}, m.Done))
		} else {
			inJob.NoError(b.Contribute(redValue(i, r), sumInt{}, m.Done))
		}
	}
}

func (e *redElem) Go(m redGo)   { redContribute(&e.Base, e.ThisIndex(), m) }
func (b *redBranch) Go(m redGo) { redContribute(&b.Base, b.PE(), m) }

// redSink collects results through typed entry methods, and hands them
// on to a future once it has Want of them.
type redSink struct {
	chare.Chare[redSink]
	want int
	out  chare.Future[[]float64]
	got  []float64
}

type redSinkInit struct {
	Want int
	Out  chare.Future[[]float64]
}

func (s *redSink) Init(m redSinkInit) { s.want, s.out = m.Want, m.Out }

func (s *redSink) add(v float64) {
	s.got = append(s.got, v)
	if len(s.got) == s.want {
		inJob.NoError(s.out.Send(s, s.got))
	}
}

func (s *redSink) Int(v int)            { s.add(float64(v)) }
func (s *redSink) Float(v float64)      { s.add(v) }
func (s *redSink) IntAsFloat(v float64) { s.add(v) }
func (s *redSink) Int64(v int64)        { s.add(float64(v)) }

func init() {
	chare.Register[redElem]()
	chare.Register[redBranch]()
	chare.Register[redSink]()
}

// redWant is the expected result of each round over indices 0..n-1.
func redWant(n, rounds int, float bool) []float64 {
	var out []float64
	for r := 0; r < rounds; r++ {
		sum := 0
		for i := 0; i < n; i++ {
			sum += redValue(i, r)
		}
		if float {
			out = append(out, float64(sum)/4)
		} else {
			out = append(out, float64(sum))
		}
	}
	return out
}

// redSinkOn creates a sink on PE pe and returns it with its future.
func redSinkOn(m *tmain, pe, want int) (chare.Proxy[redSink], chare.Future[[]float64]) {
	f := chare.NewFuture[[]float64](m)
	s, err := chare.NewWith(m, pe, (*redSink).Init, redSinkInit{want, f})
	inJob.NoError(err)
	return s, f
}

func TestReductionArrayAndGroup(t *testing.T) {
	maps := map[string]array.Map{"block": array.Block, "round-robin": array.RoundRobin}
	for pes := 1; pes <= 5; pes++ {
		for _, n := range []int{1, 3, 13} {
			for name, mp := range maps {
				t.Run(fmt.Sprintf("array_%dPEs_%d_%s", pes, n, name), func(t *testing.T) {
					runMain(t, pes, func(m *tmain) {
						a, err := array.New[redElem](m, array.Dims(n), array.WithMap(mp))
						inJob.NoError(err)
						f := chare.NewFuture[int](m)
						inJob.NoError(chare.Send(m, a, (*redElem).Go, redGo{Rounds: 1, Done: f.Callback()}))
						inJob.Equal(n*(n-1)/2, get(m, f))
					})
				})
			}
		}
		t.Run(fmt.Sprintf("group_%dPEs", pes), func(t *testing.T) {
			runMain(t, pes, func(m *tmain) {
				g, err := group.New[redBranch](m)
				inJob.NoError(err)
				f := chare.NewFuture[int](m)
				inJob.NoError(chare.Send(m, g, (*redBranch).Go, redGo{Rounds: 1, Done: f.Callback()}))
				inJob.Equal(pes*(pes-1)/2, get(m, f))
			})
		})
	}
}

// TestReductionsInOrder has every contributor make ten contributions in a
// row: ten reductions are in flight at once, combined along the tree in
// whatever order messages arrive, and the results must reach the target in
// reduction order 0..9.
func TestReductionsInOrder(t *testing.T) {
	const rounds = 10
	for _, pes := range []int{1, 2, 3, 5} {
		t.Run(fmt.Sprintf("%dPEs", pes), func(t *testing.T) {
			runMain(t, pes, func(m *tmain) { reduceBoth(m, pes, 17, rounds, 0) })
		})
	}
}

// TestReductionPartialsReusedAfterFolding has hundreds of reductions in
// flight on a tree of several levels, where PEs pass partials on to their
// parent and fold their children's: the runtime reuses a partial message
// once its parent has folded it in, so one reused too early would change
// a sum (or, under -race, be reported as a race).
func TestReductionPartialsReusedAfterFolding(t *testing.T) {
	const rounds, pes, n = 300, 7, 23
	runMain(t, pes, func(m *tmain) { reduceBoth(m, pes, n, rounds, 3) })
}

// reduceBoth runs rounds reductions of an array of n elements (its sink
// on the last PE) and of a group (its sink on PE groupSink) at the same
// time, and checks both sums.
func reduceBoth(m *tmain, pes, n, rounds, groupSink int) {
	a, err := array.New[redElem](m, array.Dims(n), array.WithMap(array.RoundRobin))
	inJob.NoError(err)
	g, err := group.New[redBranch](m)
	inJob.NoError(err)
	sa, fa := redSinkOn(m, pes-1, rounds)
	sg, fg := redSinkOn(m, groupSink, rounds)
	inJob.NoError(chare.Send(m, a, (*redElem).Go, redGo{Rounds: rounds, Done: chare.EntryCallback(sa, (*redSink).Int)}))
	inJob.NoError(chare.Send(m, g, (*redBranch).Go, redGo{Rounds: rounds, Done: chare.EntryCallback(sg, (*redSink).Int)}))
	inJob.Equal(redWant(n, rounds, false), get(m, fa), "array")
	inJob.Equal(redWant(pes, rounds, false), get(m, fg), "group")
}

func TestReductionTypedTargets(t *testing.T) {
	const pes, n = 3, 10
	cases := []struct {
		name  string
		float bool
		cb    func(s chare.Proxy[redSink]) chare.Callback
	}{
		{"float64 sum to a float64 entry", true, func(s chare.Proxy[redSink]) chare.Callback {
			return chare.EntryCallback(s, (*redSink).Float)
		}},
		{"int sum to an int entry", false, func(s chare.Proxy[redSink]) chare.Callback {
			return chare.EntryCallback(s, (*redSink).Int)
		}},
		{"int sum to a float64 entry", false, func(s chare.Proxy[redSink]) chare.Callback {
			return chare.EntryCallback(s, (*redSink).IntAsFloat)
		}},
		{"int sum to an int64 entry", false, func(s chare.Proxy[redSink]) chare.Callback {
			return chare.EntryCallback(s, (*redSink).Int64)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			runMain(t, pes, func(m *tmain) {
				a, err := array.New[redElem](m, array.Dims(n))
				inJob.NoError(err)
				s, f := redSinkOn(m, 1, 2)
				inJob.NoError(chare.Send(m, a, (*redElem).Go, redGo{Rounds: 2, Float: c.float, Done: c.cb(s)}))
				inJob.Equal(redWant(n, 2, c.float), get(m, f))
			})
		})
	}
}

// redBuiltin contributes with the reducers of chare/reducer.
type redBuiltin struct {
	array.Element[redBuiltin, int]
}

type redBuiltinGo struct {
	Sink chare.Proxy[redSink]
}

func (e *redBuiltin) Go(m redBuiltinGo) {
	i := e.ThisIndex()
	inJob.NoError(e.Contribute(i, reducer.SumInt, chare.EntryCallback(m.Sink, (*redSink).Int)))
	inJob.NoError(e.Contribute(float64(i)/2, reducer.SumFloat64, chare.EntryCallback(m.Sink, (*redSink).Float)))
	inJob.NoError(e.Contribute(float64(i%5), reducer.MaxFloat64, chare.EntryCallback(m.Sink, (*redSink).Float)))
}

func init() { chare.Register[redBuiltin]() }

func TestReductionBuiltinReducers(t *testing.T) {
	const n = 12
	for _, pes := range []int{1, 4} {
		t.Run(fmt.Sprintf("%dPEs", pes), func(t *testing.T) {
			runMain(t, pes, func(m *tmain) {
				a, err := array.New[redBuiltin](m, array.Dims(n))
				inJob.NoError(err)
				s, f := redSinkOn(m, pes-1, 3)
				inJob.NoError(chare.Send(m, a, (*redBuiltin).Go, redBuiltinGo{s}))
				inJob.Equal([]float64{n * (n - 1) / 2, n * (n - 1) / 4, 4}, get(m, f))
			})
		})
	}
}
