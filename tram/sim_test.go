package tram

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// traced is a test item that counts the messages carrying it.
type traced struct {
	id, src, hops int
}

// network is a simulated job: one Aggregator per PE, and a FIFO of messages in flight.
type network struct {
	t         *testing.T
	topo      *Topology
	aggs      []*Aggregator[*traced]
	queue     []Flush[*traced]
	delivered map[int]int
	messages  int
}

func newNetwork(t *testing.T, topo *Topology, s Sizing) *network {
	n := &network{t: t, topo: topo, delivered: map[int]int{}}
	for pe := range topo.NumPEs() {
		a, err := NewAggregator(Config[*traced]{Topology: topo, PE: pe, Sizing: s, Size: func(*traced) int { return 24 }})
		require.NoError(t, err)
		n.aggs = append(n.aggs, a)
	}
	return n
}

// handle acts on an Output produced at PE pe: queue its messages, record its deliveries.
func (n *network) handle(pe int, out Output[*traced]) {
	require.Empty(n.t, out.Direct, "no cutoff was set")
	for _, f := range out.Flushes {
		require.True(n.t, n.topo.IsPeer(pe, f.To), "PE %d sent to non-peer %d", pe, f.To) // T02
		require.NotEmpty(n.t, f.Items)
		n.queue = append(n.queue, f)
	}
	a := n.aggs[pe]
	require.Less(n.t, a.Stats().Buffered, a.Sizing().TotalCapacity, "PE %d over capacity", pe) // T07
	for _, e := range out.Local {
		require.Equal(n.t, pe, e.Dest)
		n.delivered[e.Item.id]++
		require.Equal(n.t, n.topo.Hops(e.Item.src, pe), e.Item.hops, "item %d from %d to %d", e.Item.id, e.Item.src, pe) // T04
	}
}

// step delivers the oldest message in flight to its PE's Route.
func (n *network) step() {
	f := n.queue[0]
	n.queue = n.queue[1:]
	n.messages++
	for _, e := range f.Items {
		e.Item.hops++
	}
	out, err := n.aggs[f.To].Route(f.Items)
	require.NoError(n.t, err)
	n.handle(f.To, out)
}

// drain delivers queued messages, flushing every PE whenever the network goes quiet, until no
// item is buffered or in flight — the end of a communication step (T26).
func (n *network) drain() {
	for {
		for len(n.queue) > 0 {
			n.step()
		}
		idle := true
		for pe, a := range n.aggs {
			for _, f := range a.FlushAll() {
				idle = false
				n.handle(pe, Output[*traced]{Flushes: []Flush[*traced]{f}})
			}
		}
		if idle {
			return
		}
	}
}

func TestPropertyEveryItemArrivesOnceInHopsMessages(t *testing.T) {
	sizings := []Sizing{{BufferItems: 1}, {BufferItems: 4}, {TotalCapacity: 7}, {BufferItems: 64, TotalCapacity: 10}, {BufferItems: 1000}}
	for _, dims := range shapes {
		for _, s := range sizings {
			t.Run(fmt.Sprintf("%v/%+v", dims, s), func(t *testing.T) {
				topo := mustTopology(t, dims...)
				rng := rand.New(rand.NewPCG(uint64(topo.NumPEs()), uint64(s.BufferItems+s.TotalCapacity)))
				n := newNetwork(t, topo, s)
				const items = 2000
				want := map[int]bool{}
				for id := range items {
					src, dest := rng.IntN(topo.NumPEs()), rng.IntN(topo.NumPEs())
					out, err := n.aggs[src].Insert(&traced{id: id, src: src}, dest)
					require.NoError(t, err)
					want[id] = true
					n.handle(src, out)
					// Interleave sends and receives, as PEs would.
					for len(n.queue) > 0 && rng.IntN(3) == 0 {
						n.step()
					}
				}
				n.drain()
				require.Len(t, n.delivered, items)
				for id := range want {
					require.Equal(t, 1, n.delivered[id], "item %d", id)
				}
				for _, a := range n.aggs {
					require.Zero(t, a.Stats().Buffered)
				}
				if s.BufferItems == 1 {
					// Unaggregated: one message per item per hop.
					hops := 0
					for _, a := range n.aggs {
						hops += a.Stats().Inserted + a.Stats().Routed - a.Stats().Local
					}
					require.Equal(t, hops, n.messages)
				}
			})
		}
	}
}
