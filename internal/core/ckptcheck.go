package core

import (
	"bytes"
	"fmt"
	"math"
	"slices"
)

// A checkpoint's checksum is not a secret: a file edited by hand, or
// written by an older or buggy program, carries a valid one with contents
// that are wrong. check refuses, before the job starts, what would make a
// restart panic, hang, or run on with other data than the checkpoint's:
// numbers of PEs and nodes out of range, collections that cannot be
// rebuilt as they say, members on PEs the old job did not have, missing
// or duplicated members, reduction numbers that disagree, and a callback
// that names nothing. What needs the new job's runtime (array indices,
// the members' own bytes) is checked when the restart places and
// restores them.

// builderKinds is the kind of the collections each builder of this
// module rebuilds.
var builderKinds = map[string]Kind{"chare": KindChare, "group": KindBranch, "nodegroup": KindBranch, "array": KindElement}

// check checks a decoded checkpoint; path names its file in errors.
func (f *ckptFile) check(path string) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("chare: restart: %s: %s", path, fmt.Sprintf(format, args...))
	}
	if f.PEs < 1 || len(f.Seqs) != f.PEs {
		return bad("describes %d PEs with %d counters", f.PEs, len(f.Seqs))
	}
	if f.Nodes < 0 || f.Nodes > f.PEs {
		return bad("describes %d processes for %d PEs", f.Nodes, f.PEs)
	}
	if f.Nodes == 0 {
		f.Nodes = 1
	}
	// made checks an ID (of a collection, a section or a reduction
	// stream): a PE numbers what it makes from 1. (Its creator may be a
	// PE this job did not have: a checkpoint of a restarted job holds the
	// collections of the job before, on more PEs.)
	made := func(id CollID) error {
		if uint32(id) == 0 {
			return fmt.Errorf("ID %v is number 0 of PE %d, which numbers from 1", id, uint64(id)>>32)
		}
		return nil
	}
	next := map[CollID]int{} // reduction streams: the next reduction
	for i, r := range f.Reds {
		if err := made(r.Stream); err != nil {
			return bad("reduction stream %d: %v", i, err)
		}
		if _, dup := next[r.Stream]; dup {
			return bad("the reductions of %v are listed twice", r.Stream)
		}
		if r.Next < 0 {
			return bad("the next reduction of %v is %d", r.Stream, r.Next)
		}
		next[r.Stream] = r.Next
	}
	colls := map[CollID]*ckptColl{}
	for i := range f.Colls {
		cc := &f.Colls[i]
		if err := f.checkColl(cc, made, next); err != nil {
			return bad("collection %v: %v", cc.Spec.ID, err)
		}
		if colls[cc.Spec.ID] != nil {
			return bad("collection %v is listed twice", cc.Spec.ID)
		}
		colls[cc.Spec.ID] = cc
	}
	if err := checkResume(f.Resume, colls, f.PEs); err != nil {
		return bad("the checkpoint's callback: %v", err)
	}
	return nil
}

// checkColl checks a collection and its members.
func (f *ckptFile) checkColl(cc *ckptColl, made func(CollID) error, next map[CollID]int) error {
	s := &cc.Spec
	if err := made(s.ID); err != nil {
		return err
	}
	typ, err := TypeByID(s.Type)
	if err != nil {
		return err
	}
	kind, ok := builderKinds[s.Builder]
	if !ok {
		buildersMu.RLock()
		_, ok = builders[s.Builder]
		buildersMu.RUnlock()
		if !ok {
			return fmt.Errorf("no builder %q in this program", s.Builder)
		}
		kind = s.Kind
	}
	if s.Kind != kind {
		return fmt.Errorf("built by %q, of kind %v: it must be %v", s.Builder, s.Kind, kind)
	}
	if s.Init != 0 || len(s.InitMsg) > 0 {
		return fmt.Errorf("has a constructor (entry %#x): restored objects are not constructed again", uint32(s.Init))
	}
	// Where the members were: once each, on a PE of the old job.
	at := map[int]int{} // PE → member
	for j, o := range cc.Objs {
		what := fmt.Sprintf("%s number %d (on PE %d)", typ.Name, j, o.PE)
		if o.PE < 0 || o.PE >= f.PEs {
			return fmt.Errorf("%s: no such PE (the job had %d)", what, f.PEs)
		}
		if (len(o.Index) > 0) != (kind == KindElement) {
			if kind == KindElement {
				return fmt.Errorf("%s: an array element without an index", what)
			}
			return fmt.Errorf("%s: a member of a %s with an index", what, s.Builder)
		}
		if kind != KindElement {
			if k, dup := at[o.PE]; dup {
				return fmt.Errorf("%s: PE %d has members number %d and %d", what, o.PE, k, j)
			}
			at[o.PE] = j
		}
		if err := checkState(o.State, kind, s.ID, next); err != nil {
			return fmt.Errorf("%s: %v", what, err)
		}
	}
	switch s.Builder {
	case "chare":
		if len(s.Tree) != 1 || len(cc.Objs) != 1 || cc.Objs[0].PE != s.Tree[0] {
			return fmt.Errorf("a singleton chare on PEs %v with %d objects", s.Tree, len(cc.Objs))
		}
	case "group":
		// Every PE had its branch (a group makes one on each at once).
		if len(cc.Objs) != f.PEs {
			return fmt.Errorf("a group with %d branches in a job of %d PEs", len(cc.Objs), f.PEs)
		}
	case "nodegroup":
		first := map[int]bool{}
		for n := range f.Nodes {
			first[firstPEOf(f, n)] = true
		}
		for p := range at {
			if !first[p] {
				return fmt.Errorf("a node group's branch on PE %d, which is not the first PE of one of the job's %d processes", p, f.Nodes)
			}
		}
		for n := range f.Nodes {
			if _, ok := at[firstPEOf(f, n)]; !ok {
				return fmt.Errorf("a node group with no branch for node %d (PE %d)", n, firstPEOf(f, n))
			}
		}
		if len(cc.Objs) != f.Nodes {
			return fmt.Errorf("a node group with %d branches in a job of %d processes, one on each process's first PE", len(cc.Objs), f.Nodes)
		}
	}
	return nil
}

