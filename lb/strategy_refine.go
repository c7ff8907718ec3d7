package lb

import (
	"slices"
	"sort"
)

// DefaultRefineThreshold: Refine unloads the PEs more than 3 % above the
// average.
const DefaultRefineThreshold = 0.03

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

func (r Refine) Place(s *Snapshot) (Placement, error) { return withPlan(s, r.place) }

func (r Refine) place(pl *plan) {
	s, load, speed := pl.s, pl.load, pl.speed

	// Loads as they are, with the objects that must leave unavailable PEs
	// placed as by Greedy.
	var evacuate []objLoad
	lists := make([][]objLoad, len(s.PEs)) // each PE's movable objects, heaviest first
	for _, o := range heaviestFirst(s) {
		pe := s.Objects[o.id].PE
		if !s.PEs[pe].Available {
			evacuate = append(evacuate, o)
			continue
		}
		pl.add(o, pe)
		lists[pe] = append(lists[pe], o)
	}
	pl.greedy(evacuate)

	limit := pl.average(nil) * (1 + orDefault(r.Threshold, DefaultRefineThreshold))
	room := func(pe int) float64 { return (limit - load[pe]) * speed[pe] } // the work pe can take

	// heavy: the PEs above the limit, most loaded first; roomy: every
	// available PE, the one that can take the most work first.
	heavyKey := make([]float64, len(s.PEs))
	roomKey := make([]float64, len(s.PEs))
	var over []int
	for _, pe := range pl.avail {
		heavyKey[pe] = -load[pe]
		roomKey[pe] = -room(pe)
		if load[pe] > limit {
			over = append(over, pe)
		}
	}
	heavy := newPEHeap(heavyKey, over)
	roomy := newPEHeap(roomKey, pl.avail)
	for heavy.len() > 0 {
		from, to := heavy.top(), roomy.top()
		space := room(to)
		if space <= 0 {
			break // every PE is at the limit
		}
		excess := (load[from] - limit) * speed[from]
		list := lists[from]
		fit := sort.Search(len(list), func(i int) bool { return list[i].load <= space })
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
		pl.move(o, to)
		roomKey[from], roomKey[to] = -room(from), -room(to)
		roomy.fix(from)
		roomy.fix(to)
		if load[from] <= limit {
			heavy.remove(from)
		} else {
			heavyKey[from] = -load[from]
			heavy.fix(from)
		}
	}
}

// removeAt removes list[i], keeping the order, by moving the shorter side
// (Refine mostly takes objects near the front).
func removeAt(list []objLoad, i int) []objLoad {
	if i < len(list)/2 {
		copy(list[1:i+1], list[:i])
		return list[1:]
	}
	return slices.Delete(list, i, i+1)
}
