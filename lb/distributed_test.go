package lb_test

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/lb"
)

// skewedSnapshot is 64 PEs of which the first 8 hold 250 objects each
// (loads 0.5 to 1.5, one in fifty not migratable) and the others 10 light
// objects each (loads 0 to 0.2): max/avg about 8.
func skewedSnapshot(seed uint64) *lb.Snapshot {
	r := rand.New(rand.NewPCG(seed, 3))
	s := &lb.Snapshot{PEs: make([]lb.PEStats, 64), Seed: seed}
	for i := range s.PEs {
		s.PEs[i] = lb.PEStats{Speed: 1, Available: true}
	}
	add := func(pe int, load float64, migratable bool) {
		s.Objects = append(s.Objects, lb.Object{ID: len(s.Objects), PE: pe, Load: load, Migratable: migratable})
	}
	for pe := range 8 {
		for range 250 {
			add(pe, 0.5+r.Float64(), r.IntN(50) > 0)
		}
	}
	for pe := 8; pe < 64; pe++ {
		for range 10 {
			add(pe, 0.2*r.Float64(), true)
		}
	}
	return s
}

func TestDistributedBalancesSkewed(t *testing.T) {
	s := skewedSnapshot(1)
	orig := cloneSnapshot(s)
	before := imbalance(s, nil)
	p := place(t, lb.Distributed{}, s)
	after := imbalance(s, p)
	t.Logf("skewed: max/avg %.3f → %.3f, %d of %d objects moved", before, after, s.Migrations(p), len(s.Objects))
	require.Greater(t, before, 7.0)
	require.Less(t, after, 1.15)
	require.Equal(t, orig, s, "the snapshot is not modified")

	// Every object placed once, on an existing PE; the non-migratable
	// ones where they were.
	require.Len(t, p, len(s.Objects))
	for i, o := range s.Objects {
		require.True(t, p[i] >= 0 && p[i] < len(s.PEs))
		if !o.Migratable {
			require.Equal(t, o.PE, p[i], "object %d", i)
		}
	}

	// Repeatable with the same seed, not with another.
	require.Equal(t, p, place(t, lb.Distributed{}, s))
	s.Seed = 2
	other := place(t, lb.Distributed{}, s)
	require.NotEqual(t, p, other)
	require.Less(t, imbalance(s, other), 1.15)
}

func TestDistributedLinearWorkload(t *testing.T) {
	s := linearSnapshot()
	p := place(t, lb.Distributed{}, s)
	require.LessOrEqual(t, imbalance(s, p), 1.10)
	require.LessOrEqual(t, s.Migrations(p), len(s.Objects)/4)
}

func TestDistributedLeavesBalancedAlone(t *testing.T) {
	s := snap(4, []float64{1, 1, 1, 1, 1, 1, 1, 1.04}, []int{0, 0, 1, 1, 2, 2, 3, 3})
	require.Zero(t, s.Migrations(place(t, lb.Distributed{}, s)))
}

func TestDistributedEmptiesUnavailablePE(t *testing.T) {
	// PE 0 leaves: its 20 objects go; the one that cannot move stays.
	s := snap(8, slices.Repeat([]float64{1}, 40), make([]int, 40))
	for i := 20; i < 40; i++ {
		s.Objects[i].PE = 1 + i%7
	}
	s.Objects[0].Migratable = false
	s.PEs[0].Available = false
	p := place(t, lb.Distributed{}, s)
	for i := 1; i < 20; i++ {
		require.NotEqual(t, 0, p[i], "object %d", i)
	}
	require.Equal(t, 0, p[0])
}

