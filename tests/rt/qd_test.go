package rt_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/array"
	"github.com/charmgo/charm/chare"
)

// Quiescence detection fires only once every chain of messages has been
// processed: tokens hop between random elements a fixed number of times,
// each element counting the hops it made, and the counts must add up when
// quiescence is reported.

type qdElem struct {
	array.Element[qdElem, int]
	hops int
}

type qdToken struct {
	Left int // hops still to go
	N    int // elements
	Seed uint64
}

func (e *qdElem) Hop(t qdToken) {
	e.hops++
	if t.Left == 0 {
		return
	}
	t.Left--
	r := rand.New(rand.NewPCG(t.Seed, uint64(t.Left)))
	next := r.IntN(t.N)
	// Sometimes fan out: a second, shorter chain.
	if r.IntN(8) == 0 && t.Left > 10 {
		split := t
		split.Left = t.Left / 2
		split.Seed = t.Seed*31 + uint64(t.Left)
		t.Left -= split.Left
		e.hops-- // the split costs one hop less in total below
		inJob.NoError(chare.Send(e, e.ThisProxy().At(r.IntN(t.N)), (*qdElem).Hop, split))
	}
	inJob.NoError(chare.Send(e, e.ThisProxy().At(next), (*qdElem).Hop, t))
}

// Count contributes the hops the element made to a sum.
func (e *qdElem) Count(cb chare.Callback) { inJob.NoError(e.Contribute(e.hops, sumInt{}, cb)) }

func init() { chare.Register[qdElem]() }

// qdHops is how many times Hop runs for a token sent with Left = hops:
// each Hop either ends (Left 0) or passes Left-1 on, and a split keeps
// the total (the split's extra Hop is compensated).
func qdHops(hops int) int { return hops + 1 }

// qdCount returns the hops that the elements of a made.
func qdCount(m *tmain, a array.Proxy[qdElem, int]) int {
	f := chare.NewFuture[int](m)
	inJob.NoError(chare.Send(m, a, (*qdElem).Count, f.Callback()))
	return get(m, f)
}

func TestQuiescenceAfterChains(t *testing.T) {
	cases := []struct{ pes, tokens, hops int }{
		{1, 1, 1000},
		{2, 3, 1000},
		{4, 5, 1000},
		{5, 2, 2000},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%dPEs_%dx%d", c.pes, c.tokens, c.hops), func(t *testing.T) {
			runMain(t, c.pes, func(m *tmain) {
				const n = 16
				a, err := array.New[qdElem](m, array.Dims(n), array.WithMap(array.RoundRobin))
				inJob.NoError(err)
				for k := 0; k < c.tokens; k++ {
					inJob.NoError(chare.Send(m, a.At(k%n), (*qdElem).Hop, qdToken{Left: c.hops, N: n, Seed: uint64(k + 1)}))
				}
				quiesce(m)
				inJob.Equal(c.tokens*qdHops(c.hops), qdCount(m, a))
				// Quiescence again, with nothing to do.
				quiesce(m)
				inJob.Equal(c.tokens*qdHops(c.hops), qdCount(m, a))
			})
		})
	}
}

// qdAsker asks for quiescence from an element; when it is reached, the
// asker has the hops counted, and the count goes to Done.
type qdAsker struct {
	array.Element[qdAsker, int]
	ask qdAsk
}

type qdAsk struct {
	Elems array.Proxy[qdElem, int]
	Done  chare.Callback
}

func (e *qdAsker) Ask(m qdAsk) {
	e.ask = m
	e.DetectQuiescence(chare.EntryCallback0(e.ThisProxy().At(e.ThisIndex()), (*qdAsker).Quiet))
}

func (e *qdAsker) Quiet() {
	inJob.NoError(chare.Send(e, e.ask.Elems, (*qdElem).Count, e.ask.Done))
}

func init() { chare.Register[qdAsker]() }

// TestQuiescenceFromElements asks for quiescence from every element at
// once, while a chain runs: every callback fires, after all hops (each
// one counts the hops at once, and finds them all made).
func TestQuiescenceFromElements(t *testing.T) {
	const pes, n, hops = 3, 6, 1000
	runMain(t, pes, func(m *tmain) {
		a, err := array.New[qdElem](m, array.Dims(n))
		inJob.NoError(err)
		askers, err := array.New[qdAsker](m, array.Dims(n))
		inJob.NoError(err)
		inJob.NoError(chare.Send(m, a.At(0), (*qdElem).Hop, qdToken{Left: hops, N: n, Seed: 9}))
		done := chare.NewFuture[[]int](m)
		sum, err := chare.NewWith(m, 1, (*qdSum).Init, qdSumInit{Want: n, Done: done})
		inJob.NoError(err)
		inJob.NoError(chare.Send(m, askers, (*qdAsker).Ask, qdAsk{Elems: a, Done: chare.EntryCallback(sum, (*qdSum).Add)}))
		counts := get(m, done)
		inJob.Len(counts, n)
		for i, c := range counts {
			inJob.Equal(qdHops(hops), c, "hops counted after quiescence callback %d", i)
		}
	})
}

// qdSum collects what it gets and fulfils a future once it has Want of
// them.
type qdSum struct {
	chare.Chare[qdSum]
	want int
	got  []int
	done chare.Future[[]int]
}

type qdSumInit struct {
	Want int
	Done chare.Future[[]int]
}

func (s *qdSum) Init(m qdSumInit) { s.want, s.done = m.Want, m.Done }
func (s *qdSum) Add(v int) {
	s.got = append(s.got, v)
	if len(s.got) == s.want {
		inJob.NoError(s.done.Send(s, s.got))
	}
}

func init() { chare.Register[qdSum]() }

// qdExitMain is the main chare of TestExitAfterQuiescence: once the job
// is quiescent, it has the hops counted, and ends the job through an exit
// callback if they add up.
type qdExitMain struct {
	chare.Chare[qdExitMain]
	elems array.Proxy[qdElem, int]
	want  int
}

func (m *qdExitMain) Quiet() {
	inJob.NoError(chare.Send(m, m.elems, (*qdElem).Count, chare.EntryCallback(m.ThisProxy(), (*qdExitMain).Counted)))
}

func (m *qdExitMain) Counted(hops int) {
	code := 4
	if hops != m.want {
		code = 5
	}
	inJob.NoError(chare.ExitCallback(code).Send(m, nil))
}

func init() { chare.Register[qdExitMain]() }

// TestExitAfterQuiescence ends the job from the QD callback: Run returns
// the exit callback's code (4 only if every hop was made before).
func TestExitAfterQuiescence(t *testing.T) {
	const hops, tokens = 1000, 4
	code := run(t, 3, func(m *qdExitMain, _ []string) {
		a, err := array.New[qdElem](m, array.Dims(10))
		inJob.NoError(err)
		m.elems, m.want = a, tokens*qdHops(hops)
		for k := 0; k < tokens; k++ {
			inJob.NoError(chare.Send(m, a.At(k), (*qdElem).Hop, qdToken{Left: hops, N: 10, Seed: uint64(k)}))
		}
		m.DetectQuiescence(chare.EntryCallback0(m.ThisProxy(), (*qdExitMain).Quiet))
	})
	require.Equal(t, 4, code, "5: the hops did not add up when quiescence was reported")
}
