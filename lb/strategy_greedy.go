package lb

import "slices"

// Greedy places the migratable objects from scratch, heaviest first, each
// on the least-loaded available PE (Charm++'s GreedyLB). The result is
// within one object of the best: no PE ends above the average load plus
// the heaviest object's load on the slowest PE, unless its fixed load
// already is. Nearly every object moves.
type Greedy struct{}

func (Greedy) Name() string { return "greedy" }

func (Greedy) Place(s *Snapshot) (Placement, error) {
	return withPlan(s, func(pl *plan) { pl.greedy(heaviestFirst(s)) })
}

// DefaultGreedyRefineTolerance: GreedyRefine keeps an object where it is
// while that PE stays within 3 % of Greedy's maximum load.
const DefaultGreedyRefineTolerance = 1.03

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

func (g GreedyRefine) Place(s *Snapshot) (Placement, error) { return withPlan(s, g.place) }

func (g GreedyRefine) place(pl *plan) {
	objs := heaviestFirst(pl.s)

	// Greedy's maximum load, from Greedy's placement, which the loop below
	// then overwrites object by object.
	fixed := slices.Clone(pl.load)
	pl.greedy(objs)
	var m float64
	for _, pe := range pl.avail {
		m = max(m, pl.load[pe])
	}
	m *= orDefault(g.Tolerance, DefaultGreedyRefineTolerance)

	pl.load = fixed
	pl.orderByLoad()
	for _, o := range objs {
		pe := pl.s.Objects[o.id].PE
		if !pl.s.PEs[pe].Available || pl.load[pe]+o.load/pl.speed[pe] > m {
			pe = pl.leastLoaded()
		}
		pl.add(o, pe)
		m = max(m, pl.load[pe])
	}
}

// DefaultCommTolerance: Comm places an object with its communication
// partners while that PE stays within 5 % of the average.
const DefaultCommTolerance = 0.05

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

func (c Comm) Place(s *Snapshot) (Placement, error) { return withPlan(s, c.place) }

func (c Comm) place(pl *plan) {
	s, load, speed := pl.s, pl.load, pl.speed
	objs := heaviestFirst(s)
	limit := pl.average(objs) * (1 + orDefault(c.Tolerance, DefaultCommTolerance))
	start, arcs := commGraph(s)

	placed := make([]bool, len(s.Objects))
	for i, o := range s.Objects {
		placed[i] = !o.Migratable
	}
	bytes := make([]float64, len(s.PEs)) // to the current object, per PE
	var touched []int
	pl.orderByLoad()
	for _, o := range objs {
		touched = touched[:0]
		for _, a := range arcs[start[o.id]:start[o.id+1]] {
			if !placed[a.to] {
				continue
			}
			pe := pl.p[a.to]
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
			best = pl.leastLoaded()
		}
		pl.add(o, best)
		placed[o.id] = true
	}
}

// commArc is one direction of an edge of the communication graph: to the
// object to, of weight w.
type commArc struct {
	to int
	w  float64
}

// commGraph returns the communication graph as adjacency lists
// (compressed rows), with each edge in both directions: object i's arcs
// are arcs[start[i]:start[i+1]].
func commGraph(s *Snapshot) (start []int, arcs []commArc) {
	start = make([]int, len(s.Objects)+1)
	for _, e := range s.Comm {
		if e.From != e.To {
			start[e.From+1]++
			start[e.To+1]++
		}
	}
	for i := range s.Objects {
		start[i+1] += start[i]
	}
	arcs = make([]commArc, start[len(s.Objects)])
	fill := slices.Clone(start[:len(s.Objects)])
	for _, e := range s.Comm {
		if e.From == e.To {
			continue
		}
		w := float64(e.Bytes) + commMsgBytes*float64(e.Msgs)
		arcs[fill[e.From]] = commArc{e.To, w}
		fill[e.From]++
		arcs[fill[e.To]] = commArc{e.From, w}
		fill[e.To]++
	}
	return start, arcs
}
