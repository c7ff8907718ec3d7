package tram

import (
	"math/rand"
	"reflect"
	"runtime"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

func newAgg(t *testing.T, topo *Topology, pe int, s Sizing) *Aggregator[int] {
	t.Helper()
	a, err := NewAggregator(Config[int]{Topology: topo, PE: pe, Sizing: s, Size: func(int) int { return 8 }})
	require.NoError(t, err)
	return a
}

func insert(t *testing.T, a *Aggregator[int], item, dest int) Output[int] {
	t.Helper()
	out, err := a.Insert(item, dest)
	require.NoError(t, err)
	return out
}

func TestT05_OneBufferPerPeer(t *testing.T) {
	topo := mustTopology(t, 2, 3, 4)
	a := newAgg(t, topo, 0, Sizing{BufferItems: 1000})
	require.Equal(t, 6, a.NumBuffers())
	// Send to every other PE: items land only in peer buffers, never more than Σ(s_d − 1) of them.
	for dest := 1; dest < topo.NumPEs(); dest++ {
		require.True(t, insert(t, a, dest, dest).Empty())
	}
	total := 0
	for pe := range topo.NumPEs() {
		if n := a.BufferLen(pe); n > 0 {
			require.True(t, topo.IsPeer(0, pe), "buffer for non-peer %d", pe)
			total += n
		}
	}
	require.Equal(t, 23, total)
	flushes := a.FlushAll()
	require.Len(t, flushes, 6)
	for _, f := range flushes {
		require.True(t, topo.IsPeer(0, f.To))
	}
}

func TestT06_FullBufferIsSent(t *testing.T) {
	topo := mustTopology(t, 4)
	a := newAgg(t, topo, 0, Sizing{BufferItems: 3})
	for i := range 2 {
		require.True(t, insert(t, a, i, 2).Empty())
	}
	out := insert(t, a, 2, 2)
	require.Equal(t, []Flush[int]{{To: 2, Items: []Envelope[int]{{2, 0}, {2, 1}, {2, 2}}}}, out.Flushes)
	require.Zero(t, a.BufferLen(2))
	require.Equal(t, 1, a.Stats().FullFlushes)
	require.Zero(t, a.Stats().Buffered)
}

func TestT07_FullestBufferSentAtTotalCapacity(t *testing.T) {
	topo := mustTopology(t, 5) // 4 peers; buffers of 10 never fill here, the capacity of 5 is reached first
	a := newAgg(t, topo, 0, Sizing{BufferItems: 10, TotalCapacity: 5})
	for _, dest := range []int{1, 3, 3, 4} {
		require.True(t, insert(t, a, dest, dest).Empty())
	}
	out := insert(t, a, 9, 1) // fifth item: buffers 1:2, 3:2, 4:1 — tie, lowest slot wins
	require.Len(t, out.Flushes, 1)
	require.Equal(t, 1, out.Flushes[0].To)
	require.Len(t, out.Flushes[0].Items, 2)
	require.Equal(t, 3, a.Stats().Buffered)

	require.True(t, insert(t, a, 0, 4).Empty())
	out = insert(t, a, 0, 2) // buffers 2:1, 3:2, 4:2
	require.Len(t, out.Flushes, 1)
	require.Equal(t, 3, out.Flushes[0].To)
	require.Equal(t, 2, a.Stats().FullestSent)
}

func TestT08_IntermediatePESortsAndDeliversLocal(t *testing.T) {
	topo := mustTopology(t, 2, 3) // PE 1 = (0, 1)
	a := newAgg(t, topo, 1, Sizing{BufferItems: 10})
	msg := []Envelope[int]{{Dest: 1, Item: 10}, {Dest: 4, Item: 11}, {Dest: 5, Item: 12}, {Dest: 1, Item: 13}, {Dest: 2, Item: 14}}
	out, err := a.Route(msg)
	require.NoError(t, err)
	require.Equal(t, []Envelope[int]{{1, 10}, {1, 13}}, out.Local)
	require.Empty(t, out.Flushes)
	require.Equal(t, 1, a.BufferLen(4)) // 4 = (1, 1): a peer
	require.Equal(t, 2, a.BufferLen(2)) // 2 = (0, 2): a peer, and the hop to 5 = (1, 2)
	require.Zero(t, a.BufferLen(5))     // not a peer: no buffer
	require.Equal(t, 3, a.Stats().Buffered)
	require.Equal(t, 2, a.Stats().Local)

	// An item inserted for this PE is delivered at once too.
	out = insert(t, a, 99, 1)
	require.Equal(t, []Envelope[int]{{1, 99}}, out.Local)
}

func TestT11_SizingForms(t *testing.T) {
	topo := mustTopology(t, 2, 3, 4) // 6 peers
	tests := []struct {
		name string
		in   Sizing
		want Sizing
	}{
		{"per-peer buffer size", Sizing{BufferItems: 4}, Sizing{BufferItems: 4, TotalCapacity: 24}},
		{"total capacity", Sizing{TotalCapacity: 60}, Sizing{BufferItems: 10, TotalCapacity: 60}},
		{"capacity below peers", Sizing{TotalCapacity: 3}, Sizing{BufferItems: 1, TotalCapacity: 3}},
		{"both", Sizing{BufferItems: 5, TotalCapacity: 12}, Sizing{BufferItems: 5, TotalCapacity: 12}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, newAgg(t, topo, 0, tc.in).Sizing())
		})
	}
	bad := []struct {
		in   Sizing
		want string
	}{
		{Sizing{}, "sizing sets neither BufferItems nor TotalCapacity"},
		{Sizing{BufferItems: -1}, "sizing has -1 items per buffer"},
		{Sizing{TotalCapacity: -5, BufferItems: 2}, "sizing has total capacity -5"},
	}
	for _, tc := range bad {
		require.ErrorContains(t, tc.in.Validate(), tc.want)
		_, err := NewAggregator(Config[int]{Topology: topo, Sizing: tc.in})
		require.ErrorContains(t, err, tc.want)
	}
	// A single PE has no peers: sizing still resolves, and everything is local.
	one := newAgg(t, mustTopology(t, 1), 0, Sizing{TotalCapacity: 7})
	require.Equal(t, Sizing{BufferItems: 7, TotalCapacity: 7}, one.Sizing())
	require.Len(t, insert(t, one, 1, 0).Local, 1)
}

