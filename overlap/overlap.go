// Package overlap runs the overlap loop of EasyMSG (claims E04, E05, E10,
// E11) in a threaded entry method: it interleaves local computations with
// communication tests, and tunes online how many computations go between
// two tests.
//
// # The loop
//
// A Body is the work of one PE (or element) for one iteration: data to
// push to other PEs, through any aggregation layer (a tram.Streamer, a
// delegated proxy under Comlib Streaming), data that arrives in entry
// methods, and local computations. Run repeats
//
//  1. test: chare.Yield — the sends made so far leave the PE and the
//     messages waiting for it run, so arrived data is treated by its entry
//     methods;
//  2. if something arrived, test again (E04: arrived data first);
//  3. else Push into the outgoing buffers that have room; if it pushed,
//     test again;
//  4. else do p local computations (E05), a real p spread over the turns
//     (E10), or with a fast loop a p that moves within the run (E11);
//  5. if no computation is left, or none is due at this turn (p = 0, or
//     p < 1 spread over the turns), nap (chare.Nap) until the PE has
//     handled another message, instead of testing again at once;
//
// until the Body says its communication is over, then does the
// computations left. In this runtime a test costs a round trip through the
// PE's mailbox (a few microseconds): p = 1 pays it per computation, while
// a large p holds the PE's outgoing messages and the data for it until the
// next test.
//
// A PE that spins on tests takes a core from the PEs whose data it waits
// for, so the loop never tests twice in a row without something
// between: data treated, a push, a computation or a nap. The nap is the loop's own: the Body has no blocking method, and
// every entry method that treats data or frees room in an outgoing buffer
// is a message, which ends the nap once it has run. With nothing left to
// compute, or p = 0 (no computation while the communication lasts), the
// nap lasts until a message comes or the stall bound; with computations
// left and 0 < p < 1 it also ends after 50 µs, doubling over a row of
// empty turns up to 1 ms, so that such a p still does a computation every
// 1/p tests or so when nothing comes, without spinning between them.
//
// The decision of each turn is pure and usable alone: Decide is the
// priority of steps 2–4 (an Action: Treat, Push or Compute), and a Loop
// adds how many computations — NewLoop(p) a fixed p spread with a
// tune.Spread, NewFastLoop(step) the fast variant whose p halves after a
// test that found communication and grows by step after one that found
// none (E11). Run takes a Loop; a Tuner builds one per iteration.
//
// # Stalls
//
// A Body whose communication never ends (a datum nobody sends, an
// acknowledgement lost) would leave the loop testing and napping forever.
// Options.Stall (default DefaultStall, one minute; a Tuner's default grows
// to 10 times its longest run) bounds the time without progress — nothing
// arrived, pushed or computed — after which Run returns an error wrapping
// ErrStalled that names the PE, the tests made and, if the Body is a
// Progress, what it still waits for. The loop keeps the bound itself (its
// naps end by it), so no Body can make it hang, and a failed run leaves
// nothing behind on the PE (no future, no timer).
//
// # Tuning p
//
// A Tuner is a tune.Tuner over log2(1 + p) (or p itself, Linear): call
// Run once per iteration; it times the iteration and observes the time, so
// that p moves towards the value that makes iterations fastest
// (explorative exponential search, E06–E09). On the log scale each step
// multiplies 1 + p; values are scored by the median of 4 iterations,
// which a stalled iteration does not move (docs/design/tuning.md says
// why).
// Trajectory returns the value and time per evaluation as []tune.Point.
//
//	tu, _ := overlap.NewTuner(overlap.TunerOptions{})
//	for it := 0; it < iterations; it++ {
//		st, err := tu.Run(ctx, body) // ctx: a threaded entry method's chare
//	}
//	p, _, _ := tu.Best()
package overlap

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/tune"
)

