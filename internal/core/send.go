package core

import (
	"errors"
	"fmt"
	"reflect"
	"unsafe"
)

// Send invokes an entry method asynchronously: chare.Send(w, p, (*Worker).Step, msg).
// The compiler checks that the method belongs to the proxy's chare type and
// that msg is its message type. After Send, the sender must not modify what
// msg references: in one process the message is handed over, not copied.
// A broadcast or multicast hands the same message to every receiver, which
// must treat it as read-only.
//
// The target is a type parameter, not an interface parameter, so that a
// proxy is passed as it is instead of being boxed on the heap per send.
func Send[T, M any, P Target[T]](from Context, to P, method func(*T, M), msg M) error {
	pe, err := peFrom(from)
	if err != nil {
		return err
	}
	e := pe.ents.get(funcCode(&method))
	if e == nil {
		if e, err = pe.entry(method, &env1[T, M]{fn: method}); err != nil {
			return err
		}
	}
	p, ok := any(&to).(*Proxy[T]) // the usual target, read in place without a copy or a call through the generic dictionary
	if !ok {
		q := to.proxy()
		p = &q
	}
	if sendFast(pe, p, e, method, msg) {
		return nil
	}
	env := nextEnv1[T, M](pe, e)
	env.fn, env.msg, env.h.Entry = method, msg, e
	return pe.post(p.route, p.del, from, env)
}

// slabMax is the most envelopes one slab holds.
const slabMax = 64

// envSlab hands out the envelopes of one entry method's sends from a PE,
// carved from arrays instead of allocated one by one: a loop of sends
// makes one allocation per slab. The garbage collector still decides when
// a slab goes: it lives while any of its envelopes is referenced (held
// for a collection's announcement, buffered by a delegate, ...), so an
// envelope kept for long keeps at most slabMax-1 others' memory with it.
// Nothing is reused, so nobody has to say when an envelope is done.
type envSlab[T, M any] struct {
	free []env1[T, M]
	n    int // the size of the next array: 4, doubling up to slabMax
}

// nextEnv1 returns a zeroed envelope for entry e from pe's slab for it.
func nextEnv1[T, M any](pe *PE, e *Entry) *env1[T, M] {
	s, ok := pe.lastSlab.(*envSlab[T, M])
	if !ok || pe.lastSlabEntry != e {
		if pe.slabs == nil {
			pe.slabs = map[*Entry]any{}
		}
		if s, ok = pe.slabs[e].(*envSlab[T, M]); !ok {
			s = &envSlab[T, M]{n: 4}
			pe.slabs[e] = s
		}
		pe.lastSlab, pe.lastSlabEntry = s, e
	}
	return s.next()
}

// next returns a zeroed envelope from the slab.
func (s *envSlab[T, M]) next() *env1[T, M] { return s.nextOf(0) }

// nextOf is next for a caller that knows it will ask for at most left
// envelopes, this one included (0: unknown): no array is made longer.
func (s *envSlab[T, M]) nextOf(left int) *env1[T, M] {
	if len(s.free) == 0 {
		n := s.n
		if left > 0 {
			n = min(n, left)
		}
		s.free = make([]env1[T, M], n)
		s.n = min(2*s.n, slabMax)
	}
	env := &s.free[0]
	s.free = s.free[1:]
	return env
}

// sendEnv fills in the envelope's entry method and posts it.
func sendEnv[T any](from Context, p Proxy[T], method any, env Envelope) error {
	pe, err := peFrom(from)
	if err != nil {
		return err
	}
	e, err := pe.entry(method, env)
	if err != nil {
		return err
	}
	env.Header().Entry = e
	return pe.post(p.route, p.del, from, env)
}

// entry is lookupEntry with a small cache: sends in a loop name the same
// method again and again, and an exchange a few methods in turn. On a
// miss in a job of several processes it also gives the entry the typed
// decoder that env's type provides (for messages from other processes),
// so that the hit path does nothing more. A job of one process decodes
// nothing from other processes, and building the decoder (its message
// type's codec) costs microseconds at the first send of each method, so
// it is left out there; a decoder that is missing only makes decoding
// take the reflective way.
func (pe *PE) entry(method any, env Envelope) (*Entry, error) {
	pc := reflect.ValueOf(method).Pointer()
	if e := pe.ents.get(pc); e != nil {
		return e, nil
	}
	e, err := lookupEntry(method)
	if err != nil {
		return nil, err
	}
	if w, ok := env.(wireInstaller); ok && e.wireEnv.Load() == nil && pe.job.rt.NumNodes() > 1 {
		w.installWire(e)
	}
	pe.ents.put(pc, e)
	return e, nil
}

