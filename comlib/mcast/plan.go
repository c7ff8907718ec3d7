package mcast

import (
	"fmt"
	"sort"
	"strings"
)

// Kind is a way of spreading one multicast over its destinations.
type Kind int

// The kinds of multicast plan.
const (
	// Direct: the root sends to every destination.
	Direct Kind = iota
	// Ring: the root sends to the first destination in ring order after it, each destination to
	// the next.
	Ring
	// MultiRing: the ring order is cut into Options.Rings contiguous rings, all started by the
	// root.
	MultiRing
	// Tree: a k-ary tree (Options.Degree) over the root followed by the sorted destinations.
	Tree
	// DimOrdered: over a grid of PEs, the message crosses dimension 0 first, then 1, and so on.
	DimOrdered
	// NodeAware: one copy per other node, then fanned out inside each node.
	NodeAware
)

var kindNames = []string{"direct", "ring", "multiring", "tree", "dim", "node"}

// Names lists the names ParseKind accepts, in Kind order.
func Names() []string { return append([]string(nil), kindNames...) }

// ParseKind returns the kind called name.
func ParseKind(name string) (Kind, error) {
	for i, n := range kindNames {
		if n == name {
			return Kind(i), nil
		}
	}
	return 0, fmt.Errorf("mcast: unknown multicast kind %q (valid: %s)", name, strings.Join(kindNames, ", "))
}

func (k Kind) String() string {
	if k < 0 || int(k) >= len(kindNames) {
		return fmt.Sprintf("Kind(%d)", int(k))
	}
	return kindNames[k]
}

// Defaults for the zero Options.
const (
	DefaultDegree = 4
	DefaultRings  = 2
)

// Options parameterizes the kinds that need it; each kind reads only its own fields.
type Options struct {
	// Degree is the Tree's arity: 0 means DefaultDegree, otherwise at least 2.
	Degree int
	// Rings is the number of rings of MultiRing: 0 means DefaultRings, otherwise at least 1.
	Rings int
	// Dims is DimOrdered's grid of PEs, dimension 0 varying slowest (PE p has row-major
	// coordinates). Its product must be at least NumPEs. Empty means a near-square 2-D grid
	// over NumPEs: ⌈√NumPEs⌉ columns.
	Dims []int
	// NumPEs is the number of PEs. When positive, every PE named must be below it; DimOrdered
	// needs it or Dims.
	NumPEs int
	// NodeOf tells NodeAware the node (process) of a PE. Required for NodeAware.
	NodeOf func(pe int) int
}

// Children returns the PEs that self forwards a multicast to, in the order to send them (possibly
// none). The plan depends only on (k, o, root, dests), which the message carries, so every PE on
// it computes its part alone. dests is sorted and without duplicates; root may be among them and
// then does not receive. self must be the root or a destination.
func Children(k Kind, o Options, root int, dests []int, self int) ([]int, error) {
	p, err := newPlan(k, o, root, dests)
	if err != nil {
		return nil, err
	}
	return p.children(self)
}

// Plan returns the whole spanning tree: the children of the root and of every destination that
// forwards. It is Children for each of them, for tests, tools and a root that wants to see the
// shape.
func Plan(k Kind, o Options, root int, dests []int) (map[int][]int, error) {
	p, err := newPlan(k, o, root, dests)
	if err != nil {
		return nil, err
	}
	out := map[int][]int{}
	for _, pe := range append([]int{root}, p.dests...) {
		c, err := p.children(pe)
		if err != nil {
			return nil, err
		}
		if len(c) > 0 {
			out[pe] = c
		}
	}
	return out, nil
}

// plan is one validated multicast: dests excludes the root.
type plan struct {
	k       Kind
	o       Options
	root    int
	dests   []int
	grid    []int // DimOrdered only
	strides []int // strides[d] = product of grid[d+1:]
}

