package tram

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// traced is a test item that counts the messages carrying it.
type traced struct {
	id, src, dest, hops int
}

// network is a simulated job: one Aggregator per PE, and a FIFO of messages in flight.
type network struct {
	t         *testing.T
	topo      *Topology
	aggs      []*Aggregator[*traced]
	queue     []Flush[*traced]
	delivered map[int]int
	messages  int
	mixed     int // messages with both envelopes and last-hop items (Config.Bare)
	bareMsgs  int // messages with last-hop items
}

func newNetwork(t *testing.T, topo *Topology, s Sizing) *network {
	return newNetworkOf(t, topo, Config[*traced]{Sizing: s, Size: func(*traced) int { return 24 }})
}

// newNetworkOf makes a network of Aggregators configured as cfg but for
// the topology and the PE.
func newNetworkOf(t *testing.T, topo *Topology, cfg Config[*traced]) *network {
	n := &network{t: t, topo: topo, delivered: map[int]int{}}
	for pe := range topo.NumPEs() {
		cfg.Topology, cfg.PE = topo, pe
		a, err := NewAggregator(cfg)
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
		require.NotZero(n.t, f.Len())
		if n.aggs[pe].cfg.Bare {
			if n.aggs[pe].lastHopPeer(f.To) {
				require.Empty(n.t, f.Items, "envelopes to %d, a last-hop peer of %d", f.To, pe)
			} else {
				require.Empty(n.t, f.Final, "bare items to %d, not a last-hop peer of %d", f.To, pe)
			}
			if len(f.Items) > 0 && len(f.Final) > 0 {
				n.mixed++
			}
			if len(f.Final) > 0 {
				n.bareMsgs++
			}
		} else {
			require.Empty(n.t, f.Final, "last-hop items without Config.Bare")
		}
		n.queue = append(n.queue, f)
	}
	a := n.aggs[pe]
	require.Less(n.t, a.Stats().Buffered, a.Sizing().TotalCapacity, "PE %d over capacity", pe) // T07
	for _, e := range out.Local {
		require.Equal(n.t, pe, e.Dest)
		n.arrive(pe, e.Item)
	}
}

// arrive records the delivery of it on PE pe.
func (n *network) arrive(pe int, it *traced) {
	n.delivered[it.id]++
	if it.dest >= 0 {
		require.Equal(n.t, it.dest, pe, "item %d from %d", it.id, it.src)
	}
	require.Equal(n.t, n.topo.Hops(it.src, pe), it.hops, "item %d from %d to %d", it.id, it.src, pe) // T04
}

// step delivers the oldest message in flight to its PE's Route.
func (n *network) step() {
	f := n.queue[0]
	n.queue = n.queue[1:]
	n.messages++
	for _, e := range f.Items {
		e.Item.hops++
	}
	a := n.aggs[f.To]
	local := a.Stats().Local
	for _, it := range f.Final { // the last hop: they are for f.To
		it.hops++
		n.arrive(f.To, it)
	}
	a.Arrived(len(f.Final))
	require.Equal(n.t, local+len(f.Final), a.Stats().Local)
	out, err := a.Route(f.Items)
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
					out, err := n.aggs[src].Insert(&traced{id: id, src: src, dest: dest}, dest)
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

// TestLastHopItemsTravelBare: with Config.Bare, an item for a peer of the
// last dimension routed travels in Flush.Final without its destination,
// and arrives where it should in as many hops; on a 1-D grid (every hop
// is the last) no envelope travels at all; on grids of several
// dimensions a PE receives both kinds, each message one kind (one buffer
// per peer). The fast path and the sized path (a Size function) agree.
func TestLastHopItemsTravelBare(t *testing.T) {
	sizings := []Sizing{{BufferItems: 1}, {BufferItems: 4}, {TotalCapacity: 7}, {BufferItems: 64}}
	for _, dims := range shapes {
		for _, s := range sizings {
			for _, sized := range []bool{false, true} {
				t.Run(fmt.Sprintf("%v/%+v/sized=%v", dims, s, sized), func(t *testing.T) {
					topo := mustTopology(t, dims...)
					cfg := Config[*traced]{Sizing: s, Bare: true}
					if sized {
						cfg.Size = func(*traced) int { return 24 }
					}
					n := newNetworkOf(t, topo, cfg)
					rng := rand.New(rand.NewPCG(uint64(topo.NumPEs()), uint64(s.BufferItems+s.TotalCapacity)))
					const items = 2000
					sent := 0
					for id := range items {
						src, dest := rng.IntN(topo.NumPEs()), rng.IntN(topo.NumPEs())
						out, err := n.aggs[src].Insert(&traced{id: id, src: src, dest: dest}, dest)
						require.NoError(t, err)
						n.handle(src, out)
						for len(n.queue) > 0 && rng.IntN(3) == 0 {
							n.step()
						}
						sent++
					}
					n.drain()
					require.Len(t, n.delivered, sent)
					for id, k := range n.delivered {
						require.Equal(t, 1, k, "item %d", id)
					}
					real := 0
					for _, d := range dims {
						if d > 1 {
							real++
						}
					}
					local, inserted := 0, 0
					for _, a := range n.aggs {
						require.Zero(t, a.Stats().Buffered)
						local += a.Stats().Local
						inserted += a.Stats().Inserted
					}
					require.Equal(t, inserted, local, "every item counted as delivered once")
					require.Zero(t, n.mixed, "a message carried both envelopes and last-hop items")
					if topo.NumPEs() > 1 {
						require.NotZero(t, n.bareMsgs, "no last-hop items travelled bare")
					}
					if real == 1 {
						require.Equal(t, n.messages, n.bareMsgs, "an envelope travelled on a 1-D grid")
					}
				})
			}
		}
	}
}

// TestBareHopTable: the table's last-hop bit is set, with Config.Bare
// only, exactly for the destinations whose next hop is a peer that every
// item reaching it is for: one that differs from this PE in the lowest
// dimension of size > 1 (routes correct the highest first).
func TestBareHopTable(t *testing.T) {
	for _, dims := range shapes {
		topo := mustTopology(t, dims...)
		for pe := range topo.NumPEs() {
			for _, bare := range []bool{false, true} {
				a, err := NewAggregator(Config[int]{Topology: topo, PE: pe, Sizing: Sizing{BufferItems: 4}, Bare: bare})
				require.NoError(t, err)
				for dest := range topo.NumPEs() {
					h := a.hop[dest]
					if dest == pe {
						require.EqualValues(t, -1, h)
						continue
					}
					next := topo.NextHop(pe, dest)
					require.Equal(t, next, a.peers.Peer(int(h>>1)), "%v: %d → %d", dims, pe, dest)
					lowest := slices.IndexFunc(dims, func(n int) bool { return n > 1 })
					last := topo.DiffDim(pe, next) == lowest
					require.Equal(t, bare && last, h&1 != 0, "%v: %d → %d", dims, pe, dest)
					if last {
						require.Equal(t, dest, next, "%v: a last-hop peer is the destination", dims)
					}
				}
			}
		}
	}
}
