package tune

import (
	"fmt"
	"math"
	"slices"
)

// PickerOptions configure a Picker. Zero fields take the defaults given
// beside them.
type PickerOptions struct {
	// Values are the candidates, in order: a candidate's neighbours are
	// the values beside it. At least one; no value twice.
	Values []int
	// Start is the value the search starts from and falls back to; it
	// must be one of Values.
	Start int
	// MinGain is the relative gain a candidate must show, beyond noise,
	// to replace the incumbent (default 0.03: 3 % faster).
	MinGain float64
	// Z is how many standard errors of the difference a gain must exceed
	// (default 2.5: a trial is looked at up to MaxTries times, on each
	// side).
	Z float64
	// MaxTries is how many evaluations a candidate gets before it is
	// given up as no better (default 4: with no neighbour better, the
	// search settles within 17 evaluations).
	MaxTries int
	// Drift: once settled, an incumbent whose cost moves by more than this
	// factor (either way) over three evaluations in a row re-opens the
	// search (default 1.5; the environment changed).
	Drift float64
	// Keep is how many of the incumbent's latest evaluations it is
	// compared by (default 3).
	Keep int
	// Warmup is how many evaluations of Start come first and are not
	// scored (default 1: a program's first iterations pay for its
	// start-up, and a trial compared with them looks better than it is;
	// negative: none).
	Warmup int
}

func (o PickerOptions) withDefaults() PickerOptions {
	if o.MinGain == 0 {
		o.MinGain = 0.03
	}
	if o.Z == 0 {
		o.Z = 2.5
	}
	if o.MaxTries == 0 {
		o.MaxTries = 4
	}
	if o.Drift == 0 {
		o.Drift = 1.5
	}
	if o.Keep == 0 {
		o.Keep = 3
	}
	if o.Warmup == 0 {
		o.Warmup = 1
	}
	o.Warmup = max(o.Warmup, 0)
	return o
}

func (o PickerOptions) validate() error {
	switch {
	case len(o.Values) == 0:
		return fmt.Errorf("tune: PickerOptions.Values is empty: nothing to choose from")
	case !slices.Contains(o.Values, o.Start):
		return fmt.Errorf("tune: PickerOptions.Start %d is not one of Values %v", o.Start, o.Values)
	case !(o.MinGain >= 0 && o.MinGain < 1):
		return fmt.Errorf("tune: PickerOptions.MinGain %v is outside [0, 1)", o.MinGain)
	case !(o.Z > 0) || math.IsInf(o.Z, 0):
		return fmt.Errorf("tune: PickerOptions.Z %v must be a positive number", o.Z)
	case o.MaxTries < 1:
		return fmt.Errorf("tune: PickerOptions.MaxTries %d must be at least 1", o.MaxTries)
	case !(o.Drift > 1) || math.IsInf(o.Drift, 0):
		return fmt.Errorf("tune: PickerOptions.Drift %v must exceed 1", o.Drift)
	case o.Keep < 1:
		return fmt.Errorf("tune: PickerOptions.Keep %d must be at least 1", o.Keep)
	}
	for i, v := range o.Values {
		if slices.Index(o.Values, v) != i {
			return fmt.Errorf("tune: PickerOptions.Values %v holds %d twice", o.Values, v)
		}
	}
	return nil
}

