package rt_test

import (
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/array"
	"github.com/charmgo/charm/chare"
)

// Quiescence detection fires only once every chain of messages has been
// processed: tokens hop between random elements a fixed number of times,
// counting each hop, and the QD callback checks the count.

type qdElem struct {
	array.Element[qdElem, int]
}

type qdToken struct {
	Left  int // hops still to go
	N     int // elements
	Seed  uint64
	Count *atomic.Int64 // hops made, over all tokens (the job is in one process)
}

func (e *qdElem) Hop(t qdToken) {
	t.Count.Add(1)
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
		t.Count.Add(-1) // the split costs one hop less in total below
		inJob.NoError(chare.Send(e, e.ThisProxy().At(r.IntN(t.N)), (*qdElem).Hop, split))
	}
	inJob.NoError(chare.Send(e, e.ThisProxy().At(next), (*qdElem).Hop, t))
}

func init() { chare.Register[qdElem]() }

// qdHops is how many times Hop runs for a token sent with Left = hops:
// each Hop either ends (Left 0) or passes Left-1 on, and a split keeps
// the total (the split's extra Hop is compensated).
func qdHops(hops int) int64 { return int64(hops) + 1 }

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
				count := &atomic.Int64{}
				for k := 0; k < c.tokens; k++ {
					inJob.NoError(chare.Send(m, a.At(k%n), (*qdElem).Hop, qdToken{Left: c.hops, N: n, Seed: uint64(k + 1), Count: count}))
				}
				quiesce(m)
				inJob.Equal(int64(c.tokens)*qdHops(c.hops), count.Load())
				// Quiescence again, with nothing to do.
				quiesce(m)
				inJob.Equal(int64(c.tokens)*qdHops(c.hops), count.Load())
			})
		})
	}
}

// qdAsker asks for quiescence from an element.
type qdAsker struct {
	array.Element[qdAsker, int]
}

type qdAsk struct {
	Count *atomic.Int64
	Want  int64
	Done  chare.Callback
}

func (e *qdAsker) Ask(m qdAsk) {
	e.DetectQuiescence(chare.FuncCallback(e.PE(), func(ctx chare.Context, _ any) {
		inJob.Equal(m.Want, m.Count.Load(), "quiescence before every hop was made")
		inJob.NoError(m.Done.Send(ctx, 1))
	}))
}

func init() { chare.Register[qdAsker]() }

// TestQuiescenceFromElements asks for quiescence from every element at
// once, while a chain runs: every callback fires, after all hops.
func TestQuiescenceFromElements(t *testing.T) {
	const pes, n, hops = 3, 6, 1000
	runMain(t, pes, func(m *tmain) {
		a, err := array.New[qdElem](m, array.Dims(n))
		inJob.NoError(err)
		askers, err := array.New[qdAsker](m, array.Dims(n))
		inJob.NoError(err)
		count := &atomic.Int64{}
		inJob.NoError(chare.Send(m, a.At(0), (*qdElem).Hop, qdToken{Left: hops, N: n, Seed: 9, Count: count}))
		done := chare.NewFuture[int](m)
		sum, err := chare.NewWith(m, 1, (*qdSum).Init, qdSumInit{Want: n, Done: done})
		inJob.NoError(err)
		inJob.NoError(chare.Send(m, askers, (*qdAsker).Ask, qdAsk{Count: count, Want: qdHops(hops), Done: chare.EntryCallback(sum, (*qdSum).Add)}))
		inJob.Equal(n, get(m, done))
	})
}

// qdSum adds what it gets and fulfils a future once it has Want of them.
type qdSum struct {
	chare.Chare[qdSum]
	want, got int
	done      chare.Future[int]
}

type qdSumInit struct {
	Want int
	Done chare.Future[int]
}

func (s *qdSum) Init(m qdSumInit) { s.want, s.done = m.Want, m.Done }
func (s *qdSum) Add(v int) {
	s.got += v
	if s.got == s.want {
		inJob.NoError(s.done.Send(s, s.got))
	}
}

func init() { chare.Register[qdSum]() }

// TestExitAfterQuiescence ends the job from the QD callback: Run returns
// the callback's code, and every hop was made before.
func TestExitAfterQuiescence(t *testing.T) {
	const hops, tokens = 1000, 4
	count := &atomic.Int64{}
	code := run(t, 3, func(m *tmain, _ []string) {
		a, err := array.New[qdElem](m, array.Dims(10))
		inJob.NoError(err)
		for k := 0; k < tokens; k++ {
			inJob.NoError(chare.Send(m, a.At(k), (*qdElem).Hop, qdToken{Left: hops, N: 10, Seed: uint64(k), Count: count}))
		}
		m.DetectQuiescence(chare.ExitCallback(4))
	})
	require.Equal(t, 4, code)
	require.Equal(t, tokens*qdHops(hops), count.Load())
}
