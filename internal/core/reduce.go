package core

import (
	"errors"
	"fmt"
	"reflect"
	"sync"

	"github.com/charmgo/charm/actor"
	"github.com/charmgo/charm/chare/reducer"
)

// Reductions. Every contributor (group branch, array element, section
// member) numbers its contributions per collection or section; the i-th
// contributions of all of them form reduction i. Array elements migrate,
// so no PE can know in advance how many contributions it will see; the
// reduction is counted instead (as Charm++ counts contributors):
//
//   - each PE folds the contributions of its local members; once none of
//     the members it hosts still owes reduction i (a member that leaves
//     stops owing here, one that arrives starts), it sends the partial
//     result and the number of contributions in it to its parent in the
//     spanning tree over all PEs rooted at PE 0;
//   - a PE passes up at once the partial results of its children that it
//     cannot fold into an open partial of its own;
//   - PE 0 completes reduction i when the contributions it has counted
//     equal the number of members (fixed for groups and sections; for
//     arrays, the elements that exist, see Collection.Count).
//
// A contribution made on a PE after that PE already sent its partial (the
// member arrived late) simply travels as a partial of its own. Results
// are delivered in reduction order.

type redStream struct {
	coll CollID // the collection, or the section's ID
}

type redKey struct {
	redStream
	no int
}

type redAcc struct {
	parts []any // partial results not combined yet
	count int   // contributions in parts
	owed  int   // local members that still owe this reduction (not on the root)
	total int   // on the root: the contributions it waits for, once known (else -1)
	r     reducer.Reducer
	cb    Callback
	coll  CollID
	sec   *Section
}

type redOrder struct {
	next int // the next reduction to deliver
	top  int // one more than the highest reduction complete
	done map[int]func()
}

// reductionRoot is the PE where reductions complete (ReductionRoot).
const reductionRoot = ReductionRoot

// Contribute adds the object's value to the next reduction over its
// collection (a group or an array), combined with r and delivered to cb
// (Charm++'s contribute). All members must contribute, in the same order,
// with the same reducer.
func (b *Base) Contribute(value any, r reducer.Reducer, cb Callback) error {
	switch {
	case b.coll == nil:
		return errors.New("chare: Contribute needs a group branch or array element")
	case r == nil:
		return errors.New("chare: Contribute with a nil reducer")
	case b.coll.Kind == KindChare:
		return fmt.Errorf("chare: singleton chare %v does not take part in reductions (Contribute needs a group branch or array element)", b.coll.ID)
	}
	return b.contribute(b.coll.ID, b.coll.ID, nil, value, r, cb)
}

// NewFutureFor creates a future for the result of a reduction with r, of
// the type r delivers: NewFutureFor(m, reducer.GatherOf[int, Cell]())
// is a Future[[]reducer.Pair[int, Cell]]. Pass its Callback to the
// contributors, which contribute with the same reducer. Unlike
// NewFuture[T], a T that does not match the reducer does not compile.
func NewFutureFor[R any](ctx Context, r reducer.Typed[R]) Future[R] { return NewFuture[R](ctx) }

// EntryCallbackFor is EntryCallback for the result of a reduction with r:
// the compiler checks that method takes what r delivers, as in
// EntryCallbackFor(main, reducer.GatherOf[int, Cell](), (*Main).Done) with
// Done(items []reducer.Pair[int, Cell]).
func EntryCallbackFor[T, R any](to Target[T], r reducer.Typed[R], method func(*T, R)) Callback {
	return EntryCallback(to, method)
}

// ContributeTo adds the object's value to the next reduction over a section
// it belongs to.
func (b *Base) ContributeTo(s *Section, value any, r reducer.Reducer, cb Callback) error {
	if s == nil || b.coll == nil || s.Coll != b.coll.ID {
		return errors.New("chare: ContributeTo needs a section of the contributor's own array")
	}
	return b.contribute(s.ID, s.Coll, s, value, r, cb)
}

// nextNo is the number of the member's next contribution to a stream.
func (b *Base) nextNo(sec *Section) int {
	if sec == nil {
		return b.redNo
	}
	return b.reds[sec.ID]
}

// redOwed counts the local members that still owe reduction no of the
// collection, or of the section if sec is set. It runs once per reduction
// on a PE, when the PE's first contribution opens it.
func (pe *PE) redOwed(coll CollID, sec *Section, no int) (int, error) {
	l, err := PartOf(pe, coll)
	if err != nil {
		return 0, err
	}
	each, ok := l.(interface{ Each(func(obj any)) })
	if !ok {
		return 0, fmt.Errorf("chare: collection %v does not take part in reductions", coll)
	}
	var members map[any]bool
	if sec != nil {
		if members, err = pe.sectionMembers(sec); err != nil {
			return 0, err
		}
	}
	if pe.owedAdd == nil {
		pe.owedAdd = pe.owed.add
	}
	pe.owed = owedCount{sec: sec, members: members, no: no}
	each.Each(pe.owedAdd)
	n := pe.owed.n
	pe.owed = owedCount{}
	return n, nil
}

