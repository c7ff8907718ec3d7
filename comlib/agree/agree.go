package agree

import (
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/charmgo/charm/tune"
)

// Range gives the segments From..To (inclusive) the value Value. Every
// says which of them PEs report (Follower.Reported): with Every ≤ 1 all, with
// Every = k only the segments that are multiples of k, the others being
// quiet — run with Value and never reported.
type Range struct{ From, To, Value, Every int }

// Reported reports whether PEs report the iterations of segment seg
// (which the range must cover).
func (r Range) Reported(seg int) bool {
	return r.Every <= 1 || mod(seg, r.Every) == 0
}

func mod(a, k int) int { return ((a % k) + k) % k }

// same reports whether two ranges say the same of the segments they
// share (Every ≤ 1 being one rule).
func same(a, b Range) bool {
	return a.Value == b.Value && max(a.Every, 1) == max(b.Every, 1)
}

// Segment is the segment of iteration n: ⌊n/length⌋ (iterations may be
// negative).
func Segment(n, length int) int {
	s := n / length
	if n%length != 0 && n < 0 {
		s--
	}
	return s
}

// plan is a set of non-overlapping ranges, sorted.
type plan []Range

func (p plan) find(seg int) (Range, bool) {
	i := sort.Search(len(p), func(i int) bool { return p[i].To >= seg })
	if i < len(p) && p[i].From <= seg {
		return p[i], true
	}
	return Range{}, false
}

// add merges r into the plan; a segment already given another value, or
// the same value with other segments reported, is an error.
func (p *plan) add(r Range) error {
	if r.To < r.From {
		return fmt.Errorf("agree: range of segments %d..%d is empty", r.From, r.To)
	}
	for _, q := range *p {
		if q.From <= r.To && r.From <= q.To && !same(q, r) {
			lo, hi := max(q.From, r.From), min(q.To, r.To)
			if q.Value == r.Value {
				return fmt.Errorf("agree: segments %d..%d were given value %d reported every %d segments and now every %d", lo, hi, q.Value, max(q.Every, 1), max(r.Every, 1))
			}
			return fmt.Errorf("agree: segments %d..%d were given value %d and now %d", lo, hi, q.Value, r.Value)
		}
	}
	// Cut what is new out of r, then insert and merge neighbours.
	out := append(plan(nil), *p...)
	out = append(out, r)
	sort.Slice(out, func(i, j int) bool { return out[i].From < out[j].From })
	merged := out[:0]
	for _, q := range out {
		if n := len(merged); n > 0 && same(merged[n-1], q) && q.From-1 <= merged[n-1].To { // (To may be MaxInt)
			merged[n-1].To = max(merged[n-1].To, q.To)
			continue
		}
		merged = append(merged, q)
	}
	*p = merged
	return nil
}

// Follower is one PE's copy of the plan.
type Follower struct {
	length int
	plan   plan
	asked  map[int]bool
}

// NewFollower returns a Follower for segments of length iterations
// (length < 1 counts as 1).
func NewFollower(length int) *Follower {
	return &Follower{length: max(length, 1), asked: map[int]bool{}}
}

// Value is the value of iteration n, and whether it is known here yet.
func (f *Follower) Value(n int) (int, bool) {
	r, ok := f.plan.find(Segment(n, f.length))
	return r.Value, ok
}

// Reported reports whether the PE reports iteration n to the Decider when
// it ends: false for an iteration of a quiet segment (Range.Every), and
// for one whose value is not known here.
func (f *Follower) Reported(n int) bool {
	seg := Segment(n, f.length)
	r, ok := f.plan.find(seg)
	return ok && r.Reported(seg)
}

// Need is called for an iteration n whose value is not known: it returns
// n's segment, and ask is true the first time, when the PE should send the
// Decider a Request for it.
func (f *Follower) Need(n int) (seg int, ask bool) {
	seg = Segment(n, f.length)
	if _, ok := f.plan.find(seg); ok || f.asked[seg] {
		return seg, false
	}
	f.asked[seg] = true
	return seg, true
}

// Take stores a range announced by the Decider. A range that gives a known
// segment another value is an error, and changes nothing.
func (f *Follower) Take(r Range) error {
	if err := f.plan.add(r); err != nil {
		return err
	}
	for seg := range f.asked {
		if seg >= r.From && seg <= r.To {
			delete(f.asked, seg)
		}
	}
	return nil
}

