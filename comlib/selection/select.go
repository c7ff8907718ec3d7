package selection

import (
	"fmt"
	"strings"
)

// CreationFacts are what is known when a communicator is created (for Comlib, when a proxy is
// delegated). A zero field is not known: Prune leaves its operators in the tree.
type CreationFacts struct {
	CommSize   int        // participants; 0 = not known
	CommType   CommType   // Intra or Inter; "" = not known
	Collective Collective // "" = not known
	// MsgSize is the message size every call will have, when the caller
	// declares it at creation (as every MPI rank passes the same count to
	// a collective, so that each picks the same algorithm without
	// agreeing); 0 = not known, and Select takes it per call.
	MsgSize int
}

// CallFacts are what is known at each call.
type CallFacts struct {
	MsgSize int // bytes, as the caller counts them (for an all-to-all, per destination)
}

// facts is every fact with a mask of the known ones.
type facts struct {
	known      [opCollective + 1]bool
	commSize   int64
	msgSize    int64
	commType   string
	collective string
}

func (f *facts) value(t opType) (int64, string) {
	switch t {
	case opCommSize:
		return f.commSize, ""
	case opMsgSize:
		return f.msgSize, ""
	case opCommType:
		return 0, f.commType
	case opCollective:
		return 0, f.collective
	}
	return 0, ""
}

func (f *facts) setCreation(c CreationFacts) error {
	if c.CommSize < 0 {
		return fmt.Errorf("selection: CommSize %d is negative", c.CommSize)
	}
	if c.CommSize > 0 {
		f.known[opCommSize], f.commSize = true, int64(c.CommSize)
	}
	if c.MsgSize < 0 {
		return fmt.Errorf("selection: MsgSize %d is negative", c.MsgSize)
	}
	if c.MsgSize > 0 {
		f.known[opMsgSize], f.msgSize = true, int64(c.MsgSize)
	}
	if c.CommType != "" {
		if !inDomain(opCommType, string(c.CommType)) {
			return fmt.Errorf("selection: unknown CommType %q (valid: %s)", c.CommType, strings.Join(opCommType.domain(), ", "))
		}
		f.known[opCommType], f.commType = true, string(c.CommType)
	}
	if c.Collective != "" {
		if !inDomain(opCollective, string(c.Collective)) {
			return fmt.Errorf("selection: unknown Collective %q (valid: %s)", c.Collective, strings.Join(opCollective.domain(), ", "))
		}
		f.known[opCollective], f.collective = true, string(c.Collective)
	}
	return nil
}

func (f *facts) setCall(c CallFacts) error {
	if c.MsgSize < 0 {
		return fmt.Errorf("selection: MsgSize %d is negative", c.MsgSize)
	}
	f.known[opMsgSize], f.msgSize = true, int64(c.MsgSize)
	return nil
}

func inDomain(t opType, v string) bool {
	for _, d := range t.domain() {
		if d == v {
			return true
		}
	}
	return false
}

// Prune resolves the operators whose facts are known, wherever they stand in the tree — above,
// below and between the others (S06) — and returns the smaller tree that is left (S08). With
// every creation fact known, only msg_size operators remain, and with a
// declared MsgSize too, none: the tree is one container. Pruning a pruned tree again with more
// facts is allowed. The tree t is not changed.
func (t *Tree) Prune(c CreationFacts) (*Tree, error) {
	if t == nil || t.root == nil {
		return nil, fmt.Errorf("selection: Prune on an empty tree")
	}
	var f facts
	if err := f.setCreation(c); err != nil {
		return nil, err
	}
	root, err := prune(t.root, &f, nil)
	if err != nil {
		return nil, err
	}
	return &Tree{root: root}, nil
}

func prune(c *choice, f *facts, path []string) (*choice, error) {
	if c.leaf != nil {
		return c, nil // immutable: shared
	}
	path = append(path, c.pruned...)
	if f.known[c.typ] {
		n, s := f.value(c.typ)
		for _, b := range c.branches {
			if b.op.holds(n, s) {
				sub, err := prune(b.next, f, append(path, b.key))
				if err != nil {
					return nil, err
				}
				out := *sub
				out.pruned = concat(c.pruned, []string{b.key}, sub.pruned)
				return &out, nil
			}
		}
		// Parse admits only complete trees, so this is a bug, reported rather than a panic.
		return nil, fmt.Errorf("selection: %s: no branch holds", PathString(path))
	}
	out := &choice{typ: c.typ, pruned: c.pruned, branches: make([]branch, len(c.branches))}
	for i, b := range c.branches {
		sub, err := prune(b.next, f, append(path, b.key))
		if err != nil {
			return nil, err
		}
		out.branches[i] = branch{key: b.key, op: b.op, next: sub}
	}
	return out, nil
}