// funcCode returns the code pointer of the func value *f (0 for nil), the
// one reflect.ValueOf(*f).Pointer() returns for a func that reflect did
// not make, without converting it to an interface.
func funcCode[F any](f *F) uintptr {
	fv := *(*unsafe.Pointer)(unsafe.Pointer(f))
	if fv == nil {
		return 0
	}
	return *(*uintptr)(fv)
}

// entryCache maps the code pointers of the last few methods named in sends
// to their entries.
type entryCache struct {
	pc   [4]uintptr
	e    [4]*Entry
	next int // the slot the next miss replaces
}

// get returns the entry of the method at pc, or nil.
func (c *entryCache) get(pc uintptr) *Entry {
	for i, p := range c.pc {
		if p == pc && pc != 0 {
			return c.e[i]
		}
	}
	return nil
}

func (c *entryCache) put(pc uintptr, e *Entry) {
	c.pc[c.next], c.e[c.next] = pc, e
	c.next = (c.next + 1) % len(c.pc)
}

// Send0 invokes an entry method that takes no message.
func Send0[T any, P Target[T]](from Context, to P, method func(*T)) error {
	return sendEnv(from, to.proxy(), method, &env0[T]{fn: method})
}

// SendR is Send for an entry method that returns a value (one that Call
// can call): the method runs as Send would run it, and its result is
// dropped. Through a group or array proxy it broadcasts, and through a
// section it multicasts, which Call cannot. The compiler checks the method
// and msg as it does for Send.
//
// Send itself takes only methods without a result: Go has no generic
// parameter that stands for "a method with or without a result" (a type
// set of both func types has no core type, so it could not be called, and
// the result's type could not be inferred for a method without one). So
// the methods with a result have their own functions, SendR and SendR0,
// as they have Call and Call0.
func SendR[T, M, R any](from Context, to Target[T], method func(*T, M) R, msg M) error {
	return sendEnv(from, to.proxy(), method, &envCall[T, M, R]{fn: method, msg: msg})
}

// SendR0 is Send0 for an entry method that returns a value: the result is
// dropped. See SendR.
func SendR0[T, R any](from Context, to Target[T], method func(*T) R) error {
	return sendEnv(from, to.proxy(), method, &envCall0[T, R]{fn: method})
}

// Call invokes an entry method that returns a value (a Charm++ sync entry
// method) on one chare, branch or element, and returns a future for the
// result; a threaded entry method can wait for it with Get. To invoke it
// and drop the result, or to broadcast it, use SendR.
func Call[T, M, R any](from Context, to Target[T], method func(*T, M) R, msg M) (Future[R], error) {
	env := &envCall[T, M, R]{fn: method, msg: msg}
	return call[T, R](from, to.proxy(), "Call", method, env, &env.reply)
}

// Call0 is Call for an entry method without a message:
// f, err := chare.Call0(from, p, (*Counter).Value).
func Call0[T, R any](from Context, to Target[T], method func(*T) R) (Future[R], error) {
	env := &envCall0[T, R]{fn: method}
	return call[T, R](from, to.proxy(), "Call0", method, env, &env.reply)
}

// call posts env, a call of method whose reply future it sets through
// reply, and returns that future. fn names the caller in errors.
func call[T, R any](from Context, p Proxy[T], fn string, method any, env Envelope, reply *futureRef) (Future[R], error) {
	pe, err := peFrom(from)
	if err != nil {
		return Future[R]{}, err
	}
	if p.route.Kind.IsBroadcast() {
		return Future[R]{}, fmt.Errorf("chare: %s needs one chare, branch or element, not a %s (SendR broadcasts and drops the results)", fn, p.route.Kind)
	}
	e, err := pe.entry(method, env)
	if err != nil {
		return Future[R]{}, err
	}
	f := NewFuture[R](from)
	env.Header().Entry = e
	*reply = f.ref()
	if err := pe.post(p.route, p.del, from, env); err != nil {
		pe.dropFuture(f.ref())
		return Future[R]{}, err
	}
	return f, nil
}

// post fills in the envelope's route and sends it, through the delegate if
// there is one.
func (pe *PE) post(r Route, d Delegate, from Context, env Envelope) error {
	h := env.Header()
	h.Route = r
	h.Src = pe.ID()
	if pe.commOn && r.Kind == KindElement && from != nil {
		pe.countComm(from, r)
	}
	if d == nil && h.Entry != nil {
		d = h.Entry.markFor(pe.job) // an entry method marked for a delegate (TRAM's [aggregate])
	}
	if d != nil {
		return pe.delegate(d, from, env)
	}
	return pe.send(env)
}

