package lb

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
)

// The centralized strategies, after Charm++'s TreeLB ones: each is a pure
// function of a Snapshot. What they share:
//
//   - A PE's load is its work (background plus its objects' loads)
//     divided by its speed (a speed of 0 or less counts as 1), as in
//     Snapshot.PELoads.
//   - Non-migratable objects and background load stay where they are.
//   - No object moves to an unavailable PE. Every strategy but Dummy
//     moves the migratable objects of unavailable PEs away (they are being
//     emptied); Distributed, only those with a load, and only if gossip
//     told their PE of somewhere to send them.
//   - With no available PE at all, nothing moves.
//   - Ties are broken by object ID and PE number, so a placement depends
//     only on the snapshot (and, for Random and Distributed, its Seed).

func init() {
	Register("greedy", func() Strategy { return Greedy{} })
	Register("greedyrefine", func() Strategy { return GreedyRefine{} })
	Register("refine", func() Strategy { return Refine{} })
	Register("rotate", func() Strategy { return Rotate{} })
	Register("random", func() Strategy { return Random{} })
	Register("dummy", func() Strategy { return Dummy{} })
	Register("comm", func() Strategy { return Comm{} })
}

// Defaults of the strategies' parameters (used when a field is 0).
const (
	// DefaultGreedyRefineTolerance: GreedyRefine keeps an object where it
	// is while that PE stays within 3 % of Greedy's maximum load.
	DefaultGreedyRefineTolerance = 1.03
	// DefaultRefineThreshold: Refine unloads the PEs more than 3 % above
	// the average.
	DefaultRefineThreshold = 0.03
	// DefaultCommTolerance: Comm places an object with its communication
	// partners while that PE stays within 5 % of the average.
	DefaultCommTolerance = 0.05
)

// Greedy places the migratable objects from scratch, heaviest first, each
// on the least-loaded available PE (Charm++'s GreedyLB). The result is
// within one object of the best: no PE ends above the average load plus
// the heaviest object's load on the slowest PE, unless its fixed load
// already is. Nearly every object moves.
type Greedy struct{}

func (Greedy) Name() string { return "greedy" }

func (Greedy) Place(s *Snapshot) (Placement, error) {
	if err := s.Check(); err != nil {
		return nil, err
	}
	p := current(s)
	avail := available(s)
	if len(avail) == 0 {
		return p, nil
	}
	speed := speeds(s)
	load := fixedLoads(s, speed)
	h := newPEHeap(load, avail)
	for _, o := range heaviestFirst(s) {
		pe := h.top()
		p[o.id] = pe
		load[pe] += o.load / speed[pe]
		h.fix(pe)
	}
	return p, nil
}

// GreedyRefine balances as well as Greedy, within Tolerance, with fewer
// migrations (Charm++'s GreedyRefineLB): it first computes Greedy's
// maximum load M, then takes the objects heaviest first and leaves each
// where it is if its PE stays at or below Tolerance × M, else puts it on
// the least-loaded PE (raising M if that PE ends above it).
type GreedyRefine struct {
	// Tolerance is the factor over Greedy's maximum load that a PE may
	// reach by keeping its objects; 0 means DefaultGreedyRefineTolerance.
	// 1 (Charm++'s default) keeps Greedy's balance and still saves
	// migrations.
	Tolerance float64
}

func (GreedyRefine) Name() string { return "greedyrefine" }

func (g GreedyRefine) Place(s *Snapshot) (Placement, error) {
	if err := s.Check(); err != nil {
		return nil, err
	}
	tol := g.Tolerance
	if tol <= 0 {
		tol = DefaultGreedyRefineTolerance
	}
	p := current(s)
	avail := available(s)
	if len(avail) == 0 {
		return p, nil
	}
	speed := speeds(s)
	objs := heaviestFirst(s)

	// Greedy's maximum load.
	load := fixedLoads(s, speed)
	h := newPEHeap(load, avail)
	for _, o := range objs {
		pe := h.top()
		load[pe] += o.load / speed[pe]
		h.fix(pe)
	}
	var m float64
	for _, pe := range avail {
		m = max(m, load[pe])
	}
	m *= tol

	load = fixedLoads(s, speed)
	h = newPEHeap(load, avail)
	for _, o := range objs {
		old := s.Objects[o.id].PE
		pe := old
		if !s.PEs[old].Available || load[old]+o.load/speed[old] > m {
			pe = h.top()
		}
		p[o.id] = pe
		load[pe] += o.load / speed[pe]
		h.fix(pe)
		m = max(m, load[pe])
	}
	return p, nil
}