// Picker picks the best of a few candidate values of a parameter whose
// cost is measured noisily, by a hill climb that only moves for a gain
// larger than the noise. It suits a parameter with few values that matter
// — the group shuffle's fan-out ω, which matters only through its number
// of rounds — where an exponential search over the integers (Tuner)
// wanders over a flat landscape and pays for every step.
//
// Each evaluation reports the costs of its samples (say, the times of the
// iterations run with the value). The search scores the incumbent (Start
// first), then tries a neighbour (the right one first, E08), then the
// incumbent again, then the neighbour again, …, so that each try is
// compared with the incumbent measured at about the same time. It
// compares means of log costs (a time's noise is multiplicative, and a
// few slow outliers should not decide): a try is taken when its gain
// exceeds both MinGain and Z standard errors of the difference, and
// given up when even Z standard errors above its measured gain would not
// reach MinGain, or when measured twice it is not even faster, or after
// MaxTries evaluations. A taken try becomes the
// incumbent and the climb goes on the same way; when both neighbours are
// given up the search settles and keeps the incumbent. Settled, it keeps
// watching the incumbent's cost: if that moves by more than Drift it
// searches again.
//
// A Picker is pure and belongs to one owner, like a Tuner.
type Picker struct {
	o       PickerOptions
	inc     int         // index of the incumbent
	incObs  [][]float64 // the incumbent's latest evaluations (log costs), oldest first
	try     int         // index under trial, or -1 while scoring the incumbent
	tryObs  [][]float64 // the trial's evaluations so far (log costs)
	tries   int         // evaluations of the trial
	dir     int         // the side the next try is made on (+1, −1)
	given   [2]bool     // the neighbour on the left (0) and right (1) was given up
	settled bool
	ref     float64 // the settled incumbent's mean log cost
	drifts  int     // consecutive evaluations off ref by more than Drift
	cur     int     // index of the value of the next evaluation
	evals   int
	moves   int
}

// NewPicker returns a Picker whose first value is o.Start, or an error
// naming the option that is out of range.
func NewPicker(o PickerOptions) (*Picker, error) {
	o = o.withDefaults()
	if err := o.validate(); err != nil {
		return nil, err
	}
	o.Values = slices.Clone(o.Values)
	i := slices.Index(o.Values, o.Start)
	return &Picker{o: o, inc: i, try: -1, dir: 1, cur: i}, nil
}

// Value is the value to use for the next evaluation.
func (c *Picker) Value() int { return c.o.Values[c.cur] }

// Best is the incumbent: the best value found so far.
func (c *Picker) Best() int { return c.o.Values[c.inc] }

// Settled reports whether both neighbours of the incumbent were given up
// and the search now stays with it.
func (c *Picker) Settled() bool { return c.settled }

// Drifting reports whether the settled incumbent's latest evaluation
// moved by more than Drift: a change the next evaluations confirm (the
// search opens again) or clear. An owner that evaluates a settled value
// only now and then should evaluate it at once again while this holds.
func (c *Picker) Drifting() bool { return c.settled && c.drifts > 0 }

// Moves counts how many times the incumbent changed.
func (c *Picker) Moves() int { return c.moves }

// Observe reports the costs of one evaluation made with Value (one cost
// per sample; at least one). A cost that is NaN, infinite or negative is
// refused with an error and changes nothing.
func (c *Picker) Observe(costs []float64) error {
	if len(costs) == 0 {
		return fmt.Errorf("tune: an evaluation of value %d with no cost", c.Value())
	}
	logs := make([]float64, len(costs))
	for i, x := range costs {
		if math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
			return fmt.Errorf("tune: cost %v of value %d is not a finite non-negative number", x, c.Value())
		}
		logs[i] = math.Log(math.Max(x, 1e-300)) // a zero cost is the best there is
	}
	c.evals++
	if c.evals <= c.o.Warmup {
		return nil
	}
	if c.try >= 0 && c.cur == c.try {
		if c.tried(logs) {
			c.cur = c.inc // undecided: the incumbent again, then the trial
			return nil
		}
	} else {
		c.scored(logs)
		if c.try >= 0 {
			c.cur = c.try
			return nil
		}
	}
	c.next()
	return nil
}

// scored takes an evaluation of the incumbent.
func (c *Picker) scored(logs []float64) {
	c.incObs = append(c.incObs, logs)
	if len(c.incObs) > c.o.Keep {
		c.incObs = c.incObs[1:]
	}
	if !c.settled {
		return
	}
	m, _, _ := stats(logs)
	if math.Abs(m-c.ref) > math.Log(c.o.Drift) {
		c.drifts++
	} else {
		c.drifts = 0
	}
	if c.drifts >= 3 { // the ground moved (not one burst of load): search again from here
		c.settled, c.drifts, c.given = false, 0, [2]bool{}
		c.incObs = c.incObs[len(c.incObs)-1:]
	}
}