// Options configure a Decider. The value is an integer in [Min, Max].
type Options struct {
	Min, Max int
	// Start is the first value (it must lie in [Min, Max]).
	Start int
	// Length is the number of iterations per segment (default 8).
	Length int
	// Lead is how many iterations at the end of a segment the Decider does
	// not wait for before it announces the next one (default ⌈Length/4⌉,
	// at most Length−1). 0 makes every PE wait at each segment for the
	// last iteration's measure: slow, but the hardest case for the
	// protocol.
	Lead int
	// Evals is the number of segments the tuner averages into one score
	// (default 1: each segment's score is already the mean of its
	// Length−Lead measured iterations, E07). With Values it must be 0 or
	// 1: a Picker scores each segment by itself.
	Evals int
	// Fixed turns tuning off: Start holds for every iteration.
	Fixed bool
	// Every is how often PEs report once there is nothing to search
	// (default 16; 1 or below 0: always): while a Picker (Values) has
	// settled, or with nothing to tune, the Decider announces ranges in
	// which only the segments that are multiples of Every are reported
	// (Range.Every), and scores only those. A settled Picker so still
	// sees a moved cost, at most Every segments late; a segment that
	// looks moved (tune.Picker.Drifting) is followed by reported ones
	// until the Picker confirms the move and searches again, or clears
	// it. A Tuner (Min..Max) is always measured every segment.
	Every int
	// Values, if set, are the only values worth trying, in order (say the
	// fan-outs that give distinct numbers of rounds): the Decider then
	// chooses among them with a tune.Picker, which leaves Start only for a
	// value measured better by more than the noise, instead of searching
	// Min..Max with a tune.Tuner. Start must be one of them; Min and Max
	// are not used.
	Values []int
}

// Report is what a PE says when its part of an iteration Iter that its
// range reports (Follower.Reported) ends: the value it used, and the cost
// it measured. Step names the list of participants the iteration ran with
// (an iteration is measured once Parts reports of the same step are in).
type Report struct {
	PE, Iter, Step, Parts, Value int
	Cost                         float64
}

type gather struct {
	step, parts, value int
	pes                map[int]bool
	cost               float64
}

// Decider is the PE that gives every segment its value.
type Decider struct {
	o       Options
	tuner   *tune.Tuner  // nil when there is nothing to tune, or with Values
	choice  *tune.Picker // with Values
	plan    plan
	started bool
	lo, hi  int       // segments announced: lo..hi, without gaps
	cur     int       // the value under evaluation (in force from evalFrom)
	from    int       // the first segment of the current evaluation
	costs   []float64 // the current evaluation's measured iterations
	gathers map[int]*gather
	newest  int          // the newest iteration measured
	evals   int          // evaluations so far
	traj    []tune.Point // the latest MaxTrajectory evaluations
	// The last iteration measured, and the value each PE reported for it.
	usedIter int
	used     map[int]int
}

// NewDecider returns the Decider, or an error naming the option that is
// out of range.
func NewDecider(o Options) (*Decider, error) {
	if o.Length == 0 {
		o.Length = 8
	}
	if o.Lead == 0 {
		o.Lead = DefaultLead(o.Length)
	}
	if o.Evals == 0 {
		o.Evals = 1
	}
	if o.Every == 0 {
		o.Every = 16
	}
	o.Every = max(o.Every, 1)
	if len(o.Values) > 0 {
		if o.Evals > 1 {
			return nil, fmt.Errorf("agree: Evals=%d does not apply with Values: a Picker scores each segment by itself and judges the noise across them", o.Evals)
		}
		o.Min, o.Max = slices.Min(o.Values), slices.Max(o.Values)
	}
	switch {
	case o.Length < 1:
		return nil, fmt.Errorf("agree: Options.Length %d, want at least 1 iteration per segment", o.Length)
	case o.Lead < 0 || o.Lead >= o.Length:
		return nil, fmt.Errorf("agree: Options.Lead %d outside 0..Length−1 (%d)", o.Lead, o.Length-1)
	case o.Min > o.Max:
		return nil, fmt.Errorf("agree: Options.Min %d above Options.Max %d", o.Min, o.Max)
	case o.Start < o.Min || o.Start > o.Max:
		return nil, fmt.Errorf("agree: Options.Start %d outside [Min %d, Max %d]", o.Start, o.Min, o.Max)
	}
	d := &Decider{o: o, cur: o.Start, gathers: map[int]*gather{}}
	switch {
	case o.Fixed:
	case len(o.Values) > 1:
		c, err := tune.NewPicker(tune.PickerOptions{Values: o.Values, Start: o.Start})
		if err != nil {
			return nil, fmt.Errorf("agree: %w", err)
		}
		d.choice = c
	case len(o.Values) == 0 && o.Max > o.Min:
		t, err := tune.New(tune.Options{Min: float64(o.Min), Max: float64(o.Max), Start: float64(o.Start), Step: 1, MinStep: 1, Evals: o.Evals})
		if err != nil {
			return nil, fmt.Errorf("agree: %w", err)
		}
		d.tuner = t
	}
	return d, nil
}

