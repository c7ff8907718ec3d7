package core

import (
	"errors"
	"fmt"

	"github.com/charmgo/charm/actor"
)

// Context is the code that is running: a chare, group branch or array
// element (through the Base they embed), the main chare, or a PE's own
// context. Every send names its Context first, as protoactor-go's
// ctx.Send does: it tells the runtime which PE is sending.
type Context interface {
	base() *Base
}

// Base is embedded (through Chare, group.Branch or array.Element) in every
// chare object; the runtime fills it in when it creates the object.
type Base struct {
	pe    *PE
	coll  *Collection
	index any
	obj   any
	redNo int            // the next reduction number over the collection
	reds  map[CollID]int // the next reduction numbers over sections
	load  ObjLoad        // since the last load-balancing step
	// me and npes are the PE's number and the job's PEs, kept here
	// because handlers ask for them per message (CkMyPe and CkNumPes
	// are globals in Charm++): one load instead of three.
	me, npes int
}

func (b *Base) base() *Base { return b }

// BindBase attaches an object, whose Base is b, to its PE and collection;
// collection packages call it when they create or receive an object.
func BindBase(b *Base, pe *PE, coll *Collection, index, obj any) {
	b.pe, b.coll, b.index, b.obj = pe, coll, index, obj
	b.me, b.npes = pe.ID(), pe.NumPEs()
}

// Here returns the PE state the object lives on.
func (b *Base) Here() *PE { return b.pe }

// PE returns the number of the PE the object lives on (CkMyPe); 0 for
// an object the runtime did not make (its Base unbound).
func (b *Base) PE() int { return b.me }

// NumPEs returns the number of PEs in the job (CkNumPes); 0 for an
// object the runtime did not make.
func (b *Base) NumPEs() int { return b.npes }

// CollectionOf returns the collection the object whose Base is b belongs
// to (nil for a PE's own context).
func CollectionOf(b *Base) *Collection { return b.coll }

// Exit ends the job with the given exit code on every PE (CkExit).
func (b *Base) Exit(code int) { b.pe.job.rt.Exit(code) }

// Abort ends the job with exit code 1 and the given reason (CkAbort).
func (b *Base) Abort(err error) { b.pe.job.rt.Abort(err) }

// DetectQuiescence sends to cb (with a nil value) once no entry method
// runs anywhere and no message is in flight (CkStartQD).
func (b *Base) DetectQuiescence(cb Callback) {
	pe := b.pe
	pe.ap.DetectQuiescence(func(*actor.PE) {
		pe.TraceInstant("quiescence", "quiescence")
		if err := cb.Send(ContextOf(pe), nil); err != nil {
			pe.fail(fmt.Errorf("chare: quiescence callback: %w", err))
		}
	})
}

// Args returns the program's arguments that the runtime did not take.
func (b *Base) Args() []string { return b.pe.job.args }

// ErrNoContext is returned when a send is made with a nil Context or one
// whose object was never bound to a PE.
var ErrNoContext = errors.New("chare: no sending context: pass the chare, element or branch that sends (its embedded Base)")

func peFrom(from Context) (*PE, error) {
	if from == nil {
		return nil, ErrNoContext
	}
	b := from.base()
	if b == nil || b.pe == nil {
		return nil, ErrNoContext
	}
	if b.pe.job.rt.Stopped() {
		return nil, actor.ErrStopped
	}
	return b.pe, nil
}

// Index returns the object's index in its collection: the array index of
// an element, the PE of a group branch.
func (b *Base) Index() any { return b.index }

// Self returns the object the Base is embedded in.
func (b *Base) Self() any { return b.obj }

// PEOf returns the PE a context runs on, or nil for a nil or unbound one.
func PEOf(ctx Context) *PE {
	pe, err := peFrom(ctx)
	if err != nil {
		return nil
	}
	return pe
}

// MemberState is what the runtime keeps of a migratable member besides
// its own fields: where it is in its reductions. Array migration and
// checkpoints carry it.
type MemberState struct {
	RedNo    int
	Sections map[CollID]int `msgpack:",omitempty"`
	Load     ObjLoad        // the load measured since the last step travels along
}

// MemberState returns the member's reduction state.
func (b *Base) MemberState() MemberState {
	return MemberState{RedNo: b.redNo, Sections: b.reds, Load: b.load}
}

// SetMemberState restores the member's reduction state.
func (b *Base) SetMemberState(s MemberState) {
	b.redNo, b.reds, b.load = s.RedNo, s.Sections, s.Load
}

// BaseOf returns the Base embedded in a chare object, or nil.
func BaseOf(obj any) *Base {
	if c, ok := obj.(Context); ok {
		return c.base()
	}
	return nil
}
