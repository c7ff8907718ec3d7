package group

import (
	"fmt"

	"github.com/charmgo/charm/actor"
	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/chare/indexcodec"
	"github.com/charmgo/charm/internal/core"
)

// Branch is embedded in group and node group types.
type Branch[T any] struct {
	chare.Base
}

// ThisProxy returns a proxy to the whole group.
func (b *Branch[T]) ThisProxy() Proxy[T] {
	return Proxy[T]{chare.NewProxy[T](chare.Route{Kind: chare.KindGroupAll, Coll: core.CollectionOf(&b.Base).ID})}
}

// ThisNodeProxy returns a proxy to the whole node group.
func (b *Branch[T]) ThisNodeProxy() NodeProxy[T] {
	return NodeProxy[T]{chare.NewProxy[T](chare.Route{Kind: chare.KindGroupAll, Coll: core.CollectionOf(&b.Base).ID})}
}

// Proxy addresses a whole group (a send through it is a broadcast); At
// addresses one branch.
type Proxy[T any] struct {
	chare.Proxy[T]
}

// At returns a proxy to the branch on PE pe.
func (p Proxy[T]) At(pe int) chare.Proxy[T] {
	return core.BranchAt(&p.Proxy, pe)
}

// Delegate returns a copy of the group proxy whose sends go to d.
func (p Proxy[T]) Delegate(d chare.Delegate) Proxy[T] { return Proxy[T]{p.Proxy.Delegate(d)} }

// Undelegate returns a copy of the group proxy that sends directly.
func (p Proxy[T]) Undelegate() Proxy[T] { return Proxy[T]{p.Proxy.Undelegate()} }

// NodeProxy addresses a whole node group; At addresses the branch of one
// node (process).
type NodeProxy[T any] struct {
	chare.Proxy[T]
}

// At returns a proxy to the branch on node n.
func (p NodeProxy[T]) At(node int) chare.Proxy[T] {
	return p.WithRoute(chare.Route{Kind: chare.KindBranch, Coll: p.Route().Coll, PE: -1, Index: node})
}

// New creates a group of T: a zero T on every PE.
func New[T any](from chare.Context) (Proxy[T], error) {
	c, err := create[T](from, false, nil, core.Spec{})
	return Proxy[T]{c}, err
}

// NewWith creates a group and runs init(msg) on every branch before any
// other message reaches it.
func NewWith[T, M any](from chare.Context, init func(*T, M), msg M) (Proxy[T], error) {
	var sp core.Spec
	f, err := core.InitOf(from, &sp, init, msg)
	if err != nil {
		return Proxy[T]{}, err
	}
	c, err := create[T](from, false, f, sp)
	return Proxy[T]{c}, err
}

// NewNode creates a node group of T: one branch per process, living on the
// process's first PE. Its entry methods run there one at a time (Charm++
// node groups may run them on any PE of the node; this one does not).
func NewNode[T any](from chare.Context) (NodeProxy[T], error) {
	c, err := create[T](from, true, nil, core.Spec{})
	return NodeProxy[T]{c}, err
}

// NewNodeWith creates a node group and runs init(msg) on every branch.
func NewNodeWith[T, M any](from chare.Context, init func(*T, M), msg M) (NodeProxy[T], error) {
	var sp core.Spec
	f, err := core.InitOf(from, &sp, init, msg)
	if err != nil {
		return NodeProxy[T]{}, err
	}
	c, err := create[T](from, true, f, sp)
	return NodeProxy[T]{c}, err
}

// LocalBranch returns the group's branch on the caller's PE
// (ckLocalBranch), or nil if the caller is not on a PE.
func LocalBranch[T any](from chare.Context, p Proxy[T]) *T {
	here := chare.PEOf(from)
	if here == nil {
		return nil
	}
	return chare.Local[T](from, p.At(here.ID()))
}

// LocalNodeBranch returns the node group's branch of the caller's process
// if the caller runs on the PE that hosts it, or nil.
func LocalNodeBranch[T any](from chare.Context, p NodeProxy[T]) *T {
	here := chare.PEOf(from)
	if here == nil {
		return nil
	}
	rt := here.Job().Runtime()
	return chare.Local[T](from, p.WithRoute(chare.Route{Kind: chare.KindBranch, Coll: p.Route().Coll, PE: rt.FirstPE(rt.NodeOf(here.ID()))}))
}

func create[T any](from chare.Context, node bool, init func(any), sp core.Spec) (chare.Proxy[T], error) {
	pe := chare.PEOf(from)
	if pe == nil {
		return chare.Proxy[T]{}, chare.ErrNoContext
	}
	typ, err := chare.TypeOf[T]()
	if err != nil {
		return chare.Proxy[T]{}, err
	}
	// Branch's own method: a chare or array element type embeds a Base
	// (a chare.Context) too, but is no group.
	_, isBranch := any(new(T)).(interface{ ThisNodeProxy() NodeProxy[T] })
	if _, ok := any(new(T)).(chare.Context); !ok || !isBranch {
		return chare.Proxy[T]{}, fmt.Errorf("group: %s must embed group.Branch[%s]", typ.Name, typ.Name)
	}
	rt := pe.Job().Runtime()
	var tree []int
	for p := 0; p < pe.NumPEs(); p++ {
		if !node || rt.FirstPE(rt.NodeOf(p)) == p {
			tree = append(tree, p)
		}
	}
	c := &core.Collection{ID: core.NewCollID(pe), Kind: chare.KindBranch, Type: typ, Tree: tree}
	sp.Builder = "group"
	if node {
		sp.Builder = "nodegroup"
	}
	c.Spec = sp
	build(c, node, rt, init)
	core.AddCollection(pe, c)
	for _, p := range tree {
		pe.Actor().Send(p, core.CreateMessage(c.ID))
	}
	return chare.NewProxy[T](chare.Route{Kind: chare.KindGroupAll, Coll: c.ID}), nil
}

