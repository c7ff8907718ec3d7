package route

import (
	"sort"
	"sync/atomic"
)

// dims is the mesh (2-D) and grid (3-D) router. Participants take coordinates on a grid of the
// given sizes in row-major order (dimension 0 varies slowest); the grid may hold more points
// than participants, so its last "row" can be partial. Stage t fixes dimension D−1−t: the
// message moves to the participant that has the destination's coordinate there. When that point
// lies beyond n, the message goes instead to the point one step lower in the dimensions already
// passed (index − stride of dimension k−1), which exists and still has every fixed coordinate
// right; later stages then correct the rest. The last stage (dimension 0) always lands on dest.
//
// SendTo and RecvFrom are asked for at every stage of every exchange (a bracketed exchange asks
// RecvFrom for each packet it receives), so each list is built once, on first use, and shared
// afterwards: a participant asks for its own lists only, so a router in a process holding a few
// of many participants keeps only theirs.
type dims struct {
	name    string
	n       int
	sizes   []int
	strides []int // strides[k] = product of sizes[k+1:]
	// lists holds the lists built so far: SendTo(self, stage) at 2*(stage*n+self), RecvFrom
	// at the next one. Shared by the copies of d (the methods take d by value).
	lists []atomic.Pointer[[]int]
}

func newDims(name string, n int, sizes []int) dims {
	d := dims{name: name, n: n, sizes: sizes, strides: make([]int, len(sizes)),
		lists: make([]atomic.Pointer[[]int], 2*len(sizes)*n)}
	s := 1
	for k := len(sizes) - 1; k >= 0; k-- {
		d.strides[k] = s
		s *= sizes[k]
	}
	return d
}

// meshSizes is a near-square grid: ⌈√n⌉ columns and as many rows as needed.
func meshSizes(n int) []int {
	cols := ceilRoot(n, 2)
	return []int{ceilDiv(n, cols), cols}
}

// gridSizes is a near-cube: ⌈∛n⌉ in the fastest dimension, then a near-square over the rest.
func gridSizes(n int) []int {
	z := ceilRoot(n, 3)
	y := ceilRoot(ceilDiv(n, z), 2)
	return []int{ceilDiv(n, y*z), y, z}
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// ceilRoot is the smallest r >= 1 with r^k >= n.
func ceilRoot(n, k int) int {
	r := 1
	for pow(r, k) < n {
		r++
	}
	return r
}

func pow(r, k int) int {
	p := 1
	for ; k > 0; k-- {
		p *= r
	}
	return p
}

func (d dims) Name() string { return d.name }
func (d dims) N() int       { return d.n }
func (d dims) Stages() int  { return len(d.sizes) }

// Sizes reports the grid, dimension 0 first (for messages and tests).
func (d dims) Sizes() []int { return append([]int(nil), d.sizes...) }

func (d dims) dim(stage int) int { return len(d.sizes) - 1 - stage }

func (d dims) coord(i, k int) int { return (i / d.strides[k]) % d.sizes[k] }

// hop is where a message at `at` goes to get coordinate c in dimension k.
func (d dims) hop(at, c, k int) int {
	p := at + (c-d.coord(at, k))*d.strides[k]
	if p >= d.n && k > 0 {
		p -= d.strides[k-1]
	}
	return p
}

// sends reports whether at stage dimension k participant i has anything for coordinate c: some
// destination shares i's coordinates after k and has c in k (the smallest such is checked).
func (d dims) sends(i, c, k int) bool {
	return c != d.coord(i, k) && c*d.strides[k]+i%d.strides[k] < d.n
}

func (d dims) NextHop(at, dest, stage int) int {
	k := d.dim(stage)
	c := d.coord(dest, k)
	if c == d.coord(at, k) {
		return at
	}
	return d.hop(at, c, k)
}

func (d dims) SendTo(self, stage int) []int { return d.list(self, stage, 0, d.sendTo) }

func (d dims) RecvFrom(self, stage int) []int { return d.list(self, stage, 1, d.recvFrom) }

// list returns the list of self at stage (SendTo for which 0, RecvFrom for 1), building it with
// build on first use. Out-of-range arguments get nil, as a participant with no peers does.
func (d dims) list(self, stage, which int, build func(self, stage int) []int) []int {
	if stage < 0 || stage >= len(d.sizes) || self < 0 || self >= d.n {
		return nil
	}
	p := &d.lists[2*(stage*d.n+self)+which]
	if l := p.Load(); l != nil {
		return *l
	}
	l := build(self, stage)
	if !p.CompareAndSwap(nil, &l) {
		return *p.Load() // built by another goroutine meanwhile: the same list
	}
	return l
}

func (d dims) sendTo(self, stage int) []int {
	k := d.dim(stage)
	var out []int
	for c := 0; c < d.sizes[k]; c++ {
		if d.sends(self, c, k) {
			out = append(out, d.hop(self, c, k))
		}
	}
	sort.Ints(out)
	return out
}

func (d dims) recvFrom(self, stage int) []int {
	k := d.dim(stage)
	cj := d.coord(self, k)
	// A sender has self's coordinates except in dimension k, or is the point one stride of
	// dimension k−1 above such a one (when self is a substitute).
	bases := [2]int{self, -1}
	if k > 0 {
		bases[1] = self + d.strides[k-1]
	}
	var out []int
	for _, b := range bases {
		if b < 0 {
			continue
		}
		for c := 0; c < d.sizes[k]; c++ {
			i := b + (c-d.coord(b, k))*d.strides[k]
			if i < d.n && i != self && d.sends(i, cj, k) && d.hop(i, cj, k) == self {
				out = append(out, i)
			}
		}
	}
	sort.Ints(out)
	return out
}