// owedCount is redOwed's count of the members that owe reduction no; the
// PE keeps one, with its add method as a func made once, so that counting
// makes no closure per reduction.
type owedCount struct {
	sec     *Section
	members map[any]bool // sec's members on this PE
	no, n   int
}

func (c *owedCount) add(obj any) {
	b := obj.(Context).base()
	if c.sec != nil && !c.members[b.index] {
		return
	}
	if b.nextNo(c.sec) <= c.no {
		c.n++
	}
}

// newAcc returns an open reduction's accumulator: the one the PE's last
// finished reduction left (with its parts slice), or a new one.
func (pe *PE) newAcc(r reducer.Reducer, cb Callback, coll CollID, sec *Section, owed int) *redAcc {
	acc := pe.spareAcc
	if acc == nil {
		return &redAcc{r: r, cb: cb, coll: coll, sec: sec, owed: owed, total: -1}
	}
	pe.spareAcc = nil
	*acc = redAcc{parts: acc.parts[:0], r: r, cb: cb, coll: coll, sec: sec, owed: owed, total: -1}
	return acc
}

// maxSpareParts is the longest parts slice a finished accumulator keeps
// for the next reduction.
const maxSpareParts = 1024

func (b *Base) contribute(stream, coll CollID, sec *Section, value any, r reducer.Reducer, cb Callback) error {
	if r == nil {
		return errors.New("chare: Contribute with a nil reducer")
	}
	var no int
	if sec == nil {
		no = b.redNo
		b.redNo++
	} else {
		if b.reds == nil {
			b.reds = map[CollID]int{}
		}
		no = b.reds[stream]
		b.reds[stream] = no + 1
	}
	part, err := r.Lift(value, b.index)
	if err != nil {
		return fmt.Errorf("chare: contribution of %v to reduction %d of %v: %w", b.index, no, stream, err)
	}
	pe := b.pe
	k := redKey{redStream{stream}, no}
	acc := pe.lastAcc // the common case: the next local contribution
	if k != pe.lastRed || acc == nil {
		acc = pe.reds[k]
	}
	if acc == nil {
		owed := 0
		if pe.ID() != reductionRoot {
			// The contributor has moved on to its next number already.
			if owed, err = pe.redOwed(coll, sec, no); err != nil {
				return err
			}
		}
		acc = pe.newAcc(r, cb, coll, sec, owed)
		if owed > 0 || pe.ID() == reductionRoot {
			pe.reds[k] = acc
		} // else it completes here at once (redCheck): nothing looks it up

	} else {
		// A mixed reduction cannot complete for anyone: the job ends even
		// if the caller drops the error, rather than hang.
		if acc.r.Name() != r.Name() {
			err := fmt.Errorf("chare: reduction %d of %v mixes reducers %s and %s", no, stream, acc.r.Name(), r.Name())
			pe.fail(err)
			return err
		}
		if !sameCallback(acc.cb, cb) {
			err := mixedCallbacks(no, stream, acc.cb, cb)
			pe.fail(err)
			return err
		}
		acc.owed--
	}
	pe.lastRed, pe.lastAcc = k, acc
	acc.parts = append(acc.parts, part)
	acc.count++
	pe.redCheck(k, acc)
	return nil
}

// combine folds the partial results pairwise, as a balanced tree, so that
// reducers that copy (gather, set) do O(n log n) work rather than O(n²).
// It leaves parts empty, its array cleared for reuse.
func (a *redAcc) combine() (any, bool, error) {
	ps := a.parts
	defer func() { clear(a.parts); a.parts = a.parts[:0] }()
	for len(ps) > 1 {
		n := 0
		for i := 0; i < len(ps); i += 2 {
			if i+1 == len(ps) {
				ps[n] = ps[i]
			} else {
				c, err := a.r.Combine(ps[i], ps[i+1])
				if err != nil {
					return nil, false, err
				}
				ps[n] = c
			}
			n++
		}
		ps = ps[:n]
	}
	if len(ps) == 1 {
		return ps[0], true, nil
	}
	return nil, false, nil
}

