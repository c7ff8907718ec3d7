package route

import (
	"fmt"
	"sort"
	"strings"
)

// Router splits an exchange among the participants 0..N()-1 into Stages() stages. In each stage
// every participant sends one combined (possibly empty) message to each participant of
// SendTo(self, stage), and waits for one from each of RecvFrom(self, stage), before it starts the
// next stage. Routers are immutable and safe for concurrent use. The lists SendTo and RecvFrom
// return may be shared (the schedules' and the mesh's and grid's are kept and handed out again):
// callers must not modify them.
type Router interface {
	// Name is the name New knows the router by.
	Name() string
	// N is the number of participants.
	N() int
	// Stages is the number of stages of one exchange; it may be 0 when N() is 1.
	Stages() int
	// SendTo lists the participants self sends to at stage s: sorted, without duplicates, never
	// self. j is in SendTo(i, s) exactly when i is in RecvFrom(j, s).
	SendTo(self, stage int) []int
	// RecvFrom lists the participants self receives from at stage s, sorted.
	RecvFrom(self, stage int) []int
	// NextHop says where a message for dest, held by at at the start of stage s, goes: a member
	// of SendTo(at, s), or at itself when the message waits there this stage. Following NextHop
	// from the source at stage 0 through the last stage brings every message to dest. NextHop is
	// defined on the positions a message takes on that route; dest must be in 0..N()-1.
	NextHop(at, dest, stage int) int
}

// Options tunes the routers that take parameters; the others ignore it. The zero value is the
// default for every router.
type Options struct {
	// Degree is the arity of the tree router (default 4; 1 or less than 0 is an error).
	Degree int
	// Direct is, for the hypercube, how many of the first dimensions are exchanged directly in
	// a single stage (each participant sends to the 2^Direct−1 others of its sub-cube) instead
	// of one dimension per stage. 0 and 1 mean none; values above log2 of the cube are capped.
	// Negative is an error.
	Direct int
	// Omega is the group shuffle's fan-out ω: each stage exchanges with at most ω partners
	// (0 means ⌈√(n−1)⌉; values above n−1 act as n−1; negative is an error).
	Omega int
}

// DefaultDegree is the tree router's arity when Options.Degree is 0.
const DefaultDegree = 4

var names = append([]string{"direct", "mesh", "grid", "hypercube", "tree", "prefix"}, scheduleNames...)

// Names lists the routers New knows, in a fixed order.
func Names() []string { return append([]string(nil), names...) }

// New returns the router called name for n participants.
func New(name string, n int, o Options) (Router, error) {
	if n < 1 {
		return nil, fmt.Errorf("route: %s router for %d participants: need at least 1", name, n)
	}
	switch name {
	case "direct":
		return direct{n: n}, nil
	case "mesh":
		return newDims("mesh", n, meshSizes(n)), nil
	case "grid":
		return newDims("grid", n, gridSizes(n)), nil
	case "hypercube":
		if o.Direct < 0 {
			return nil, fmt.Errorf("route: hypercube option Direct=%d: must be 0 or more", o.Direct)
		}
		return newHypercube(n, o.Direct), nil
	case "tree":
		k := o.Degree
		if k == 0 {
			k = DefaultDegree
		}
		if k < 2 {
			return nil, fmt.Errorf("route: tree option Degree=%d: must be at least 2 (0 means %d)", o.Degree, DefaultDegree)
		}
		return newTree(n, k), nil
	case "prefix":
		return newPrefix(n), nil
	case "shift", "pairwise", "xor", "sync", "group":
		return newSched(name, n, o)
	}
	return nil, fmt.Errorf("route: unknown router %q (valid: %s)", name, strings.Join(names, ", "))
}

// Partition sorts the messages held by participant at at the start of stage s by where they go
// next. dests[i] is the destination of message i. byPeer has a key for every participant of
// SendTo(at, stage), even those that get no message (they still get an empty one), mapped to the
// indices of the messages for it; stay holds the indices of the messages that wait at at (those
// for at itself among them). A destination outside 0..N()-1 stays: check them on entry.
func Partition(r Router, at, stage int, dests []int) (byPeer map[int][]int, stay []int) {
	peers := r.SendTo(at, stage)
	byPeer = make(map[int][]int, len(peers))
	for _, p := range peers {
		byPeer[p] = nil
	}
	for i, d := range dests {
		if d < 0 || d >= r.N() {
			stay = append(stay, i)
			continue
		}
		h := r.NextHop(at, d, stage)
		if h == at {
			stay = append(stay, i)
			continue
		}
		byPeer[h] = append(byPeer[h], i)
	}
	return byPeer, stay
}

// Path returns the participants that hold a message from src to dest at the start of each stage
// and after the last one (Stages()+1 entries, the first src, the last dest). It checks every hop
// against SendTo, so an error means a broken router or an out-of-range participant.
func Path(r Router, src, dest int) ([]int, error) {
	n := r.N()
	if src < 0 || src >= n {
		return nil, fmt.Errorf("route: %s: source %d outside 0..%d", r.Name(), src, n-1)
	}
	if dest < 0 || dest >= n {
		return nil, fmt.Errorf("route: %s: destination %d outside 0..%d", r.Name(), dest, n-1)
	}
	path := []int{src}
	at := src
	for s := 0; s < r.Stages(); s++ {
		h := r.NextHop(at, dest, s)
		if h != at && !contains(r.SendTo(at, s), h) {
			return path, fmt.Errorf("route: %s: message %d->%d at %d, stage %d, hops to %d, which is not among its peers %v",
				r.Name(), src, dest, at, s, h, r.SendTo(at, s))
		}
		at = h
		path = append(path, at)
	}
	if at != dest {
		return path, fmt.Errorf("route: %s: message %d->%d ends at %d after %d stages", r.Name(), src, dest, at, r.Stages())
	}
	return path, nil
}

func contains(sorted []int, x int) bool {
	i := sort.SearchInts(sorted, x)
	return i < len(sorted) && sorted[i] == x
}

// direct is the baseline: one stage, everyone sends to everyone else.
type direct struct{ n int }

func (d direct) Name() string { return "direct" }
func (d direct) N() int       { return d.n }
func (d direct) Stages() int  { return 1 }

func (d direct) SendTo(self, stage int) []int {
	if stage != 0 {
		return nil
	}
	out := make([]int, 0, d.n-1)
	for j := 0; j < d.n; j++ {
		if j != self {
			out = append(out, j)
		}
	}
	return out
}

func (d direct) RecvFrom(self, stage int) []int { return d.SendTo(self, stage) }

func (d direct) NextHop(at, dest, stage int) int {
	if stage != 0 {
		return at
	}
	return dest
}
