package tram

import (
	"fmt"

	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/chare/reducer"
)

// Staged completion (T13, T21). Items move along the greatest differing
// dimension first, so an item that arrived along dimension d never needs
// a dimension above d again. A PE therefore finishes the dimensions from
// the highest down: once its producers are done and it has finished every
// dimension above d, it sends its buffers for dimension d and tells each
// peer in d how many messages it sent it there; it has finished d when
// every peer in d told it its count and that many messages arrived. When
// dimension 0 is finished, nothing more can reach the PE. The only extra
// cost is the counts (T21): no detector, no background messages, no
// periodic flushing. Locations must be exact, so it serves group clients
// (T22: array clients whose elements migrate need the other modes).

type staged struct {
	left     int         // local producers not done
	dim      int         // the dimension being finished; -1 when all are
	entered  bool        // this PE sent its buffers and counts for dim
	sent     map[int]int // messages sent to each peer in this step
	recv     map[int]int // messages received from each peer
	counts   map[int]int // the counts peers announced
	finished chare.Callback
	// early holds the markers of a step this PE has not begun: a PE
	// without producers sends its markers from its Begin, which can reach
	// a peer before the peer's own Begin (nothing orders a broadcast
	// against another PE's sends).
	early []markerMsg
}

// begin starts step step, taking the markers for it that came early.
func (s *staged) begin(step, ndims, producers int, finished chare.Callback) {
	early := s.early
	*s = staged{left: producers, dim: ndims - 1, sent: map[int]int{}, recv: map[int]int{}, counts: map[int]int{}, finished: finished}
	for _, m := range early {
		if m.Step == step {
			s.counts[m.From] = m.Count
		} else if m.Step > step {
			s.early = append(s.early, m)
		}
	}
}

func (s *staged) received(from int) { s.recv[from]++ }

// markerMsg carries a peer's count of messages along one dimension.
type markerMsg struct {
	Step  int
	From  int
	Count int
}

// Marker records a peer's count, or keeps it for a step not begun here.
func (b *branch[C, T]) Marker(m markerMsg) {
	if m.Step > b.step || b.stg.counts == nil {
		b.stg.early = append(b.stg.early, m)
		return
	}
	if m.Step < b.step {
		b.Abort(fmt.Errorf("tram: a staged marker of step %d from PE %d reached PE %d in step %d", m.Step, m.From, b.PE(), b.step))
		return
	}
	b.stg.counts[m.From] = m.Count
	b.advance()
}

// advance finishes as many dimensions as it can.
func (b *branch[C, T]) advance() {
	s := &b.stg
	if b.mode != Staged || s.left > 0 || s.dim < 0 {
		return
	}
	topo := b.agg.cfg.Topology
	for s.dim >= 0 {
		peers := b.peersIn(topo, s.dim)
		if !s.entered {
			s.entered = true
			for _, f := range b.agg.FlushDim(s.dim) {
				b.send(f)
			}
			for _, p := range peers {
				if err := b.ms.marker.Send(b, b.ThisProxy().At(p), markerMsg{Step: b.step, From: b.PE(), Count: s.sent[p]}); err != nil {
					b.Abort(err)
					return
				}
			}
		}
		for _, p := range peers {
			c, ok := s.counts[p]
			if !ok || s.recv[p] < c {
				return // wait for this peer
			}
		}
		s.dim, s.entered = s.dim-1, false
	}
	b.active = false
	b.setQuick()
	_ = b.Contribute(nil, reducer.Nop, s.finished)
}

// peersIn lists this PE's peers that differ from it in dimension d.
func (b *branch[C, T]) peersIn(topo *Topology, d int) []int {
	var ps []int
	for _, p := range topo.Peers(b.PE()) {
		if topo.DiffDim(b.PE(), p) == d {
			ps = append(ps, p)
		}
	}
	return ps
}