// Refine moves a few objects off the overloaded PEs (Charm++'s RefineLB):
// with T = average × (1 + Threshold), it repeatedly takes the most
// loaded PE above T and moves one of its objects to the PE with the most
// room under T: the smallest object that brings the PE down to T if one
// fits there, else the largest that fits. It stops when no PE is above T
// or none of their objects fits anywhere. The maximum load never rises
// (except to empty unavailable PEs), and few objects move.
type Refine struct {
	// Threshold is how far above the average a PE may stay; 0 means
	// DefaultRefineThreshold.
	Threshold float64
}

func (Refine) Name() string { return "refine" }

func (r Refine) Place(s *Snapshot) (Placement, error) {
	if err := s.Check(); err != nil {
		return nil, err
	}
	thr := r.Threshold
	if thr <= 0 {
		thr = DefaultRefineThreshold
	}
	p := current(s)
	avail := available(s)
	if len(avail) == 0 {
		return p, nil
	}
	speed := speeds(s)
	objs := heaviestFirst(s)

	// Loads as they are, less the objects that must leave unavailable PEs.
	load := fixedLoads(s, speed)
	var evacuate []objLoad
	lists := make([][]objLoad, len(s.PEs)) // each PE's movable objects, heaviest first
	for _, o := range objs {
		pe := s.Objects[o.id].PE
		if !s.PEs[pe].Available {
			evacuate = append(evacuate, o)
			continue
		}
		load[pe] += o.load / speed[pe]
		lists[pe] = append(lists[pe], o)
	}
	if len(evacuate) > 0 {
		h := newPEHeap(load, avail)
		for _, o := range evacuate {
			pe := h.top()
			p[o.id] = pe
			load[pe] += o.load / speed[pe]
			h.fix(pe)
		}
	}

	var work, speedSum float64
	for _, pe := range avail {
		work += load[pe] * speed[pe]
		speedSum += speed[pe]
	}
	limit := work / speedSum * (1 + thr)

	// heavy: the PEs above the limit, most loaded first; roomy: every
	// available PE, the one that can take the most work first.
	heavyKey := make([]float64, len(s.PEs))
	roomKey := make([]float64, len(s.PEs))
	var over []int
	for _, pe := range avail {
		heavyKey[pe] = -load[pe]
		roomKey[pe] = -(limit - load[pe]) * speed[pe]
		if load[pe] > limit {
			over = append(over, pe)
		}
	}
	heavy := newPEHeap(heavyKey, over)
	roomy := newPEHeap(roomKey, avail)
	for heavy.len() > 0 {
		from, to := heavy.top(), roomy.top()
		room := (limit - load[to]) * speed[to]
		if room <= 0 {
			break // every PE is at the limit
		}
		excess := (load[from] - limit) * speed[from]
		list := lists[from]
		fit := sort.Search(len(list), func(i int) bool { return list[i].load <= room })
		enough := sort.Search(len(list), func(i int) bool { return list[i].load < excess })
		pick := fit
		if enough > fit {
			pick = enough - 1
		}
		if pick == len(list) || list[pick].load == 0 {
			heavy.remove(from) // nothing of its fits anywhere
			continue
		}
		o := list[pick]
		lists[from] = removeAt(list, pick)
		p[o.id] = to
		load[from] -= o.load / speed[from]
		load[to] += o.load / speed[to]
		roomKey[from] = -(limit - load[from]) * speed[from]
		roomKey[to] = -(limit - load[to]) * speed[to]
		roomy.fix(from)
		roomy.fix(to)
		if load[from] <= limit {
			heavy.remove(from)
		} else {
			heavyKey[from] = -load[from]
			heavy.fix(from)
		}
	}
	return p, nil
}

