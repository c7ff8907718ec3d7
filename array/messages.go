package array

import (
	"fmt"

	"github.com/charmgo/charm/actor"
	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/chare/indexcodec"
	"github.com/charmgo/charm/internal/core"
)

// The location manager's messages between the parts of an array.

// target names an element: its array, and its index (or the index's
// bytes, as it came from another process: package chare/indexcodec).
type target struct {
	Coll chare.CollID
	Raw  []byte `msgpack:",omitempty"`
	idx  any
}

// index returns the target's index, decoding it if it came from another
// process.
func (l *part[I]) index(t *target) (I, error) {
	if i, ok := t.idx.(I); ok {
		return i, nil
	}
	var i I
	if t.Raw == nil {
		return i, fmt.Errorf("array: a message for %s without an index", l.name)
	}
	i, err := l.decode(t.Raw)
	if err != nil {
		return i, err
	}
	t.idx = i
	return i, nil
}

func (t *target) encode() error {
	if t.Raw != nil || t.idx == nil {
		return nil
	}
	b, err := indexcodec.Append(nil, t.idx)
	t.Raw = b
	return err
}

// arrayPart is what the protocol messages call on a part.
type arrayPart interface {
	onLoc(m *locMsg)
	onMove(m *moveMsg)
	onArrive(m *arriveMsg)
	onInsert(m *insertMsg)
	onDelete(m *deleteMsg)
	onSync(m *syncMsg)
}

// withPart runs fn on the part of the array on PE ap, once the array is
// known in this process.
func withPart(ap *actor.PE, coll chare.CollID, what interface{ Describe() string }, fn func(arrayPart)) {
	pe := core.PEForMessage(ap, "array", what)
	if pe == nil {
		return
	}
	var run func()
	run = func() {
		l, err := core.PartOrHold(pe, coll, what, run)
		if err != nil {
			pe.Fail(err)
			return
		}
		if l == nil {
			return // held until the array is announced here
		}
		p, ok := l.(arrayPart)
		if !ok {
			pe.Fail(fmt.Errorf("array: %T for %v, which is not an array", what, coll))
			return
		}
		fn(p)
	}
	run()
}

// locMsg tells a PE where an element is (or that it was deleted).
type locMsg struct {
	target
	PE    int
	Epoch uint32
	Gone  bool
}

func (m *locMsg) Deliver(ap *actor.PE) { withPart(ap, m.Coll, m, func(p arrayPart) { p.onLoc(m) }) }
func (m *locMsg) Describe() string {
	return fmt.Sprintf("a location update for element %v of %v", m.idx, m.Coll)
}

// moveMsg asks the element's own PE to migrate it.
type moveMsg struct {
	target
	PE int
}

func (m *moveMsg) Deliver(ap *actor.PE) { withPart(ap, m.Coll, m, func(p arrayPart) { p.onMove(m) }) }
func (m *moveMsg) Describe() string {
	return fmt.Sprintf("the migration of element %v of %v to PE %d", m.idx, m.Coll, m.PE)
}

// arriveMsg carries a migrating element.
type arriveMsg struct {
	target
	From   int // the PE it left
	Epoch  uint32
	Bcast  uint32
	State  chare.MemberState
	Data   []byte
	Sync   bool
	Syncs  int
	Resume bool
}

func (m *arriveMsg) Deliver(ap *actor.PE) {
	withPart(ap, m.Coll, m, func(p arrayPart) { p.onArrive(m) })
}
func (m *arriveMsg) Describe() string {
	return fmt.Sprintf("the arrival of element %v of %v", m.idx, m.Coll)
}

// insertMsg carries an insertion: to the root (stage 1), to the home
// (0), to the PE that creates the element (2).
type insertMsg struct {
	target
	Stage  uint8
	PE     int
	Origin int
	Epoch  uint32
	RedNo  int
	Bcast  uint32 // the broadcasts numbered before it: it gets the later ones
	// Reserved: the home set the index aside already (an insertion made
	// on the home, or a creation on demand).
	Reserved bool
	Ctor     *core.WireEnvelope `msgpack:",omitempty"`
	ctor     chare.Envelope
}

func (m *insertMsg) Deliver(ap *actor.PE) {
	if m.ctor == nil && m.Ctor != nil {
		m.ctor = m.Ctor.E
	}
	withPart(ap, m.Coll, m, func(p arrayPart) { p.onInsert(m) })
}
func (m *insertMsg) Describe() string {
	return fmt.Sprintf("the insertion of element %v of %v", m.idx, m.Coll)
}

// deleteMsg deletes an element on its PE (stage 0) and tells the root
// (1).
type deleteMsg struct {
	target
	Stage uint8
	RedNo int
}

func (m *deleteMsg) Deliver(ap *actor.PE) {
	withPart(ap, m.Coll, m, func(p arrayPart) { p.onDelete(m) })
}
func (m *deleteMsg) Describe() string {
	return fmt.Sprintf("the deletion of element %v of %v", m.idx, m.Coll)
}

// syncMsg records an element's AtSync on its PE.
type syncMsg struct{ target }

func (m *syncMsg) Deliver(ap *actor.PE) { withPart(ap, m.Coll, m, func(p arrayPart) { p.onSync(m) }) }
func (m *syncMsg) Describe() string {
	return fmt.Sprintf("AtSync of element %v of %v", m.idx, m.Coll)
}
