package actor

// DefaultArity is the branching factor of the spanning trees used for
// broadcasts, reductions and detection waves.
const DefaultArity = 4

// TreeParent returns the parent of position pos in a k-ary tree over n
// positions rooted at position 0, or -1 for the root.
func TreeParent(pos, k int) int {
	if pos == 0 {
		return -1
	}
	return (pos - 1) / k
}

// TreeChildren appends the children of position pos in a k-ary tree over n
// positions rooted at 0.
func TreeChildren(dst []int, pos, n, k int) []int {
	for c := pos*k + 1; c <= pos*k+k && c < n; c++ {
		dst = append(dst, c)
	}
	return dst
}

// PETree is a k-ary spanning tree over PEs 0..n-1 rooted at Root.
type PETree struct {
	Root, N, Arity int
}

func (t PETree) pos(pe int) int     { return (pe - t.Root + t.N) % t.N }
func (t PETree) pe(pos int) int     { return (pos + t.Root) % t.N }
func (t PETree) arity() int         { return max(t.Arity, 1) }
func (t PETree) IsRoot(pe int) bool { return pe == t.Root }

// Parent returns the parent PE of pe, or -1 for the root.
func (t PETree) Parent(pe int) int {
	p := TreeParent(t.pos(pe), t.arity())
	if p < 0 {
		return -1
	}
	return t.pe(p)
}

// Children returns the child PEs of pe.
func (t PETree) Children(pe int) []int { return t.AppendChildren(nil, pe) }

// AppendChildren appends the child PEs of pe to dst and returns the
// extended slice.
func (t PETree) AppendChildren(dst []int, pe int) []int {
	n := len(dst)
	dst = TreeChildren(dst, t.pos(pe), t.N, t.arity())
	for i := n; i < len(dst); i++ {
		dst[i] = t.pe(dst[i])
	}
	return dst
}
