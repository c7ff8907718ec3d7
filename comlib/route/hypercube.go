package route

import "math/bits"

// hypercube is dimensional exchange. For n a power of two, stage t makes bit t of the holder's
// number equal to the destination's, so log2 n stages suffice. Any other n is folded: with
// P the largest power of two below n, participant P+x first hands all its messages to x (stage
// 0), the cube 0..P−1 routes every message to the proxy of its destination (x for P+x), and a
// last stage hands x's messages for P+x over. That costs two stages instead of a
// (2·⌈log2 n⌉-stage) scheme that keeps every participant in the cube, and doubles the load of
// participants 0..n−P−1. With Direct = m ≥ 2 the first m bits are fixed in one stage, in which
// each participant sends to the other 2^m−1 members of its sub-cube.
type hypercube struct {
	n, p   int
	folded bool
	masks  []int // bits fixed in each stage of the cube
}

func newHypercube(n, direct int) hypercube {
	k := bits.Len(uint(n)) - 1 // floor(log2 n)
	h := hypercube{n: n, p: 1 << k, folded: n != 1<<k}
	m := min(direct, k)
	b := 0
	if m >= 2 {
		h.masks = append(h.masks, 1<<m-1)
		b = m
	}
	for ; b < k; b++ {
		h.masks = append(h.masks, 1<<b)
	}
	return h
}

func (h hypercube) Name() string { return "hypercube" }
func (h hypercube) N() int       { return h.n }

func (h hypercube) Stages() int {
	if h.folded {
		return len(h.masks) + 2
	}
	return len(h.masks)
}

type hcStage int

const (
	foldIn hcStage = iota
	cube
	foldOut
	none
)

// kind says what stage s is, and for a cube stage its mask.
func (h hypercube) kind(s int) (hcStage, int) {
	if s < 0 || s >= h.Stages() {
		return none, 0
	}
	if h.folded {
		if s == 0 {
			return foldIn, 0
		}
		if s == h.Stages()-1 {
			return foldOut, 0
		}
		s--
	}
	return cube, h.masks[s]
}

func (h hypercube) NextHop(at, dest, stage int) int {
	switch kind, mask := h.kind(stage); kind {
	case foldIn:
		if at >= h.p && at != dest {
			return at - h.p
		}
	case cube:
		if at < h.p {
			proxy := dest
			if proxy >= h.p {
				proxy -= h.p
			}
			return at&^mask | proxy&mask
		}
	case foldOut:
		if dest >= h.p && at == dest-h.p {
			return dest
		}
	}
	return at
}

func (h hypercube) SendTo(self, stage int) []int {
	switch kind, mask := h.kind(stage); kind {
	case foldIn:
		if self >= h.p {
			return []int{self - h.p}
		}
	case cube:
		return h.subcube(self, mask)
	case foldOut:
		if self+h.p < h.n {
			return []int{self + h.p}
		}
	}
	return nil
}

func (h hypercube) RecvFrom(self, stage int) []int {
	switch kind, mask := h.kind(stage); kind {
	case foldIn:
		if self+h.p < h.n {
			return []int{self + h.p}
		}
	case cube:
		return h.subcube(self, mask)
	case foldOut:
		if self >= h.p {
			return []int{self - h.p}
		}
	}
	return nil
}

// subcube lists the others that share self's bits outside mask (mask is a run of low bits or a
// single bit, so counting up through its values keeps the list sorted).
func (h hypercube) subcube(self, mask int) []int {
	if self >= h.p {
		return nil
	}
	low := mask & -mask
	var out []int
	for v := 0; v <= mask; v += low {
		if v&mask != v {
			continue
		}
		if j := self&^mask | v; j != self {
			out = append(out, j)
		}
	}
	return out
}