func TestDirectSendAboveCutoff(t *testing.T) {
	topo := mustTopology(t, 2, 2)
	a, err := NewAggregator(Config[string]{Topology: topo, PE: 0, Sizing: Sizing{BufferItems: 4},
		Size: func(s string) int { return len(s) }, DirectCutoff: 5})
	require.NoError(t, err)
	out, err := a.Insert("small", 3)
	require.NoError(t, err)
	require.True(t, out.Empty())
	out, err = a.Insert("much too large", 3)
	require.NoError(t, err)
	require.Equal(t, []Envelope[string]{{3, "much too large"}}, out.Direct)
	s := a.Stats()
	require.Equal(t, Stats{Buffered: 1, BufferedBytes: 5, Inserted: 2, Direct: 1}, s)
}

func TestFlushAllAndCounters(t *testing.T) {
	topo := mustTopology(t, 3, 3)
	a := newAgg(t, topo, 4, Sizing{BufferItems: 100})
	for dest := range topo.NumPEs() {
		insert(t, a, dest, dest)
	}
	s := a.Stats()
	require.Equal(t, 8, s.Buffered)
	require.Equal(t, 64, s.BufferedBytes)
	require.Equal(t, 1, s.Local)
	flushes := a.FlushAll()
	// PE 4 = (1, 1). Items for the other column go first to the peer in their column (the last
	// dimension is fixed first), so peers 3 and 5 carry three items each, peers 1 and 7 one each.
	sizes := map[int]int{}
	for _, f := range flushes {
		sizes[f.To] = len(f.Items)
	}
	require.Equal(t, map[int]int{1: 1, 3: 3, 5: 3, 7: 1}, sizes)
	require.Zero(t, a.Stats().Buffered)
	require.Zero(t, a.Stats().BufferedBytes)
	require.Empty(t, a.FlushAll())
}

func TestAggregatorBadInput(t *testing.T) {
	topo := mustTopology(t, 2, 3)
	_, err := NewAggregator(Config[int]{Sizing: Sizing{BufferItems: 1}})
	require.ErrorContains(t, err, "no topology")
	_, err = NewAggregator(Config[int]{Topology: topo, PE: 6, Sizing: Sizing{BufferItems: 1}})
	require.ErrorContains(t, err, "aggregator for PE 6 outside topology 2×3 (6 PEs)")
	_, err = NewAggregator(Config[int]{Topology: topo, Sizing: Sizing{BufferItems: 1}, DirectCutoff: -1})
	require.ErrorContains(t, err, "cutoff -1")

	a := newAgg(t, topo, 0, Sizing{BufferItems: 2})
	_, err = a.Insert(1, 6)
	require.ErrorContains(t, err, "PE 0: insert for PE 6 outside topology 2×3")
	_, err = a.Insert(1, -1)
	require.Error(t, err)
	// Corrupt envelopes in a received message are dropped; the good ones are still routed.
	out, err := a.Route([]Envelope[int]{{Dest: 0, Item: 1}, {Dest: 42, Item: 2}, {Dest: -3, Item: 3}})
	require.ErrorContains(t, err, "received item for PE 42 outside topology")
	require.Len(t, out.Local, 1)
	require.Equal(t, 1, a.Stats().Routed)
}