// Rotate moves every migratable object to the next available PE after its
// own, cyclically: (PE+1) mod P when every PE is available. It is a test
// of migration, not a balancer.
type Rotate struct{}

func (Rotate) Name() string { return "rotate" }

func (Rotate) Place(s *Snapshot) (Placement, error) {
	if err := s.Check(); err != nil {
		return nil, err
	}
	p := current(s)
	n := len(s.PEs)
	next := make([]int, n) // the first available PE after each, cyclically
	nxt := -1
	for i := 2*n - 1; i >= 0; i-- {
		pe := i % n
		if i < n {
			next[pe] = nxt
		}
		if s.PEs[pe].Available {
			nxt = pe
		}
	}
	for i, o := range s.Objects {
		if o.Migratable && next[o.PE] >= 0 {
			p[i] = next[o.PE]
		}
	}
	return p, nil
}

// Random moves every migratable object to an available PE drawn at
// random; the draw depends only on Snapshot.Seed.
type Random struct{}

func (Random) Name() string { return "random" }

func (Random) Place(s *Snapshot) (Placement, error) {
	if err := s.Check(); err != nil {
		return nil, err
	}
	p := current(s)
	avail := available(s)
	if len(avail) == 0 {
		return p, nil
	}
	rng := rand.New(rand.NewPCG(s.Seed, 0x52616e646f6d)) // "Random"
	for i, o := range s.Objects {
		if o.Migratable {
			p[i] = avail[rng.IntN(len(avail))]
		}
	}
	return p, nil
}

// Dummy moves nothing (Charm++'s DummyLB): a step with it measures the
// cost of the step itself.
type Dummy struct{}

func (Dummy) Name() string { return "dummy" }

func (Dummy) Place(s *Snapshot) (Placement, error) {
	if err := s.Check(); err != nil {
		return nil, err
	}
	return current(s), nil
}

// commMsgBytes is what Comm counts per message on top of its bytes: the
// envelope, so that many small messages weigh more than their payload.
const commMsgBytes = 64

// Comm is Greedy that keeps communicating objects together. It takes the
// migratable objects heaviest first, like Greedy. For each it sums, per
// PE, the communication (bytes + 64 per message, both directions) with the
// objects already placed there (non-migratable objects count from the
// start), and puts it on the PE it exchanges the most with, provided that
// PE's load then stays within the cap, average × (1 + Tolerance); ties go
// to the less loaded PE. An object with no such PE (no placed partner, or
// every partner's PE would go over the cap) goes to the least-loaded PE,
// as in Greedy. So load decides up to the cap and communication below it;
// without a communication graph Comm places exactly as Greedy does. The
// rule is greedy on bytes too: any communication with a placed object,
// however little, draws an object to that PE while it is under the cap.
type Comm struct {
	// Tolerance is how far above the average a PE may go to host an
	// object next to its partners; 0 means DefaultCommTolerance.
	Tolerance float64
}

func (Comm) Name() string { return "comm" }

