package array

import (
	"errors"
	"fmt"

	"github.com/charmgo/charm/actor"
	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/chare/indexcodec"
)

// Migration, insertion, deletion and AtSync.
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

// ResumeFromSync is implemented by elements that call AtSync: it runs when
// the load-balancing step they waited for is over, on the PE where the
// element then lives.
type ResumeFromSync interface{ ResumeFromSync() }

func pack(obj any) ([]byte, error)   { return chare.PackObject(obj) }
func unpack(obj any, b []byte) error { return chare.UnpackObject(obj, b) }

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
		return fmt.Errorf("array: cannot migrate element %v of %s to PE %d: the job has PEs 0..%d", e.Index(), e.Collection().Type.Name, toPE, pe.NumPEs()-1)
	}
	if err := e.Collection().Type.PackError("migration"); err != nil {
		return fmt.Errorf("array: element %v of %s stays on PE %d: %w", e.Index(), e.Collection().Type.Name, pe.ID(), err)
	}
	pe.Actor().Send(pe.ID(), &moveMsg{target: target{Coll: e.Collection().ID, idx: e.Index()}, PE: toPE})
	return nil
}

// AtSync tells the runtime the element is ready for load balancing
// (Charm++'s AtSync). Elements whose type has a ResumeFromSync method take
// part in these steps (Charm++'s usesAtSync). Once every such element of
// the array on this PE has called it, the hook set by SetSyncHook runs (the load balancer), and
// afterwards each element's ResumeFromSync, wherever the element then is.
// Without a hook, the elements resume at once.
func (e *Element[T, I]) AtSync() {
	if pe := e.Here(); pe != nil {
		pe.Actor().Send(pe.ID(), &syncMsg{target: target{Coll: e.Collection().ID, idx: e.Index()}})
	}
}