// Body is one iteration's work, seen by the loop. Its methods run on the
// PE of the loop, between tests, so they need no locks; the entry methods
// that treat arrived data run during the tests, on the same PE.
type Body interface {
	// Arrived counts the data treated so far; the loop compares it across
	// a test to know whether the test found communication.
	Arrived() int
	// Push moves data into the outgoing buffers that have room and
	// returns how many it moved: 0 when nothing is left or nothing fits.
	Push() (int, error)
	// Compute does one local computation and reports false when none is
	// left (then it did nothing).
	Compute() bool
	// Finished reports that this iteration's communication is over:
	// everything was pushed and everything expected has arrived.
	Finished() bool
}

// Progress is a Body that can say how far its iteration got (items
// expected and arrived, acknowledgements, what is left to push); the
// error of a stalled run quotes it.
type Progress interface {
	Progress() string
}

// Stats describe one run of the loop.
type Stats struct {
	P            float64       // the aggregation parameter the run started with
	Tests        int           // communication tests (yields)
	Arrivals     int           // tests that found arrived data
	Pushes       int           // tests followed by a push
	Computations int           // local computations done between tests
	Remaining    int           // computations done after the communication ended
	Waits        int           // naps of turns with no computation to do (chare.Nap)
	Elapsed      time.Duration // wall time of the run
}

// DefaultStall is Options.Stall when it is left 0: generous, since a PE
// may legitimately wait for the whole of another PE's computations (p
// large, heavy computations), and only a bug leaves the loop stalled.
const DefaultStall = time.Minute

// ErrStalled is wrapped by the error of a run that made no progress
// within its stall bound (Options.Stall).
var ErrStalled = errors.New("overlap: stalled")

// Options configure a run of the loop. The zero value is the default.
type Options struct {
	// Stall bounds the time the loop may go without progress — no datum
	// arrived, none pushed, no computation done — while the communication
	// is not over: then Run returns an error that wraps ErrStalled and
	// names the PE, the tests made and what the Body still waits for (its
	// Progress, if it has one), instead of hanging (data that never comes,
	// an acknowledgement lost). The loop's naps end by the bound. 0 means
	// DefaultStall; negative, no bound.
	Stall time.Duration
}

// Run runs the overlap loop once with the decision l (NewLoop(p) or
// NewFastLoop(step)) and the default Options. ctx must be a threaded
// entry method's chare or the main function: the tests yield the PE.
func Run(ctx chare.Context, l *Loop, b Body) (Stats, error) {
	return RunWith(ctx, l, b, Options{})
}

// RunWith is Run with options.
func RunWith(ctx chare.Context, l *Loop, b Body, o Options) (Stats, error) {
	if l == nil || b == nil {
		return Stats{}, errors.New("overlap: Run needs a loop and a body")
	}
	where := "a PE"
	if pe := chare.PEOf(ctx); pe != nil {
		where = fmt.Sprintf("PE %d", pe.ID())
	}
	return run(loopEnv{
		test:  func() error { return chare.Yield(ctx) },
		nap:   func(deadline time.Time) (bool, error) { return chare.Nap(ctx, deadline) },
		now:   time.Now,
		where: where,
	}, o, l, b)
}

// loopEnv is what run needs from the runtime, given apart for tests
// without one: the communication test, the nap until the next message or
// the deadline (the zero time: none), the clock and the PE's name for
// errors.
type loopEnv struct {
	test  func() error
	nap   func(deadline time.Time) (woken bool, err error)
	now   func() time.Time
	where string
}

// Naps of a turn with computations left but none due (p < 1): the first
// is short, the next ones of a row without progress twice as long, up to
// napMax; a message ends any nap at once.
const (
	napMin = 50 * time.Microsecond
	napMax = time.Millisecond
)