// TestNextHopTableAndComputedAgree: an Aggregator looks an item's buffer
// up in a table of next hops, or on grids too large for one computes it;
// both send every item to its next hop (T03), and the byte counts and the
// recycled buffers keep the counters right.
func TestNextHopTableAndComputedAgree(t *testing.T) {
	for _, dims := range [][]int{{3, 4, 5}, {512, 256}} { // 60 PEs: a table; 131,072: computed
		topo := mustTopology(t, dims...)
		pe := topo.NumPEs() / 3
		a := newAgg(t, topo, pe, Sizing{BufferItems: 2})
		require.Equal(t, topo.NumPEs() <= maxHopTable, a.hop != nil, "%v", dims)
		for _, dest := range []int{0, 1, topo.NumPEs() - 1, pe + 1, pe - 1, pe + dims[len(dims)-1]} {
			require.True(t, insert(t, a, dest, dest).Empty(), "first item for %d", dest)
			require.Equal(t, 8, a.Stats().BufferedBytes)
			out := insert(t, a, dest, dest)
			require.Len(t, out.Flushes, 1, "second item for %d fills its buffer", dest)
			f := out.Flushes[0]
			require.Equal(t, topo.NextHop(pe, dest), f.To, "next hop of %d", dest)
			require.Equal(t, []Envelope[int]{{dest, dest}, {dest, dest}}, f.Items)
			require.Zero(t, a.Stats().BufferedBytes)
			a.Recycle(f.Items)
		}
	}
}

// TestFastPathAgreesWithGeneral: items of a fixed size without a cutoff
// take add's fast path (no Size call, no byte counts kept); on every grid
// and sizing it must flush the same buffers, in the same order, with the
// same counters as the general path, and RouteSplit must route and
// deliver as Route does (T06, T07, T08).
func TestFastPathAgreesWithGeneral(t *testing.T) {
	tests := []struct {
		dims []int
		pe   int
		s    Sizing
	}{
		{[]int{4}, 0, Sizing{BufferItems: 3}},
		{[]int{2, 3, 4}, 7, Sizing{BufferItems: 5}},
		{[]int{8, 8}, 63, Sizing{BufferItems: 100, TotalCapacity: 9}}, // T07 before T06
		{[]int{3, 1, 5}, 4, Sizing{TotalCapacity: 20}},
	}
	for _, tt := range tests {
		t.Run(shape(tt.dims), func(t *testing.T) {
			topo := mustTopology(t, tt.dims...)
			general := newAgg(t, topo, tt.pe, tt.s)
			fast := newAgg(t, topo, tt.pe, tt.s)
			fast.setFixedSize(8)
			require.False(t, general.fast)
			require.True(t, fast.fast)
			r := rand.New(rand.NewSource(int64(tt.pe)))
			var gotG, gotF Output[int]
			for i := range 500 {
				dest := r.Intn(topo.NumPEs())
				require.NoError(t, general.InsertTo(i, dest, &gotG))
				require.NoError(t, fast.InsertTo(i, dest, &gotF))
				require.Equal(t, general.Stats(), fast.Stats(), "after item %d", i)
			}
			require.Equal(t, gotG, gotF)
			require.NotEmpty(t, gotF.Flushes)

			// A received message: some items here, some passing on, one corrupt.
			var msg []Envelope[int]
			for i := range 300 {
				msg = append(msg, Envelope[int]{Dest: r.Intn(topo.NumPEs()), Item: 1000 + i})
			}
			msg[150].Dest = topo.NumPEs()
			want, errG := general.Route(append([]Envelope[int](nil), msg...))
			var out Output[int]
			local, errF := fast.RouteSplit(msg, &out)
			require.ErrorContains(t, errG, "outside topology")
			require.Equal(t, errG, errF)
			require.Equal(t, want.Local, local)
			require.Equal(t, want.Flushes, out.Flushes)
			require.Equal(t, general.Stats(), fast.Stats())
			require.Equal(t, general.FlushAll(), fast.FlushAll())
		})
	}
}

