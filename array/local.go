package array

import (
	"fmt"

	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/internal/core"
)

// What a PE holds of an array, for the program (LocalStats) and for the
// load balancer (LocalElements, MigrateLocal, NumElements).

func localPart[I comparable](from chare.Context, coll chare.CollID) (*part[I], error) {
	pe := chare.PEOf(from)
	if pe == nil {
		return nil, chare.ErrNoContext
	}
	lp, err := core.PartOf(pe, coll)
	if err != nil {
		return nil, err
	}
	l, ok := lp.(*part[I])
	if !ok {
		return nil, fmt.Errorf("array: %v is not an array with %T indices", coll, *new(I))
	}
	return l, nil
}

// LocalStats returns the location manager's counts for the array on the
// caller's PE.
func LocalStats[T any, I comparable](from chare.Context, p Proxy[T, I]) (Stats, error) {
	l, err := localPart[I](from, p.Route().Coll)
	if err != nil {
		return Stats{}, err
	}
	return l.snapshotStats(), nil
}

// LocalElement is an element on a PE, as the load balancer sees it.
type LocalElement struct {
	Coll  chare.CollID
	Index any
	Base  *chare.Base
	// Waiting: it waits in AtSync; only its AtSync step moves it.
	Waiting bool
	// Stays: its state would not survive packing (its type's PackError
	// says why), so it must not be moved.
	Stays bool
}

// lbPart is what LocalElements and MigrateLocal use of a part.
type lbPart interface {
	localElements(out []LocalElement) []LocalElement
	migrateLocal(index any, to int) error
	numElements() int
}

func (l *part[I]) localElements(out []LocalElement) []LocalElement {
	stays := !l.coll.Type.Packs()
	for _, el := range l.list {
		out = append(out, LocalElement{Coll: l.coll.ID, Index: el.index, Base: el.base, Waiting: el.sync, Stays: stays})
	}
	return out
}

func (l *part[I]) migrateLocal(index any, to int) error {
	i, err := l.check(index)
	if err != nil {
		return err
	}
	el := l.elems[i]
	if el == nil {
		return nil // it left meanwhile
	}
	if el.sync {
		// It called AtSync after the load balancer looked: this PE may
		// have counted it as waiting already, and its AtSync step places
		// it. Moving it now would have its new PE count it again.
		return nil
	}
	return l.migrate(i, to, false)
}

func (l *part[I]) numElements() int { return l.count(1 << 62) }

// LocalElements lists the elements of every array (or of array coll, if
// not 0) on the PE the code runs on.
func LocalElements(pe *chare.PE, coll chare.CollID) []LocalElement {
	var out []LocalElement
	core.EachPart(pe, func(id chare.CollID, p core.Part) {
		if lp, ok := p.(lbPart); ok && (coll == 0 || id == coll) {
			out = lp.localElements(out)
		}
	})
	return out
}

// MigrateLocal moves element index of array coll, which lives on the PE
// the code runs on, to PE to now (the load balancer's anytime migration).
// An element that has left meanwhile, or that waits in AtSync (only its
// AtSync step moves it), is left alone.
func MigrateLocal(pe *chare.PE, coll chare.CollID, index any, to int) error {
	p, err := core.PartOf(pe, coll)
	if err != nil {
		return err
	}
	lp, ok := p.(lbPart)
	if !ok {
		return fmt.Errorf("array: %v is not an array", coll)
	}
	return lp.migrateLocal(index, to)
}

// NumElements returns, on PE 0 (the root of the array's reductions), how
// many elements array coll has now.
func NumElements(pe *chare.PE, coll chare.CollID) (int, error) {
	if pe.ID() != core.ReductionRoot {
		return 0, fmt.Errorf("array: NumElements runs on PE %d, not %d", core.ReductionRoot, pe.ID())
	}
	p, err := core.PartOf(pe, coll)
	if err != nil {
		return 0, err
	}
	lp, ok := p.(lbPart)
	if !ok {
		return 0, fmt.Errorf("array: %v is not an array", coll)
	}
	return lp.numElements(), nil
}
