package rt_test

import (
	"fmt"
	"testing"

	"github.com/charmgo/charm/array"
	"github.com/charmgo/charm/chare"
)

// inliner checks chare.SendInline: a target on the sender's PE runs before
// SendInline returns; one elsewhere gets a message.
type inliner struct {
	array.Element[inliner, int]
	hits int
}

func (e *inliner) Hit(n int) { e.hits += n }

// Probe calls Hit inline on every element and reports, per target, whether
// the call had run by the time SendInline returned.
func (e *inliner) Probe(cb chare.Callback) {
	a := e.ThisProxy()
	ran := 0
	for i := 0; i < 4; i++ {
		target := chare.Local(e, a.At(i))
		before := -1
		if target != nil {
			before = target.hits
		}
		inJob.NoError(chare.SendInline(e, a.At(i), (*inliner).Hit, 1))
		if target != nil {
			inJob.Equal(before+1, target.hits, "inline call to local element %d did not run at once", i)
			ran++
		}
	}
	inJob.NoError(e.Contribute(ran, sumInt{}, cb))
}

func (e *inliner) Total(cb chare.Callback) { inJob.NoError(e.Contribute(e.hits, sumInt{}, cb)) }

func init() { chare.Register[inliner]() }

func TestSendInline(t *testing.T) {
	for _, pes := range []int{1, 2, 4} {
		t.Run(fmt.Sprintf("%dPEs", pes), func(t *testing.T) { testSendInline(t, pes) })
	}
}

func testSendInline(t *testing.T, pes int) {
	runMain(t, pes, func(m *tmain) {
		a, err := array.New[inliner](m, array.Dims(4))
		inJob.NoError(err)
		ran := chare.NewFuture[int](m)
		inJob.NoError(chare.Send(m, a, (*inliner).Probe, ran.Callback()))
		// Block map: 4 elements on pes PEs, each element sees the
		// elements of its own PE as local.
		perPE := 4 / pes
		inJob.Equal(4*perPE, get(m, ran), "inline calls that ran at once on %d PEs", pes)
		quiesce(m)
		total := chare.NewFuture[int](m)
		inJob.NoError(chare.Send(m, a, (*inliner).Total, total.Callback()))
		inJob.Equal(16, get(m, total), "every inline send arrives exactly once")
	})
}