// redTotal is how many contributions reduction no of a collection or
// section has, as the root knows it.
func (pe *PE) redTotal(coll CollID, sec *Section, no int) (int, bool, error) {
	if sec != nil {
		return sec.N, true, nil
	}
	c, err := JobCollection(pe.job, coll)
	if err != nil {
		return 0, false, err
	}
	if c.Count != nil {
		n, ok := c.Count(pe, no)
		return n, ok, nil
	}
	return len(c.Tree), true, nil
}

// redCheck passes a reduction on once this PE has everything it waits for.
func (pe *PE) redCheck(k redKey, acc *redAcc) {
	if pe.ID() == reductionRoot {
		if acc.total < 0 {
			n, known, err := pe.redTotal(acc.coll, acc.sec, k.no)
			if err != nil {
				pe.fail(fmt.Errorf("chare: reduction %d of %v: %w", k.no, k.coll, err))
				return
			}
			if !known {
				return
			}
			acc.total = n
		}
		if acc.count < acc.total {
			return
		}
		if acc.count > acc.total {
			pe.fail(fmt.Errorf("chare: reduction %d of %v got %d contributions for %d members", k.no, k.coll, acc.count, acc.total))
			return
		}
	} else if acc.owed > 0 {
		return
	}
	if len(pe.reds) > 0 {
		delete(pe.reds, k)
	}
	if pe.lastAcc == acc {
		pe.lastAcc = nil
	}
	partial, has, err := acc.combine()
	if err != nil {
		pe.fail(fmt.Errorf("chare: reduction %d of %v: %w", k.no, k.coll, err))
		return
	}
	up := redUp{key: k, partial: partial, has: has, count: acc.count, r: acc.r, cb: acc.cb, coll: acc.coll, sec: acc.sec}
	// Nothing refers to acc any more (it left pe.reds and the cache): the
	// next reduction opened here takes it.
	if cap(acc.parts) <= maxSpareParts {
		pe.spareAcc = acc
	}
	if pe.ID() != reductionRoot {
		m, _ := redUps.Get().(*redUp)
		if m == nil {
			m = new(redUp)
		}
		*m = up
		pe.ap.Send(pe.job.rt.Tree().Parent(pe.ID()), m)
		return
	}
	pe.redDeliver(k, up)
}

// redUps holds partials that their parent PE has folded in, for the next
// partial a PE sends up: a barrier of every step then allocates nothing.
// A partial goes back only from the one place where nothing refers to it
// any more (the end of redUp.Deliver, also when a partial held for a
// collection not made yet is delivered again); one passed on or sent to
// another process is left to the collector.
var redUps sync.Pool

// NextReduction returns, on the root, the number of the first reduction
// of a collection that is not complete: an element inserted now joins the
// reductions from there.
func NextReduction(pe *PE, coll CollID) int {
	if o := pe.redNext[redStream{coll}]; o != nil {
		return o.top
	}
	return 0
}

// RecheckReductions tells the root that the number of members of a
// collection changed (an insertion or a deletion): the reductions under
// way count again, and may complete.
func RecheckReductions(pe *PE, coll CollID) {
	for k, acc := range pe.reds {
		if acc.coll == coll && acc.sec == nil {
			acc.total = -1
			pe.redCheck(k, acc)
		}
	}
}

// memberMoved adjusts the open reductions of this PE when a member leaves
// (d = -1) or arrives (d = +1): a member owes every reduction from its
// next number on to the PE that hosts it.
func (pe *PE) memberMoved(b *Base, d int) {
	if pe.ID() == reductionRoot || len(pe.reds) == 0 {
		return
	}
	for k, acc := range pe.reds {
		if acc.coll != b.coll.ID {
			continue
		}
		if acc.sec != nil {
			members, err := pe.sectionMembers(acc.sec)
			if err != nil || !members[b.index] {
				continue
			}
		}
		if k.no >= b.nextNo(acc.sec) {
			acc.owed += d
			pe.redCheck(k, acc)
		}
	}
}

// MemberLeft tells the PE's reductions that an array element left it.
func MemberLeft(pe *PE, obj any) { pe.memberMoved(obj.(Context).base(), -1) }

// MemberArrived tells the PE's reductions that an array element arrived.
func MemberArrived(pe *PE, obj any) { pe.memberMoved(obj.(Context).base(), +1) }