// Length is the number of iterations per segment (Followers need it).
func (d *Decider) Length() int { return d.o.Length }

// Lead is the number of iterations at the end of a segment that the
// Decider does not score (Batchers need it).
func (d *Decider) Lead() int { return d.o.Lead }

// Value is the value of iteration n, if it has been announced.
func (d *Decider) Value(n int) (int, bool) {
	r, ok := d.plan.find(Segment(n, d.o.Length))
	return r.Value, ok
}

// MaxTrajectory bounds the evaluations a Decider's Trajectory keeps (the
// latest): a job that runs for days must not grow it without end.
const MaxTrajectory = tune.MaxTrajectory

// Trajectory returns one point per evaluation, the latest MaxTrajectory:
// the value and its mean cost.
func (d *Decider) Trajectory() []tune.Point { return append([]tune.Point(nil), d.traj...) }

// Used returns the values the PEs reported for iteration n (PE → value)
// if n is the iteration measured last, else nil.
func (d *Decider) Used(n int) map[int]int {
	if d.used == nil || n != d.usedIter {
		return nil
	}
	return d.used
}

func (d *Decider) announce(r Range) Range {
	if err := d.plan.add(r); err != nil {
		panic(err) // the Decider only announces segments it has not given a value
	}
	if !d.started {
		d.started, d.lo, d.hi = true, r.From, r.To
	}
	d.lo, d.hi = min(d.lo, r.From), max(d.hi, r.To)
	return r
}

// Request answers a PE that needs segment seg: the range that covers it,
// announced now if it was not (with the value in force).
func (d *Decider) Request(seg int) []Range {
	switch {
	case !d.started:
		d.from = seg
		if d.tuner == nil && d.choice == nil { // one value forever: one announcement
			return []Range{d.announce(Range{From: seg, To: math.MaxInt, Value: d.cur, Every: d.o.Every})}
		}
		return []Range{d.announce(Range{From: seg, To: seg, Value: d.cur})}
	case seg > d.hi && d.quiet():
		// A PE got there before the re-check was measured (under load,
		// or with no Lead): the plan stays quiet up to the next multiple
		// of Every, which becomes the re-check (the one in progress is
		// dropped), so that the plan keeps one range while nothing
		// changes.
		d.from, d.costs = seg+mod(-seg, d.o.Every), d.costs[:0]
		return []Range{d.announce(Range{From: d.hi + 1, To: d.from, Value: d.cur, Every: d.o.Every})}
	case seg > d.hi:
		// A PE got there before the next announcement: the value in
		// force, every segment reported, so the Decider measures it.
		return []Range{d.announce(Range{From: d.hi + 1, To: seg, Value: d.cur})}
	case seg < d.lo:
		// An iteration older than any announced (iterations may start
		// anywhere): give it the first value, so that lo..hi stays whole.
		first := d.plan[0]
		return []Range{d.announce(Range{From: seg, To: d.lo - 1, Value: first.Value, Every: first.Every})}
	}
	r, _ := d.plan.find(seg)
	return []Range{r} // announced already: the answer is on its way; this copy is harmless
}

