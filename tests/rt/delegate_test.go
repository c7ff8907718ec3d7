package rt_test

import (
	"sync/atomic"
	"testing"

	"github.com/charmgo/charm/array"
	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/chare/reducer"
	"github.com/charmgo/charm/group"
)

// The delegation seam: a delegate that only counts what goes through it
// and forwards on the direct path; one that carries branch sends to their
// PE itself and delivers them there with chare.Deliver; and the iteration
// brackets.

// counter counts the calls a delegate gets, by kind of send.
type counter struct {
	send, bcast, mcast, begin, end atomic.Int64
	kinds                          [8]atomic.Int64 // by route kind
	iteration                      atomic.Int64
}

type counts struct{ Send, Bcast, Mcast, Begin, End int64 }

func (c *counter) counts() counts {
	return counts{c.send.Load(), c.bcast.Load(), c.mcast.Load(), c.begin.Load(), c.end.Load()}
}

// countingDelegate counts and forwards.
type countingDelegate struct{ *counter }

func (d countingDelegate) Send(from chare.Context, e chare.Envelope) error {
	d.send.Add(1)
	d.kinds[e.Header().Kind].Add(1)
	return chare.Forward(from, e)
}

func (d countingDelegate) Broadcast(from chare.Context, e chare.Envelope) error {
	d.bcast.Add(1)
	d.kinds[e.Header().Kind].Add(1)
	return chare.Forward(from, e)
}

func (d countingDelegate) Multicast(from chare.Context, e chare.Envelope) error {
	d.mcast.Add(1)
	d.kinds[e.Header().Kind].Add(1)
	return chare.Forward(from, e)
}

// bracketedDelegate also sees iteration brackets.
type bracketedDelegate struct{ countingDelegate }

func (d bracketedDelegate) BeginIteration(from chare.Context, it int) error {
	d.begin.Add(1)
	d.iteration.Store(int64(it))
	return nil
}

func (d bracketedDelegate) EndIteration(from chare.Context) error {
	d.end.Add(1)
	return nil
}

var (
	_ chare.Delegate  = countingDelegate{}
	_ chare.Bracketed = bracketedDelegate{}
)

type delSolo struct {
	chare.Chare[delSolo]
	hits int
}

func (s *delSolo) Hit(n int) { s.hits += n }
func (s *delSolo) Report(cb chare.Callback) {
	inJob.NoError(cb.Send(s, s.hits))
}

func init() {
	chare.Register[delSolo]()
}