func newPlan(k Kind, o Options, root int, dests []int) (*plan, error) {
	if k < 0 || int(k) >= len(kindNames) {
		return nil, fmt.Errorf("mcast: unknown multicast kind %d (valid: %s)", int(k), strings.Join(kindNames, ", "))
	}
	if o.NumPEs < 0 {
		return nil, fmt.Errorf("mcast: NumPEs=%d: must be 0 or more", o.NumPEs)
	}
	if err := o.checkPE("root", root); err != nil {
		return nil, err
	}
	p := &plan{k: k, o: o, root: root, dests: make([]int, 0, len(dests))}
	for i, d := range dests {
		if d < 0 || (o.NumPEs > 0 && d >= o.NumPEs) {
			// The label only on error: every PE on a plan runs this for
			// every multicast, and formatting it each time cost a third of
			// the CPU of comlib/multicast/16B.
			return nil, o.checkPE(fmt.Sprintf("destination %d", i), d)
		}
		if i > 0 && dests[i-1] >= d {
			return nil, fmt.Errorf("mcast: destinations not sorted without duplicates: %d after %d at index %d", d, dests[i-1], i)
		}
		if d != root {
			p.dests = append(p.dests, d)
		}
	}
	switch k {
	case Tree:
		if o.Degree == 0 {
			p.o.Degree = DefaultDegree
		} else if o.Degree < 2 {
			return nil, fmt.Errorf("mcast: tree option Degree=%d: must be at least 2 (0 means %d)", o.Degree, DefaultDegree)
		}
	case MultiRing:
		if o.Rings == 0 {
			p.o.Rings = DefaultRings
		} else if o.Rings < 1 {
			return nil, fmt.Errorf("mcast: multiring option Rings=%d: must be at least 1 (0 means %d)", o.Rings, DefaultRings)
		}
	case DimOrdered:
		g, err := o.grid()
		if err != nil {
			return nil, err
		}
		p.grid = g
		p.strides = make([]int, len(g))
		for d, st := len(g)-1, 1; d >= 0; d-- {
			p.strides[d] = st
			st *= g[d]
		}
		size := product(g)
		for _, pe := range append([]int{root}, p.dests...) {
			if pe >= size {
				return nil, fmt.Errorf("mcast: dim: PE %d outside the grid %v of %d PEs", pe, g, size)
			}
		}
	case NodeAware:
		if o.NodeOf == nil {
			return nil, fmt.Errorf("mcast: node: option NodeOf is nil; node-aware multicast needs the node of each PE")
		}
	}
	return p, nil
}

func (o Options) checkPE(what string, pe int) error {
	if pe < 0 || (o.NumPEs > 0 && pe >= o.NumPEs) {
		if o.NumPEs > 0 {
			return fmt.Errorf("mcast: %s is PE %d, outside 0..%d", what, pe, o.NumPEs-1)
		}
		return fmt.Errorf("mcast: %s is PE %d, which is negative", what, pe)
	}
	return nil
}

func (o Options) grid() ([]int, error) {
	if len(o.Dims) == 0 {
		if o.NumPEs == 0 {
			return nil, fmt.Errorf("mcast: dim: set Dims or NumPEs to give the grid of PEs")
		}
		cols := 1
		for cols*cols < o.NumPEs {
			cols++
		}
		return []int{(o.NumPEs + cols - 1) / cols, cols}, nil
	}
	for i, d := range o.Dims {
		if d < 1 {
			return nil, fmt.Errorf("mcast: dim: Dims[%d]=%d: every dimension needs at least 1 PE", i, d)
		}
	}
	if p := product(o.Dims); p < o.NumPEs {
		return nil, fmt.Errorf("mcast: dim: Dims %v hold %d PEs, fewer than NumPEs=%d", o.Dims, p, o.NumPEs)
	}
	return append([]int(nil), o.Dims...), nil
}

func product(ds []int) int {
	p := 1
	for _, d := range ds {
		p *= d
	}
	return p
}

func (p *plan) children(self int) ([]int, error) {
	pos := -1 // index of self in p.dests, -1 for the root
	if self != p.root {
		i := sort.SearchInts(p.dests, self)
		if i == len(p.dests) || p.dests[i] != self {
			return nil, fmt.Errorf("mcast: %s: PE %d is not on the plan: neither the root %d nor a destination", p.k, self, p.root)
		}
		pos = i
	}
	switch p.k {
	case Direct:
		if pos < 0 {
			return append([]int(nil), p.dests...), nil
		}
		return nil, nil
	case Ring:
		return p.rings(self, 1), nil
	case MultiRing:
		return p.rings(self, p.o.Rings), nil
	case Tree:
		return p.tree(pos + 1), nil
	case DimOrdered:
		return p.dim(self), nil
	default:
		return p.node(self), nil
	}
}

