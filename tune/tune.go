package tune

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
)

// Options configure a Tuner. Zero fields take the defaults given beside them.
type Options struct {
	// Min is the lower bound of the domain (inclusive); the paper's p is
	// bounded by 0 (E08). Default 0.
	Min float64
	// Max, if not 0, is the upper bound of the domain (inclusive): a
	// fan-out cannot exceed the number of peers. A try that would cross it
	// gets a shorter vector, as at Min. Max − Min must be at least MinStep.
	// 0 bounds the domain by MaxMagnitude.
	Max float64
	// Start is the first value evaluated. Zero means Min.
	Start float64
	// Step is the length of the first exploration vector, which always
	// points right (E08). Default 1.
	Step float64
	// MinStep is the shortest the vector may get (E09). Default Step/2.
	MinStep float64
	// Grow multiplies the vector's length after a better try (E06). Default 2.
	Grow float64
	// Shrink multiplies the vector's length when a try is worse and the
	// direction reverses (E06). Default 0.5.
	Shrink float64
	// Evals is n, the number of evaluations averaged into one score
	// (E07). Default 4.
	Evals int
	// Median scores a value by the median of its n evaluations instead of
	// their mean (E07). A time measured on a shared machine has a heavy
	// tail — a PE descheduled for a time slice makes one iteration two or
	// three times as long — and one such evaluation in n moves the mean
	// enough to reject a better value; the median ignores it. In the
	// seeded simulation with a quarter of the evaluations stalled
	// (TestE07_MedianScoreResistsStalls) it keeps the search near the
	// optimum where the mean lets it wander.
	Median bool
	// Jump: a try whose score exceeds the anchor's by this factor makes
	// the tuner score its anchor again at once, instead of after two
	// worse tries at the shortest vector (E09): the whole cost has most
	// likely moved (more work per iteration, a slower CPU), and every try
	// measured against the stale score would look worse. 0 turns it off
	// (the paper's search); 1.3 re-converged a moved optimum in a median
	// of 15 evaluations instead of 19 in the seeded simulation.
	Jump float64
	// Margin: a try replaces the anchor only if its score is lower by more
	// than this fraction of the anchor's (0 ≤ Margin < 1). A try within the
	// noise of the anchor then counts as worse, so that noise alone does not
	// walk the search away from its start (a default chosen with care).
	// Default 0 (the paper's rule: any lower score wins).
	Margin float64
	// Hold: once the search has settled (the anchor re-scored after two
	// worse tries at the shortest vector, E09), the anchor is used for Hold
	// more scores before the search tries its neighbours again;
	// these scores are pooled with the anchor's (by their median with
	// Median, else their mean), so that it grows more precise. A held score
	// far worse than the anchor's (Jump) ends the hold at once.
	// Default 0 (the paper's search: the neighbours are tried again at once).
	Hold int
	// Z: a try replaces the anchor only if it is also better beyond the
	// noise measured: the median of its n log costs lies below the median
	// of the anchor's latest (up to 4n, pooled while held) by more than Z
	// standard errors of that difference. The spread is the median
	// absolute deviation of the evaluations from their own side's median
	// (×1.4826, a normal spread), so a slowed evaluation does not widen it
	// much. Margin is a fixed fraction; on a machine whose noise varies
	// with the load of other programs, a try that wins by luck beats any
	// fixed fraction now and then, and the search walks away from a good
	// start to values no better, or worse. Default 0: off.
	Z float64
	// Paired: a try's n evaluations alternate with n of the anchor's
	// (anchor, try, anchor, try, …), and the try is judged against those
	// — the anchor's score becomes theirs. On a machine whose load comes
	// and goes, evaluations made minutes apart differ more than the
	// values tried; made in turn, both sides see the same load. A try
	// then takes 2n evaluations, n of them at the anchor (the best value
	// known, so they cost nothing a search would not pay anyway). The try's
	// cheapest evaluation must also beat the anchor's cheapest of those:
	// a slowdown only adds to a cost, so the cheapest is the least
	// disturbed, and anchor evaluations slowed by chance, even most of the
	// n, then cannot make a dearer try look better.
	// Default false.
	Paired bool
}

