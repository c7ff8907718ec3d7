package rt_test

import (
	"fmt"
	"testing"

	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/group"
)

// producer is a group whose branches produce items for each other under a
// chare-level completion detector.
type producer struct {
	group.Branch[producer]
	consumed int
}

type produceMsg struct {
	Det   chare.Detector
	Items int
}

type itemMsg struct {
	Det  chare.Detector
	Hops int
}

// Produce sends Items items around the group; each is consumed after a few
// hops, then the branch reports its producer done.
func (p *producer) Produce(m produceMsg) {
	g := p.ThisProxy()
	for i := 0; i < m.Items; i++ {
		inJob.NoError(m.Det.Produce(p, 1))
		inJob.NoError(chare.Send(p, g.At((p.PE()+i+1)%p.NumPEs()), (*producer).Item, itemMsg{Det: m.Det, Hops: i % 4}))
	}
	inJob.NoError(m.Det.Done(p, 1))
}

func (p *producer) Item(m itemMsg) {
	if m.Hops > 0 {
		m.Hops--
		inJob.NoError(chare.Send(p, p.ThisProxy().At((p.PE()+1)%p.NumPEs()), (*producer).Item, m))
		return
	}
	p.consumed++
	inJob.NoError(m.Det.Consume(p, 1))
}

func (p *producer) Count(cb chare.Callback) { inJob.NoError(p.Contribute(p.consumed, sumInt{}, cb)) }

func init() { chare.Register[producer]() }

func TestStartCompletionDetectsAllConsumed(t *testing.T) {
	for _, pes := range []int{1, 2, 4} {
		const items = 300
		t.Run(fmt.Sprintf("%dPEs", pes), func(t *testing.T) { testCompletion(t, pes, items) })
	}
}

func testCompletion(t *testing.T, pes, items int) {
	runMain(t, pes, func(m *tmain) {
		g, err := group.New[producer](m)
		inJob.NoError(err)
		started := chare.NewFuture[any](m)
		all := chare.NewFuture[any](m)
		finished := chare.NewFuture[any](m)
		det, err := chare.StartCompletion(m, chare.Completion{
			Producers:   pes,
			Started:     started.Callback(),
			AllProduced: all.Callback(),
			Finished:    finished.Callback(),
		})
		inJob.NoError(err)
		get(m, started)
		inJob.NoError(chare.Send(m, g, (*producer).Produce, produceMsg{Det: det, Items: items}))
		inJob.NoError(chare.WaitAll(m, all, finished))
		// Finished means every produced item was consumed: the counts
		// must already add up, with nothing in flight.
		total := chare.NewFuture[int](m)
		inJob.NoError(chare.Send(m, g, (*producer).Count, total.Callback()))
		inJob.Equal(pes*items, get(m, total), "items consumed when completion fired on %d PEs", pes)
	})
}

func TestStartCompletionErrors(t *testing.T) {
	runMain(t, 1, func(m *tmain) {
		_, err := chare.StartCompletion(m, chare.Completion{Producers: -1})
		inJob.ErrorContains(err, "-1 producers")
		_, err = chare.StartCompletion(nil, chare.Completion{Producers: 1})
		inJob.ErrorIs(err, chare.ErrNoContext)
	})
}
