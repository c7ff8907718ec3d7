package array

import (
	"fmt"
	"reflect"

	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/chare/indexcodec"
	"github.com/charmgo/charm/internal/core"
)

// Element is embedded in array element types.
type Element[T any, I comparable] struct {
	chare.Base
	// this is the proxy to the whole array, made when the element is
	// bound, so that ThisProxy only copies it.
	this Proxy[T, I] `msgpack:"-"`
}

// bind binds the element to its PE, array and index; the array calls it
// when it makes or moves the element.
func (e *Element[T, I]) bind(pe *chare.PE, coll *core.Collection, index, obj any) {
	core.BindBase(&e.Base, pe, coll, index, obj)
	e.this = Proxy[T, I]{chare.NewProxy[T](chare.Route{Kind: chare.KindArrayAll, Coll: coll.ID})}
}

// isElement marks the types that embed an Element: their objects are of a
// kind that migrates (chare.Type.Migrates).
func (e *Element[T, I]) isElement() {}

type elementType interface{ isElement() }

func init() {
	et := reflect.TypeFor[elementType]()
	core.RegisterMigrating(func(t reflect.Type) bool { return reflect.PointerTo(t).Implements(et) })
}

// ThisIndex returns the element's index (thisIndex).
func (e *Element[T, I]) ThisIndex() I { return e.Index().(I) }

// ThisProxy returns a proxy to the whole array (thisProxy); the zero
// proxy for an element the runtime did not make.
func (e *Element[T, I]) ThisProxy() Proxy[T, I] { return e.this }

// Proxy addresses a whole array (a send through it is a broadcast); At
// addresses one element.
type Proxy[T any, I comparable] struct {
	chare.Proxy[T]
}

// At returns a proxy to the element with index i. The index is checked
// when something is sent.
func (p Proxy[T, I]) At(i I) chare.Proxy[T] {
	return core.ElementOf(&p.Proxy, i)
}

// Delegate returns a copy of the array proxy whose sends go to d.
func (p Proxy[T, I]) Delegate(d chare.Delegate) Proxy[T, I] { return Proxy[T, I]{p.Proxy.Delegate(d)} }

// Undelegate returns a copy of the array proxy that sends directly.
func (p Proxy[T, I]) Undelegate() Proxy[T, I] { return Proxy[T, I]{p.Proxy.Undelegate()} }

// Option configures an array at creation.
type Option func(*options)

type options struct {
	m       Map
	demand  bool
	maxHops int
}

// WithMap places the elements with m instead of Block (Hash for Sparse
// arrays). The map gives each index its home PE, where it is created and
// which always knows where it is.
func WithMap(m Map) Option { return func(o *options) { o.m = m } }

// WithDemandCreation creates an element, on its home, when the first
// message for it arrives there and it does not exist (Charm++'s demand
// creation), instead of holding the message until it is inserted.
func WithDemandCreation() Option { return func(o *options) { o.demand = true } }

// WithMaxHops sets how many times a message for an element that moved is
// forwarded along caches before it goes to the element's home (default
// location.DefaultMaxHops).
func WithMaxHops(n int) Option { return func(o *options) { o.maxHops = n } }

// New creates an array of zero T elements, one per index of the shape.
func New[T any, I comparable](from chare.Context, s Shape[I], opts ...Option) (Proxy[T, I], error) {
	return create[T](from, s, nil, core.Spec{}, opts)
}

// NewWith creates an array and runs init(msg) on every element right after
// it is made, before any other message reaches it (a constructor).
func NewWith[T any, I comparable, M any](from chare.Context, s Shape[I], init func(*T, M), msg M, opts ...Option) (Proxy[T, I], error) {
	var sp core.Spec
	f, err := core.InitOf(from, &sp, init, msg)
	if err != nil {
		return Proxy[T, I]{}, err
	}
	return create[T](from, s, f, sp, opts)
}

// binder is implemented by the types that embed an Element.
type binder interface {
	bind(*chare.PE, *core.Collection, any, any)
}

// info is what every PE knows of an array.
type info[I comparable] struct {
	shape   Shape[I]
	m       Map
	npes    int
	name    string
	sparse  bool // no fixed index set: elements are inserted
	demand  bool // create an element on its first message
	maxHops int  // forwards along caches before going via the home
	// homes is the home PE of each position of a dense array of at most
	// homeCacheMax elements, computed once at build (cacheHomes): a send
	// that finds no newer location asks the map otherwise, per message.
	homes []int32
}

// homeCacheMax is the most elements of an array whose homes are kept in
// a table (4 bytes each, per process).
const homeCacheMax = 1 << 18

// cacheHomes fills in homes, for a dense array that is small enough. It
// runs before the info is shared by the PEs, which only read it.
func (a *info[I]) cacheHomes() {
	n := a.shape.Len()
	if a.sparse || n > homeCacheMax {
		return
	}
	homes := make([]int32, n)
	for p := range n {
		homes[p] = int32(a.homeAt(a.shape.At(p), p))
	}
	a.homes = homes
}

// check verifies an index: its type, and that it lies in the shape.
func (a *info[I]) check(index any) (I, error) {
	i, ok := index.(I)
	if !ok {
		var want I
		return i, fmt.Errorf("array: index %v of type %T for array %s, whose indices are %T", index, index, a.name, want)
	}
	return i, a.inShape(i)
}

