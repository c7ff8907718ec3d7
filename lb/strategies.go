package lb

import (
	"cmp"
	"math"
	"slices"
)

// The centralized strategies, after Charm++'s TreeLB ones: each is a pure
// function of a Snapshot. What they share:
//
//   - A PE's load is its work (background plus its objects' loads)
//     divided by its speed, as in Snapshot.PELoads. Snapshot.Check, which
//     every strategy runs first, refuses loads that are negative, NaN or
//     infinite and speeds that are not above 0.
//   - Non-migratable objects and background load stay where they are.
//   - No object moves to an unavailable PE. Every strategy but Dummy
//     moves the migratable objects of unavailable PEs away (they are being
//     emptied); Distributed, only those with a load, and only if gossip
//     told their PE of somewhere to send them.
//   - With no available PE at all, nothing moves.
//   - Ties are broken by object ID and PE number, so a placement depends
//     only on the snapshot (and, for Random and Distributed, its Seed).
//
// The families: Greedy, GreedyRefine and Comm place objects heaviest
// first on the least-loaded PE (strategy_greedy.go); Refine moves a few
// off the overloaded PEs (strategy_refine.go); Rotate, Random and Dummy
// do not balance (strategy_simple.go); Distributed runs between the PEs
// (distributed.go). What they start from, a plan, is below.

func init() {
	Register("greedy", func() Strategy { return Greedy{} })
	Register("greedyrefine", func() Strategy { return GreedyRefine{} })
	Register("refine", func() Strategy { return Refine{} })
	Register("rotate", func() Strategy { return Rotate{} })
	Register("random", func() Strategy { return Random{} })
	Register("dummy", func() Strategy { return Dummy{} })
	Register("comm", func() Strategy { return Comm{} })
}

// orDefault is a strategy's parameter v, or def where v is left at 0 (or
// below).
func orDefault[T int | float64](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// plan is a placement under construction with the loads it gives: what a
// strategy starts from.
type plan struct {
	s     *Snapshot
	p     Placement // starts as the current placement, which moves nothing
	avail []int     // the PEs that may receive objects
	speed []float64 // by PE
	// load is by PE: what stays there (background and non-migratable
	// objects), plus the objects added there, over the PE's speed.
	load  []float64
	least *peHeap // avail by load, once orderByLoad has been called
}

// withPlan checks s, makes its plan (every object where it is, the load
// that stays counted) and, unless no PE is available, lets place change
// it; it returns the plan's placement.
func withPlan(s *Snapshot, place func(*plan)) (Placement, error) {
	if err := s.Check(); err != nil {
		return nil, err
	}
	pl := &plan{s: s, p: make(Placement, len(s.Objects)), speed: make([]float64, len(s.PEs)), load: make([]float64, len(s.PEs))}
	for i, pe := range s.PEs {
		if pe.Available {
			pl.avail = append(pl.avail, i)
		}
		pl.speed[i] = speedOf(pe)
		pl.load[i] = pe.Background
	}
	for i, o := range s.Objects {
		pl.p[i] = o.PE
		if !o.Migratable {
			pl.load[o.PE] += o.Load
		}
	}
	for i := range pl.load {
		pl.load[i] /= pl.speed[i]
	}
	if len(pl.avail) > 0 {
		place(pl)
	}
	return pl.p, nil
}

// speedOf is a PE's speed, 1 where the snapshot gives none.
func speedOf(pe PEStats) float64 {
	if pe.Speed > 0 {
		return pe.Speed
	}
	return 1
}

// add puts o on pe (which may be where it is) and counts its load there.
func (pl *plan) add(o objLoad, pe int) {
	pl.p[o.id] = pe
	pl.load[pe] += o.load / pl.speed[pe]
	if pl.least != nil {
		pl.least.fix(pe)
	}
}

// move moves o, which add put on a PE, to pe.
func (pl *plan) move(o objLoad, pe int) {
	from := pl.p[o.id]
	pl.load[from] -= o.load / pl.speed[from]
	if pl.least != nil {
		pl.least.fix(from)
	}
	pl.add(o, pe)
}

// orderByLoad starts keeping the available PEs in order of load, for
// leastLoaded. (Strategies call it once they have added what they will
// not move, so that those objects cost no heap work.)
func (pl *plan) orderByLoad() { pl.least = newPEHeap(pl.load, pl.avail) }

// leastLoaded is the available PE with the least load, the lower PE on a
// tie.
func (pl *plan) leastLoaded() int { return pl.least.top() }

// greedy adds each object in turn to the least-loaded available PE.
func (pl *plan) greedy(objs []objLoad) {
	pl.orderByLoad()
	for _, o := range objs {
		pl.add(o, pl.leastLoaded())
	}
}

// average is the balanced load: the work on the available PEs, and that
// of objs (which are not added yet), over their total speed.
func (pl *plan) average(objs []objLoad) float64 {
	var work, speed float64
	for _, pe := range pl.avail {
		work += pl.load[pe] * pl.speed[pe]
		speed += pl.speed[pe]
	}
	for _, o := range objs {
		work += o.load
	}
	return work / speed
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
