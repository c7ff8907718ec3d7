package rt_test

import (
	"runtime"
	"testing"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/charmgo/charm/array"
	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/internal/core"
)

// An element message from another process keeps its index in its wire
// form until the array reads it (core.RawDeliverer): delivering it boxes
// no index in an any, which cost an allocation per message for an int of
// 256 or more and for every [N]int. Here the messages cross a loopback
// wire (core.WireEnvelope: encoded and decoded as the transport does)
// and are delivered on the job's one PE.

type riElem struct {
	array.Element[riElem, int]
	Hits int
}

func (e *riElem) Hit(n int)  { e.Hits += n }
func (e *riElem) Count() int { return e.Hits }

type riCell struct {
	array.Element[riCell, [2]int]
	Hits int
}

func (e *riCell) Hit(n int)  { e.Hits += n }
func (e *riCell) Count() int { return e.Hits }

func init() {
	// Fast: this process decodes their envelopes itself (viaLoopback),
	// and a job of one process builds no typed decoder at a send.
	chare.Register[riElem](chare.Fast((*riElem).Hit))
	chare.Register[riCell](chare.Fast((*riCell).Hit))
}

// viaLoopback returns the envelopes of a message for each proxy (and
// entry), as another process's would arrive here.
func viaLoopback[T any](ps []chare.Proxy[T], method func(*T, int)) []chare.Envelope {
	e, err := chare.EntryOf(method)
	inJob.NoError(err)
	out := make([]chare.Envelope, len(ps))
	for k, p := range ps {
		b, err := msgpack.Marshal(core.WireEnvelope{E: chare.NewEnvelope(p.Route(), e, 1)})
		inJob.NoError(err)
		var w core.WireEnvelope
		inJob.NoError(msgpack.Unmarshal(b, &w))
		out[k] = w.E
	}
	return out
}

// deliverCost delivers envs on this PE, a warm-up first, and returns the
// objects allocated per message of the rest (in the whole process: the
// job has one PE, which is busy here).
func deliverCost(m *tmain, envs []chare.Envelope) float64 {
	ap := chare.PEOf(m).Actor()
	const warm = 100
	for _, e := range envs[:warm] {
		e.Deliver(ap)
	}
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	for _, e := range envs[warm:] {
		e.Deliver(ap)
	}
	runtime.ReadMemStats(&m1)
	return float64(m1.Mallocs-m0.Mallocs) / float64(len(envs)-warm)
}

func TestElementIndexFromWireNotBoxed(t *testing.T) {
	inProcessOnly(t, "it delivers envelopes on the main chare's PE and counts the process's allocations")
	if raceOn {
		t.Skip("allocation counts under -race are not the program's")
	}
	const n, per = 300, 25 // elements 256..299 (ints that Go does not box for free) get the timed messages
	runMain(t, 1, func(m *tmain) {
		a, err := array.New[riElem](m, array.Dims(n))
		inJob.NoError(err)
		g, err := array.New[riCell](m, array.Dims2(2, n))
		inJob.NoError(err)
		var ps []chare.Proxy[riElem]
		var qs []chare.Proxy[riCell]
		for k := range (n - 256) * per {
			i := 256 + k%(n-256)
			ps = append(ps, a.At(i))
			qs = append(qs, g.At([2]int{1, i}))
		}
		// A typed send to each first, as the program would.
		inJob.NoError(chare.Send(m, a.At(0), (*riElem).Hit, 0))
		inJob.NoError(chare.Send(m, g.At([2]int{0, 0}), (*riCell).Hit, 0))
		quiesce(m)

		perInt := deliverCost(m, viaLoopback(ps, (*riElem).Hit))
		perPair := deliverCost(m, viaLoopback(qs, (*riCell).Hit))
		t.Logf("objects allocated per message delivered: %.3f (int index), %.3f ([2]int index)", perInt, perPair)
		inJob.LessOrEqual(perInt, 0.05, "objects per message to an int-indexed element")
		inJob.LessOrEqual(perPair, 0.05, "objects per message to a [2]int-indexed element")

		// Every message reached its element, once.
		for _, i := range []int{256, 299} {
			f, err := chare.Call0(m, a.At(i), (*riElem).Count)
			inJob.NoError(err)
			inJob.Equal(len(ps)/(n-256), get(m, f), "messages to element %d", i)
			h, err := chare.Call0(m, g.At([2]int{1, i}), (*riCell).Count)
			inJob.NoError(err)
			inJob.Equal(len(qs)/(n-256), get(m, h), "messages to element [1 %d]", i)
		}
	})
}