func run(env loopEnv, o Options, l *Loop, b Body) (Stats, error) {
	stall := o.Stall
	if stall == 0 {
		stall = DefaultStall
	}
	st := Stats{P: l.P()}
	t0 := env.now()
	exhausted := false      // Compute said no computation is left
	var idleSince time.Time // the first turn of a run of turns without progress
	nap := napMin           // the next short nap
	// last is what had arrived at the end of the previous turn's test:
	// data treated while the loop napped (the entry methods run then)
	// count as arrived at the next turn, as progress.
	last := b.Arrived()
	for !b.Finished() {
		if err := env.test(); err != nil {
			return st, fmt.Errorf("overlap: the communication test: %w", err)
		}
		st.Tests++
		arrived := b.Arrived() != last
		last = b.Arrived()
		pushed := 0
		if !arrived {
			n, err := b.Push()
			if err != nil {
				return st, fmt.Errorf("overlap: push: %w", err)
			}
			pushed = n
		}
		a, n := l.Next(arrived, pushed > 0)
		progress, idle, short := true, false, false
		switch a {
		case Treat:
			st.Arrivals++
		case Push:
			st.Pushes++
		case Compute:
			i := 0
			for ; i < n && b.Compute(); i++ {
				st.Computations++
			}
			exhausted = exhausted || i < n
			progress = i > 0
			// A turn that found nothing to treat or push and has no
			// computation to do — none left, or none due at this turn
			// (p = 0, or p < 1 spread over the turns) — naps rather than
			// test again at once: spinning on tests only takes the core
			// that the PEs it waits for need. With computations left and
			// p > 0 the nap is short, so that p keeps its meaning (about
			// 1/p tests per computation while nothing comes).
			idle = exhausted || !progress
			short = idle && !exhausted && l.P() > 0
		}
		if progress {
			idleSince, nap = time.Time{}, napMin
		}
		if b.Finished() {
			break
		}
		var deadline time.Time
		if (idle || !progress) && stall > 0 {
			t := env.now()
			if idleSince.IsZero() {
				idleSince = t // a nap after progress has the whole bound
			}
			deadline = idleSince.Add(stall)
			if !t.Before(deadline) {
				st.Elapsed = t.Sub(t0)
				return st, stalled(env, stall, &st, b)
			}
		}
		if idle {
			if short {
				if until := env.now().Add(nap); deadline.IsZero() || until.Before(deadline) {
					deadline = until
				}
				nap = min(2*nap, napMax)
			}
			st.Waits++
			if _, err := env.nap(deadline); err != nil {
				return st, fmt.Errorf("overlap: napping until data come: %w", err)
			}
		}
	}
	for b.Compute() {
		st.Remaining++
	}
	st.Elapsed = env.now().Sub(t0)
	return st, nil
}

// stalled is the error of a run without progress for stall.
func stalled(env loopEnv, stall time.Duration, st *Stats, b Body) error {
	what := fmt.Sprintf("%d data treated", b.Arrived())
	if p, ok := b.(Progress); ok {
		what = p.Progress()
	}
	return fmt.Errorf("%w on %s: nothing arrived, was pushed or computed for %v (Options.Stall) and the communication is not over: %s (tests %d, with data %d, pushes %d, computations %d, waits %d); is data missing?",
		ErrStalled, env.where, stall, what, st.Tests, st.Arrivals, st.Pushes, st.Computations, st.Waits)
}

// TunerOptions configure a Tuner. Zero fields take the defaults beside them.
type TunerOptions struct {
	// Search is the tune.Tuner's, over q = log2(1 + p) unless Linear is
	// set. The zero value means: q from 1 (p = 1, the paper's static
	// reference), first vector 2 (so the tries run p = 7, 127, … while
	// they improve), MinStep 1/4 (a factor of about 1.2 in 1 + p), Max 16
	// (p = 65535: more than any PE's computations here, so "never test
	// while computations are left"), Evals 4 scored by their median
	// (tune.Options.Median), and Jump 1.3, so that a jump of the whole
	// time (more work per computation) is noticed at the first try that
	// sees it. In the seeded simulation with stalls
	// (TestE06_LogSearchFindsDistantOptimum) this reaches optima at p = 32
	// and 256 within 100 evaluations, where the linear search lags.
	Search tune.Options
	// Linear searches p itself, from p = 0 by steps of 1 as in the paper
	// (the zero Search then means Jump 1.3 and the tune defaults).
	// The good p of one problem and the next differ by factors (4 for one
	// size, 32 or 256 for another), and a step of 1/2 near p = 5 takes
	// dozens of evaluations to reach 32 after one unlucky comparison; on
	// the log scale each step multiplies 1 + p.
	Linear bool
	// Fast tunes the step of a fast loop (E11) instead of a fixed p.
	Fast bool
	// Stall is each run's Options.Stall. Left 0, it is DefaultStall or
	// 10 times the longest run so far, whichever is longer: a job whose
	// iterations take long may also wait long within one.
	Stall time.Duration
}