// delegate hands an envelope to its delegate. A route decoded from a
// message (a callback's) holds its index in wire form, and delegates
// locate elements by the typed index: it is decoded first, and if its
// collection was made in another process and is not announced here yet,
// the envelope waits for the announcement, as on the direct path.
func (pe *PE) delegate(d Delegate, from Context, env Envelope) error {
	h := env.Header()
	if h.Index != nil {
		err := pe.resolveHeader(h)
		if pe.mustHold(h.Coll, err) {
			pe.hold(h.Coll, env, func() {
				if err := pe.delegate(d, ContextOf(pe), env); err != nil {
					pe.fail(fmt.Errorf("chare: %s, which waited for the announcement of %v: %w", Describe(env), h.Coll, err))
				}
			})
			return nil
		}
		if err != nil {
			return err
		}
	}
	switch {
	case h.Kind == KindSection:
		return d.Multicast(from, env)
	case h.Kind.IsBroadcast():
		return d.Broadcast(from, env)
	default:
		return d.Send(from, env)
	}
}

// Forward sends an envelope on the direct path, as if its proxy were not
// delegated. Delegates call it for the sends they do not handle themselves
// and, on the destination PE, to deliver.
func Forward(from Context, e Envelope) error {
	pe, err := peFrom(from)
	if err != nil {
		return err
	}
	e.Header().Src = pe.ID()
	return pe.send(e)
}

// Deliver runs an envelope on this PE right away, as if it had just arrived
// (the last step of a delegate that carried it here itself).
func Deliver(from Context, e Envelope) error {
	pe, err := peFrom(from)
	if err != nil {
		return err
	}
	pe.route(e)
	return nil
}

func (pe *PE) send(env Envelope) error {
	h := env.Header()
	if pe.tr != nil {
		pe.traceSend(h)
	}
	if h.Kind == KindNone || h.Kind > KindSection {
		return fmt.Errorf("chare: cannot send through a %s proxy (was it created?)", h.Kind)
	}
	if h.Kind != KindSection {
		// A forged or zero-valued proxy gets an error here, rather than
		// aborting the job when the message reaches its PE; a collection
		// made in another process may not be announced here yet.
		c, err := pe.collection(h.Coll)
		if pe.mustHold(h.Coll, err) {
			pe.hold(h.Coll, env, func() {
				if err := pe.send(env); err != nil {
					pe.fail(err)
				}
			})
			return nil
		}
		if err != nil {
			return err
		}
		if h.Index, err = pe.resolve(c, h.Index); err != nil {
			return err
		}
	}
	switch h.Kind {
	case KindChare, KindBranch:
		if h.Kind == KindChare {
			if c, err := pe.collection(h.Coll); err == nil && len(c.Tree) == 1 {
				h.PE = c.Tree[0] // where it lives now (a restart may have moved it)
			}
		}
		if h.Index != nil { // a node group branch, addressed by node
			l, err := PartOf(pe, h.Coll)
			if err != nil {
				return err
			}
			if h.PE, err = l.Locate(h.Index); err != nil {
				return err
			}
		}
		if h.PE < 0 || h.PE >= pe.NumPEs() {
			return fmt.Errorf("chare: %s on PE %d: no such PE (the job has %d)", h.Kind, h.PE, pe.NumPEs())
		}
		pe.ap.Send(h.PE, env)
	case KindElement:
		l, err := PartOf(pe, h.Coll)
		if err != nil {
			return err
		}
		var dest int
		if r, ok := l.(ElementRouter); ok {
			dest, err = r.SendTo(h)
		} else {
			dest, err = l.Locate(h.Index)
		}
		if err != nil {
			return err
		}
		if dest < 0 || dest >= pe.NumPEs() {
			return fmt.Errorf("chare: element %v of %v placed on PE %d, which does not exist (the job has %d)", h.Index, h.Coll, dest, pe.NumPEs())
		}
		pe.ap.Send(dest, env)
	case KindGroupAll, KindArrayAll:
		h.Root = pe.ID()
		if h.Kind == KindArrayAll {
			l, err := PartOf(pe, h.Coll)
			if err != nil {
				return err
			}
			if s, ok := l.(Sequencer); ok {
				// Numbered at the array's root, so that every element,
				// wherever it moves, sees each broadcast once.
				h.Root, h.Epoch = s.BroadcastRoot(), 0
				pe.ap.Send(h.Root, env)
				return nil
			}
		}
		// Through this PE's own mailbox, not pe.route: delivering here at
		// once would run the local members' entry method inside the
		// sender's (re-entering a chare that broadcasts to its own
		// collection) and overtake messages sent before.
		pe.ap.Send(pe.ID(), env)
	case KindSection:
		return pe.multicast(env)
	default:
		return fmt.Errorf("chare: cannot send through a %s proxy (was it created?)", h.Kind)
	}
	return nil
}