func concat(parts ...[]string) []string {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	if n == 0 {
		return nil
	}
	out := make([]string, 0, n)
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// Step is one branch on the way to a container.
type Step struct {
	Key    string // the branch taken, as written in the file
	Pruned bool   // decided by Prune at creation, not at this call
}

// Trace says how a container was chosen, for an -explain flag.
type Trace struct {
	Steps   []Step // outermost first
	Visited int    // nodes examined at this call: the operators tested and the container
}

// String writes the trace as "collective=alltoall (pruned) > msg_size<=256 > msg_size=any; 3 nodes".
func (tr Trace) String() string {
	var b strings.Builder
	for i, s := range tr.Steps {
		if i > 0 {
			b.WriteString(" > ")
		}
		b.WriteString(s.Key)
		if s.Pruned {
			b.WriteString(" (pruned)")
		}
	}
	if len(tr.Steps) == 0 {
		b.WriteString("(top level)")
	}
	fmt.Fprintf(&b, "; %d nodes", tr.Visited)
	return b.String()
}

// Select walks a pruned tree for one call. It fails if it meets an operator whose fact is known
// only at creation and was not given to Prune: prune first, or use Walk.
func (t *Tree) Select(call CallFacts) (Container, Trace, error) {
	var f facts
	if err := f.setCall(call); err != nil {
		return Container{}, Trace{}, err
	}
	return t.walk(&f)
}

// Walk evaluates the whole tree with every fact at once: what each call would cost without
// pruning. It chooses what Prune(c) followed by Select(call) chooses: a MsgSize declared in c
// is the one that counts, as Prune leaves no msg_size operator for call's.
func (t *Tree) Walk(c CreationFacts, call CallFacts) (Container, Trace, error) {
	var f facts
	if err := f.setCall(call); err != nil {
		return Container{}, Trace{}, err
	}
	if err := f.setCreation(c); err != nil {
		return Container{}, Trace{}, err
	}
	return t.walk(&f)
}

func (t *Tree) walk(f *facts) (Container, Trace, error) {
	var tr Trace
	if t == nil || t.root == nil {
		return Container{}, tr, fmt.Errorf("selection: select on an empty tree")
	}
	c := t.root
	for {
		for _, k := range c.pruned {
			tr.Steps = append(tr.Steps, Step{Key: k, Pruned: true})
		}
		tr.Visited++ // the container, or the first branch tested below
		if c.leaf != nil {
			return *c.leaf, tr, nil
		}
		if !f.known[c.typ] {
			return Container{}, tr, fmt.Errorf("selection: %s: the %s is not known: give it to Prune first",
				PathString(append(stepKeys(tr.Steps), c.branches[0].key)), c.typ)
		}
		n, s := f.value(c.typ)
		var next *choice
		for i, b := range c.branches {
			if i > 0 {
				tr.Visited++
			}
			if b.op.holds(n, s) {
				tr.Steps = append(tr.Steps, Step{Key: b.key})
				next = b.next
				break
			}
		}
		if next == nil {
			return Container{}, tr, fmt.Errorf("selection: %s: no branch holds", PathString(stepKeys(tr.Steps)))
		}
		c = next
	}
}

func stepKeys(steps []Step) []string {
	keys := make([]string, len(steps))
	for i, s := range steps {
		keys[i] = s.Key
	}
	return keys
}

// Fixed reports whether the tree chooses one container whatever the call facts: on the way down,
// every operator left either has NAME=any as its first branch (which always holds) or branches
// that all end in that same container. A pruned tree that is fixed needs no walk at all, and its
// caller no call facts (S05, S06: what does not depend on the message is decided once).
//
// The trace is the one every call has: the keys decided by Prune, the =any branches taken, and,
// where differing branches all choose the container, one step "msg_size=* (every branch)" that
// stands for them. Visited is 0: nothing is examined per call.
func (t *Tree) Fixed() (Container, Trace, bool) {
	var tr Trace
	if t == nil || t.root == nil {
		return Container{}, tr, false
	}
	c := t.root
	for {
		for _, k := range c.pruned {
			tr.Steps = append(tr.Steps, Step{Key: k, Pruned: true})
		}
		if c.leaf != nil {
			return *c.leaf, tr, true
		}
		if b := c.branches[0]; b.op.form == formAny {
			tr.Steps = append(tr.Steps, Step{Key: b.key})
			c = b.next
			continue
		}
		leaf, ok := c.onlyContainer()
		if !ok {
			return Container{}, Trace{}, false
		}
		tr.Steps = append(tr.Steps, Step{Key: c.typ.String() + "=* (every branch)"})
		return *leaf, tr, true
	}
}

// onlyContainer returns the container every reachable leaf below c names, if they all name one.
// Branches after a NAME=any are never taken, so they do not count.
func (c *choice) onlyContainer() (*Container, bool) {
	if c.leaf != nil {
		return c.leaf, true
	}
	var only *Container
	for _, b := range c.branches {
		leaf, ok := b.next.onlyContainer()
		if !ok || (only != nil && leaf.String() != only.String()) {
			return nil, false
		}
		only = leaf
		if b.op.form == formAny {
			break
		}
	}
	return only, only != nil
}