// inShape checks that an index is one of the array's (any is, in a sparse
// array).
func (a *info[I]) inShape(i I) error {
	if !a.sparse {
		if _, ok := a.shape.Pos(i); !ok {
			return fmt.Errorf("array: index %v is out of range for array %s of shape %v", i, a.name, a.shape)
		}
	}
	return nil
}

// decode reads an index that came from another process (package
// chare/indexcodec: without reflection or allocation for the built-in
// index types).
func (a *info[I]) decode(b []byte) (I, error) {
	i, err := indexcodec.Decode[I](b)
	if err != nil {
		return i, fmt.Errorf("array: an index for %s: %w", a.name, err)
	}
	return i, nil
}

// home returns an element's home PE.
func (a *info[I]) home(i I) int {
	pos := -1
	if !a.sparse {
		var ok bool
		if pos, ok = a.shape.Pos(i); !ok {
			return a.homeAt(i, pos)
		}
	}
	return a.homeAtPos(i, pos)
}

// homeAtPos is home for an index whose position in the shape is known
// (-1 in a sparse array).
func (a *info[I]) homeAtPos(i I, pos int) int {
	if pos >= 0 && pos < len(a.homes) {
		return int(a.homes[pos])
	}
	return a.homeAt(i, pos)
}

// homeAt asks the map for the home of index i at position pos (-1 in a
// sparse array).
func (a *info[I]) homeAt(i I, pos int) int {
	p, err := place(a.m, i, pos, a.shape.Len(), a.npes)
	if err != nil {
		return 0 // checked for every index at creation, or by WithMap for sparse arrays
	}
	return p
}

func create[T any, I comparable](from chare.Context, s Shape[I], init func(any), sp core.Spec, opts []Option) (Proxy[T, I], error) {
	pe := chare.PEOf(from)
	if pe == nil {
		return Proxy[T, I]{}, chare.ErrNoContext
	}
	typ, err := chare.TypeOf[T]()
	if err != nil {
		return Proxy[T, I]{}, err
	}
	// bind and ThisIndex are Element's own methods: a chare or group type
	// embeds a Base too, but is no array element.
	_, hasIndex := reflect.TypeFor[*T]().MethodByName("ThisIndex")
	if _, ok := any(new(T)).(binder); !ok || !hasIndex {
		return Proxy[T, I]{}, fmt.Errorf("array: %s must embed array.Element[%s, index type]", typ.Name, typ.Name)
	}
	if _, ok := any(new(T)).(interface{ ThisIndex() I }); !ok {
		var want I
		return Proxy[T, I]{}, fmt.Errorf("array: %s embeds an Element whose index type is not %T", typ.Name, want)
	}
	if s.at == nil {
		return Proxy[T, I]{}, fmt.Errorf("array: bad shape for %s: none given (use Dims, Dims2..Dims6 or Indices)", typ.Name)
	}
	if s.bad != "" {
		return Proxy[T, I]{}, fmt.Errorf("array: bad shape for %s: %s", typ.Name, s.bad)
	}
	o := options{m: Block}
	if s.sparse {
		o.m = Hash
	}
	for _, opt := range opts {
		opt(&o)
	}
	if s.sparse {
		switch o.m.(type) {
		case blockMap, rrMap:
			return Proxy[T, I]{}, fmt.Errorf("array: the %v map needs a shape, and %s is sparse: use Hash or a MapFunc", o.m, typ.Name)
		}
	}
	if o.maxHops < 0 {
		return Proxy[T, I]{}, fmt.Errorf("array: WithMaxHops(%d) for %s: the bound cannot be negative", o.maxHops, typ.Name)
	}
	a := &info[I]{shape: s, m: o.m, npes: pe.NumPEs(), name: typ.Name, sparse: s.sparse, demand: o.demand, maxHops: o.maxHops}
	c := &core.Collection{ID: core.NewCollID(pe), Kind: chare.KindElement, Type: typ, Ext: a}
	a.name = fmt.Sprintf("%s %v", typ.Name, c.ID)
	// The PEs that have elements at first get the creation message.
	has := make([]bool, pe.NumPEs())
	for p := 0; p < s.Len(); p++ {
		where, err := place(o.m, s.At(p), p, s.Len(), a.npes)
		if err != nil {
			return Proxy[T, I]{}, err
		}
		has[where] = true
	}
	for p, h := range has {
		if h {
			c.Tree = append(c.Tree, p)
		}
	}
	if pe.Job().Runtime().NumNodes() > 1 {
		if sp.Data, err = encodeSpec(s, a); err != nil {
			return Proxy[T, I]{}, fmt.Errorf("array: %s cannot be created in a job of several processes: %w", typ.Name, err)
		}
	}
	sp.Builder = "array"
	c.Spec = sp
	build(c, a, init)
	core.AddCollection(pe, c)
	for _, p := range c.Tree {
		pe.Actor().Send(p, core.CreateMessage(c.ID))
	}
	return Proxy[T, I]{chare.NewProxy[T](chare.Route{Kind: chare.KindArrayAll, Coll: c.ID})}, nil
}
