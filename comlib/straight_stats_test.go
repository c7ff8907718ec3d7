package comlib_test

import (
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/array"
	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/comlib"
)

// probed is the instance whose Stats a probePeer reads (one test at a
// time, in one process).
var probed atomic.Pointer[comlib.Instance]

// probePeer is a source of an each-to-many exchange in which element 0
// alone sends: one message to every other element an iteration, reading
// the instance's Straight count before and after its sends, inside the
// iteration.
type probePeer struct {
	array.Element[probePeer, int]
	Got   int
	Reads [][2]int64 // by iteration: Straight before and after element 0's sends
}

type probeIter struct {
	P    array.Proxy[probePeer, int] // delegated
	N    int
	Iter int
}

func init() { chare.Register[probePeer]() }

func (p *probePeer) Iterate(c probeIter) {
	if err := chare.BeginIteration(p, c.P, c.Iter); err != nil {
		p.Abort(err)
		return
	}
	if p.ThisIndex() == 0 {
		in := probed.Load()
		before := in.Stats().Straight
		for j := 1; j < c.N; j++ {
			if err := chare.Send(p, c.P.At(j), (*probePeer).Note, c.Iter); err != nil {
				p.Abort(err)
				return
			}
		}
		p.Reads = append(p.Reads, [2]int64{before, in.Stats().Straight})
	}
	if err := chare.EndIteration(p, c.P); err != nil {
		p.Abort(err)
	}
}

func (p *probePeer) Note(int) { p.Got++ }

// Probe returns element 0's reads.
func (p *probePeer) Probe(struct{}) [][2]int64 { return p.Reads }

// TestStatsStraightCountsAtTheSend: Stats().Straight counts a message
// sent straight as it is sent: read inside the iteration, right after an
// element's straight sends, it has grown by them.
func TestStatsStraightCountsAtTheSend(t *testing.T) {
	const n, pes, iters = 4, 2, 4
	var reads [][2]int64
	var final comlib.StatsSnapshot
	runJob(t, pes, 1, func(m *tmain, _ []string) {
		arr, err := array.New[probePeer](m, array.Dims(n))
		if err != nil {
			m.Abort(err)
			return
		}
		inst, err := comlib.New(m, comlib.EachToMany(comlib.EachToManyOptions{Sources: arr, Router: "direct"}))
		if err != nil {
			m.Abort(err)
			return
		}
		probed.Store(inst)
		for it := range iters {
			if err := chare.Send(m, arr, (*probePeer).Iterate, probeIter{P: arr.Delegate(inst), N: n, Iter: it}); err != nil {
				m.Abort(err)
				return
			}
			qd := chare.NewFuture[any](m)
			m.DetectQuiescence(qd.Callback())
			if _, err := qd.Get(m); err != nil {
				m.Abort(fmt.Errorf("iteration %d: %w", it, err))
				return
			}
		}
		f, err := chare.Call(m, arr.At(0), (*probePeer).Probe, struct{}{})
		if err != nil {
			m.Abort(err)
			return
		}
		if reads, err = f.Get(m); err != nil {
			m.Abort(err)
			return
		}
		final = inst.Stats()
		m.Exit(0)
	})
	require.Len(t, reads, iters)
	var counted int64
	for it, r := range reads {
		d := r[1] - r[0]
		require.True(t, d == 0 || d == n-1, "iteration %d: Straight grew by %d during element 0's %d sends: %v", it, d, n-1, reads)
		counted += d
	}
	require.Positive(t, counted, "some iteration sent straight: %v, %v", reads, final)
	require.Equal(t, final.Straight, counted, "every straight message was counted as it was sent, inside its iteration: %v, %v", reads, final)
	require.Zero(t, final.Packets, "%v", final)
}