func (o Options) withDefaults() Options {
	if o.Start == 0 {
		o.Start = o.Min
	}
	if o.Step == 0 {
		o.Step = 1
	}
	if o.MinStep == 0 {
		o.MinStep = o.Step / 2
	}
	if o.Grow == 0 {
		o.Grow = 2
	}
	if o.Shrink == 0 {
		o.Shrink = 0.5
	}
	if o.Evals == 0 {
		o.Evals = 4
	}
	return o
}

// MaxMagnitude bounds the values of a search: Min, Max, Start and Step
// must lie within ±MaxMagnitude, and the domain ends there when Max is 0.
// Within it, the sums a search makes (a value plus its vector, the room
// to a bound) stay finite, so Value is always a finite number.
const MaxMagnitude = math.MaxFloat64 / 4

// validate checks o, with its defaults filled in; given are the options
// as the caller gave them, so that an error names the ones the caller set
// and says which values are defaults.
func (o Options) validate(given Options) error {
	for _, f := range []struct {
		name string
		v    float64
	}{{"Min", o.Min}, {"Max", o.Max}, {"Jump", o.Jump}, {"Start", o.Start}, {"Step", o.Step}, {"MinStep", o.MinStep}, {"Grow", o.Grow}, {"Shrink", o.Shrink}, {"Margin", o.Margin}, {"Z", o.Z}} {
		if math.IsNaN(f.v) || math.IsInf(f.v, 0) {
			return fmt.Errorf("tune: Options.%s is %v, want a finite number", f.name, f.v)
		}
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"Min", o.Min}, {"Max", o.Max}, {"Start", o.Start}, {"Step", o.Step}} {
		if math.Abs(f.v) > MaxMagnitude {
			return fmt.Errorf("tune: Options.%s %v is beyond ±%v (MaxMagnitude): the search's sums could overflow", f.name, f.v, MaxMagnitude)
		}
	}
	// start, step and minStep name a value the caller left to its default.
	start := fmt.Sprintf("Options.Start %v", o.Start)
	if given.Start == 0 {
		start = fmt.Sprintf("Options.Start (not set: Min, %v)", o.Start)
	}
	step := fmt.Sprintf("Step=%v", o.Step)
	if given.Step == 0 {
		step = fmt.Sprintf("Step=%v, the default", o.Step)
	}
	minStep := fmt.Sprintf("MinStep %v", o.MinStep)
	if given.MinStep == 0 {
		minStep = fmt.Sprintf("MinStep %v (not set: Step/2)", o.MinStep)
	}
	switch {
	case o.Max != 0 && o.Min > o.Max:
		return fmt.Errorf("tune: Options.Min %v is above Options.Max %v", o.Min, o.Max)
	case o.Start < o.Min:
		return fmt.Errorf("tune: %s is below Options.Min %v", start, o.Min)
	case o.Max != 0 && o.Start > o.Max:
		return fmt.Errorf("tune: %s is above Options.Max %v", start, o.Max)
	case o.Step < 0:
		return fmt.Errorf("tune: Options.Step %v is negative; the first vector always points right", o.Step)
	case o.MinStep <= 0 || o.MinStep > o.Step:
		return fmt.Errorf("tune: Options.%s is outside (0, %s]", minStep, step)
	case o.Grow <= 1:
		return fmt.Errorf("tune: Options.Grow %v must exceed 1", o.Grow)
	case o.Shrink <= 0 || o.Shrink >= 1:
		return fmt.Errorf("tune: Options.Shrink %v is outside (0, 1)", o.Shrink)
	case o.Evals < 1:
		return fmt.Errorf("tune: Options.Evals %d must be at least 1", o.Evals)
	case o.Jump < 0 || o.Jump > 0 && o.Jump <= 1:
		return fmt.Errorf("tune: Options.Jump %v must exceed 1 (or be 0: off)", o.Jump)
	case o.Margin < 0 || o.Margin >= 1:
		return fmt.Errorf("tune: Options.Margin %v is outside [0, 1)", o.Margin)
	case o.Hold < 0:
		return fmt.Errorf("tune: Options.Hold %d is negative", o.Hold)
	case o.Z < 0:
		return fmt.Errorf("tune: Options.Z %v is negative", o.Z)
	case o.Z > 0 && o.Evals < 2:
		return fmt.Errorf("tune: Options.Z %v needs Evals of at least 2 (got %d): one evaluation has no spread to judge noise by", o.Z, o.Evals)
	case o.Max != 0 && o.Max-o.Min < o.MinStep:
		return fmt.Errorf("tune: Options.Max %v leaves less than %s above Min %v: nothing to search", o.Max, minStep, o.Min)
	case o.Max == 0 && MaxMagnitude-o.Min < o.MinStep:
		return fmt.Errorf("tune: Options.Min %v leaves less than %s below MaxMagnitude %v: nothing to search", o.Min, minStep, MaxMagnitude)
	}
	return nil
}

