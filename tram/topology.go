package tram

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Topology is TRAM's virtual grid: the job's PEs arranged in N dimensions whose sizes multiply to
// the number of PEs. PE numbers map to coordinates in row-major order — the last dimension varies
// fastest — so PEs p and p+1 usually differ only in the last coordinate. Because the runtime gives
// each process a contiguous block of PE numbers, a last dimension of PEs-per-process keeps it
// inside one process (see DefaultTopology).
//
// A Topology is immutable and safe to share. Methods that take a PE expect 0 <= pe < NumPEs();
// like a slice index, an out-of-range PE panics. Check untrusted numbers with Contains first.
type Topology struct {
	dims    []int
	strides []int // strides[d] = product of dims[d+1:]
	npes    int
}

// NewTopology returns the grid with the given dimension sizes, which must all be positive and
// multiply to npes, the number of PEs in the job.
func NewTopology(dims []int, npes int) (*Topology, error) {
	if len(dims) == 0 {
		return nil, errors.New("tram: topology has no dimensions")
	}
	prod := 1
	for d, s := range dims {
		if s <= 0 {
			return nil, fmt.Errorf("tram: topology %s: dimension %d has size %d, want at least 1", shape(dims), d, s)
		}
		if prod > (1<<62)/s {
			return nil, fmt.Errorf("tram: topology %s is too large", shape(dims))
		}
		prod *= s
	}
	if prod != npes {
		return nil, fmt.Errorf("tram: topology %s has %d PEs, the job has %d", shape(dims), prod, npes)
	}
	t := &Topology{dims: append([]int(nil), dims...), strides: make([]int, len(dims)), npes: npes}
	stride := 1
	for d := len(dims) - 1; d >= 0; d-- {
		t.strides[d] = stride
		stride *= dims[d]
	}
	return t, nil
}

// DefaultTopology derives an ndims-dimensional grid (1, 2 or 3) from the job's shape: nodes
// processes with pesPerNode PEs each. The last dimension is always pesPerNode, so peers along it
// share a process and the cross-process hops happen in the leading dimensions (claim T29):
//
//	ndims 1: [nodes·pesPerNode]
//	ndims 2: [nodes, pesPerNode]
//	ndims 3: [a, b, pesPerNode] with a·b = nodes, a <= b and a the largest divisor of nodes
//	         not above √nodes (6 nodes → [2, 3, ·]; a prime count p → [1, p, ·])
//
// A 1-D grid sends every item directly (one hop, P−1 buffers per PE); each extra dimension
// shrinks the buffers per PE at the price of one more hop.
func DefaultTopology(nodes, pesPerNode, ndims int) (*Topology, error) {
	if nodes < 1 || pesPerNode < 1 {
		return nil, fmt.Errorf("tram: default topology for %d nodes × %d PEs per node: both must be at least 1", nodes, pesPerNode)
	}
	var dims []int
	switch ndims {
	case 1:
		dims = []int{nodes * pesPerNode}
	case 2:
		dims = []int{nodes, pesPerNode}
	case 3:
		a := 1
		for f := 1; f*f <= nodes; f++ {
			if nodes%f == 0 {
				a = f
			}
		}
		dims = []int{a, nodes / a, pesPerNode}
	default:
		return nil, fmt.Errorf("tram: default topology has %d dimensions, want 1, 2 or 3", ndims)
	}
	return NewTopology(dims, nodes*pesPerNode)
}

// shape formats dimension sizes as 2×3×4.
func shape(dims []int) string {
	s := make([]string, len(dims))
	for i, d := range dims {
		s[i] = strconv.Itoa(d)
	}
	return strings.Join(s, "×")
}

// String returns the shape, such as "2×3×4".
func (t *Topology) String() string { return shape(t.dims) }

// Dims returns a copy of the dimension sizes.
func (t *Topology) Dims() []int { return append([]int(nil), t.dims...) }

// NumDims returns the number of dimensions N.
func (t *Topology) NumDims() int { return len(t.dims) }

// NumPEs returns the number of PEs, the product of the dimension sizes.
func (t *Topology) NumPEs() int { return t.npes }

// Contains reports whether pe is a PE of the grid.
func (t *Topology) Contains(pe int) bool { return pe >= 0 && pe < t.npes }

func (t *Topology) check(pe int) {
	if !t.Contains(pe) {
		panic(fmt.Sprintf("tram: PE %d is outside topology %s (%d PEs)", pe, t, t.npes))
	}
}

// coord returns coordinate d of pe.
func (t *Topology) coord(pe, d int) int { return pe / t.strides[d] % t.dims[d] }

// Coords returns the coordinates of pe, last dimension fastest.
func (t *Topology) Coords(pe int) ([]int, error) {
	if !t.Contains(pe) {
		return nil, fmt.Errorf("tram: PE %d is outside topology %s (%d PEs)", pe, t, t.npes)
	}
	c := make([]int, len(t.dims))
	for d := range c {
		c[d] = t.coord(pe, d)
	}
	return c, nil
}