func TestPointerFree(t *testing.T) {
	type pair struct {
		A int32
		B [3]float64
	}
	type named struct {
		Name string
		N    int
	}
	tests := []struct {
		v    any
		want bool
	}{
		{[8]byte{}, true}, {uint64(0), true}, {pair{}, true}, {true, true}, {[0]*int{}, true},
		{"", false}, {named{}, false}, {[]int{}, false}, {[2]*int{}, false}, {map[int]int{}, false},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, plainData(reflect.TypeOf(tt.v), false), "%T", tt.v)
	}
	// Recycled buffers of pointer-free items are not cleared; others are.
	topo := mustTopology(t, 2)
	strs, err := NewAggregator(Config[string]{Topology: topo, Sizing: Sizing{BufferItems: 1}})
	require.NoError(t, err)
	buf := []Envelope[string]{{Dest: 1, Item: "kept alive"}}
	strs.Recycle(buf)
	require.Equal(t, Envelope[string]{}, buf[:1][0], "a recycled string buffer is cleared")
}

// TestRecycledBuffersOutliveCollections: an Aggregator keeps up to one
// recycled buffer per peer for its own later buffers, which garbage
// collections between steps do not take (the process's pool loses its
// contents to two of them); more go to the pool, and a kept buffer
// smaller than the buffers have become since is not used.
func TestRecycledBuffersOutliveCollections(t *testing.T) {
	topo := mustTopology(t, 3, 3) // 4 peers per PE
	a := newAgg(t, topo, 0, Sizing{BufferItems: 4})
	require.Equal(t, 4, a.NumBuffers())
	var kept [][]Envelope[int]
	for range a.NumBuffers() + 2 {
		buf := make([]Envelope[int], 4)
		kept = append(kept, buf)
		a.Recycle(buf)
	}
	require.Len(t, a.free, a.NumBuffers(), "one kept per peer, the rest go to the pool")
	runtime.GC()
	runtime.GC()
	for i := a.NumBuffers() - 1; i >= 0; i-- {
		buf := a.newBuffer()
		require.Zero(t, len(buf))
		require.Same(t, &kept[i][0], &buf[:1][0], "buffer %d is the one recycled", i)
	}
	require.Empty(t, a.free)

	a.Recycle(make([]Envelope[int], 4))
	a.SetBufferItems(8)
	require.GreaterOrEqual(t, cap(a.newBuffer()), 8, "a kept buffer of 4 items is too small for 8")
	require.Empty(t, a.free)
}

// TestRecycledLastHopBuffers: the last-hop buffers of a Bare Aggregator
// are recycled apart from the envelope buffers: a received Final part
// handed to RecycleFinal is the next last-hop buffer, and never an
// envelope buffer; strings are cleared before reuse.
func TestRecycledLastHopBuffers(t *testing.T) {
	topo := mustTopology(t, 4) // 1-D: every peer is a last hop
	a, err := NewAggregator(Config[string]{Topology: topo, PE: 0, Sizing: Sizing{BufferItems: 2}, Bare: true})
	require.NoError(t, err)
	out, err := a.Insert("x", 1)
	require.NoError(t, err)
	require.Empty(t, out.Flushes)
	out, err = a.Insert("y", 1)
	require.NoError(t, err)
	require.Len(t, out.Flushes, 1)
	f := out.Flushes[0]
	require.Equal(t, Flush[string]{To: 1, Final: []string{"x", "y"}}, f)

	a.RecycleFinal(f.Final)
	require.Len(t, a.finFree, 1)
	require.Empty(t, a.free, "a last-hop buffer is not an envelope buffer")
	require.Equal(t, []string{"", ""}, f.Final[:2], "items are cleared before reuse")
	out, err = a.Insert("z", 2)
	require.NoError(t, err)
	require.Empty(t, out.Flushes)
	require.Same(t, &f.Final[0], &a.fin[mustSlot(t, a, 2)][0], "the recycled buffer is reused")
}

func mustSlot[T any](t *testing.T, a *Aggregator[T], peer int) int {
	t.Helper()
	s, ok := a.peers.Slot(peer)
	require.True(t, ok, "%d is not a peer", peer)
	return s
}

