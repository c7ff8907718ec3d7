package core

import (
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/charmgo/charm/actor"
	"github.com/charmgo/charm/actor/codec"
	"github.com/charmgo/charm/internal/wirekind"
)

// Collections are described by a Spec that the creating PE announces to
// every other node, which rebuilds the collection from it (its kind's
// Builder). A message for a collection not known yet on a node waits
// there (pending) until its announcement arrives; the announcement always
// arrives, because the creator sends it before anything else.

type Spec struct {
	ID      CollID
	Kind    Kind
	Type    TypeID
	Tree    []int
	Builder string // the package that rebuilds it: "chare", "group", "array"
	Data    []byte // the builder's own description, msgpack-encoded
	Init    EntryID
	InitMsg []byte
	// Restored: the collection comes from a checkpoint, its objects are
	// restored rather than made.
	Restored bool `msgpack:",omitempty"`
}

// Builder rebuilds a collection from its Spec in another process: it sets
// the collection's NewLocal, DecodeIndex and Ext.
type Builder func(c *Collection, rt *actor.Runtime, init func(obj any)) error

var (
	buildersMu sync.RWMutex
	builders   = map[string]Builder{}
)

// RegisterBuilder registers how collections of a kind are rebuilt.
func RegisterBuilder(name string, b Builder) {
	buildersMu.Lock()
	defer buildersMu.Unlock()
	builders[name] = b
}

// InitOf turns a constructor (an entry method and its message, as
// Charm++ constructors are entry methods) into the function that runs it
// on a new object, and, in a job of several processes, records it in the
// spec so that the other processes can run it too.
func InitOf[T, M any](from Context, s *Spec, init func(*T, M), msg M) (func(obj any), error) {
	pe, err := peFrom(from)
	if err != nil {
		return nil, err
	}
	e, err := lookupEntry(init)
	if err != nil {
		return nil, err
	}
	if pe.job.rt.NumNodes() > 1 {
		b, err := codec.Append(codec.For[M](), nil, &msg)
		if err != nil {
			return nil, fmt.Errorf("chare: encoding the constructor message of %s: %w", e, err)
		}
		s.Init, s.InitMsg = e.ID, b
	}
	return func(obj any) { init(obj.(*T), msg) }, nil
}

// rebuild makes a Collection from a Spec that came from another process.
func rebuild(rt *actor.Runtime, s Spec) (*Collection, error) {
	typ, err := TypeByID(s.Type)
	if err != nil {
		return nil, err
	}
	buildersMu.RLock()
	b := builders[s.Builder]
	buildersMu.RUnlock()
	if b == nil {
		return nil, fmt.Errorf("chare: no builder %q for collection %v", s.Builder, s.ID)
	}
	var init func(any)
	if s.Init != 0 {
		e, err := EntryByID(s.Init)
		if err != nil {
			return nil, err
		}
		msg, err := decodeMsg(e, s.InitMsg)
		if err != nil {
			return nil, err
		}
		init = func(obj any) {
			if _, err := e.Invoke(obj, msg); err != nil {
				panic(err)
			}
		}
	}
	c := &Collection{ID: s.ID, Kind: s.Kind, Type: typ, Tree: s.Tree, Spec: s}
	if err := b(c, rt, init); err != nil {
		return nil, err
	}
	return c, nil
}

func (pe *PE) announce(c *Collection) {
	rt := pe.job.rt
	for n := 0; n < rt.NumNodes(); n++ {
		if n != rt.NodeOf(pe.ID()) {
			pe.ap.Send(rt.FirstPE(n), &announceMsg{spec: c.Spec})
		}
	}
}

type announceMsg struct{ spec Spec }

func (m *announceMsg) Describe() string { return fmt.Sprintf("the announcement of %v", m.spec.ID) }
func (m *announceMsg) WireKind() uint16 { return wirekind.Announce }
func (m *announceMsg) EncodeWire(enc *msgpack.Encoder) error {
	return enc.Encode(&m.spec)
}

func (m *announceMsg) Deliver(ap *actor.PE) {
	pe := peOf(ap)
	if _, ok := pe.job.colls.Load(m.spec.ID); !ok {
		c, err := rebuild(pe.job.rt, m.spec)
		if err != nil {
			pe.fail(fmt.Errorf("chare: rebuilding collection %v from node %d: %w", m.spec.ID, pe.job.rt.NodeOf(int(uint64(m.spec.ID)>>32)), err))
			return
		}
		pe.job.colls.Store(c.ID, c)
	}
	// Wake the PEs of this node that hold messages for it.
	rt := pe.job.rt
	for p := rt.FirstPE(rt.NodeOf(pe.ID())); p < rt.NumPEs() && rt.NodeOf(p) == rt.NodeOf(pe.ID()); p++ {
		ap.SendControl(p, knownMsg{m.spec.ID})
	}
}

// knownMsg tells a PE that a collection became known in its process.
type knownMsg struct{ coll CollID }

func (knownMsg) Describe() string { return "a collection announcement" }
func (m knownMsg) Deliver(ap *actor.PE) {
	pe := peOf(ap)
	held := pe.pending[m.coll]
	delete(pe.pending, m.coll)
	for _, w := range held {
		pe.runHeld(w)
	}
}

// heldWork is work that waits on a PE for a collection's announcement.
type heldWork struct {
	what any // the message it handles, to name it if it panics
	run  func()
}

// runHeld runs held work as if its message had just arrived: a panic in it
// names that message, not the announcement that released it.
func (pe *PE) runHeld(w heldWork) {
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(*actor.PanicError); ok {
				panic(r)
			}
			what := valueTypeName(w.what)
			if d, ok := w.what.(actor.Describer); ok {
				what = d.Describe()
			}
			panic(&actor.PanicError{PE: pe.ID(), What: what, Value: r, Stack: debug.Stack()})
		}
	}()
	w.run()
}

// errPending says a collection is not known here yet but will be.
var errPending = errors.New("chare: collection not announced yet")

// pendingLimit bounds the wait for an announcement: a collection that never
// arrives is an error, not a hang.
const pendingLimit = 10 * time.Second

// hold keeps fn, which handles the message what, until the collection
// becomes known here.
func (pe *PE) hold(coll CollID, what any, fn func()) {
	if pe.pending == nil {
		pe.pending = map[CollID][]heldWork{}
	}
	if len(pe.pending[coll]) == 0 {
		pe.ap.After(pendingLimit, knownCheck{coll}.Deliver)
	}
	pe.pending[coll] = append(pe.pending[coll], heldWork{what, fn})
}

type knownCheck struct{ coll CollID }

func (m knownCheck) Deliver(ap *actor.PE) {
	pe := peOf(ap)
	if len(pe.pending[m.coll]) > 0 {
		pe.fail(fmt.Errorf("chare: no collection %v exists: messages for it waited %v on PE %d and its creator (PE %d) never announced it", m.coll, pendingLimit, pe.ID(), uint64(m.coll)>>32))
	}
}
