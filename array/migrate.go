package array

import (
	"fmt"

	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/internal/core"
)

// Migration.
//
// An element migrates by being packed (msgpack of its exported fields
// except those declared chare.Transient, or its own Pack/Unpack methods),
// sent to the new PE, and unpacked into a fresh object there; an element
// whose type's state would not survive packing is refused before
// anything happens (chare.Type.PackError); the runtime's own state (reduction numbers, the
// broadcasts seen) travels beside it. The PE it leaves remembers where it
// went; the PE it reaches tells the element's home. See package location
// for how messages find it meanwhile.

// Packer is implemented by elements that pack their own state for
// migration and checkpoints (Charm++'s pup); without it, the exported
// fields are packed with msgpack.
type Packer = chare.Packer

// AboutToMigrate is implemented by elements that want to know, on the PE
// they are leaving, that they are about to be packed (ckAboutToMigrate).
type AboutToMigrate interface{ AboutToMigrate() }

// JustMigrated is implemented by elements that want to know, on the PE
// they reach, that they have just been unpacked (ckJustMigrated).
type JustMigrated interface{ JustMigrated() }

func pack(obj any) ([]byte, error)   { return core.PackObject(obj) }
func unpack(obj any, b []byte) error { return core.UnpackObject(obj, b) }

// Migrate moves the element to PE toPE (Charm++'s migrateMe): the move
// happens after the current entry method returns (and after the messages
// already waiting for the element on this PE). Messages sent to the
// element at any time reach it exactly once. An element must not migrate
// while one of its threaded entry methods is suspended.
//
// An element whose state would not survive packing (its type has fields
// that are not packed and not declared chare.Transient; see
// chare.Type.PackError) does not migrate: Migrate returns an error naming
// the element, its type and those fields, and the element stays, intact.
func (e *Element[T, I]) Migrate(toPE int) error {
	pe := e.Here()
	if pe == nil {
		return chare.ErrNoContext
	}
	if toPE < 0 || toPE >= pe.NumPEs() {
		return fmt.Errorf("array: cannot migrate element %v of %s to PE %d: the job has PEs 0..%d", e.Index(), core.CollectionOf(&e.Base).Type.Name, toPE, pe.NumPEs()-1)
	}
	if err := core.CollectionOf(&e.Base).Type.PackError("migration"); err != nil {
		return fmt.Errorf("array: element %v of %s stays on PE %d: %w", e.Index(), core.CollectionOf(&e.Base).Type.Name, pe.ID(), err)
	}
	pe.Actor().Send(pe.ID(), &moveMsg{target: target{Coll: core.CollectionOf(&e.Base).ID, idx: e.Index()}, PE: toPE})
	return nil
}

func (l *part[I]) onLoc(m *locMsg) {
	i, err := l.index(&m.target)
	if err != nil {
		l.pe.Fail(err)
		return
	}
	l.stats.CacheUpdates++
	var changed bool
	if m.Gone {
		changed = l.tab.LearnGone(i, m.Epoch)
	} else {
		changed = l.tab.Learn(i, m.PE, m.Epoch)
	}
	if changed {
		l.release(i)
	}
}

func (l *part[I]) onMove(m *moveMsg) {
	i, err := l.index(&m.target)
	if err != nil {
		l.pe.Fail(err)
		return
	}
	if l.elems[i] == nil {
		return // it was deleted, or moved by an earlier request
	}
	if err := l.migrate(i, m.PE, false); err != nil {
		l.pe.Fail(err)
	}
}

// migrate sends local element i to PE to.
func (l *part[I]) migrate(i I, to int, resume bool) error {
	el := l.elems[i]
	if el == nil {
		return fmt.Errorf("array: element %v of %s is not on PE %d", i, l.name, l.pe.ID())
	}
	if to < 0 || to >= l.npes {
		return fmt.Errorf("array: cannot migrate element %v of %s to PE %d: the job has PEs 0..%d", i, l.name, to, l.npes-1)
	}
	if to == l.pe.ID() {
		if resume {
			l.resume(el)
		}
		return nil
	}
	if err := l.coll.Type.PackError("migration"); err != nil {
		return fmt.Errorf("array: element %v of %s stays on PE %d: %w", i, l.name, l.pe.ID(), err)
	}
	if h, ok := el.obj.(AboutToMigrate); ok {
		h.AboutToMigrate()
	}
	data, err := pack(el.obj)
	if err != nil {
		return fmt.Errorf("array: packing element %v of %s to migrate it: %w", i, l.name, err)
	}
	epoch, _ := l.tab.IsLocal(i)
	seen := l.remove(i)
	l.tab.Depart(i, to, epoch+1)
	core.MemberLeft(l.pe, el.obj)
	l.stats.MigratedOut++
	if core.Tracing(l.pe) {
		l.pe.TraceInstant("migration", "migrate", "array", l.name, "index", fmt.Sprint(i), "from", l.pe.ID(), "to", to)
	}
	l.pe.Actor().Send(to, &arriveMsg{target: target{Coll: l.coll.ID, idx: i}, From: l.pe.ID(), Epoch: epoch + 1, Bcast: seen,
		State: el.base.MemberState(), Data: data, Sync: el.sync, Syncs: el.syncs, Resume: resume})
	l.checkSync()
	return nil
}

func (l *part[I]) onArrive(m *arriveMsg) {
	i, err := l.index(&m.target)
	if err != nil {
		l.pe.Fail(err)
		return
	}
	if l.elems[i] != nil {
		l.pe.Fail(fmt.Errorf("array: element %v of %s arrived on PE %d, where it already is", i, l.name, l.pe.ID()))
		return
	}
	obj := l.coll.Type.New()
	obj.(binder).bind(l.pe, l.coll, i, obj)
	if err := unpack(obj, m.Data); err != nil {
		// Its old PE let it go when it was packed: the element exists
		// nowhere now, and the job cannot go on without it.
		l.pe.Fail(fmt.Errorf("array: element %v of %s, migrating from PE %d to PE %d, cannot be unpacked there and is lost: %w", i, l.name, m.From, l.pe.ID(), err))
		return
	}
	b := core.BaseOf(obj)
	b.SetMemberState(m.State)
	el := &elem{obj: obj, base: b, sync: m.Sync && !m.Resume, syncs: m.Syncs}
	l.add(i, el)
	l.tab.Arrive(i, m.Epoch)
	l.stats.MigratedIn++
	if home := l.home(i); home != l.pe.ID() {
		l.pe.Actor().Send(home, &locMsg{target: target{Coll: l.coll.ID, idx: i}, PE: l.pe.ID(), Epoch: m.Epoch})
	}
	core.MemberArrived(l.pe, obj)
	if h, ok := obj.(JustMigrated); ok {
		h.JustMigrated()
	}
	if m.Resume {
		l.resume(el)
	}
	l.catchUp(i, el, m.Bcast)
	if l.elems[i] == el {
		l.release(i)
	}
	if l.elems[i] == el {
		l.lateJoin(el)
	}
	l.checkSync()
}
