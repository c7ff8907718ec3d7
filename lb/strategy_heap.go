package lb

import "slices"

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
