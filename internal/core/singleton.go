package core

import (
	"fmt"
	"reflect"

	"github.com/charmgo/charm/actor"
)

func reflectType[T any]() reflect.Type { return reflect.TypeFor[T]() }

// isChare reports whether T embeds Chare[T]; a group branch or array
// element type embeds a Base too, but is no singleton chare.
func isChare[T any]() bool {
	_, ctx := any(new(T)).(Context)
	_, self := any(new(T)).(interface{ ThisProxy() Proxy[T] })
	return ctx && self
}

// AnyPE asks New to place a singleton chare itself.
const AnyPE = -1

// New creates a singleton chare of type T on PE pe (or AnyPE) and returns
// a proxy to it (Charm++'s ckNew for a chare). The object starts as the
// zero T.
func New[T any](from Context, pe int) (Proxy[T], error) {
	return newChare[T](from, pe, nil, Spec{})
}

// NewWith creates a singleton chare and runs init(msg) on it before any
// other message (a constructor with arguments).
func NewWith[T, M any](from Context, pe int, init func(*T, M), msg M) (Proxy[T], error) {
	var s Spec
	f, err := InitOf(from, &s, init, msg)
	if err != nil {
		return Proxy[T]{}, err
	}
	return newChare[T](from, pe, f, s)
}

func newChare[T any](from Context, where int, init func(any), s Spec) (Proxy[T], error) {
	pe, err := peFrom(from)
	if err != nil {
		return Proxy[T]{}, err
	}
	typ, err := TypeOf[T]()
	if err != nil {
		return Proxy[T]{}, err
	}
	if !isChare[T]() {
		return Proxy[T]{}, fmt.Errorf("chare: %s must embed chare.Chare[%s] to be a chare", typ.Name, typ.Name)
	}
	if where == AnyPE {
		where = (pe.ID() + int(pe.seq)) % pe.NumPEs()
	}
	if where < 0 || where >= pe.NumPEs() {
		return Proxy[T]{}, fmt.Errorf("chare: cannot create %s on PE %d: the job has PEs 0..%d", typ.Name, where, pe.NumPEs()-1)
	}
	c := &Collection{ID: NewCollID(pe), Kind: KindChare, Type: typ, Tree: []int{where}}
	s.Builder, s.Data = "chare", nil
	c.Spec = s
	buildChare(c, where, init)
	AddCollection(pe, c)
	pe.ap.Send(where, createMsg{c.ID})
	return Proxy[T]{route: Route{Kind: KindChare, Coll: c.ID, PE: where}}, nil
}

// buildChare gives a singleton chare's collection its NewLocal, here or
// in another process.
func buildChare(c *Collection, where int, init func(any)) {
	c.NewLocal = func(here *PE) (Part, error) {
		if here.ID() != where {
			return nil, fmt.Errorf("chare %s lives on PE %d, not %d", c.Type.Name, where, here.ID())
		}
		obj := c.Type.New()
		BindBase(obj.(Context).base(), here, c, where, obj)
		return &single{pe: where, obj: obj, init: init, coll: c}, nil
	}
}

// Construct implements Constructor: it runs the chare's constructor.
func (s *single) Construct() {
	if init := s.init; init != nil {
		s.init = nil
		init(s.obj)
	}
}

func init() {
	RegisterBuilder("chare", func(c *Collection, _ *actor.Runtime, init func(any)) error {
		if len(c.Tree) != 1 {
			return fmt.Errorf("chare: singleton %v with PEs %v", c.ID, c.Tree)
		}
		buildChare(c, c.Tree[0], init)
		return nil
	})
}

// createMsg makes a PE build its part of a new collection, so that objects
// exist (and their constructors run) even if no message ever reaches them.
type createMsg struct{ coll CollID }

// CreateMessage returns the message that makes a PE build its part of a
// collection; collection packages send it to every PE that has members.
func CreateMessage(c CollID) actor.Message { return createMsg{c} }

func (m createMsg) Deliver(ap *actor.PE) {
	pe := peOf(ap)
	_, err := PartOf(pe, m.coll)
	if err == errPending {
		pe.hold(m.coll, m, func() { m.Deliver(ap) })
		return
	}
	if err != nil {
		pe.fail(err)
	}
}
func (m createMsg) Describe() string { return fmt.Sprintf("the creation of %v", m.coll) }
