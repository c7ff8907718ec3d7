package route

// tree is a k-ary tree rooted at 0 (the children of i are k·i+1 … k·i+k). With D the depth of
// the deepest participant, stage s < D moves messages up from level D−s to their parents, and
// stage D+t moves them down from level t to the child on the way; so a message climbs while its
// destination is outside the holder's subtree, waits at the lowest common ancestor, and
// descends. Stages = 2·D.
type tree struct {
	n, k, depth int
}

func newTree(n, k int) tree {
	t := tree{n: n, k: k}
	t.depth = t.level(n - 1)
	return t
}

func (t tree) Name() string { return "tree" }
func (t tree) N() int       { return t.n }
func (t tree) Stages() int  { return 2 * t.depth }

func (t tree) parent(i int) int { return (i - 1) / t.k }

func (t tree) level(i int) int {
	d := 0
	for ; i > 0; i = t.parent(i) {
		d++
	}
	return d
}

// under reports whether x is in the subtree of a.
func (t tree) under(a, x int) bool {
	la := t.level(a)
	for lx := t.level(x); lx > la; lx-- {
		x = t.parent(x)
	}
	return x == a
}

// toward is the child of a whose subtree holds x (x in a's subtree, x != a).
func (t tree) toward(a, x int) int {
	for t.parent(x) != a {
		x = t.parent(x)
	}
	return x
}

func (t tree) children(i int) []int {
	var out []int
	for c := t.k*i + 1; c <= t.k*i+t.k && c < t.n; c++ {
		out = append(out, c)
	}
	return out
}

// phase returns (true, level sending up) for an up stage, (false, level sending down) for a
// down stage, and level −1 outside the exchange.
func (t tree) phase(s int) (up bool, lvl int) {
	switch {
	case s < 0 || s >= 2*t.depth:
		return false, -1
	case s < t.depth:
		return true, t.depth - s
	default:
		return false, s - t.depth
	}
}

func (t tree) NextHop(at, dest, stage int) int {
	up, lvl := t.phase(stage)
	if lvl < 0 || t.level(at) != lvl {
		return at
	}
	if up {
		if at != 0 && !t.under(at, dest) {
			return t.parent(at)
		}
		return at
	}
	if dest != at && t.under(at, dest) {
		return t.toward(at, dest)
	}
	return at
}

func (t tree) SendTo(self, stage int) []int {
	up, lvl := t.phase(stage)
	if lvl < 0 || t.level(self) != lvl {
		return nil
	}
	if up {
		return []int{t.parent(self)}
	}
	return t.children(self)
}

func (t tree) RecvFrom(self, stage int) []int {
	up, lvl := t.phase(stage)
	if lvl < 0 {
		return nil
	}
	if up {
		if t.level(self)+1 == lvl {
			return t.children(self)
		}
		return nil
	}
	if self != 0 && t.level(self) == lvl+1 {
		return []int{t.parent(self)}
	}
	return nil
}
