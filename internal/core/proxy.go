package core

import "fmt"

// Kind says what a proxy addresses.
type Kind uint8

const (
	KindNone     Kind = iota
	KindChare         // a singleton chare
	KindBranch        // one branch of a group or node group
	KindGroupAll      // every branch of a group or node group (broadcast)
	KindElement       // one element of a chare array
	KindArrayAll      // every element of a chare array (broadcast)
	KindSection       // the members of an array section (multicast)
)

var kindNames = [...]string{"none", "chare", "branch", "group broadcast", "element", "array broadcast", "section"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", k)
}

// IsBroadcast reports whether the kind addresses more than one object.
func (k Kind) IsBroadcast() bool { return k == KindGroupAll || k == KindArrayAll || k == KindSection }

// CollID names a collection (a singleton chare, a group, a node group or an
// array) across the job: the creating PE in the high half, a sequence
// number of that PE in the low half.
type CollID uint64

func (c CollID) String() string { return fmt.Sprintf("#%d.%d", uint64(c)>>32, uint32(c)) }

// Route is where a send goes.
type Route struct {
	Kind    Kind
	Coll    CollID
	PE      int      // the PE of a chare or group branch
	Index   any      // the index of an array element
	Section *Section // the members of a section
}

// Delegate receives the sends made through a delegated proxy (Charm++'s
// CkDelegateMgr). It may forward them with [Forward], aggregate them, or
// route them any way it likes, as long as each arrives once. The Route of
// the envelope says what kind of send it is.
type Delegate interface {
	// Send handles a send to one chare, group branch or array element.
	Send(from Context, e Envelope) error
	// Broadcast handles a send to every branch of a group or every
	// element of an array.
	Broadcast(from Context, e Envelope) error
	// Multicast handles a send to the members of an array section.
	Multicast(from Context, e Envelope) error
}

// Bracketed is implemented by delegates whose strategies work in
// iterations (Comlib's begin/end iteration brackets).
type Bracketed interface {
	BeginIteration(from Context, iteration int) error
	EndIteration(from Context) error
}

// Proxy is a handle to a chare, a group, an array, one of their members or
// a section, through which entry methods of T are invoked. Proxies are
// values: copy them freely, store them, send them in messages.
type Proxy[T any] struct {
	route Route
	del   Delegate
}

// Target is anything that can be sent to: Proxy itself, and the group and
// array proxy types that embed it.
type Target[T any] interface {
	proxy() Proxy[T]
}

func (p Proxy[T]) proxy() Proxy[T] { return p }

// NewProxy returns a proxy for the route; collection packages use it.
func NewProxy[T any](r Route) Proxy[T] { return Proxy[T]{route: r} }

// Route returns where the proxy sends.
func (p Proxy[T]) Route() Route { return p.route }

// IsZero reports whether the proxy was never set.
func (p Proxy[T]) IsZero() bool { return p.route.Kind == KindNone }

// Delegate returns a copy of the proxy whose sends go to d (nil removes
// the delegation). The delegation travels with the proxy: in messages to
// other processes, in migrated and checkpointed state, in entry callbacks
// made from it. It can travel only if d is a PortableDelegate; encoding a
// proxy delegated to any other delegate fails with an error naming it.
func (p Proxy[T]) Delegate(d Delegate) Proxy[T] {
	p.del = d
	return p
}

// Undelegate returns a copy of the proxy that sends directly.
func (p Proxy[T]) Undelegate() Proxy[T] { return p.Delegate(nil) }

// Delegated returns the proxy's delegate, or nil.
func (p Proxy[T]) Delegated() Delegate { return p.del }

// ElementOf returns a proxy of the same delegation as p to the element
// with the given index of the array p addresses; array proxies use it for
// At. It builds the element's proxy in place, where WithRoute copies p
// and its route first. A function, not a method: a method of Proxy would
// be part of every program's chare.Proxy and array.Proxy.
func ElementOf[T any](p *Proxy[T], index any) Proxy[T] {
	return Proxy[T]{route: Route{Kind: KindElement, Coll: p.route.Coll, Index: index}, del: p.del}
}

// WithRoute returns a proxy of the same delegation with another route;
// collection packages use it to derive element proxies.
func (p Proxy[T]) WithRoute(r Route) Proxy[T] {
	p.route = r
	return p
}

// BranchAt returns a proxy to the branch on PE pe of the group p
// addresses, delegated as p is (group.Proxy.At). It reads p in place: a
// loop of sends through At copies no whole proxy for it.
func BranchAt[T any](p *Proxy[T], pe int) Proxy[T] {
	return Proxy[T]{route: Route{Kind: KindBranch, Coll: p.route.Coll, PE: pe}, del: p.del}
}

func (p Proxy[T]) String() string {
	switch p.route.Kind {
	case KindChare, KindBranch:
		return fmt.Sprintf("%s %v on PE %d", p.route.Kind, p.route.Coll, p.route.PE)
	case KindElement:
		return fmt.Sprintf("element %v of array %v", p.route.Index, p.route.Coll)
	}
	return fmt.Sprintf("%s %v", p.route.Kind, p.route.Coll)
}

// BeginIteration starts an iteration on a proxy delegated to a bracketed
// strategy; it does nothing for other proxies.
func BeginIteration[T any](from Context, to Target[T], iteration int) error {
	if b, ok := to.proxy().del.(Bracketed); ok {
		return b.BeginIteration(from, iteration)
	}
	return nil
}

// EndIteration ends the iteration begun by BeginIteration.
func EndIteration[T any](from Context, to Target[T]) error {
	if b, ok := to.proxy().del.(Bracketed); ok {
		return b.EndIteration(from)
	}
	return nil
}