// Report takes a PE's report. Once the iteration is measured it may close
// an evaluation and announce the next segment's value. A report of a value
// other than the one announced for its iteration is an error.
func (d *Decider) Report(r Report) ([]Range, error) {
	want, ok := d.Value(r.Iter)
	if !ok {
		return nil, fmt.Errorf("agree: PE %d ran iteration %d with value %d before any value was announced for it", r.PE, r.Iter, r.Value)
	}
	if r.Value != want {
		return nil, fmt.Errorf("agree: PE %d ran iteration %d with value %d; the value announced for it is %d", r.PE, r.Iter, r.Value, want)
	}
	if seg := Segment(r.Iter, d.o.Length); !d.reported(seg) {
		q, _ := d.plan.find(seg)
		return nil, fmt.Errorf("agree: PE %d reported iteration %d, of segment %d, which was announced quiet (reported every %d segments)", r.PE, r.Iter, seg, q.Every)
	}
	if math.IsNaN(r.Cost) || math.IsInf(r.Cost, 0) || r.Cost < 0 {
		return nil, fmt.Errorf("agree: PE %d reported cost %v for iteration %d, want a finite non-negative number", r.PE, r.Cost, r.Iter)
	}
	g := d.gathers[r.Iter]
	switch {
	case g == nil || r.Step > g.step:
		g = &gather{step: r.Step, parts: r.Parts, value: r.Value, pes: map[int]bool{}}
		d.gathers[r.Iter] = g
	case r.Step < g.step:
		return nil, nil // from an exchange the list replaced
	}
	if r.Parts != g.parts {
		return nil, fmt.Errorf("agree: PE %d ran iteration %d among %d participants, another PE among %d (step %d)", r.PE, r.Iter, r.Parts, g.parts, r.Step)
	}
	if g.pes[r.PE] {
		return nil, fmt.Errorf("agree: PE %d reported iteration %d twice", r.PE, r.Iter)
	}
	g.pes[r.PE] = true
	g.cost = math.Max(g.cost, r.Cost)
	if len(g.pes) < g.parts {
		return nil, nil
	}
	delete(d.gathers, r.Iter)
	used := make(map[int]int, len(g.pes))
	for pe := range g.pes {
		used[pe] = g.value
	}
	d.usedIter, d.used = r.Iter, used
	d.newest = max(d.newest, r.Iter)
	for n := range d.gathers { // iterations an error interrupted never complete
		if n < d.newest-64*d.o.Length {
			delete(d.gathers, n)
		}
	}
	return d.measured(r.Iter, g.cost), nil
}

// measured takes the cost of a whole iteration.
func (d *Decider) measured(n int, cost float64) []Range {
	if d.tuner == nil && d.choice == nil || Segment(n, d.o.Length) < d.from {
		return nil // fixed, or run with an older value
	}
	d.costs = append(d.costs, cost)
	if len(d.costs) < d.o.Length-d.o.Lead {
		return nil
	}
	var mean float64
	for _, c := range d.costs {
		mean += c
	}
	mean /= float64(len(d.costs))
	d.evals++
	d.traj = tune.Append(d.traj, tune.Point{Eval: d.evals, Value: float64(d.cur), Cost: mean})
	// The costs are finite and non-negative (checked in Report): no error.
	if d.choice != nil {
		_ = d.choice.Observe(d.costs)
		d.cur = d.choice.Value()
	} else {
		_ = d.tuner.Observe(mean)
		d.cur = min(max(int(math.Round(d.tuner.Value())), d.o.Min), d.o.Max)
	}
	d.costs = d.costs[:0]
	next := d.hi + 1
	if d.quiet() {
		// Nothing to search: quiet segments up to the next multiple of
		// Every, which is reported and scored (the re-check).
		d.from = next + mod(-next, d.o.Every)
		return []Range{d.announce(Range{From: next, To: d.from, Value: d.cur, Every: d.o.Every})}
	}
	d.from = next
	return []Range{d.announce(Range{From: d.from, To: d.from, Value: d.cur})}
}

// quiet reports whether the plan goes on in quiet segments: a Picker that
// has settled and does not look moved.
func (d *Decider) quiet() bool {
	return d.choice != nil && d.choice.Settled() && !d.choice.Drifting() && d.o.Every > 1
}

// reported reports whether segment seg (announced) is reported.
func (d *Decider) reported(seg int) bool {
	r, _ := d.plan.find(seg)
	return r.Reported(seg)
}
