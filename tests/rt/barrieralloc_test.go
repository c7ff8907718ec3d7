package rt_test

import (
	"runtime"
	"testing"

	"github.com/charmgo/charm/array"
	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/chare/reducer"
)

// baElem runs barriers on its own: each round it joins a reduction whose
// callback broadcasts the next round to the array (allToAll's iteration
// without its two messages).
type baElem struct {
	array.Element[baElem, int]
	left int
	done chare.Callback
	next chare.Callback // the barrier's target, made once (making one allocates)
	made bool           // next is made
}

type baGo struct {
	Rounds int
	Done   chare.Callback
}

func init() { chare.Register[baElem]() }

func (e *baElem) Go(m baGo) {
	e.left, e.done = m.Rounds, m.Done
	if !e.made {
		e.next, e.made = chare.EntryCallback0(e.ThisProxy(), (*baElem).Next), true
	}
	e.join()
}

// Next is the barrier's target: every element takes the next round.
func (e *baElem) Next() {
	if e.left--; e.left > 0 {
		e.join()
		return
	}
	if e.ThisIndex() == 0 {
		if err := e.done.Send(e, nil); err != nil {
			e.Abort(err)
		}
	}
}

func (e *baElem) join() {
	if err := e.Contribute(nil, reducer.Nop, e.next); err != nil {
		e.Abort(err)
	}
}

// A barrier over an array of one element per PE, whose result is
// broadcast back to the array, allocates nothing a round once warm (a
// slab of callback envelopes now and then, under 0.1 objects a round):
// the runtime keeps the reduction's accumulator, builds the root's result
// without a closure, forwards the broadcast without a slice per hop, and
// reuses the partial a PE sends to its parent once the parent folded it
// in. The elements make their callback once: EntryCallback0 allocates.
func TestBarrierAllocationsPerRound(t *testing.T) {
	inProcessOnly(t, "it counts the process's allocations")
	if raceOn {
		t.Skip("allocation counts under -race are not the program's")
	}
	const rounds = 2000
	runMain(t, 2, func(m *tmain) {
		a, err := array.New[baElem](m, array.Dims(2))
		inJob.NoError(err)
		barriers := func(n int) uint64 {
			f := chare.NewFuture[any](m)
			var m0, m1 runtime.MemStats
			runtime.ReadMemStats(&m0)
			inJob.NoError(chare.Send(m, a, (*baElem).Go, baGo{Rounds: n, Done: f.Callback()}))
			get(m, f)
			runtime.ReadMemStats(&m1)
			return m1.Mallocs - m0.Mallocs
		}
		barriers(rounds) // warm: pools, caches, slices
		few, many := barriers(100), barriers(100+rounds)
		perRound := float64(many-few) / rounds
		t.Logf("%.2f objects a round", perRound)
		inJob.LessOrEqual(perRound, 0.1, "objects allocated per barrier round")
	})
}
