package array

import (
	"fmt"

	"github.com/vmihailenco/msgpack/v5"
	"reflect"

	"github.com/charmgo/charm/chare"
)

// Element is embedded in array element types.
type Element[T any, I comparable] struct {
	chare.Base
}

// ThisIndex returns the element's index (thisIndex).
func (e *Element[T, I]) ThisIndex() I { return e.Index().(I) }

// ThisProxy returns a proxy to the whole array (thisProxy).
func (e *Element[T, I]) ThisProxy() Proxy[T, I] {
	return Proxy[T, I]{chare.NewProxy[T](chare.Route{Kind: chare.KindArrayAll, Coll: e.Collection().ID})}
}

// Proxy addresses a whole array (a send through it is a broadcast); At
// addresses one element.
type Proxy[T any, I comparable] struct {
	chare.Proxy[T]
}

// At returns a proxy to the element with index i. The index is checked
// when something is sent.
func (p Proxy[T, I]) At(i I) chare.Proxy[T] {
	return p.WithRoute(chare.Route{Kind: chare.KindElement, Coll: p.Route().Coll, Index: i})
}

// Delegate returns a copy of the array proxy whose sends go to d.
func (p Proxy[T, I]) Delegate(d chare.Delegate) Proxy[T, I] { return Proxy[T, I]{p.Proxy.Delegate(d)} }

// Undelegate returns a copy of the array proxy that sends directly.
func (p Proxy[T, I]) Undelegate() Proxy[T, I] { return Proxy[T, I]{p.Proxy.Undelegate()} }

// Option configures an array at creation.
type Option func(*options)

type options struct {
	m Map
}

// WithMap places the elements with m instead of Block.
func WithMap(m Map) Option { return func(o *options) { o.m = m } }

// New creates an array of zero T elements, one per index of the shape.
func New[T any, I comparable](from chare.Context, s Shape[I], opts ...Option) (Proxy[T, I], error) {
	return create[T](from, s, nil, chare.Spec{}, opts)
}

// NewWith creates an array and runs init(msg) on every element right after
// it is made, before any other message reaches it (a constructor).
func NewWith[T any, I comparable, M any](from chare.Context, s Shape[I], init func(*T, M), msg M, opts ...Option) (Proxy[T, I], error) {
	var sp chare.Spec
	f, err := chare.InitOf(from, &sp, init, msg)
	if err != nil {
		return Proxy[T, I]{}, err
	}
	return create[T](from, s, f, sp, opts)
}

type binder interface {
	Bind(*chare.PE, *chare.Collection, any, any)
}

// info is what every PE knows of an array.
type info[I comparable] struct {
	shape Shape[I]
	m     Map
	npes  int
	name  string
}

func (a *info[I]) locate(index any) (int, error) {
	i, ok := index.(I)
	if !ok {
		var want I
		return 0, fmt.Errorf("array: index %v of type %T for array %s, whose indices are %T", index, index, a.name, want)
	}
	pos, ok := a.shape.Pos(i)
	if !ok {
		return 0, fmt.Errorf("array: index %v is out of range for array %s of shape %v", index, a.name, a.shape)
	}
	return place(a.m, i, pos, a.shape.Len(), a.npes)
}

func create[T any, I comparable](from chare.Context, s Shape[I], init func(any), sp chare.Spec, opts []Option) (Proxy[T, I], error) {
	pe := chare.PEOf(from)
	if pe == nil {
		return Proxy[T, I]{}, chare.ErrNoContext
	}
	typ, err := chare.TypeOf[T]()
	if err != nil {
		return Proxy[T, I]{}, err
	}
	// ThisIndex is Element's own method: a chare or group type embeds a
	// Base (a binder) too, but is no array element.
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
	for _, opt := range opts {
		opt(&o)
	}
	a := &info[I]{shape: s, m: o.m, npes: pe.NumPEs(), name: typ.Name}
	c := &chare.Collection{ID: pe.NewCollID(), Kind: chare.KindElement, Type: typ, Ext: a}
	a.name = fmt.Sprintf("%s %v", typ.Name, c.ID)
	// Which PEs have elements: they form the reduction tree and get the
	// creation message.
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
		if sp.Data, err = encodeSpec(s, o.m); err != nil {
			return Proxy[T, I]{}, fmt.Errorf("array: %s cannot be created in a job of several processes: %w", typ.Name, err)
		}
	}
	sp.Builder = "array"
	c.Spec = sp
	build(c, a, init)
	pe.AddCollection(c)
	for _, p := range c.Tree {
		pe.Actor().Send(p, chare.CreateMessage(c.ID))
	}
	return Proxy[T, I]{chare.NewProxy[T](chare.Route{Kind: chare.KindArrayAll, Coll: c.ID})}, nil
}

// build gives an array's collection its NewLocal and index decoder, here
// or in another process.
func build[I comparable](c *chare.Collection, a *info[I], init func(any)) {
	c.Ext = a
	c.DecodeIndex = func(b []byte) (any, error) {
		var i I
		if err := msgpack.Unmarshal(b, &i); err != nil {
			return nil, fmt.Errorf("array: bad index for %s: %w", a.name, err)
		}
		return i, nil
	}
	s := a.shape
	c.NewLocal = func(here *chare.PE) (chare.Part, error) {
		l := &part[I]{info: a, coll: c, elems: map[any]any{}}
		for p := 0; p < s.Len(); p++ {
			idx := s.At(p)
			where, _ := place(a.m, idx, p, s.Len(), a.npes)
			if where != here.ID() {
				continue
			}
			obj := c.Type.New()
			obj.(binder).Bind(here, c, idx, obj)
			if init != nil {
				init(obj)
			}
			l.elems[idx] = obj
		}
		return l, nil
	}
}

// part holds an array's elements on one PE.
type part[I comparable] struct {
	*info[I]
	coll  *chare.Collection
	elems map[any]any
}

func (l *part[I]) Locate(index any) (int, error) { return l.locate(index) }

func (l *part[I]) Deliver(pe *chare.PE, e chare.Envelope, index any) {
	obj := l.elems[index]
	if obj == nil {
		where, err := l.locate(index)
		if err == nil {
			err = fmt.Errorf("array: element %v of %s is on PE %d, but a message for it (%s) reached PE %d", index, l.name, where, chare.Describe(e), pe.ID())
		}
		pe.Fail(err)
		return
	}
	pe.Invoke(obj, e)
}

func (l *part[I]) DeliverAll(pe *chare.PE, e chare.Envelope) {
	for _, obj := range l.elems {
		pe.Invoke(obj, e)
	}
}

func (l *part[I]) NumLocal() int { return len(l.elems) }

func (l *part[I]) Object(index any) any { return l.elems[index] }

// Each calls fn on every element on this PE (libraries such as TRAM use it
// to deliver an item to all local elements).
func (l *part[I]) Each(fn func(obj any)) {
	for _, obj := range l.elems {
		fn(obj)
	}
}