// Point is one evaluation: the value used and the cost observed for it.
type Point struct {
	Eval  int     // 1-based index of the evaluation
	Value float64 // parameter value in force
	Cost  float64 // cost reported to Observe
}

// Tuner is the explorative exponential search as a state machine. It does
// no I/O and no timing: the caller runs an evaluation with Value, reports
// its cost with Observe, and repeats. A Tuner is not safe for concurrent
// use; it belongs to one PE.
type Tuner struct {
	o Options

	x, s       float64 // anchor: the best point known and its score
	haveAnchor bool
	v          float64 // signed exploration vector

	cur     float64   // value under evaluation
	costs   []float64 // the evaluations of cur so far
	hold    int       // scores left to hold the anchor (Options.Hold)
	held    []float64 // the anchor's scores while held
	rejects int       // consecutive worse tries
	jumped  bool      // the last try was far worse: re-score the anchor next
	refresh bool      // cur is the anchor being re-scored
	settled bool      // the re-scoring is after two worse tries at the shortest vector, not a Jump
	tried   [2]Point  // the last two worse tries (Value, Cost=score), newest first
	// With Z: the log costs of the anchor's latest evaluations and of the
	// two worse tries.
	anchorLogs []float64
	triedLogs  [2][]float64
	// With Paired: cur is a try (not the anchor), the next evaluation is
	// the anchor's, and the anchor's evaluations made in turn with it.
	trying    bool
	pairTurn  bool
	pairCosts []float64
	updates   int
	evals     int
	traj      []Point // the latest MaxTrajectory evaluations
	lastTryV  float64 // |v| of the last try, for the refresh rule
}

// New returns a Tuner whose first value is o.Start, or an error that names
// the option that is out of range.
func New(o Options) (*Tuner, error) {
	given := o
	o = o.withDefaults()
	if err := o.validate(given); err != nil {
		return nil, err
	}
	return &Tuner{o: o, cur: o.Start, v: o.Step}, nil
}

// Value is the parameter value to use for the next evaluation.
func (t *Tuner) Value() float64 {
	if t.pairTurn {
		return t.x
	}
	return t.cur
}

// Best is the anchor — the best value found so far — and its score (the
// mean of its last n evaluations, or their median with Median; while it
// is held, the pool of its held scores). ok is false until the first score.
func (t *Tuner) Best() (value, score float64, ok bool) { return t.x, t.s, t.haveAnchor }

// Vector is the signed exploration vector the next try will be made with.
func (t *Tuner) Vector() float64 { return t.v }

// Updates counts how many times the value has changed (with Paired, the
// value under evaluation: a try's steps in turn with the anchor's count
// once).
func (t *Tuner) Updates() int { return t.updates }

