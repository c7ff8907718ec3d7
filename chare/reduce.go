package chare

import (
	"errors"
	"fmt"
	"sort"

	"github.com/charmgo/charm/actor"
	"github.com/charmgo/charm/chare/reducer"
)

// Reductions. Every contributor (group branch, array element, section
// member) numbers its contributions per collection or section; the i-th
// contributions of all of them form reduction i. Each PE combines the
// contributions of its local members with the partial results of its
// children in a spanning tree over the PEs that take part, then passes the
// result to its parent; the root turns it into the result and sends it to
// the callback. Results are delivered in reduction order.

type redStream struct {
	coll CollID // the collection, or the section's ID
}

type redKey struct {
	redStream
	no int
}

type redAcc struct {
	parts    []any // partial results not combined yet
	partial  any
	has      bool
	local    int // contributions of local members received
	children int // partial results of children received
	r        reducer.Reducer
	cb       Callback
	tree     []int
	expect   int // local members expected
	kids     int // children in the tree
	coll     CollID
	sec      *Section
}

type redOrder struct {
	next int
	done map[int]func()
}

// Contribute adds the object's value to the next reduction over its
// collection (a group or an array), combined with r and delivered to cb
// (Charm++'s contribute). All members must contribute, in the same order,
// with the same reducer.
func (b *Base) Contribute(value any, r reducer.Reducer, cb Callback) error {
	if b.coll == nil {
		return errors.New("chare: Contribute needs a group branch or array element")
	}
	return b.contribute(b.coll.ID, b.coll.ID, nil, b.coll.Tree, value, r, cb)
}

// ContributeTo adds the object's value to the next reduction over a section
// it belongs to.
func (b *Base) ContributeTo(s *Section, value any, r reducer.Reducer, cb Callback) error {
	if s == nil || b.coll == nil || s.Coll != b.coll.ID {
		return errors.New("chare: ContributeTo needs a section of the contributor's own array")
	}
	return b.contribute(s.ID, s.Coll, s, s.Tree, value, r, cb)
}

// redExpect is how many local members contribute to a reduction of the
// collection, or of the section if sec is set.
func (pe *PE) redExpect(coll CollID, sec *Section) (int, error) {
	if sec != nil {
		return sec.count[pe.ID()], nil
	}
	l, err := pe.Part(coll)
	if err != nil {
		return 0, err
	}
	n, ok := l.(interface{ NumLocal() int })
	if !ok {
		return 0, fmt.Errorf("chare: collection %v does not take part in reductions", coll)
	}
	return n.NumLocal(), nil
}

func (b *Base) contribute(stream, coll CollID, sec *Section, tree []int, value any, r reducer.Reducer, cb Callback) error {
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
	acc, err := pe.redAcc(redKey{redStream{stream}, no}, coll, sec, tree, r, cb)
	if err != nil {
		return err
	}
	acc.add(part)
	acc.local++
	pe.redCheck(redKey{redStream{stream}, no}, acc)
	return nil
}

func (pe *PE) redAcc(k redKey, coll CollID, sec *Section, tree []int, r reducer.Reducer, cb Callback) (*redAcc, error) {
	acc := pe.lastAcc // the common case: the next local contribution
	if k != pe.lastRed || acc == nil {
		acc = pe.reds[k]
	}
	if acc == nil {
		if pos(tree, pe.ID()) < 0 {
			return nil, fmt.Errorf("chare: PE %d is not in the reduction tree of %v %v", pe.ID(), k.coll, tree)
		}
		expect, err := pe.redExpect(coll, sec)
		if err != nil {
			return nil, err
		}
		acc = &redAcc{r: r, cb: cb, tree: tree, expect: expect, coll: coll, sec: sec,
			kids: len(actor.TreeChildren(nil, pos(tree, pe.ID()), len(tree), pe.job.rt.Tree().Arity))}
		pe.reds[k] = acc
	} else if acc.r.Name() != r.Name() {
		return nil, fmt.Errorf("chare: reduction %d of %v mixes reducers %s and %s", k.no, k.coll, acc.r.Name(), r.Name())
	}
	pe.lastRed, pe.lastAcc = k, acc
	return acc, nil
}

