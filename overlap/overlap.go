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
//  5. if no computation is left and the Body is a Waiter, sleep in Wait
//     until data arrives instead of testing again at once;
//
// until the Body says its communication is over, then does the
// computations left. In this runtime a test costs a round trip through the
// PE's mailbox (a few microseconds): p = 1 pays it per computation, while
// a large p holds the PE's outgoing messages and the data for it until the
// next test.
//
// # Tuning p
//
// A Tuner is a tune.Tuner over log2(1 + p) (or p itself, Linear): call
// Run once per iteration; it times the iteration and observes the time, so
// that p moves towards the value that makes iterations fastest
// (explorative exponential search, E06–E09). On the log scale each step
// multiplies 1 + p, so a search from p = 1 reaches 32 or 256 within the
// evaluations the paper's linear search needs to reach 8; values are
// scored by the median of 4 iterations, which a stalled iteration does
// not move.
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
	"github.com/charmgo/charm/comlib/tune"
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

// Waiter is a Body that can sleep until something changes for it. When
// the loop has nothing left to compute and a test found nothing to treat
// or push, it calls Wait instead of testing again at once: a PE that
// spins on tests takes a core from the PEs whose data it waits for (four
// PEs share two cores here, and a spinning PE keeps its core for up to a
// scheduler time slice). Wait must return once data arrives or room frees
// in an outgoing buffer; the loop then tests as usual.
type Waiter interface {
	Wait(ctx chare.Context) error
}

// Stats describe one run of the loop.
type Stats struct {
	P            float64       // the aggregation parameter the run started with
	Tests        int           // communication tests (yields)
	Arrivals     int           // tests that found arrived data
	Pushes       int           // tests followed by a push
	Computations int           // local computations done between tests
	Remaining    int           // computations done after the communication ended
	Waits        int           // sleeps of a Waiter with nothing left to compute
	Elapsed      time.Duration // wall time of the run
}

// MaxTests bounds the tests of one run, so that a Body whose Finished never
// holds (data that never comes) ends in an error rather than a hang.
const MaxTests = 1 << 26

var maxTests = MaxTests // lowered by tests

// Run runs the overlap loop once with the decision l (tune.NewLoop(p) or
// tune.NewFastLoop(step)). ctx must be a threaded entry method's chare or
// the main function: the tests yield the PE.
func Run(ctx chare.Context, l *tune.Loop, b Body) (Stats, error) {
	if l == nil || b == nil {
		return Stats{}, errors.New("overlap: Run needs a loop and a body")
	}
	var wait func() error
	if w, ok := b.(Waiter); ok {
		wait = func() error { return w.Wait(ctx) }
	}
	return run(func() error { return chare.Yield(ctx) }, wait, l, b)
}

// run is Run with the communication test and the wait (nil: none) given,
// for tests without a runtime.
func run(test, wait func() error, l *tune.Loop, b Body) (Stats, error) {
	st := Stats{P: l.P()}
	t0 := time.Now()
	exhausted := false // Compute said no computation is left
	for !b.Finished() {
		if st.Tests >= maxTests {
			return st, fmt.Errorf("overlap: %d tests and the communication is not over (%d arrived); is data missing?", st.Tests, b.Arrived())
		}
		before := b.Arrived()
		if err := test(); err != nil {
			return st, fmt.Errorf("overlap: the communication test: %w", err)
		}
		st.Tests++
		arrived := b.Arrived() != before
		pushed := 0
		if !arrived {
			n, err := b.Push()
			if err != nil {
				return st, fmt.Errorf("overlap: push: %w", err)
			}
			pushed = n
		}
		a, n := l.Next(arrived, pushed > 0)
		switch a {
		case tune.Treat:
			st.Arrivals++
		case tune.Push:
			st.Pushes++
		case tune.Compute:
			i := 0
			for ; i < n && b.Compute(); i++ {
				st.Computations++
			}
			exhausted = exhausted || i < n
			if exhausted && wait != nil && !b.Finished() {
				if err := wait(); err != nil {
					return st, fmt.Errorf("overlap: waiting for data: %w", err)
				}
				st.Waits++
			}
		}
	}
	for b.Compute() {
		st.Remaining++
	}
	st.Elapsed = time.Since(t0)
	return st, nil
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
}

// Tuner runs the overlap loop once per iteration with the p its
// tune.Tuner proposes, times each run and observes the time. It belongs
// to one PE.
type Tuner struct {
	t      *tune.Tuner
	fast   bool
	linear bool
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
	return &Tuner{t: t, fast: o.Fast, linear: o.Linear}, nil
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
	l, err := t.loop()
	if err != nil {
		return Stats{}, err
	}
	st, err := Run(ctx, l, b)
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
	return Run(ctx, l, b)
}

// Observe reports the cost of the last RunUnscored.
func (t *Tuner) Observe(cost float64) error { return t.t.Observe(cost) }

func (t *Tuner) loop() (*tune.Loop, error) {
	p := t.P()
	if t.fast {
		return tune.NewFastLoop(p)
	}
	return tune.NewLoop(p)
}