// redDeliver sends the result of reduction k to its callback, keeping
// reduction order per collection or section.
func (pe *PE) redDeliver(k redKey, res redUp) {
	o := pe.redNext[k.redStream]
	if o == nil {
		o = &redOrder{done: map[int]func(){}}
		pe.redNext[k.redStream] = o
	}
	o.top = max(o.top, k.no+1)
	if k.no == o.next {
		// The next one in order (the common case): delivered at once,
		// without a closure kept in done.
		o.next++
		pe.redResult(k, &res)
	} else {
		later := res
		o.done[k.no] = func() { pe.redResult(k, &later) }
	}
	for f := o.done[o.next]; f != nil; f = o.done[o.next] {
		delete(o.done, o.next)
		o.next++
		f()
	}
}

// redResult delivers the result of reduction k to its callback.
func (pe *PE) redResult(k redKey, res *redUp) {
	var v any
	var err error
	if res.has {
		v, err = res.r.Result(res.partial)
	}
	if err == nil {
		err = res.cb.Send(ContextOf(pe), v)
	}
	if err != nil {
		pe.fail(fmt.Errorf("chare: delivering reduction %d of %v: %w", k.no, k.coll, err))
	}
}

// redUp carries a partial result and how many contributions it holds
// towards the root.
type redUp struct {
	key     redKey
	partial any
	has     bool
	count   int
	r       reducer.Reducer
	cb      Callback
	coll    CollID
	sec     *Section
}

func (m *redUp) Describe() string {
	return fmt.Sprintf("reduction %d of %v", m.key.no, m.key.coll)
}

func (m *redUp) Deliver(ap *actor.PE) {
	pe := peOf(ap)
	acc := pe.reds[m.key]
	if acc == nil {
		if pe.ID() != reductionRoot {
			// Nothing open here to fold it into: pass it on.
			pe.ap.Send(pe.job.rt.Tree().Parent(pe.ID()), m)
			return
		}
		if _, err := pe.collection(m.coll); err == errPending {
			pe.hold(m.coll, m, func() { m.Deliver(ap) })
			return
		}
		acc = pe.newAcc(m.r, m.cb, m.coll, m.sec, 0)
		pe.reds[m.key] = acc
	} else if acc.r.Name() != m.r.Name() {
		pe.fail(fmt.Errorf("chare: reduction %d of %v mixes reducers %s and %s", m.key.no, m.key.coll, acc.r.Name(), m.r.Name()))
		return
	} else if !sameCallback(acc.cb, m.cb) {
		pe.fail(mixedCallbacks(m.key.no, m.key.coll, acc.cb, m.cb))
		return
	}
	if m.has {
		acc.parts = append(acc.parts, m.partial)
	}
	acc.count += m.count
	pe.redCheck(m.key, acc)
	// Folded in: nothing refers to m any more (the actor reads only its
	// type after Deliver).
	*m = redUp{}
	redUps.Put(m)
}

// sameCallback says whether two contributions to one reduction name the
// same callback. Members that contribute in different orders (one to a
// barrier A then B, another to B then A) use the same reducer but not the
// same callback: without this check their reductions are crossed, and a
// callback fires twice while another never does. A callback that crossed
// processes compares by its fields, its element index by encoding.
func sameCallback(a, b Callback) bool {
	if a.Kind != b.Kind || a.Entry != b.Entry || a.Future != b.Future || a.Func != b.Func || a.PE != b.PE || a.Code != b.Code {
		return false
	}
	ra, rb := a.Route, b.Route
	if ra.Kind != rb.Kind || ra.Coll != rb.Coll || ra.PE != rb.PE {
		return false
	}
	// A callback's encoding leaves out a section route's members, so one
	// that crossed processes has none: compare sections only when both
	// callbacks carry theirs.
	if ra.Section != nil && rb.Section != nil && ra.Section.ID != rb.Section.ID {
		return false
	}
	if ra.Index == nil || rb.Index == nil {
		return ra.Index == nil && rb.Index == nil
	}
	// The usual case, two copies made in this process: compared as they
	// are, without encoding (no allocation per contribution).
	if ta := reflect.TypeOf(ra.Index); ta == reflect.TypeOf(rb.Index) && plainValue(ta) {
		return ra.Index == rb.Index
	}
	ka, errA := IndexKey(ra.Index)
	kb, errB := IndexKey(rb.Index)
	return errA == nil && errB == nil && ka == kb
}

func mixedCallbacks(no int, stream CollID, a, b Callback) error {
	return fmt.Errorf("chare: reduction %d of %v mixes callbacks (%s and %s): every member must contribute to its reductions in the same order", no, stream, a.describe(), b.describe())
}

// plainValue says whether values of t are equal exactly when their
// encodings are: integers, strings and arrays of them (not pointers, such
// as a decoded index's wire form).
func plainValue(t reflect.Type) bool {
	if t.Kind() == reflect.Array {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.String:
		return true
	}
	return false
}