// add keeps a partial result; they are combined once all have arrived.
func (a *redAcc) add(part any) { a.parts = append(a.parts, part) }

// combine folds the partial results pairwise, as a balanced tree, so that
// reducers that copy (gather, set) do O(n log n) work rather than O(n²).
func (a *redAcc) combine() error {
	ps := a.parts
	for len(ps) > 1 {
		n := 0
		for i := 0; i < len(ps); i += 2 {
			if i+1 == len(ps) {
				ps[n] = ps[i]
			} else {
				c, err := a.r.Combine(ps[i], ps[i+1])
				if err != nil {
					return err
				}
				ps[n] = c
			}
			n++
		}
		ps = ps[:n]
	}
	if len(ps) == 1 {
		a.partial, a.has = ps[0], true
	}
	a.parts = nil
	return nil
}

func pos(tree []int, pe int) int {
	i := sort.SearchInts(tree, pe)
	if i < len(tree) && tree[i] == pe {
		return i
	}
	return -1
}

// redCheck passes a reduction on once this PE has everything.
func (pe *PE) redCheck(k redKey, acc *redAcc) {
	if acc.local < acc.expect || acc.children < acc.kids {
		return
	}
	p, arity := pos(acc.tree, pe.ID()), pe.job.rt.Tree().Arity
	delete(pe.reds, k)
	if pe.lastAcc == acc {
		pe.lastAcc = nil
	}
	if err := acc.combine(); err != nil {
		pe.fail(fmt.Errorf("chare: reduction %d of %v: %w", k.no, k.coll, err))
		return
	}
	if parent := actor.TreeParent(p, arity); parent >= 0 {
		pe.ap.Send(acc.tree[parent], &redUp{key: k, partial: acc.partial, has: acc.has, r: acc.r, cb: acc.cb, tree: acc.tree, coll: acc.coll, sec: acc.sec})
		return
	}
	pe.redDeliver(k, acc)
}

// redDeliver sends the result of reduction k to its callback, keeping
// reduction order per collection or section.
func (pe *PE) redDeliver(k redKey, acc *redAcc) {
	o := pe.redNext[k.redStream]
	if o == nil {
		o = &redOrder{done: map[int]func(){}}
		pe.redNext[k.redStream] = o
	}
	o.done[k.no] = func() {
		var res any
		var err error
		if acc.has {
			res, err = acc.r.Result(acc.partial)
		}
		if err == nil {
			err = acc.cb.Send(pe.Context(), res)
		}
		if err != nil {
			pe.fail(fmt.Errorf("chare: delivering reduction %d of %v: %w", k.no, k.coll, err))
		}
	}
	for f := o.done[o.next]; f != nil; f = o.done[o.next] {
		delete(o.done, o.next)
		o.next++
		f()
	}
}

// redUp carries a partial result to the parent PE.
type redUp struct {
	key     redKey
	partial any
	has     bool
	r       reducer.Reducer
	cb      Callback
	tree    []int
	coll    CollID
	sec     *Section
}

func (m *redUp) Describe() string {
	return fmt.Sprintf("reduction %d of %v", m.key.no, m.key.coll)
}

func (m *redUp) Deliver(ap *actor.PE) {
	pe := peOf(ap)
	acc, err := pe.redAcc(m.key, m.coll, m.sec, m.tree, m.r, m.cb)
	if err == errPending {
		pe.hold(m.coll, m, func() { m.Deliver(ap) })
		return
	}
	if err != nil {
		pe.fail(err)
		return
	}
	if m.has {
		acc.add(m.partial)
	}
	acc.children++
	pe.redCheck(m.key, acc)
}
