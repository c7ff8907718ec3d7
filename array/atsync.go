package array

import (
	"errors"
	"fmt"

	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/internal/core"
)

// AtSync: elements that take part in load-balancing steps call AtSync;
// once every such element of an array on a PE has, the PE's load balancer
// runs (a Sync), then each element's ResumeFromSync.

// ResumeFromSync is implemented by elements that call AtSync: it runs when
// the load-balancing step they waited for is over, on the PE where the
// element then lives.
type ResumeFromSync interface{ ResumeFromSync() }

// AtSync tells the runtime the element is ready for load balancing
// (Charm++'s AtSync). Elements whose type has a ResumeFromSync method take
// part in these steps (Charm++'s usesAtSync). Once every such element of
// the array on this PE has called it, the PE's hook (SetSyncHook: the load balancer) runs, and
// afterwards each element's ResumeFromSync, wherever the element then is.
// Without a hook, the elements resume at once.
func (e *Element[T, I]) AtSync() {
	if pe := e.Here(); pe != nil {
		pe.Actor().Send(pe.ID(), &syncMsg{target: target{Coll: core.CollectionOf(&e.Base).ID, idx: e.Index()}})
	}
}

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

// syncHooks holds each PE's hook.
var syncHooks chare.Slot[SyncHook]

// SetSyncHook sets the load-balancing hook of PE pe, for the job pe
// belongs to (package lb sets it on every PE as the PE starts; see
// chare.OnPEStart). Without a hook, the elements resume at once.
func SetSyncHook(pe *chare.PE, h SyncHook) { syncHooks.Set(pe, h) }

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
	if h := syncHooks.Get(l.pe); l.syncing && l.cur != nil && !l.cur.done && h != nil && l.waits(el) {
		h(l.cur)
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
	h := syncHooks.Get(l.pe)
	if h == nil {
		s.Resume()
		return
	}
	h(s)
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
	p, err := core.PartOf(pe, coll)
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
		core.Timed(l.pe, el.obj, r.ResumeFromSync) // part of the element's load
	}
}
