package array

import (
	"fmt"

	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/internal/core"
)

// Insertion and deletion of elements while the program runs. An insertion
// goes through the array's home PE for the index (which refuses an index
// that exists) and PE 0, the root of the array's reductions (which counts
// the element from the first reduction not yet complete); a deletion is
// counted on PE 0 the same way.

// Destroy deletes the element (ckDestroy) after the current entry method.
// Messages sent to it afterwards wait on its home until the index is
// inserted again; reductions stop counting it from its next contribution.
func (e *Element[T, I]) Destroy() {
	if pe := e.Here(); pe != nil {
		pe.Actor().Send(pe.ID(), &deleteMsg{target: target{Coll: core.CollectionOf(&e.Base).ID, idx: e.Index()}})
	}
}

// AtHome, as the PE of an insertion, places the element on its home.
const AtHome = -1

// Insert creates element idx on PE onPE (or AtHome) while the program
// runs. The index must not exist: inserting it twice is an error (returned
// here if this PE is the index's home, otherwise it aborts the job). The
// element receives the messages sent to it before it existed, and the
// broadcasts made after it was created; it joins the array's reductions
// from the first one not yet complete.
func (p Proxy[T, I]) Insert(from chare.Context, idx I, onPE int) error {
	return insert[T](from, p, idx, onPE, nil)
}

// InsertWith inserts an element and runs init(msg) on it first, before any
// other message (a constructor with arguments).
func InsertWith[T any, I comparable, M any](from chare.Context, p Proxy[T, I], idx I, onPE int, init func(*T, M), msg M) error {
	env, err := core.EnvelopeFor(from, init, msg)
	if err != nil {
		return err
	}
	h := env.Header()
	h.Route = chare.Route{Kind: chare.KindElement, Coll: p.Route().Coll, Index: idx}
	return insert[T](from, p, idx, onPE, env)
}

// DoneInserting ends an insertion phase (Charm++'s doneInserting). Here
// reductions count inserted elements exactly without it, so it only
// checks the proxy; it is kept so that Charm++ programs read the same.
func (p Proxy[T, I]) DoneInserting(from chare.Context) error {
	_, err := localPart[I](from, p.Route().Coll)
	return err
}

func insert[T any, I comparable](from chare.Context, p Proxy[T, I], idx I, onPE int, ctor chare.Envelope) error {
	l, err := localPart[I](from, p.Route().Coll)
	if err != nil {
		return err
	}
	if _, err := l.check(idx); err != nil {
		return err
	}
	if onPE != AtHome && (onPE < 0 || onPE >= l.npes) {
		return fmt.Errorf("array: cannot insert element %v of %s on PE %d: the job has PEs 0..%d", idx, l.name, onPE, l.npes-1)
	}
	home := l.home(idx)
	if onPE == AtHome {
		onPE = home
	}
	reserved := false
	if home == l.pe.ID() {
		if exists, _ := l.tab.Exists(idx); exists || l.creating[idx] {
			return fmt.Errorf("array: element %v of %s inserted twice: it exists already", idx, l.name)
		}
		l.reserve(idx)
		reserved = true
	}
	// Through the root first: it numbers the new element's first reduction
	// and broadcast, in order with the broadcasts this PE sends after.
	l.pe.Actor().Send(core.ReductionRoot, &insertMsg{target: target{Coll: l.coll.ID, idx: idx}, Stage: 1, PE: onPE,
		Origin: l.pe.ID(), Reserved: reserved, ctor: ctor})
	return nil
}

// localPart returns the part of array coll on the caller's PE.

// reserve marks, on the home, an insertion of i under way.
func (l *part[I]) reserve(i I) {
	if l.creating == nil {
		l.creating = map[I]bool{}
	}
	l.creating[i] = true
}

// demandCreate starts, on the home, the creation of i on its first
// message.
func (l *part[I]) demandCreate(i I) {
	l.reserve(i)
	l.pe.Actor().Send(core.ReductionRoot, &insertMsg{target: target{Coll: l.coll.ID, idx: i}, Stage: 1, PE: l.pe.ID(),
		Origin: l.pe.ID(), Reserved: true})
}

