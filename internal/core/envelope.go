package core

import (
	"fmt"

	"github.com/charmgo/charm/actor"
)

// Header is the routing part of an envelope.
type Header struct {
	Route
	Entry *Entry
	Src   int // the sending PE
	// Root is the PE at the root of a broadcast's spanning tree.
	Root int
	// Epoch is, for a message to an array element, the epoch at which the
	// sender believed the element to be on the destination PE (see
	// package location); for an array broadcast, its sequence number.
	Epoch uint32
	// Hops counts how many times a message to an array element has been
	// forwarded.
	Hops uint8
	// Flow numbers the message's arrow in a trace (0: none); with Src it
	// names the arrow job-wide (trace.FlowID), and it travels to other
	// processes in the envelope's tail.
	Flow uint32
}

// Members returns the section members on the destination PE of a
// multicast hop; the multicast puts them in the route's Index, which
// sections do not otherwise use. The header stays small: it is allocated
// with every message.
func (h *Header) Members() []any {
	m, _ := h.Index.([]any)
	return m
}

// Envelope is one entry-method invocation on its way: a header and the
// message. Delegates receive envelopes and pass them on with [Forward].
type Envelope interface {
	actor.Message
	Header() *Header
	// Payload returns the message, or nil for an entry without one.
	Payload() any
	// PayloadRef returns a pointer to the message (the message itself for
	// an envelope built from a description, which holds it as an
	// interface), or nil for an entry without one: unlike Payload, it
	// does not copy the message into an interface, so it allocates
	// nothing. What it points to must not be changed.
	PayloadRef() any
	invoke(pe *PE, obj any)
	clone() Envelope
}

type envHead struct{ h Header }

func (e *envHead) Header() *Header { return &e.h }

func (e *envHead) Describe() string {
	name := "an entry method"
	if e.h.Entry != nil {
		name = e.h.Entry.String()
	}
	switch e.h.Kind {
	case KindElement:
		return fmt.Sprintf("%s on element %v of array %v", name, e.h.Index, e.h.Coll)
	case KindArrayAll, KindSection:
		return fmt.Sprintf("%s (%s of array %v)", name, e.h.Kind, e.h.Coll)
	case KindBranch, KindGroupAll:
		return fmt.Sprintf("%s on group %v", name, e.h.Coll)
	}
	return fmt.Sprintf("%s on chare %v", name, e.h.Coll)
}

// Deliver implements actor.Message.
func (e *envHead) deliver(pe *actor.PE, self Envelope) { peOf(pe).route(self) }

// env1 carries a message for an entry method func(*T, M).
type env1[T, M any] struct {
	envHead
	fn  func(*T, M)
	msg M
}

func (e *env1[T, M]) Deliver(pe *actor.PE)  { e.deliver(pe, e) }
func (e *env1[T, M]) Payload() any          { return e.msg }
func (e *env1[T, M]) PayloadRef() any       { return &e.msg }
func (e *env1[T, M]) invoke(_ *PE, obj any) { e.fn(obj.(*T), e.msg) }
func (e *env1[T, M]) clone() Envelope       { c := *e; return &c }

// env0 carries a call of an entry method func(*T) without a message.
type env0[T any] struct {
	envHead
	fn func(*T)
}

func (e *env0[T]) Deliver(pe *actor.PE)  { e.deliver(pe, e) }
func (e *env0[T]) Payload() any          { return nil }
func (e *env0[T]) PayloadRef() any       { return nil }
func (e *env0[T]) invoke(_ *PE, obj any) { e.fn(obj.(*T)) }
func (e *env0[T]) clone() Envelope       { c := *e; return &c }

// envCall carries a call of an entry method func(*T, M) R: a sync call
// whose result goes to the future reply, or a send (reply zero) whose
// result is dropped.
type envCall[T, M, R any] struct {
	envHead
	fn    func(*T, M) R
	msg   M
	reply futureRef
}

func (e *envCall[T, M, R]) Deliver(pe *actor.PE) { e.deliver(pe, e) }
func (e *envCall[T, M, R]) Payload() any         { return e.msg }
func (e *envCall[T, M, R]) PayloadRef() any      { return &e.msg }
func (e *envCall[T, M, R]) invoke(pe *PE, obj any) {
	r := e.fn(obj.(*T), e.msg)
	pe.reply(e.reply, r)
}
func (e *envCall[T, M, R]) clone() Envelope { c := *e; return &c }

// envCall0 is envCall for an entry method func(*T) R without a message.
type envCall0[T, R any] struct {
	envHead
	fn    func(*T) R
	reply futureRef
}

func (e *envCall0[T, R]) Deliver(pe *actor.PE) { e.deliver(pe, e) }
func (e *envCall0[T, R]) Payload() any         { return nil }
func (e *envCall0[T, R]) PayloadRef() any      { return nil }
func (e *envCall0[T, R]) invoke(pe *PE, obj any) {
	r := e.fn(obj.(*T))
	pe.reply(e.reply, r)
}
func (e *envCall0[T, R]) clone() Envelope { c := *e; return &c }

// reply sends the result of a sync call to its future; a send without a
// future (SendR) drops it.
func (pe *PE) reply(to futureRef, r any) {
	if to.ID == 0 {
		return
	}
	if err := pe.setFuture(to, r); err != nil {
		pe.fail(err)
	}
}

// envDyn carries a message to an entry known only by its description
// (callbacks, messages decoded from another process); it calls the method
// through the entry's invoker.
type envDyn struct {
	envHead
	msg   any
	reply futureRef // for a sync call decoded from another process
}

func (e *envDyn) Deliver(pe *actor.PE) { e.deliver(pe, e) }
func (e *envDyn) Payload() any         { return e.msg }
func (e *envDyn) PayloadRef() any      { return e.msg }
func (e *envDyn) invoke(pe *PE, obj any) {
	r, err := e.h.Entry.Invoke(obj, e.msg)
	if err == nil && e.reply.ID != 0 {
		err = pe.setFuture(e.reply, r)
	}
	if err != nil {
		pe.fail(err)
	}
}
func (e *envDyn) clone() Envelope { c := *e; return &c }

// NewEnvelope builds an envelope for an entry method known by its
// description, with the message in an any; the message's type is checked
// when the method runs.
func NewEnvelope(r Route, e *Entry, msg any) Envelope {
	return &envDyn{envHead: envHead{h: Header{Route: r, Entry: e}}, msg: msg}
}

// newEnvDyn is NewEnvelope for a send from this PE: the envelope comes
// from an array of them (as nextEnv1's do, see envSlab), one allocation
// for several callbacks sent from here. Nothing is reused.
func (pe *PE) newEnvDyn(r Route, e *Entry, msg any) *envDyn {
	if len(pe.dynFree) == 0 {
		n := max(pe.dynN, 4)
		pe.dynFree = make([]envDyn, n)
		pe.dynN = min(2*n, slabMax)
	}
	env := &pe.dynFree[0]
	pe.dynFree = pe.dynFree[1:]
	env.h = Header{Route: r, Entry: e}
	env.msg = msg
	return env
}

// ElementCopy returns a copy of a multicast envelope addressed to one
// member alone: a section member that is no longer where the multicast
// expected it is reached as a single element.
func ElementCopy(e Envelope, index any) Envelope {
	c := e.clone()
	h := c.Header()
	h.Kind, h.Index, h.Section, h.Epoch, h.Hops = KindElement, index, nil, 0, 0
	return c
}