// Destroy deletes the element (ckDestroy) after the current entry method.
// Messages sent to it afterwards wait on its home until the index is
// inserted again; reductions stop counting it from its next contribution.
func (e *Element[T, I]) Destroy() {
	if pe := e.Here(); pe != nil {
		pe.Actor().Send(pe.ID(), &deleteMsg{target: target{Coll: e.Collection().ID, idx: e.Index()}})
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
	env, err := chare.EnvelopeFor(from, init, msg)
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
	l.pe.Actor().Send(chare.ReductionRoot, &insertMsg{target: target{Coll: l.coll.ID, idx: idx}, Stage: 1, PE: onPE,
		Origin: l.pe.ID(), Reserved: reserved, ctor: ctor})
	return nil
}

// localPart returns the part of array coll on the caller's PE.
func localPart[I comparable](from chare.Context, coll chare.CollID) (*part[I], error) {
	pe := chare.PEOf(from)
	if pe == nil {
		return nil, chare.ErrNoContext
	}
	lp, err := pe.Part(coll)
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

// ---- the protocol ----

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
	l.pe.Actor().Send(chare.ReductionRoot, &insertMsg{target: target{Coll: l.coll.ID, idx: i}, Stage: 1, PE: l.pe.ID(),
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
		m.RedNo = l.pe.NextReduction(l.coll.ID)
		m.Bcast = l.rootSeq
		l.deltas = append(l.deltas, delta{m.RedNo, +1})
		l.pe.RecheckReductions(l.coll.ID)
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
		obj.(binder).Bind(l.pe, l.coll, i, obj)
		if l.init != nil {
			l.init(obj)
		}
		b := chare.BaseOf(obj)
		b.SetMemberState(chare.MemberState{RedNo: m.RedNo})
		el := &elem{obj: obj, base: b}
		l.add(i, el)
		l.tab.Arrive(i, m.Epoch)
		if home := l.home(i); home != l.pe.ID() {
			l.pe.Actor().Send(home, &locMsg{target: target{Coll: l.coll.ID, idx: i}, PE: l.pe.ID(), Epoch: m.Epoch})
		} else {
			delete(l.creating, i)
		}
		l.pe.MemberArrived(obj)
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
	l.pe.MemberLeft(el.obj)
	l.stats.MigratedOut++
	if l.pe.Tracing() {
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
	obj.(binder).Bind(l.pe, l.coll, i, obj)
	if err := unpack(obj, m.Data); err != nil {
		// Its old PE let it go when it was packed: the element exists
		// nowhere now, and the job cannot go on without it.
		l.pe.Fail(fmt.Errorf("array: element %v of %s, migrating from PE %d to PE %d, cannot be unpacked there and is lost: %w", i, l.name, m.From, l.pe.ID(), err))
		return
	}
	b := chare.BaseOf(obj)
	b.SetMemberState(m.State)
	el := &elem{obj: obj, base: b, sync: m.Sync && !m.Resume, syncs: m.Syncs}
	l.add(i, el)
	l.tab.Arrive(i, m.Epoch)
	l.stats.MigratedIn++
	if home := l.home(i); home != l.pe.ID() {
		l.pe.Actor().Send(home, &locMsg{target: target{Coll: l.coll.ID, idx: i}, PE: l.pe.ID(), Epoch: m.Epoch})
	}
	l.pe.MemberArrived(obj)
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

func (l *part[I]) onDelete(m *deleteMsg) {
	if m.Stage == 1 { // on the root
		l.deltas = append(l.deltas, delta{m.RedNo, -1})
		l.pe.RecheckReductions(l.coll.ID)
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
	l.pe.MemberLeft(el.obj)
	if home := l.home(i); home != l.pe.ID() {
		l.pe.Actor().Send(home, &locMsg{target: target{Coll: l.coll.ID, idx: i}, Gone: true, Epoch: epoch})
	}
	l.pe.Actor().Send(chare.ReductionRoot, &deleteMsg{target: target{Coll: l.coll.ID}, Stage: 1, RedNo: el.base.MemberState().RedNo})
	l.release(i)
	l.checkSync()
}

// ---- AtSync ----

// Sync is a load-balancing point on one PE: every element of an array on
// the PE has called AtSync. The hook may move elements, then calls Resume
// (at once or later, from code running on the same PE).
type Sync struct {
	PE   *chare.PE
	Coll chare.CollID
	p    syncPart
	done bool
}

type syncPart interface {
	syncIndices() []any
	syncMigrate(index any, to int) error
	syncResume()
}

// Indices returns the indices of the elements waiting here.
func (s *Sync) Indices() []any { return s.p.syncIndices() }

// Migrate moves a waiting element to PE to; it resumes there.
func (s *Sync) Migrate(index any, to int) error {
	if s.done {
		return errors.New("array: Sync.Migrate after Resume")
	}
	return s.p.syncMigrate(index, to)
}

// Resume ends the step on this PE: the elements still here run
// ResumeFromSync.
func (s *Sync) Resume() {
	if !s.done {
		s.done = true
		s.p.syncResume()
	}
}

// SyncHook runs a load-balancing step on a PE. It may be called again
// with the same Sync, while the step runs, when more elements join it
// (they arrived on the PE after it started the step): Indices then lists
// them too.
type SyncHook func(s *Sync)

var syncHook SyncHook

// SetSyncHook sets the process's load-balancing hook (package lb does);
// set it before the job starts.
func SetSyncHook(h SyncHook) { syncHook = h }

func (l *part[I]) onSync(m *syncMsg) {
	i, err := l.index(&m.target)
	if err != nil {
		l.pe.Fail(err)
		return
	}
	if el := l.elems[i]; el != nil {
		el.sync = true
		el.syncs++
		l.lateJoin(el)
		l.checkSync()
		return
	}
	// It moved between AtSync and now: the request follows it (an element
	// deleted meanwhile has no step to wait for).
	if to, _ := l.tab.Lookup(i); to != l.pe.ID() {
		l.pe.Actor().Send(to, m)
	}
}

// lateJoin tells the hook again of the step under way here when el joins
// it late: it came from a PE where it resumed, after this PE had started
// the step.
func (l *part[I]) lateJoin(el *elem) {
	if l.syncing && l.cur != nil && !l.cur.done && syncHook != nil && l.waits(el) {
		syncHook(l.cur)
	}
}

// checkSync starts the step on this PE once every element here that takes
// part in AtSync steps (its type has a ResumeFromSync method, as Charm++
// elements set usesAtSync) has called AtSync for this step. An element
// that arrived having done this step already (its PE ran it earlier)
// counts as ready, and is not resumed twice.
func (l *part[I]) checkSync() {
	if l.syncing {
		return
	}
	waiting := false
	for _, el := range l.list {
		if _, uses := el.obj.(ResumeFromSync); uses && el.syncs <= l.steps {
			return
		}
		waiting = waiting || l.waits(el)
	}
	if !waiting {
		return
	}
	l.syncing = true
	s := &Sync{PE: l.pe, Coll: l.coll.ID, p: l}
	l.cur = s
	if syncHook == nil {
		s.Resume()
		return
	}
	syncHook(s)
}

// waits reports whether el waits in AtSync for this PE's next step (and
// not, having come from a PE that is a step ahead, for the one after).
func (l *part[I]) waits(el *elem) bool { return el.sync && el.syncs == l.steps+1 }

func (l *part[I]) syncIndices() []any {
	var out []any
	for _, el := range l.list {
		if l.waits(el) {
			out = append(out, el.index)
		}
	}
	return out
}

func (l *part[I]) syncMigrate(index any, to int) error {
	i, err := l.check(index)
	if err != nil {
		return err
	}
	if el := l.elems[i]; el == nil || !l.waits(el) {
		return fmt.Errorf("array: element %v of %s is not waiting in AtSync on PE %d", i, l.name, l.pe.ID())
	}
	return l.migrate(i, to, true)
}

func (l *part[I]) syncResume() { l.finishStep(l.steps + 1) }

// finishStep ends step number step (counted from 1) here: the elements
// that waited for it resume, and those already waiting for the next may
// start it.
func (l *part[I]) finishStep(step int) {
	l.syncing, l.cur = false, nil
	l.steps = max(l.steps, step)
	for k := 0; k < len(l.list); k++ {
		if el := l.list[k]; el.sync && el.syncs <= l.steps {
			l.resume(el)
		}
	}
	l.checkSync()
}

// FinishStep ends the load balancer's AtSync step number step (counted
// from 1, for array coll) on the PE the code runs on, whether or not the
// PE took part: its waiting elements resume. The load balancer numbers
// the steps, so that a PE that had no elements at some step stays in
// step with the others.
func FinishStep(pe *chare.PE, coll chare.CollID, step int) error {
	p, err := pe.Part(coll)
	if err != nil {
		return err
	}
	f, ok := p.(interface{ finishStep(int) })
	if !ok {
		return fmt.Errorf("array: %v is not an array", coll)
	}
	f.finishStep(step)
	return nil
}

func (l *part[I]) resume(el *elem) {
	el.sync = false
	if r, ok := el.obj.(ResumeFromSync); ok {
		l.pe.Timed(el.obj, r.ResumeFromSync) // part of the element's load
	}
}

// ---- messages ----

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
func withPart(ap *actor.PE, coll chare.CollID, what any, fn func(arrayPart)) {
	pe := ap.Ext.(*chare.PE)
	var run func()
	run = func() {
		l, err := pe.PartOrHold(coll, what, run)
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
	Ctor     *chare.WireEnvelope `msgpack:",omitempty"`
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

// ---- what the load balancer sees ----

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
	pe.EachPart(func(id chare.CollID, p chare.Part) {
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
	p, err := pe.Part(coll)
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
	if pe.ID() != chare.ReductionRoot {
		return 0, fmt.Errorf("array: NumElements runs on PE %d, not %d", chare.ReductionRoot, pe.ID())
	}
	p, err := pe.Part(coll)
	if err != nil {
		return 0, err
	}
	lp, ok := p.(lbPart)
	if !ok {
		return 0, fmt.Errorf("array: %v is not an array", coll)
	}
	return lp.numElements(), nil
}