func TestDelegateCountsEveryKindOfSend(t *testing.T) {
	const pes, n = 3, 9
	runMain(t, pes, func(m *tmain) {
		c := &counter{}
		d := countingDelegate{c}

		a, err := array.New[shapeElem[int]](m, array.Dims(n))
		inJob.NoError(err)
		g, err := group.New[grp](m)
		inJob.NoError(err)
		solo, err := chare.New[delSolo](m, 2)
		inJob.NoError(err)

		da := a.Delegate(d)
		dg := g.Delegate(d)
		inJob.Equal(chare.Delegate(d), da.Delegated())
		sec, err := da.Section(m, []int{1, 4, 7, 8})
		inJob.NoError(err)

		want := counts{}
		// Element sends, through proxies derived from the delegated one.
		for i := 0; i < n; i++ {
			inJob.NoError(chare.Send0(m, da.At(i), (*shapeElem[int]).Hit))
			want.Send++
		}
		// Branch sends.
		for pe := 0; pe < pes; pe++ {
			inJob.NoError(chare.Send(m, dg.At(pe), (*grp).At, grpAt{pe}))
			want.Send++
		}
		// A singleton chare.
		inJob.NoError(chare.Send(m, solo.Delegate(d), (*delSolo).Hit, 1))
		want.Send++
		// Broadcasts.
		inJob.NoError(chare.Send(m, dg, (*grp).Hit, grpHit{}))
		want.Bcast++
		inJob.NoError(chare.Send0(m, da, (*shapeElem[int]).Hit))
		want.Bcast++
		// A section multicast.
		inJob.NoError(chare.Send0(m, sec, (*shapeElem[int]).Hit))
		want.Mcast++
		inJob.Equal(want, c.counts())
		inJob.Equal(int64(n+1), c.kinds[chare.KindElement].Load()+c.kinds[chare.KindChare].Load())
		inJob.Equal(int64(pes), c.kinds[chare.KindBranch].Load())
		inJob.Equal(int64(1), c.kinds[chare.KindGroupAll].Load())
		inJob.Equal(int64(1), c.kinds[chare.KindArrayAll].Load())
		inJob.Equal(int64(1), c.kinds[chare.KindSection].Load())

		// Undelegated proxies send directly: the counts do not move.
		inJob.Nil(da.Undelegate().Delegated())
		inJob.NoError(chare.Send0(m, da.Undelegate().At(0), (*shapeElem[int]).Hit))
		inJob.NoError(chare.Send0(m, da.Undelegate(), (*shapeElem[int]).Hit))
		inJob.NoError(chare.Send(m, dg.Undelegate(), (*grp).Hit, grpHit{}))
		inJob.NoError(chare.Send(m, dg.Undelegate().At(1), (*grp).At, grpAt{1}))
		inJob.NoError(chare.Send(m, solo.Delegate(d).Undelegate(), (*delSolo).Hit, 10))
		inJob.NoError(chare.Send0(m, a, (*shapeElem[int]).Hit)) // the original was never delegated
		inJob.Equal(want, c.counts())
		// A section made from the undelegated proxy is not delegated either.
		sec2, err := da.Undelegate().Section(m, []int{0})
		inJob.NoError(err)
		inJob.NoError(chare.Send0(m, sec2, (*shapeElem[int]).Hit))
		inJob.NoError(chare.Send0(m, sec.Undelegate(), (*shapeElem[int]).Hit))
		inJob.Equal(want, c.counts())
		// A section delegated after it was made.
		inJob.NoError(chare.Send0(m, sec2.Delegate(d), (*shapeElem[int]).Hit))
		want.Mcast++
		inJob.Equal(want, c.counts())

		// Everything arrived, once: every element got its own send, three
		// broadcasts, and the section members one more; every branch its At
		// message and two broadcasts.
		quiesce(m)
		got := shapeReport(m, a, ops1)
		for i := 0; i < n; i++ {
			hits := 1 + 3 // its own send and three broadcasts
			switch i {
			case 1, 4, 7, 8: // sec, twice
				hits += 2
			case 0: // At(0) undelegated, sec2 twice
				hits += 3
			}
			inJob.Equal(hits, got[i].Hits, "element %d", i)
		}
		bs := grpReport(m, g)
		for pe := 0; pe < pes; pe++ {
			st := bs[pe]
			inJob.Equal(2, st.Hits, "branch %d", pe)
			wantAt := []int{pe}
			if pe == 1 {
				wantAt = []int{1, 1}
			}
			inJob.Equal(wantAt, st.AtPEs, "branch %d", pe)
		}
		f := chare.NewFuture[int](m)
		inJob.NoError(chare.Send(m, solo, (*delSolo).Report, f.Callback()))
		inJob.Equal(11, get(m, f))
	})
}

// delElem sends through a delegated proxy from an element.
type delElem struct {
	array.Element[delElem, int]
	seen *delSeen // what its delegate saw (the element never migrates)
}

type delGo struct {
	Target array.Proxy[shapeElem[int], int]
}

// delSeen records the calls a delegate got, and those made on a PE other
// than the one the header names as the sender.
type delSeen struct {
	wrong atomic.Int64
	calls atomic.Int64
}

type peCheckingDelegate struct {
	countingDelegate
	seen *delSeen
}

func (d peCheckingDelegate) Send(from chare.Context, e chare.Envelope) error {
	d.seen.calls.Add(1)
	if pe := chare.PEOf(from); pe == nil || pe.ID() != e.Header().Src {
		d.seen.wrong.Add(1)
	}
	return d.countingDelegate.Send(from, e)
}

// Go sends through a delegate of its own, which lives on its PE. The send
// may wait on the PE for the target's announcement (which travels apart
// from Go across processes), so the delegate may see it after Go returns.
func (e *delElem) Go(m delGo) {
	e.seen = &delSeen{}
	d := peCheckingDelegate{countingDelegate{&counter{}}, e.seen}
	inJob.NoError(chare.Send0(e, m.Target.Delegate(d).At(e.ThisIndex()), (*shapeElem[int]).Hit))
}

// Seen reports what the element's delegate saw: calls and wrong calls,
// summed over the elements.
func (e *delElem) Seen(cb chare.Callback) {
	var calls, wrong int
	if e.seen != nil {
		calls, wrong = int(e.seen.calls.Load()), int(e.seen.wrong.Load())
	}
	inJob.NoError(e.Contribute([]int{calls, wrong}, reducer.SumInt, cb))
}

func init() { chare.Register[delElem]() }