func (c Comm) Place(s *Snapshot) (Placement, error) {
	if err := s.Check(); err != nil {
		return nil, err
	}
	tol := c.Tolerance
	if tol <= 0 {
		tol = DefaultCommTolerance
	}
	p := current(s)
	avail := available(s)
	if len(avail) == 0 {
		return p, nil
	}
	speed := speeds(s)
	objs := heaviestFirst(s)
	load := fixedLoads(s, speed)

	var work, speedSum float64
	for _, pe := range avail {
		work += load[pe] * speed[pe]
		speedSum += speed[pe]
	}
	for _, o := range objs {
		work += o.load
	}
	limit := work / speedSum * (1 + tol)

	// The graph as adjacency lists (compressed rows), both directions.
	start := make([]int, len(s.Objects)+1)
	for _, e := range s.Comm {
		if e.From != e.To {
			start[e.From+1]++
			start[e.To+1]++
		}
	}
	for i := range s.Objects {
		start[i+1] += start[i]
	}
	type arc struct {
		to int
		w  float64
	}
	arcs := make([]arc, start[len(s.Objects)])
	fill := slices.Clone(start[:len(s.Objects)])
	for _, e := range s.Comm {
		if e.From == e.To {
			continue
		}
		w := float64(e.Bytes) + commMsgBytes*float64(e.Msgs)
		arcs[fill[e.From]] = arc{e.To, w}
		fill[e.From]++
		arcs[fill[e.To]] = arc{e.From, w}
		fill[e.To]++
	}

	placed := make([]bool, len(s.Objects))
	for i, o := range s.Objects {
		placed[i] = !o.Migratable
	}
	bytes := make([]float64, len(s.PEs)) // to the current object, per PE
	var touched []int
	h := newPEHeap(load, avail)
	for _, o := range objs {
		touched = touched[:0]
		for _, a := range arcs[start[o.id]:start[o.id+1]] {
			if !placed[a.to] {
				continue
			}
			pe := p[a.to]
			if bytes[pe] == 0 {
				touched = append(touched, pe)
			}
			bytes[pe] += a.w
		}
		best := -1
		for _, pe := range touched {
			if !s.PEs[pe].Available || bytes[pe] <= 0 || load[pe]+o.load/speed[pe] > limit {
				continue
			}
			if best < 0 || bytes[pe] > bytes[best] ||
				bytes[pe] == bytes[best] && (load[pe] < load[best] || load[pe] == load[best] && pe < best) {
				best = pe
			}
		}
		for _, pe := range touched {
			bytes[pe] = 0
		}
		if best < 0 {
			best = h.top()
		}
		p[o.id] = best
		placed[o.id] = true
		load[best] += o.load / speed[best]
		h.fix(best)
	}
	return p, nil
}

// ---- helpers ----

// removeAt removes list[i], keeping the order, by moving the shorter side
// (Refine mostly takes objects near the front).
func removeAt(list []objLoad, i int) []objLoad {
	if i < len(list)/2 {
		copy(list[1:i+1], list[:i])
		return list[1:]
	}
	return slices.Delete(list, i, i+1)
}

// objLoad is a migratable object in the order strategies take them.
type objLoad struct {
	load float64
	id   int
}

// heaviestFirst returns the migratable objects, heaviest first; equal
// loads in ID order.
func heaviestFirst(s *Snapshot) []objLoad {
	objs := make([]objLoad, 0, len(s.Objects))
	for i, o := range s.Objects {
		if o.Migratable {
			objs = append(objs, objLoad{o.Load, i})
		}
	}
	if len(objs) >= radixMin {
		radixHeaviestFirst(objs)
		return objs
	}
	slices.SortFunc(objs, func(a, b objLoad) int {
		if c := cmp.Compare(b.load, a.load); c != 0 {
			return c
		}
		return a.id - b.id
	})
	return objs
}

// radixMin is the number of objects from which a radix sort beats a
// comparison sort.
const radixMin = 2048

// radixHeaviestFirst sorts objects by load, heaviest first, equal loads
// keeping their order. The loads are not negative, and the bits of
// non-negative floats order as the numbers do: a stable radix sort on
// them, a byte at a time from the lowest, takes 8 linear passes (fewer
// when a byte is the same in every key), where a comparison sort, most of
// Greedy's time, takes n log n.
func radixHeaviestFirst(objs []objLoad) {
	n := len(objs)
	keys := make([]uint64, n)
	for i, o := range objs {
		if o.load > 0 { // not 0, -0 or NaN
			keys[i] = ^math.Float64bits(o.load)
		} else {
			keys[i] = math.MaxUint64
		}
	}
	keys2 := make([]uint64, n)
	objs2 := make([]objLoad, n)
	src, dst := objs, objs2
	for shift := 0; shift < 64; shift += 8 {
		var count [256]int
		for _, k := range keys {
			count[byte(k>>shift)]++
		}
		if count[byte(keys[0]>>shift)] == n {
			continue
		}
		at := 0
		for b, c := range count {
			count[b] = at
			at += c
		}
		for i, k := range keys {
			b := byte(k >> shift)
			keys2[count[b]] = k
			dst[count[b]] = src[i]
			count[b]++
		}
		keys, keys2 = keys2, keys
		src, dst = dst, src
	}
	if &src[0] != &objs[0] {
		copy(objs, src)
	}
}