// tried takes an evaluation of the trial, and decides it if it can; it
// reports whether the trial goes on.
func (c *Picker) tried(logs []float64) bool {
	c.tryObs = append(c.tryObs, logs)
	c.tries++
	mi, vi, ni := stats(trim(flat(c.incObs)))
	mt, vt, nt := stats(trim(flat(c.tryObs)))
	gain := mi - mt // > 0: the trial is faster
	// The two sides' variances pooled: a few samples give a poor variance
	// each, and a value's noise is the machine's more than the value's.
	se := math.Sqrt(((ni-1)*vi + (nt-1)*vt) / math.Max(ni+nt-2, 1) * (1/ni + 1/nt))
	// The samples of one evaluation are not independent on a shared
	// machine: a burst of load slows them together. To take a trial, the
	// gain must also beat the spread of whole evaluations' means.
	sure := math.Max(se, evalSE(c.incObs, c.tryObs))
	bar := -math.Log(1 - c.o.MinGain)
	switch {
	case c.tries >= 2 && gain > bar && gain > c.o.Z*sure: // better by more than the noise, twice measured
		c.inc, c.moves = c.try, c.moves+1
		c.incObs = c.tryObs
		if len(c.incObs) > c.o.Keep {
			c.incObs = c.incObs[len(c.incObs)-c.o.Keep:]
		}
		c.given = [2]bool{}
		c.given[side(-c.dir)] = true // where it came from
		c.endTrial()
		return false
	case gain+c.o.Z*se < bar || c.tries >= 2 && gain <= 0 || c.tries >= c.o.MaxTries:
		// It cannot be better, or measured twice it is not even faster
		// (a better one seldom looks so; searching on would cost more
		// than it is likely to find), or it is not shown better in time.
		c.given[side(c.dir)] = true
		c.dir = -c.dir
		c.endTrial()
		return false
	}
	return true
}

func (c *Picker) endTrial() { c.try, c.tryObs, c.tries = -1, nil, 0 }

// flat joins evaluations' samples.
func flat(evals [][]float64) []float64 {
	var out []float64
	for _, e := range evals {
		out = append(out, e...)
	}
	return out
}

// evalSE is the standard error of the difference of two sides' means
// with whole evaluations as the samples (each one's trimmed mean), or 0
// while a side has fewer than two.
func evalSE(a, b [][]float64) float64 {
	if len(a) < 2 || len(b) < 2 {
		return 0
	}
	means := func(evals [][]float64) []float64 {
		out := make([]float64, len(evals))
		for i, e := range evals {
			out[i], _, _ = stats(trim(e))
		}
		return out
	}
	_, va, na := stats(means(a))
	_, vb, nb := stats(means(b))
	return math.Sqrt(va/na + vb/nb)
}

func side(dir int) int { return (dir + 1) / 2 }

// next picks the value of the next evaluation when no trial is on: the
// next neighbour to try, or, with none left, the incumbent for good.
func (c *Picker) next() {
	c.cur = c.inc
	if c.settled {
		return
	}
	for range 2 {
		n := c.inc + c.dir
		if !c.given[side(c.dir)] && n >= 0 && n < len(c.o.Values) {
			c.try, c.cur = n, n
			return
		}
		c.given[side(c.dir)] = true
		c.dir = -c.dir
	}
	c.settled, c.drifts = true, 0
	var all []float64
	for _, e := range c.incObs {
		all = append(all, e...)
	}
	c.ref, _, _ = stats(all)
}

// trim drops the slowest sixth of the samples: a time measured on a
// shared machine now and then includes a PE descheduled, and such an
// outlier says nothing about the value tried. Both sides of a comparison
// are trimmed alike, so their difference stays fair.
func trim(xs []float64) []float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[:len(s)-len(s)/6]
}

// stats returns the mean, the sample variance (0 for one sample) and the
// count of xs.
func stats(xs []float64) (mean, variance, n float64) {
	n = float64(len(xs))
	for _, x := range xs {
		mean += x
	}
	mean /= n
	if len(xs) < 2 {
		return mean, 0, n
	}
	for _, x := range xs {
		variance += (x - mean) * (x - mean)
	}
	return mean, variance / (n - 1), n
}