// Between says whether the next evaluation starts a new score: none of
// the current one's evaluations (with Paired, of the try or of the anchor
// in turn with it) is pending. A caller that tunes two parameters in turns
// switches there, so that each score is measured with the other
// parameter still.
func (t *Tuner) Between() bool { return len(t.costs) == 0 && len(t.pairCosts) == 0 }

// MaxTrajectory bounds the evaluations a trajectory keeps (the latest; a
// Point's Eval still counts from the first): a tuner in a job that runs
// for days must not grow without end.
const MaxTrajectory = 4096

// Trajectory returns a copy of the evaluations observed, in order: every
// one, or the latest MaxTrajectory.
func (t *Tuner) Trajectory() []Point { return append([]Point(nil), t.traj...) }

// Append adds p to a trajectory and drops the oldest points beyond
// MaxTrajectory.
func Append(traj []Point, p Point) []Point {
	traj = append(traj, p)
	if len(traj) > MaxTrajectory {
		traj = slices.Delete(traj, 0, len(traj)-MaxTrajectory)
	}
	return traj
}

// Observe reports the cost of one evaluation made with Value. Every n-th
// call scores the value and moves the search. A cost that is NaN, infinite
// or negative is refused with an error and changes nothing.
func (t *Tuner) Observe(cost float64) error {
	if math.IsNaN(cost) || math.IsInf(cost, 0) || cost < 0 {
		return fmt.Errorf("tune: cost %v of value %v is not a finite non-negative number", cost, t.Value())
	}
	t.evals++
	t.traj = Append(t.traj, Point{Eval: t.evals, Value: t.Value(), Cost: cost})
	if t.pairTurn {
		t.pairCosts, t.pairTurn = append(t.pairCosts, cost), false
		return nil
	}
	t.costs = append(t.costs, cost)
	if len(t.costs) < t.o.Evals {
		t.pairTurn = t.trying
		return nil
	}
	score := t.pool(t.costs) // E07: one score from n evaluations
	logs := logsOf(t.costs)
	pairsWon := true
	if t.trying && len(t.pairCosts) > 0 {
		// Paired: the anchor's score is the one measured in turn with
		// the try, and the try's cheapest must beat its (Options.Paired).
		pairsWon = slices.Min(t.costs) < slices.Min(t.pairCosts)
		t.s, t.anchorLogs = t.pool(t.pairCosts), logsOf(t.pairCosts)
		t.pairCosts = t.pairCosts[:0]
	}
	t.costs = t.costs[:0]
	t.trying = false
	switch {
	case !t.haveAnchor:
		t.x, t.s, t.haveAnchor = t.cur, score, true
		t.anchorLogs = logs
	case t.hold > 0:
		if t.o.Jump > 0 && score > t.s*t.o.Jump {
			// The ground has moved under the anchor: explore again from
			// its fresh score.
			t.s, t.hold = score, 0
			t.anchorLogs = logs
			break
		}
		t.keepAnchorLogs(logs)
		// The anchor's score is the median (or mean) of its held scores:
		// a mean of medians would count the scores that noise spoiled, and
		// make every try look better than the anchor.
		t.held = append(t.held, score)
		t.s = t.pool(t.held)
		t.hold--
	case t.refresh:
		// Re-scoring replaces the old score: the environment may have
		// changed, and an old lucky score would hold the search still.
		t.s, t.refresh = score, false
		// For Z, the fresh evaluations join the old: the tries were
		// measured between the two, under whatever load came and went.
		t.keepAnchorLogs(logs)
		t.rejects = 0
		// The two tries that boxed the anchor in were measured just before;
		// if one beats the fresh score, the ground has moved: go there and
		// keep exploring that way rather than spend a try to find out.
		// (Keeping the fresh score as the bar instead re-converges a little
		// faster but wanders more under noise: measured, not guessed.)
		b, bl := t.tried[0], t.triedLogs[0]
		if t.tried[1].Cost < b.Cost {
			b, bl = t.tried[1], t.triedLogs[1]
		}
		// With Paired, each try was judged already against the anchor
		// measured in turn with it; against a fresh score measured under
		// another load it would be judged again unfairly.
		if !t.o.Paired && t.better(b.Cost) && t.beyondNoise(bl) {
			d := math.Copysign(1, b.Value-t.x)
			t.x, t.s = b.Value, b.Cost
			t.anchorLogs = bl
			t.v = grown(d*math.Abs(t.v), t.o.Grow)
		} else if t.o.Hold > 0 && t.settled {
			// Settled: keep the anchor for a while (Options.Hold).
			t.hold, t.held = t.o.Hold, append(t.held[:0], score)
		}
	case pairsWon && t.better(score) && t.beyondNoise(logs): // better than the point it was tried from (Remark 4)
		t.x, t.s = t.cur, score
		t.anchorLogs = logs
		t.v = grown(t.v, t.o.Grow)
		t.rejects = 0
	default: // worse: reverse and shrink (E06), never below MinStep (E09)
		t.v = -t.v * t.o.Shrink
		if math.Abs(t.v) < t.o.MinStep {
			t.v = math.Copysign(t.o.MinStep, t.v)
		}
		t.rejects++
		t.tried[1], t.tried[0] = t.tried[0], Point{Value: t.cur, Cost: score}
		t.triedLogs[1], t.triedLogs[0] = t.triedLogs[0], logs
		if t.o.Jump > 0 && score > t.s*t.o.Jump {
			// Only this try is known to be measured on the new ground: the
			// one before it may carry a stale, lower score.
			t.jumped = true
			t.tried[1] = Point{Cost: math.Inf(1)}
			t.triedLogs[1] = nil
		}
	}
	t.next()
	return nil
}

