package core

import (
	"fmt"
	"sort"
	"sync"
)

// PortableDelegate is a delegate that travels with its proxy: in
// messages to other processes, in migrated and checkpointed state, in
// callbacks made from the proxy. It exists in every process of the job
// under one identity (a group-like object made collectively), and a proxy
// decoded anywhere is delegated to the instance that its kind's resolver
// returns there. TRAM's delegates and Comlib's instances are portable, so
// a program sends through the same delegate on one process or many. A
// proxy delegated to a delegate that is not portable cannot be encoded:
// the message, migration or checkpoint fails with an error naming the
// delegate, rather than the proxy arriving undelegated.
//
// A program's own delegate becomes portable by implementing DelegateRef
// and registering its kind, in an init function, with a resolver that
// returns the process's instance for an identity.
type PortableDelegate interface {
	Delegate
	// DelegateRef names the delegate across the job: a kind registered
	// with RegisterDelegateKind and an identity within that kind.
	DelegateRef() (kind string, id uint64)
}

// DelegateResolver returns, in the job running on pe, the delegate with
// the given identity.
type DelegateResolver func(pe *PE, id uint64) (Delegate, error)

var delegateKinds sync.Map // kind → DelegateResolver

// RegisterDelegateKind makes a kind of portable delegate known to this
// process. Call it in an init function, in the same order in every
// process (the same binary does).
func RegisterDelegateKind(kind string, resolve DelegateResolver) {
	if _, dup := delegateKinds.LoadOrStore(kind, resolve); dup {
		panic(fmt.Sprintf("chare: delegate kind %q registered twice", kind))
	}
}

// DelegateName names a delegate in errors and reports: its type, and its
// String if it has one.
func DelegateName(d Delegate) string {
	if s, ok := d.(fmt.Stringer); ok {
		return fmt.Sprintf("%s (%s)", valueTypeName(d), s.String())
	}
	return valueTypeName(d)
}

func delegateKindNames() []string {
	var names []string
	delegateKinds.Range(func(k, _ any) bool { names = append(names, k.(string)); return true })
	sort.Strings(names)
	return names
}

func newRemoteDelegate(kind string, id uint64) (*remoteDelegate, error) {
	r, ok := delegateKinds.Load(kind)
	if !ok {
		return nil, fmt.Errorf("chare: a proxy came delegated to a %q delegate, a kind this process does not know (known: %v)", kind, delegateKindNames())
	}
	return &remoteDelegate{kind: kind, id: id, resolve: r.(DelegateResolver)}, nil
}

// remoteDelegate stands for a portable delegate decoded from a message:
// the message was decoded before the job was known, so the delegate is
// resolved on first use, on the PE that uses it.
type remoteDelegate struct {
	kind    string
	id      uint64
	resolve DelegateResolver
}

func (r *remoteDelegate) get(from Context) (Delegate, error) {
	pe, err := peFrom(from)
	if err != nil {
		return nil, err
	}
	d, err := r.resolve(pe, r.id)
	if err != nil {
		return nil, err
	}
	if d == nil { // a resolver's mistake, not the sender's
		return nil, fmt.Errorf("chare: the resolver of %q delegates returned no delegate for id %d", r.kind, r.id)
	}
	return d, nil
}

// DelegateRef implements PortableDelegate: a proxy passed on travels on
// delegated.
func (r *remoteDelegate) DelegateRef() (string, uint64) { return r.kind, r.id }

func (r *remoteDelegate) String() string { return fmt.Sprintf("%s delegate %d", r.kind, r.id) }

func (r *remoteDelegate) Send(from Context, e Envelope) error {
	d, err := r.get(from)
	if err != nil {
		return err
	}
	return d.Send(from, e)
}

func (r *remoteDelegate) Broadcast(from Context, e Envelope) error {
	d, err := r.get(from)
	if err != nil {
		return err
	}
	return d.Broadcast(from, e)
}

func (r *remoteDelegate) Multicast(from Context, e Envelope) error {
	d, err := r.get(from)
	if err != nil {
		return err
	}
	return d.Multicast(from, e)
}

func (r *remoteDelegate) BeginIteration(from Context, iteration int) error {
	d, err := r.get(from)
	if err != nil {
		return err
	}
	if b, ok := d.(Bracketed); ok {
		return b.BeginIteration(from, iteration)
	}
	return nil
}

func (r *remoteDelegate) EndIteration(from Context) error {
	d, err := r.get(from)
	if err != nil {
		return err
	}
	if b, ok := d.(Bracketed); ok {
		return b.EndIteration(from)
	}
	return nil
}

// Resolve returns the delegate a proxy decoded from another process
// stands for, on the PE of from; other delegates are returned as they are.
func Resolve(from Context, d Delegate) (Delegate, error) {
	if r, ok := d.(*remoteDelegate); ok {
		return r.get(from)
	}
	return d, nil
}

// Identity returns the collection and index of the object that from is
// (the PE for a group branch, 0 for a singleton), or false for a PE's own
// context.
func Identity(from Context) (CollID, any, bool) {
	b := from.base()
	if b == nil || b.coll == nil {
		return 0, nil, false
	}
	return b.coll.ID, b.index, true
}

// IndexKey returns a member index as a string that is the same in every
// process (its msgpack form): a key for maps that mix local indices and
// indices that came from other processes.
func IndexKey(i any) (string, error) {
	b, err := encodeIndex(i)
	return string(b), err
}

// BranchCopy returns a copy of a group broadcast envelope addressed to the
// branch on one PE alone (delegates that route broadcasts themselves).
func BranchCopy(e Envelope, pe int) Envelope {
	c := e.clone()
	h := c.Header()
	h.Kind, h.PE, h.Index, h.Section, h.Epoch, h.Hops = KindBranch, pe, nil, nil, 0, 0
	return c
}

// IndexFromKey returns the index that IndexKey made k from, in the form
// that envelopes carry until the destination decodes it with the
// collection's index type.
func IndexFromKey(k string) any { return rawIndex(k) }
