package bracket

import "fmt"

// Root is PE 0's part of the recovery (C12): it declares an iteration in
// error, gathers the reports, and makes the new list.
type Root struct {
	pes        int
	acks       int
	listed     bool // the list is out; waiting for the acknowledgements
	step       int
	recovering bool
	iter       int
	need       int
	got        map[Key]Progress
	where      map[Key]int
	last       int // the last iteration recovered
	haveLast   bool
	// Recoveries counts the recoveries finished.
	Recoveries int
}

// NewRoot returns PE 0's machine.
func NewRoot(pes int) *Root { return &Root{pes: pes} }

// Recovering reports whether a recovery is under way, and of which
// iteration.
func (r *Root) Recovering() (int, bool) { return r.iter, r.recovering }

// Note handles a PE's note. need is the number of sources there are now;
// a recovery finishes when that many have reported. It returns the Enter
// to broadcast, or nil if the note is stale or a recovery is under way
// (the PE notes again when the list of that recovery reaches it).
func (r *Root) Note(n Note, need int) *Enter {
	if r.recovering || r.haveLast && n.Iter <= r.last {
		return nil
	}
	r.step++
	r.recovering, r.iter, r.need = true, n.Iter, need
	r.got, r.where = map[Key]Progress{}, map[Key]int{}
	return &Enter{Iter: n.Iter, Step: r.step}
}

// Ready returns the new list if every source has reported (a recovery
// with no sources at all finishes at once).
func (r *Root) Ready() *List {
	if !r.recovering || r.listed || len(r.got) < r.need {
		return nil
	}
	r.listed, r.acks = true, 0
	return &List{Step: r.step, Iter: r.iter, Where: r.where}
}

// Ack handles a PE's acknowledgement of the list of step; once every PE
// has acknowledged, it returns the step to release everywhere (the
// recovery is over) and true.
func (r *Root) Ack(step int) (int, bool) {
	if !r.listed || step != r.step {
		return 0, false
	}
	r.acks++
	if r.acks < r.pes {
		return 0, false
	}
	r.recovering, r.listed, r.last, r.haveLast = false, false, r.iter, true
	r.Recoveries++
	return r.step, true
}

// Report handles a PE's report; it returns the new list once every source
// has reported. Reports of another step are stale and dropped.
func (r *Root) Report(rep Report) (*List, error) {
	if !r.recovering || r.listed || rep.Step != r.step {
		return nil, nil
	}
	for k, pr := range rep.Sources {
		if old, ok := r.got[k]; ok {
			if old == pr {
				return nil, fmt.Errorf("source %s reported twice at the same point (iteration %d) from PEs %d and %d", k, pr.Iter, r.where[k], rep.PE)
			}
			if !pr.after(old) {
				continue
			}
		}
		r.got[k], r.where[k] = pr, rep.PE
	}
	return r.Ready(), nil
}

// Last returns the last iteration recovered, and whether there was one.
func (r *Root) Last() (int, bool) { return r.last, r.haveLast }