// The protocol of one PE, message by message. The average is 10, so a PE
// under 10.5 is underloaded and accepts work up to 10.5.
func TestDistPEProtocol(t *testing.T) {
	g := lb.DistGlobal{NumPEs: 4, Avg: 10, Max: 30}
	var objs []lb.DistObj
	for i := range 6 {
		objs = append(objs, lb.DistObj{ID: i, Work: 5, Migratable: true})
	}
	heavy := lb.NewDistPE(0, lb.PEStats{Speed: 1, Available: true}, objs, g, lb.Distributed{}, 1)
	light := lb.NewDistPE(1, lb.PEStats{Speed: 1, Available: true, Background: 4}, nil, g, lb.Distributed{}, 1)
	busy := lb.NewDistPE(3, lb.PEStats{Speed: 1, Available: true, Background: 12}, nil, g, lb.Distributed{}, 1)

	// Only the underloaded PE announces itself, once.
	require.Empty(t, busy.Gossip(nil))
	out := light.Gossip(nil)
	require.Len(t, out, 2, "fanout 2")
	for _, m := range out {
		require.Equal(t, 1, m.From)
		require.NotEqual(t, 1, m.To)
		require.Equal(t, []lb.PEInfo{{PE: 1, Load: 4, Speed: 1}}, m.Info)
	}
	require.Empty(t, light.Gossip(nil), "nothing new to tell")

	// The heavy PE knows nobody: it offers nothing.
	require.Empty(t, heavy.Gossip(nil))
	require.Empty(t, heavy.Transfer(20))

	// It hears of PE 1, at load 0 (out of date: PE 1 is at 4). It
	// forwards that, then offers objects while they fit on PE 1 as far as
	// it knows (5, then 10 ≤ 10.5) and it is above the threshold.
	fwd := heavy.Gossip([]lb.GossipMsg{{From: 3, To: 0, Info: []lb.PEInfo{{PE: 1, Load: 0, Speed: 1}}}})
	require.Len(t, fwd, 2)
	require.Equal(t, []lb.PEInfo{{PE: 1, Load: 0, Speed: 1}}, heavy.Known())
	offers := heavy.Transfer(20)
	require.Equal(t, []lb.Offer{{From: 0, To: 1, Obj: 0, Work: 5}, {From: 0, To: 1, Obj: 1, Work: 5}}, offers)
	require.Equal(t, 20.0, heavy.Load())

	// PE 1 takes the first (9 ≤ 10.5), refuses the second (14).
	replies := light.Receive(offers)
	require.Equal(t, []lb.Reply{{From: 1, To: 0, Obj: 0, OK: true, Load: 9}, {From: 1, To: 0, Obj: 1, OK: false, Load: 9}}, replies)
	heavy.Settle(replies)
	require.Equal(t, []lb.Move{{Obj: 0, To: 1}}, heavy.Moves())
	require.Equal(t, 25.0, heavy.Load())
	require.Equal(t, 9.0, heavy.Known()[0].Load, "the reply corrected what PE 0 knew")

	// Nothing fits on PE 1 any more (9 + 5 > 10.5).
	require.Empty(t, heavy.Transfer(20))
	// A reply to an offer it did not make changes nothing.
	heavy.Settle([]lb.Reply{{From: 1, To: 0, Obj: 5, OK: true}})
	require.Len(t, heavy.Moves(), 1)
	// An unavailable PE accepts nothing.
	gone := lb.NewDistPE(2, lb.PEStats{Speed: 1}, nil, g, lb.Distributed{}, 1)
	require.False(t, gone.Receive([]lb.Offer{{From: 0, To: 2, Obj: 3, Work: 1}})[0].OK)
}

// The PEs of a distributed step run as the runtime would run them, each
// with only its messages: no PE offers an object to a PE it did not hear
// of, and gossip stays within its budget.
func TestDistPEUsesOnlyGossip(t *testing.T) {
	s := skewedSnapshot(5)
	cfg := lb.Distributed{}
	n := len(s.PEs)
	var total float64
	work := make([]float64, n)
	objs := make([][]lb.DistObj, n)
	for _, o := range s.Objects {
		total += o.Load
		work[o.PE] += o.Load
		objs[o.PE] = append(objs[o.PE], lb.DistObj{ID: o.ID, Work: o.Load, Migratable: o.Migratable})
	}
	g := lb.DistGlobal{NumPEs: n, Avg: total / float64(n), Max: slices.Max(work)}
	pes := make([]*lb.DistPE, n)
	heard := make([]map[int]bool, n) // PEs named in the messages each PE received
	sent := make([]int, n)
	for i := range pes {
		pes[i] = lb.NewDistPE(i, s.PEs[i], objs[i], g, cfg, 9)
		heard[i] = map[int]bool{}
	}
	inbox := make([][]lb.GossipMsg, n)
	for rounds := 0; ; rounds++ {
		require.Less(t, rounds, 100, "gossip does not end")
		next := make([][]lb.GossipMsg, n)
		count := 0
		for i, pe := range pes {
			for _, m := range inbox[i] {
				for _, info := range m.Info {
					heard[i][info.PE] = true
				}
			}
			for _, m := range pe.Gossip(inbox[i]) {
				require.Equal(t, i, m.From)
				next[m.To] = append(next[m.To], m)
				sent[i]++
				count++
			}
		}
		if count == 0 {
			break
		}
		inbox = next
	}
	budget := 2 * 2 * 6 // fanout × 2⌈log2 64⌉
	for i := range pes {
		require.LessOrEqual(t, sent[i], budget, "PE %d", i)
		for _, k := range pes[i].Known() {
			require.True(t, heard[i][k.PE] || k.PE == i, "PE %d knows of PE %d without a message", i, k.PE)
		}
	}
	for i := range 8 {
		require.NotEmpty(t, pes[i].Known(), "overloaded PE %d heard of nobody", i)
	}
	offered := 0
	for i, pe := range pes {
		for _, o := range pe.Transfer((g.Max + g.Avg) / 2) {
			require.True(t, heard[i][o.To], "PE %d offered object %d to PE %d, which it never heard of", i, o.Obj, o.To)
			offered++
		}
	}
	require.Positive(t, offered)
}