// ringOrder is the destinations in ring order: those above the root, then those below.
func (p *plan) ringOrder() []int {
	i := sort.SearchInts(p.dests, p.root)
	return append(append([]int(nil), p.dests[i:]...), p.dests[:i]...)
}

// rings cuts the ring order into r contiguous segments of near-equal length; the root starts
// each, every member passes to the next of its segment.
func (p *plan) rings(self, r int) []int {
	order := p.ringOrder()
	l := len(order)
	start := func(j int) int { return j * l / r }
	if self == p.root {
		var out []int
		for j := 0; j < r; j++ {
			if s := start(j); s < start(j+1) {
				out = append(out, order[s])
			}
		}
		return out
	}
	for j := 0; j < r; j++ {
		for i := start(j); i < start(j+1); i++ {
			if order[i] == self {
				if i+1 < start(j+1) {
					return []int{order[i+1]}
				}
				return nil
			}
		}
	}
	return nil
}

// tree: position 0 is the root, position i+1 the i-th destination; position q's children are
// k·q+1 … k·q+k.
func (p *plan) tree(q int) []int {
	k := p.o.Degree
	var out []int
	for c := k*q + 1; c <= k*q+k && c <= len(p.dests); c++ {
		out = append(out, p.dests[c-1])
	}
	return out
}

func (p *plan) coord(pe, d int) int {
	return (pe / p.strides[d]) % p.grid[d]
}

// dim: a holder of the destinations that share its coordinates 0..d−1 splits them at stage d by
// coordinate d, keeps its own share and sends each other share to its lowest destination, which
// holds that share from stage d+1. So the plan only ever visits destinations.
func (p *plan) dim(self int) []int {
	from := 0
	if self != p.root {
		h := p.root
		for d := range p.grid {
			if p.coord(h, d) != p.coord(self, d) {
				h = p.lowestSharing(self, d)
				if h == self {
					from = d + 1
					break
				}
			}
		}
	}
	var out []int
	for d := from; d < len(p.grid); d++ {
		seen := map[int]bool{p.coord(self, d): true}
		for _, x := range p.dests { // ascending, so the first of each coordinate is the lowest
			if p.sharesPrefix(x, self, d) && !seen[p.coord(x, d)] {
				seen[p.coord(x, d)] = true
				out = append(out, x)
			}
		}
	}
	return out
}

// sharesPrefix reports whether a and b agree in coordinates 0..d−1.
func (p *plan) sharesPrefix(a, b, d int) bool {
	for e := 0; e < d; e++ {
		if p.coord(a, e) != p.coord(b, e) {
			return false
		}
	}
	return true
}

// lowestSharing is the lowest destination that agrees with self in coordinates 0..d.
func (p *plan) lowestSharing(self, d int) int {
	for _, x := range p.dests {
		if p.sharesPrefix(x, self, d+1) {
			return x
		}
	}
	return self
}

// node: the root sends to the lowest destination of every other node (those first, as they fan
// out further) and to the destinations of its own node; each such leader sends to the rest of its
// node.
func (p *plan) node(self int) []int {
	nodeOf := p.o.NodeOf
	home := nodeOf(p.root)
	if self == p.root {
		var remote, local []int
		leader := map[int]bool{}
		for _, x := range p.dests {
			switch n := nodeOf(x); {
			case n == home:
				local = append(local, x)
			case !leader[n]:
				leader[n] = true
				remote = append(remote, x)
			}
		}
		return append(remote, local...)
	}
	n := nodeOf(self)
	if n == home {
		return nil
	}
	var out []int
	for _, x := range p.dests {
		if nodeOf(x) != n {
			continue
		}
		if x < self {
			return nil // self is not the node's leader
		}
		if x != self {
			out = append(out, x)
		}
	}
	return out
}