// Local returns the object behind an element, branch or chare proxy if it
// lives on the sender's PE (Charm++'s ckLocal), or nil.
func Local[T any](from Context, to Target[T]) *T {
	pe, err := peFrom(from)
	if err != nil {
		return nil
	}
	r := to.proxy().route
	l, err := PartOf(pe, r.Coll)
	if err != nil {
		return nil
	}
	lo, ok := l.(interface{ Object(index any) any })
	if !ok {
		return nil
	}
	idx := r.Index
	if r.Kind == KindChare || r.Kind == KindBranch {
		idx = r.PE
	} else if c, err := JobCollection(pe.job, r.Coll); err != nil {
		return nil
	} else if idx, err = pe.resolve(c, idx); err != nil {
		return nil
	}
	obj, _ := lo.Object(idx).(*T)
	return obj
}

// SendInline calls the entry method directly when the target lives on the
// sender's PE and the proxy is not delegated (Charm++'s [inline]): the
// method runs before SendInline returns, without a message. Otherwise, or
// for a threaded method, it sends as Send does.
func SendInline[T, M any](from Context, to Target[T], method func(*T, M), msg M) error {
	p := to.proxy()
	if p.del == nil && !p.route.Kind.IsBroadcast() {
		if obj := Local(from, to); obj != nil {
			if e, err := lookupEntry(method); err == nil && !e.Threaded {
				method(obj, msg)
				return nil
			}
		}
	}
	return Send(from, to, method, msg)
}

// installInvoke gives an entry a typed invoker, so that callbacks to it do
// not go through reflection.
func installInvoke[T, M any](e *Entry, method func(*T, M)) {
	if e.invoke.Load() != nil || e.Msg != reflect.TypeFor[M]() {
		return
	}
	f := func(obj, msg any) any { method(obj.(*T), msg.(M)); return nil }
	e.invoke.Store(&f)
}

// installInvoke0 is installInvoke for a method without a message (a
// barrier's target, called back at every step).
func installInvoke0[T any](e *Entry, method func(*T)) {
	if e.invoke.Load() != nil || e.Msg != nil || e.Result != nil {
		return
	}
	f := func(obj, _ any) any { method(obj.(*T)); return nil }
	e.invoke.Store(&f)
}

// Bound is an entry method given by name with its typed function. Go
// compiles a method expression of a generic chare type written inside
// generic code, such as (*branch[C, T]).Recv, to a closure that Send cannot
// recognize; generic libraries (TRAM) bind their methods by name instead.
type Bound[T, M any] struct {
	e  *Entry
	fn func(*T, M)
}

// Bind finds the entry method name of T, which must take an M, and pairs it
// with fn, which must be that method.
func Bind[T, M any](name string, fn func(*T, M)) (Bound[T, M], error) {
	typ, err := TypeOf[T]()
	if err != nil {
		return Bound[T, M]{}, err
	}
	e, err := typ.Entry(name)
	if err != nil {
		return Bound[T, M]{}, err
	}
	if e.Msg != reflect.TypeFor[M]() {
		return Bound[T, M]{}, fmt.Errorf("chare: %s takes %s, not %s", e, typeName(e.Msg), typeName(reflect.TypeFor[M]()))
	}
	if e.wireEnv.Load() == nil {
		(&env1[T, M]{fn: fn}).installWire(e) // the typed decoder for other processes
	}
	return Bound[T, M]{e: e, fn: fn}, nil
}

// Send invokes the bound method, as chare.Send does.
func (b Bound[T, M]) Send(from Context, to Target[T], msg M) error {
	pe, err := peFrom(from)
	if err != nil {
		return err
	}
	if b.e == nil {
		return errors.New("chare: Send through an unbound method")
	}
	p := to.proxy()
	if sendFast(pe, &p, b.e, b.fn, msg) {
		return nil
	}
	env := nextEnv1[T, M](pe, b.e)
	env.fn, env.msg, env.h.Entry = b.fn, msg, b.e
	return pe.post(p.route, p.del, from, env)
}

// EnvelopeFor builds the envelope of a call of method with msg, addressed
// nowhere yet: collection packages keep it to run later (an inserted
// array element's constructor) with PE.Invoke, or send it in a message as
// a WireEnvelope.
func EnvelopeFor[T, M any](from Context, method func(*T, M), msg M) (Envelope, error) {
	pe, err := peFrom(from)
	if err != nil {
		return nil, err
	}
	env := &env1[T, M]{fn: method, msg: msg}
	e, err := pe.entry(method, env)
	if err != nil {
		return nil, err
	}
	env.h.Entry = e
	env.h.Src = pe.ID()
	return env, nil
}