// TestBufferGrowsOnceToItsSize: a new buffer starts with firstCap items
// of room (or a recycled one's); one that fills it grows to the buffer size in
// one step (not by append's steps, each copying the items), and is sent
// full with every item in order. Both placements (the fast one without
// a Size function, and put) and both kinds of buffer (envelopes, bare
// last-hop items) are checked.
func TestBufferGrowsOnceToItsSize(t *testing.T) {
	const size = 3*firstCap + 5
	topo := mustTopology(t, 2)
	for _, tt := range []struct {
		name string
		cfg  Config[int]
	}{
		{"fast", Config[int]{}},
		{"fast bare", Config[int]{Bare: true}},
		{"put", Config[int]{Size: func(int) int { return 8 }}},
		{"put bare", Config[int]{Size: func(int) int { return 8 }, Bare: true}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := tt.cfg
			cfg.Topology, cfg.PE, cfg.Sizing = topo, 0, Sizing{BufferItems: size}
			a, err := NewAggregator(cfg)
			require.NoError(t, err)
			slot := mustSlot(t, a, 1)
			capOf := func() int { return cap(a.bufs[slot]) + cap(a.fin[slot]) }
			var caps []int
			for i := range size - 1 {
				out, err := a.Insert(i, 1)
				require.NoError(t, err)
				require.Empty(t, out.Flushes, "item %d", i)
				if c := capOf(); len(caps) == 0 || caps[len(caps)-1] != c {
					caps = append(caps, c)
				}
			}
			// (The first may be a larger buffer from the process's pool.)
			require.LessOrEqual(t, len(caps), 2, "capacities seen: %v", caps)
			require.GreaterOrEqual(t, caps[0], firstCap, "capacities seen: %v", caps)
			require.GreaterOrEqual(t, caps[len(caps)-1], size, "capacities seen: %v", caps)
			out, err := a.Insert(size-1, 1)
			require.NoError(t, err)
			require.Len(t, out.Flushes, 1)
			f := out.Flushes[0]
			require.Equal(t, size, f.Len())
			for i := range size {
				if cfg.Bare {
					require.Equal(t, i, f.Final[i])
				} else {
					require.Equal(t, Envelope[int]{Dest: 1, Item: i}, f.Items[i])
				}
			}
		})
	}
}

// TestSentBuffersAreNotReusedUntilRecycled: a buffer handed over in a
// Flush belongs to its receiver until it is recycled: the buffers made
// afterwards (new, grown to the buffer size, taken from the free list or
// the process's pool) never share its memory, and its items stay as sent
// while the sender goes on filling and sending, whatever the buffer
// sizes. A buffer shared too early would change items under a receiver
// still reading them, a silent error.
func TestSentBuffersAreNotReusedUntilRecycled(t *testing.T) {
	for _, bare := range []bool{false, true} {
		for _, size := range []int{3, 512, firstCap + 7} {
			topo := mustTopology(t, 3, 2) // envelopes and bare items
			a, err := NewAggregator(Config[[4]int]{Topology: topo, PE: 0, Sizing: Sizing{BufferItems: size}, Bare: bare})
			require.NoError(t, err)
			type held struct {
				f     Flush[[4]int]
				items [][4]int // a copy of what was sent
			}
			var kept []held
			seq := 0
			for round := range 6 {
				for range 3 * size {
					seq++
					dest := 1 + seq%5
					out, err := a.Insert([4]int{seq, dest, round, -seq}, dest)
					require.NoError(t, err)
					for _, f := range out.Flushes {
						var c [][4]int
						for _, e := range f.Items {
							c = append(c, e.Item)
						}
						c = append(c, f.Final...)
						kept = append(kept, held{f, c})
					}
				}
				// Half of the rounds recycle the oldest messages, as
				// receivers that are done with them would.
				if round%2 == 1 {
					for _, h := range kept[:len(kept)/2] {
						a.Recycle(h.f.Items)
						a.RecycleFinal(h.f.Final)
					}
					kept = kept[len(kept)/2:]
				}
				for i, h := range kept {
					var now [][4]int
					for _, e := range h.f.Items {
						now = append(now, e.Item)
					}
					now = append(now, h.f.Final...)
					require.Equal(t, h.items, now, "bare %v size %d round %d: message %d changed while its receiver holds it", bare, size, round, i)
				}
			}
			// No buffer of the aggregator shares an array with a message held.
			var mine []unsafe.Pointer
			for s := range a.bufs {
				if cap(a.bufs[s]) > 0 {
					mine = append(mine, unsafe.Pointer(unsafe.SliceData(a.bufs[s][:1])))
				}
				if cap(a.fin[s]) > 0 {
					mine = append(mine, unsafe.Pointer(unsafe.SliceData(a.fin[s][:1])))
				}
			}
			for _, h := range kept {
				for _, arr := range []unsafe.Pointer{unsafe.Pointer(unsafe.SliceData(h.f.Items)), unsafe.Pointer(unsafe.SliceData(h.f.Final))} {
					if arr != nil {
						require.NotContains(t, mine, arr, "bare %v size %d: a held message's array is a buffer again", bare, size)
					}
				}
			}
		}
	}
}