// Tuner runs the overlap loop once per iteration with the p its
// tune.Tuner proposes, times each run and observes the time. It belongs
// to one PE.
type Tuner struct {
	t       *tune.Tuner
	fast    bool
	linear  bool
	stall   time.Duration
	runs    int
	longest time.Duration
}

// NewTuner returns a Tuner, or the tune.Options error.
func NewTuner(o TunerOptions) (*Tuner, error) {
	if o.Search == (tune.Options{}) {
		o.Search.Jump = 1.3
		if !o.Linear {
			o.Search.Start, o.Search.Step, o.Search.MinStep, o.Search.Max = 1, 2, 0.25, 16
			o.Search.Median = true
		}
	}
	t, err := tune.New(o.Search)
	if err != nil {
		return nil, err
	}
	return &Tuner{t: t, fast: o.Fast, linear: o.Linear, stall: o.Stall}, nil
}

// pOf is the p of the tuner's value v.
func (t *Tuner) pOf(v float64) float64 {
	if t.linear {
		return v
	}
	return math.Exp2(v) - 1
}

// P is the value the next run will use.
func (t *Tuner) P() float64 { return t.pOf(t.t.Value()) }

// Best is the best value found so far and its score (seconds per run, as
// the search pools them: the median of its runs by default).
func (t *Tuner) Best() (p, score float64, ok bool) {
	v, score, ok := t.t.Best()
	return t.pOf(v), score, ok
}

// Trajectory is the value and time (seconds) of every run so far.
func (t *Tuner) Trajectory() []tune.Point {
	pts := t.t.Trajectory()
	for i := range pts {
		pts[i].Value = t.pOf(pts[i].Value)
	}
	return pts
}

// Run runs one iteration with the current p and observes its time.
func (t *Tuner) Run(ctx chare.Context, b Body) (Stats, error) {
	st, err := t.RunUnscored(ctx, b)
	if err != nil {
		return st, err
	}
	return st, t.t.Observe(st.Elapsed.Seconds())
}

// RunUnscored runs one iteration with the current p and leaves the
// scoring to the caller, who reports a cost with Observe before the next
// run: a cooperative score, the same for every PE (the iteration's time
// over the job, say), instead of each PE's own loop time, which mostly
// measures how long it waited for the others.
func (t *Tuner) RunUnscored(ctx chare.Context, b Body) (Stats, error) {
	l, err := t.loop()
	if err != nil {
		return Stats{}, err
	}
	t.runs++
	st, err := RunWith(ctx, l, b, t.options())
	if err != nil {
		return st, fmt.Errorf("overlap: the tuner's run %d (p = %.4g): %w", t.runs, l.P(), err)
	}
	t.longest = max(t.longest, st.Elapsed)
	return st, nil
}

// options are the next run's: the stall bound grows with the longest run.
func (t *Tuner) options() Options {
	if t.stall != 0 {
		return Options{Stall: t.stall}
	}
	return Options{Stall: max(DefaultStall, 10*t.longest)}
}

// Observe reports the cost of the last RunUnscored.
func (t *Tuner) Observe(cost float64) error { return t.t.Observe(cost) }

func (t *Tuner) loop() (*Loop, error) {
	p := t.P()
	if t.fast {
		return NewFastLoop(p)
	}
	return NewLoop(p)
}