// onInsert runs the stages of an insertion: on the root (1), which counts
// the element from the first reduction not complete and the next
// broadcast; on the home (0), which refuses an index that exists and
// records where the element will be; on the PE that makes it (2).
func (l *part[I]) onInsert(m *insertMsg) {
	i, err := l.index(&m.target)
	if err != nil {
		l.pe.Fail(err)
		return
	}
	switch m.Stage {
	case 1:
		m.RedNo = core.NextReduction(l.pe, l.coll.ID)
		m.Bcast = l.rootSeq
		l.deltas = append(l.deltas, delta{m.RedNo, +1})
		core.RecheckReductions(l.pe, l.coll.ID)
		m.Stage = 0
		l.pe.Actor().Send(l.home(i), m)
	case 0:
		if exists, _ := l.tab.Exists(i); exists || l.creating[i] && !m.Reserved {
			l.pe.Fail(fmt.Errorf("array: element %v of %s inserted twice (the second insertion came from PE %d)", i, l.name, m.Origin))
			return
		}
		_, next := l.tab.Exists(i)
		m.Epoch = max(next, 1)
		if m.PE == l.pe.ID() {
			l.reserve(i)
		} else {
			delete(l.creating, i)
			l.tab.Learn(i, m.PE, m.Epoch)
			l.release(i) // what waited for it goes there now
		}
		m.Stage = 2
		l.pe.Actor().Send(m.PE, m)
	case 2:
		if l.elems[i] != nil {
			l.pe.Fail(fmt.Errorf("array: element %v of %s created twice on PE %d", i, l.name, l.pe.ID()))
			return
		}
		obj := l.coll.Type.New()
		obj.(binder).bind(l.pe, l.coll, i, obj)
		if l.init != nil {
			l.init(obj)
		}
		b := core.BaseOf(obj)
		b.SetMemberState(chare.MemberState{RedNo: m.RedNo})
		el := &elem{obj: obj, base: b}
		l.add(i, el)
		l.tab.Arrive(i, m.Epoch)
		if home := l.home(i); home != l.pe.ID() {
			l.pe.Actor().Send(home, &locMsg{target: target{Coll: l.coll.ID, idx: i}, PE: l.pe.ID(), Epoch: m.Epoch})
		} else {
			delete(l.creating, i)
		}
		core.MemberArrived(l.pe, obj)
		if m.ctor != nil {
			l.invoke(el, m.ctor)
		}
		if l.elems[i] == el {
			l.catchUp(i, el, m.Bcast) // the broadcasts numbered after it and seen here already
		}
		if l.elems[i] == el {
			l.release(i)
		}
	default:
		l.pe.Fail(fmt.Errorf("array: insertion message of stage %d for %s", m.Stage, l.name))
	}
}

func (l *part[I]) onDelete(m *deleteMsg) {
	if m.Stage == 1 { // on the root
		l.deltas = append(l.deltas, delta{m.RedNo, -1})
		core.RecheckReductions(l.pe, l.coll.ID)
		return
	}
	i, err := l.index(&m.target)
	if err != nil {
		l.pe.Fail(err)
		return
	}
	el := l.elems[i]
	if el == nil {
		return // it left before its Destroy took effect; it is destroyed where it is not: see Destroy
	}
	l.remove(i)
	epoch := l.tab.Delete(i)
	core.MemberLeft(l.pe, el.obj)
	if home := l.home(i); home != l.pe.ID() {
		l.pe.Actor().Send(home, &locMsg{target: target{Coll: l.coll.ID, idx: i}, Gone: true, Epoch: epoch})
	}
	l.pe.Actor().Send(core.ReductionRoot, &deleteMsg{target: target{Coll: l.coll.ID}, Stage: 1, RedNo: el.base.MemberState().RedNo})
	l.release(i)
	l.checkSync()
}