// PE returns the PE at the given coordinates.
func (t *Topology) PE(coords []int) (int, error) {
	if len(coords) != len(t.dims) {
		return 0, fmt.Errorf("tram: %d coordinates for %d-dimensional topology %s", len(coords), len(t.dims), t)
	}
	pe := 0
	for d, c := range coords {
		if c < 0 || c >= t.dims[d] {
			return 0, fmt.Errorf("tram: coordinate %d of dimension %d is outside topology %s", c, d, t)
		}
		pe += c * t.strides[d]
	}
	return pe, nil
}

// Hops returns F(j,k), the number of dimensions in which j and k differ: the number of messages
// that carry an item from j to k (claim T04). Peers are one hop apart.
func (t *Topology) Hops(j, k int) int {
	t.check(j)
	t.check(k)
	n := 0
	for d := range t.dims {
		if t.coord(j, d) != t.coord(k, d) {
			n++
		}
	}
	return n
}

// IsPeer reports whether j and k differ in exactly one coordinate (claim T02).
func (t *Topology) IsPeer(j, k int) bool { return t.Hops(j, k) == 1 }

// NextHop returns the PE to which from sends an item whose final destination is to: from's
// coordinates with the coordinate of the greatest differing dimension replaced by to's (claim
// T03). The result is a peer of from, or to itself when they are peers; NextHop(pe, pe) is pe.
func (t *Topology) NextHop(from, to int) int {
	t.check(from)
	t.check(to)
	for d := len(t.dims) - 1; d >= 0; d-- {
		if cf, ct := t.coord(from, d), t.coord(to, d); cf != ct {
			return from + (ct-cf)*t.strides[d]
		}
	}
	return from
}

// NumPeers returns Σ(s_d − 1), the number of peers of every PE and so the number of aggregation
// buffers a PE keeps (claim T05).
func (t *Topology) NumPeers(pe int) int {
	t.check(pe)
	n := 0
	for _, s := range t.dims {
		n += s - 1
	}
	return n
}

// Peers returns the peers of pe in buffer-slot order (see PeerIndex).
func (t *Topology) Peers(pe int) []int { return t.PeerIndex(pe).Peers() }

// PeerIndex numbers the peers of one PE, giving each the slot of its aggregation buffer. Slots run
// dimension by dimension from 0, and within dimension d by coordinate value, skipping the PE's
// own coordinate; so dimension d's peers occupy slots offset(d) .. offset(d)+s_d−2.
type PeerIndex struct {
	t      *Topology
	pe     int
	offset []int // first slot of each dimension
	peers  []int // slot → peer
}

// PeerIndex returns the slot numbering of pe's peers.
func (t *Topology) PeerIndex(pe int) *PeerIndex {
	t.check(pe)
	x := &PeerIndex{t: t, pe: pe, offset: make([]int, len(t.dims))}
	for d, s := range t.dims {
		x.offset[d] = len(x.peers)
		own := t.coord(pe, d)
		for v := 0; v < s; v++ {
			if v != own {
				x.peers = append(x.peers, pe+(v-own)*t.strides[d])
			}
		}
	}
	return x
}

// PE returns the PE whose peers are numbered.
func (x *PeerIndex) PE() int { return x.pe }

// Len returns the number of peers, Σ(s_d − 1).
func (x *PeerIndex) Len() int { return len(x.peers) }

// Peer returns the peer that owns slot, 0 <= slot < Len().
func (x *PeerIndex) Peer(slot int) int { return x.peers[slot] }

// Peers returns a copy of the peers in slot order.
func (x *PeerIndex) Peers() []int { return append([]int(nil), x.peers...) }

// Slot returns the buffer slot of peer, and false if peer is not a peer of this PE.
func (x *PeerIndex) Slot(peer int) (int, bool) {
	if !x.t.Contains(peer) {
		return 0, false
	}
	dim := -1
	for d := range x.t.dims {
		if x.t.coord(peer, d) != x.t.coord(x.pe, d) {
			if dim >= 0 {
				return 0, false
			}
			dim = d
		}
	}
	if dim < 0 {
		return 0, false
	}
	v, own := x.t.coord(peer, dim), x.t.coord(x.pe, dim)
	if v > own {
		v--
	}
	return x.offset[dim] + v, true
}

// DiffDim returns the greatest dimension in which j and k differ, or -1
// if they are the same PE: for peers, the dimension that joins them.
func (t *Topology) DiffDim(j, k int) int {
	t.check(j)
	t.check(k)
	for d := len(t.dims) - 1; d >= 0; d-- {
		if t.coord(j, d) != t.coord(k, d) {
			return d
		}
	}
	return -1
}