// pool combines the evaluations of one value into its score, or the
// scores of a held anchor into one (E07): their mean, or with Median their
// median (the mean of the middle two for an even count).
func (t *Tuner) pool(xs []float64) float64 {
	if t.o.Median {
		return median(xs)
	}
	sum := 0.0
	for _, x := range xs {
		sum += x
	}
	return sum / float64(len(xs))
}

// better says whether a score beats the anchor's by more than the margin.
func (t *Tuner) better(score float64) bool { return score < t.s*(1-t.o.Margin) }

// beyondNoise says whether evaluations with log costs logs beat the
// anchor's by more than Z standard errors (Options.Z; always with Z 0).
func (t *Tuner) beyondNoise(logs []float64) bool {
	if t.o.Z == 0 {
		return true
	}
	a, b := t.anchorLogs, logs
	if len(a) == 0 || len(b) == 0 {
		return false
	}
	ma, mb := median(a), median(b)
	// Each side's own spread: a side measured in a calm moment is tight,
	// and must not make the other's spread look small. A median's
	// standard error is √(π/2) times a mean's.
	se := math.Sqrt(math.Pi / 2 * (sq(spread(a, ma))/float64(len(a)) + sq(spread(b, mb))/float64(len(b))))
	// Half or more of a side's costs equal (a coarse clock) have no
	// spread; the floor keeps Z from passing any gain at all then.
	return ma-mb > t.o.Z*max(se, minSE)
}

// spread is the median absolute deviation of xs from m, ×1.4826: the
// standard deviation of a normal distribution, little moved by outliers.
func spread(xs []float64, m float64) float64 {
	dev := make([]float64, len(xs))
	for i, x := range xs {
		dev[i] = math.Abs(x - m)
	}
	return 1.4826 * median(dev)
}

func sq(x float64) float64 { return x * x }

// minSE is the least standard error beyondNoise assumes, in log cost:
// with Z 2 a try must be at least 0.2 % cheaper.
const minSE = 1e-3

// keepAnchorLogs adds a held score's evaluations to the anchor's, keeping
// the latest 4n.
func (t *Tuner) keepAnchorLogs(logs []float64) {
	t.anchorLogs = append(t.anchorLogs, logs...)
	if k := 4 * t.o.Evals; len(t.anchorLogs) > k {
		t.anchorLogs = slices.Delete(t.anchorLogs, 0, len(t.anchorLogs)-k)
	}
}