// current is the placement that moves nothing.
func current(s *Snapshot) Placement {
	p := make(Placement, len(s.Objects))
	for i, o := range s.Objects {
		p[i] = o.PE
	}
	return p
}

// available lists the PEs that may receive objects.
func available(s *Snapshot) []int {
	var out []int
	for i, pe := range s.PEs {
		if pe.Available {
			out = append(out, i)
		}
	}
	return out
}

// speeds returns each PE's speed, 1 where the snapshot gives none.
func speeds(s *Snapshot) []float64 {
	out := make([]float64, len(s.PEs))
	for i, pe := range s.PEs {
		out[i] = 1
		if pe.Speed > 0 {
			out[i] = pe.Speed
		}
	}
	return out
}

// fixedLoads returns each PE's load that no strategy moves: background
// and non-migratable objects, divided by the speed.
func fixedLoads(s *Snapshot, speed []float64) []float64 {
	load := make([]float64, len(s.PEs))
	for i, pe := range s.PEs {
		load[i] = pe.Background
	}
	for _, o := range s.Objects {
		if !o.Migratable {
			load[o.PE] += o.Load
		}
	}
	for i := range load {
		load[i] /= speed[i]
	}
	return load
}

// peHeap is a min-heap of PEs by key (ties: the lower PE), which knows
// where each PE is so that a changed key is fixed in O(log P). The owner
// changes key[pe], then calls fix(pe).
type peHeap struct {
	key []float64 // by PE
	pes []int     // the heap
	pos []int     // by PE: its index in pes, -1 if not there
}

func newPEHeap(key []float64, pes []int) *peHeap {
	h := &peHeap{key: key, pes: slices.Clone(pes), pos: make([]int, len(key))}
	for i := range h.pos {
		h.pos[i] = -1
	}
	for i, pe := range h.pes {
		h.pos[pe] = i
	}
	for i := len(h.pes)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
	return h
}

func (h *peHeap) len() int { return len(h.pes) }
func (h *peHeap) top() int { return h.pes[0] }

func (h *peHeap) less(i, j int) bool {
	a, b := h.pes[i], h.pes[j]
	return h.key[a] < h.key[b] || h.key[a] == h.key[b] && a < b
}

func (h *peHeap) swap(i, j int) {
	h.pes[i], h.pes[j] = h.pes[j], h.pes[i]
	h.pos[h.pes[i]] = i
	h.pos[h.pes[j]] = j
}

func (h *peHeap) up(i int) {
	for i > 0 {
		parent := (i - 1) / 2
		if !h.less(i, parent) {
			return
		}
		h.swap(i, parent)
		i = parent
	}
}

func (h *peHeap) down(i int) {
	n := len(h.pes)
	for {
		c := 2*i + 1
		if c >= n {
			return
		}
		if c+1 < n && h.less(c+1, c) {
			c++
		}
		if !h.less(c, i) {
			return
		}
		h.swap(i, c)
		i = c
	}
}

func (h *peHeap) fix(pe int) {
	i := h.pos[pe]
	if i < 0 {
		return
	}
	if i > 0 && h.less(i, (i-1)/2) {
		h.up(i)
	} else {
		h.down(i)
	}
}

func (h *peHeap) remove(pe int) {
	i := h.pos[pe]
	if i < 0 {
		return
	}
	last := len(h.pes) - 1
	h.swap(i, last)
	h.pes = h.pes[:last]
	h.pos[pe] = -1
	if i < last {
		moved := h.pes[i]
		h.up(i)
		h.down(h.pos[moved])
	}
}