// checkState checks a member's reduction numbers: at a checkpoint no
// reduction is under way, so every member of a collection (or section) is
// at the collection's next reduction. A member ahead or behind would wait
// for a reduction that never completes.
func checkState(st MemberState, kind Kind, coll CollID, next map[CollID]int) error {
	if kind == KindChare && (st.RedNo != 0 || len(st.Sections) > 0) {
		return fmt.Errorf("a singleton chare at reduction %d of its collection and in %d sections (it takes part in none)", st.RedNo, len(st.Sections))
	}
	if st.RedNo != next[coll] {
		return fmt.Errorf("at reduction %d of its collection, which has completed %d", st.RedNo, next[coll])
	}
	for sec, no := range st.Sections {
		n, ok := next[sec]
		if !ok || no != n {
			return fmt.Errorf("at reduction %d of section %v, which has completed %d", no, sec, n)
		}
	}
	l := st.Load
	if l.Wall < 0 || l.CPU < 0 || l.User < 0 || math.IsNaN(l.User) || math.IsInf(l.User, 0) {
		return fmt.Errorf("a load of %v wall, %v CPU, %v given", l.Wall, l.CPU, l.User)
	}
	return nil
}

// checkResume checks the callback a restart sends: an exit, or an entry
// method of a collection of the checkpoint. (Checkpoint takes an ignore
// callback too, but a restart from it would restore the objects and wait
// forever: nothing would send them a message.)
func checkResume(cb Callback, colls map[CollID]*ckptColl, pes int) error {
	switch cb.Kind {
	case CallbackExit:
		return nil
	case CallbackEntry:
	case CallbackIgnore:
		return fmt.Errorf("an ignore callback: nothing would run after the restart")
	case CallbackFuture, CallbackFunc:
		return fmt.Errorf("a %v callback: only entry and exit callbacks survive a restart", cb.Kind)
	default:
		return fmt.Errorf("a callback of unknown kind %d", cb.Kind)
	}
	e, err := EntryByID(cb.Entry)
	if err != nil {
		return err
	}
	r := cb.Route
	cc := colls[r.Coll]
	if cc == nil {
		return fmt.Errorf("%s of collection %v, which the checkpoint does not hold", e, r.Coll)
	}
	if e.Type.ID != cc.Spec.Type {
		typ, _ := TypeByID(cc.Spec.Type)
		name := "?"
		if typ != nil {
			name = typ.Name
		}
		return fmt.Errorf("%s for collection %v, whose type is %s", e, r.Coll, name)
	}
	k := cc.Spec.Kind
	switch {
	case r.Kind == k && (k == KindChare || k == KindBranch):
		if r.PE < -1 || r.PE >= pes {
			return fmt.Errorf("%s of %v on PE %d (the job had %d)", e, r.Coll, r.PE, pes)
		}
	case r.Kind == k && k == KindElement:
		raw, ok := rawOf(r.Index)
		if !ok || len(raw) == 0 {
			return fmt.Errorf("%s of an element of %v with no index", e, r.Coll)
		}
		// The element must be one the restart restores: a message to any
		// other would wait for an insertion that never comes.
		if !slices.ContainsFunc(cc.Objs, func(o ckptObj) bool { return bytes.Equal(o.Index, raw) }) {
			return fmt.Errorf("%s of element %v of %v, which the checkpoint does not hold", e, raw, r.Coll)
		}
	case r.Kind == KindGroupAll && k == KindBranch, (r.Kind == KindArrayAll || r.Kind == KindSection) && k == KindElement:
	default:
		return fmt.Errorf("%s sent as a %v to %v, a collection of %v", e, r.Kind, r.Coll, k)
	}
	return nil
}