// logsOf returns the logs of costs (a zero cost as the smallest positive
// one: the best there is).
func logsOf(costs []float64) []float64 {
	out := make([]float64, len(costs))
	for i, c := range costs {
		out[i] = math.Log(math.Max(c, math.SmallestNonzeroFloat64))
	}
	return out
}

// Holding says whether the tuner holds its anchor after settling
// (Options.Hold).
func (t *Tuner) Holding() bool { return t.hold > 0 }

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	slices.Sort(s)
	n := len(s)
	return (s[(n-1)/2] + s[n/2]) / 2
}

// next picks the value of the next n evaluations.
func (t *Tuner) next() {
	prev := t.cur
	t.trying = false
	if t.hold > 0 {
		t.cur = t.x
		return
	}
	// Two worse tries in a row at the shortest vector mean the anchor is
	// boxed in — or its score is stale or was lucky. Score it again, so a
	// change of environment is noticed (E09) and noise cannot pin the search.
	// A try far worse than the anchor (Jump) says the same at once.
	if t.jumped || t.rejects >= 2 && t.lastTryV <= t.o.MinStep {
		// Only a search boxed in at the shortest vector has settled (and
		// may hold, Options.Hold); a Jump says the ground moved.
		t.settled = !t.jumped
		t.jumped = false
		t.cur, t.refresh = t.x, true
	} else {
		t.bound()
		t.lastTryV = math.Abs(t.v)
		t.cur = t.x + t.v
		t.trying = t.o.Paired
		t.pairTurn = t.trying
	}
	if t.cur != prev {
		t.updates++
	}
}

// grown returns the vector v made longer by the factor grow, no longer
// than MaxMagnitude (which bounds the domain too).
func grown(v, grow float64) float64 {
	if l := math.Abs(v) * grow; !(l <= MaxMagnitude) {
		return math.Copysign(MaxMagnitude, v)
	}
	return v * grow
}

// bound keeps the next try inside [Min, MaxMagnitude] (E08), or [Min, Max]: a vector
// that would cross a bound is halved until it fits; with no room for even
// MinStep on that side, it turns round.
func (t *Tuner) bound() {
	if t.x+t.v < t.o.Min {
		room := t.x - t.o.Min
		if room < t.o.MinStep {
			t.v = math.Abs(t.v)
		} else {
			l := -t.v
			for l > room {
				l *= t.o.Shrink
			}
			t.v = -math.Max(l, t.o.MinStep)
		}
	}
	hi := t.o.Max
	if hi == 0 {
		hi = MaxMagnitude
	}
	if t.x+t.v <= hi {
		return
	}
	room := hi - t.x
	if room < t.o.MinStep {
		// Turn left, and fit the vector into the room there as at Min
		// (Max − Min ≥ MinStep leaves some).
		left := t.x - t.o.Min
		l := math.Abs(t.v)
		for l > left {
			l *= t.o.Shrink
		}
		t.v = -math.Min(math.Max(l, t.o.MinStep), left)
		return
	}
	l := t.v
	for l > room {
		l *= t.o.Shrink
	}
	t.v = math.Max(l, t.o.MinStep)
	if t.x+t.v > hi {
		t.v = room
	}
}

// WriteCSV writes a trajectory as CSV with the header eval,value,cost, for
// plotting parameter and cost per evaluation.
func WriteCSV(w io.Writer, pts []Point) error {
	cw := csv.NewWriter(w)
	if err := cw.Write([]string{"eval", "value", "cost"}); err != nil {
		return fmt.Errorf("tune: writing CSV header: %w", err)
	}
	for _, p := range pts {
		rec := []string{strconv.Itoa(p.Eval), strconv.FormatFloat(p.Value, 'g', -1, 64), strconv.FormatFloat(p.Cost, 'g', -1, 64)}
		if err := cw.Write(rec); err != nil {
			return fmt.Errorf("tune: writing CSV row %d: %w", p.Eval, err)
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("tune: writing CSV: %w", err)
	}
	return nil
}