// TestDelegateFromElements checks that sends made by array elements
// through a delegated proxy reach the delegate with the element as the
// sending context, on the element's PE.
func TestDelegateFromElements(t *testing.T) {
	const n = 8
	runMain(t, 4, func(m *tmain) {
		target, err := array.New[shapeElem[int]](m, array.Dims(n), array.WithMap(array.RoundRobin))
		inJob.NoError(err)
		senders, err := array.New[delElem](m, array.Dims(n))
		inJob.NoError(err)
		inJob.NoError(chare.Send(m, senders, (*delElem).Go, delGo{Target: target}))
		quiesce(m)
		seen := chare.NewFuture[[]int](m)
		inJob.NoError(chare.Send(m, senders, (*delElem).Seen, seen.Callback()))
		calls := get(m, seen)
		inJob.Equal(n, calls[0], "delegate calls")
		inJob.Zero(calls[1], "the header's Src is the sending PE")
		got := shapeReport(m, target, ops1)
		for i := 0; i < n; i++ {
			inJob.Equal(1, got[i].Hits)
		}
	})
}

func TestDelegateBracketed(t *testing.T) {
	runMain(t, 2, func(m *tmain) {
		c := &counter{}
		a, err := array.New[shapeElem[int]](m, array.Dims(4))
		inJob.NoError(err)
		g, err := group.New[grp](m)
		inJob.NoError(err)

		// A plain proxy and one delegated to a strategy without brackets:
		// the calls do nothing.
		inJob.NoError(chare.BeginIteration(m, a, 1))
		inJob.NoError(chare.EndIteration(m, a))
		inJob.NoError(chare.BeginIteration(m, a.Delegate(countingDelegate{c}), 1))
		inJob.NoError(chare.EndIteration(m, a.Delegate(countingDelegate{c})))
		inJob.Equal(counts{}, c.counts())

		bd := bracketedDelegate{countingDelegate{c}}
		for it := 0; it < 3; it++ {
			inJob.NoError(chare.BeginIteration(m, a.Delegate(bd), it))
			inJob.Equal(int64(it), c.iteration.Load())
			inJob.NoError(chare.Send0(m, a.Delegate(bd).At(it), (*shapeElem[int]).Hit))
			inJob.NoError(chare.EndIteration(m, a.Delegate(bd)))
		}
		inJob.NoError(chare.BeginIteration(m, g.Delegate(bd), 7))
		inJob.NoError(chare.EndIteration(m, g.Delegate(bd).At(1)))
		inJob.Equal(counts{Send: 3, Begin: 4, End: 4}, c.counts())
		inJob.Equal(int64(7), c.iteration.Load())
		inJob.NoError(chare.BeginIteration(m, g.Delegate(bd).Undelegate(), 8))
		inJob.Equal(int64(4), c.begin.Load())
	})
}

// deliveringDelegate carries sends to a group branch or chare to the
// destination PE itself (through a function callback there) and delivers
// them with chare.Deliver, as an aggregating strategy would.
type deliveringDelegate struct {
	countingDelegate
	to []chare.Callback // a function callback on every PE
}

func newDeliveringDelegate(from chare.Context, pes int) deliveringDelegate {
	d := deliveringDelegate{countingDelegate: countingDelegate{&counter{}}}
	for pe := 0; pe < pes; pe++ {
		d.to = append(d.to, chare.FuncCallback(from, pe, func(ctx chare.Context, v any) {
			inJob.NoError(chare.Deliver(ctx, v.(chare.Envelope)))
		}))
	}
	return d
}

func (d deliveringDelegate) Send(from chare.Context, e chare.Envelope) error {
	d.send.Add(1)
	return d.to[e.Header().PE].Send(from, e)
}

func TestDelegateDeliversAtDestination(t *testing.T) {
	inProcessOnly(t, "the delegate carries envelopes to every PE through function callbacks, "+
		"which only the process that made them can call (a delegate lives in one process)")
	const pes = 3
	runMain(t, pes, func(m *tmain) {
		d := newDeliveringDelegate(m, pes)
		g, err := group.New[grp](m)
		inJob.NoError(err)
		for pe := 0; pe < pes; pe++ {
			for range pe + 1 {
				inJob.NoError(chare.Send(m, g.Delegate(d).At(pe), (*grp).At, grpAt{pe}))
			}
		}
		solo, err := chare.New[delSolo](m, 1)
		inJob.NoError(err)
		inJob.NoError(chare.Send(m, solo.Delegate(d), (*delSolo).Hit, 5))
		inJob.Equal(int64(1+2+3+1), d.send.Load())

		quiesce(m)
		got := grpReport(m, g)
		for pe := 0; pe < pes; pe++ {
			st := got[pe]
			inJob.Len(st.AtPEs, pe+1, "branch %d", pe)
			for _, p := range st.AtPEs {
				inJob.Equal(pe, p)
			}
		}
		f := chare.NewFuture[int](m)
		inJob.NoError(chare.Send(m, solo, (*delSolo).Report, f.Callback()))
		inJob.Equal(5, get(m, f))
	})
}