// build gives a group's collection its NewLocal, here or in another
// process.
func build(c *core.Collection, node bool, rt *actor.Runtime, init func(any)) {
	c.DecodeIndex = decodeIndex
	c.NewLocal = func(here *chare.PE) (core.Part, error) {
		b := &part{pe: here.ID(), node: node, rt: rt, coll: c}
		if node && rt.FirstPE(rt.NodeOf(here.ID())) != here.ID() {
			return b, nil // a node group's branch lives on its node's first PE
		}
		obj := c.Type.New()
		idx := here.ID()
		if node {
			idx = rt.NodeOf(here.ID())
		}
		core.BindBase(core.BaseOf(obj), here, c, idx, obj)
		b.obj, b.init = obj, init
		return b, nil
	}
}

// Construct implements chare.Constructor: it runs the branch's
// constructor once the part is stored, so that it may send to its group.
func (b *part) Construct() {
	if init := b.init; init != nil {
		b.init = nil
		init(b.obj)
	}
}

func decodeIndex(b []byte) (any, error) {
	i, err := indexcodec.Decode[int](b)
	if err != nil {
		return nil, fmt.Errorf("group: a branch index: %w", err)
	}
	return i, nil
}

func init() {
	for _, name := range []string{"group", "nodegroup"} {
		node := name == "nodegroup"
		core.RegisterBuilder(name, func(c *core.Collection, rt *actor.Runtime, init func(any)) error {
			build(c, node, rt, init)
			return nil
		})
	}
}

// part is a group's branch on one PE.
type part struct {
	pe   int
	node bool
	obj  any
	init func(any) // the constructor, until Construct runs it
	rt   *actor.Runtime
	coll *core.Collection
}

// Locate maps a branch index to its PE: the PE itself for a group, the
// node's first PE for a node group.
func (b *part) Locate(index any) (int, error) {
	i, ok := index.(int)
	if !ok {
		return 0, fmt.Errorf("group: branch index %v (%T) is not an int", index, index)
	}
	if !b.node {
		if i < 0 || i >= b.rt.NumPEs() {
			return 0, fmt.Errorf("group: branch on PE %d: no such PE (the job has %d)", i, b.rt.NumPEs())
		}
		return i, nil
	}
	if i < 0 || i >= b.rt.NumNodes() {
		return 0, fmt.Errorf("group: node %d does not exist (the job has %d)", i, b.rt.NumNodes())
	}
	return b.rt.FirstPE(i), nil
}

// Deliver runs a message to the branch (one sent to it, or a branch's run
// unrolled into envelopes, see chare's run.go). A header that names
// another chare type's entry method (damaged, or a program's bug) is
// refused with an error before the method is called.
func (b *part) Deliver(pe *chare.PE, e chare.Envelope, _ any) {
	if h := e.Header(); h.Entry != nil && h.Entry.Type != b.coll.Type {
		branch := fmt.Sprintf("the branch on PE %d", b.pe)
		if b.node {
			branch = fmt.Sprintf("the branch of node %d on PE %d", b.rt.NodeOf(b.pe), b.pe)
		}
		pe.Fail(fmt.Errorf("group: %s, %s: an entry method of %s, not of the branches of %s %v", core.Describe(e), branch, h.Entry.Type.Name, b.coll.Type.Name, b.coll.ID))
		return
	}
	// A header routed as another kind, or to another PE's branch (damaged,
	// or built by hand), must not run on this branch.
	// (A node group's branch sent through a delegate keeps PE −1 and its
	// node in Index: the route, not the header, found this PE.)
	if h := e.Header(); h.Kind != chare.KindBranch || h.PE >= 0 && h.PE != b.pe {
		pe.Fail(fmt.Errorf("group: %s reached the branch on PE %d of group %v as a %v message for PE %d", core.Describe(e), b.pe, b.coll.ID, h.Kind, h.PE))
		return
	}
	if b.obj == nil {
		pe.Fail(fmt.Errorf("group: %s reached PE %d, which holds no branch of the node group", core.Describe(e), b.pe))
		return
	}
	core.Invoke(pe, b.obj, e)
}

// DeliverAll runs a broadcast on the branch; the PE checked the entry
// method's type before it passed the broadcast on (chare.PE's route).
func (b *part) DeliverAll(pe *chare.PE, e chare.Envelope) {
	if b.obj != nil {
		core.Invoke(pe, b.obj, e)
	}
}

func (b *part) NumLocal() int {
	if b.obj == nil {
		return 0
	}
	return 1
}

func (b *part) Object(any) any { return b.obj }

// Each calls fn on the branch of this PE, if it has one (reductions count
// their contributors with it).
func (b *part) Each(fn func(obj any)) {
	if b.obj != nil {
		fn(b.obj)
	}
}

// Restore implements core.Restorer: a restart gives the branch its state.
func (b *part) Restore(_ *chare.PE, _ any, data []byte, st chare.MemberState) error {
	if b.obj == nil {
		return fmt.Errorf("group: PE %d holds no branch of the node group", b.pe)
	}
	if err := core.UnpackObject(b.obj, data); err != nil {
		return err
	}
	core.BaseOf(b.obj).SetMemberState(st)
	return nil
}
