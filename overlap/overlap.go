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
//
// until the Body says its communication is over, then does the
// computations left. In this runtime a test costs a round trip through the
// PE's mailbox (a few microseconds): p = 1 pays it per computation, while
// a large p holds the PE's outgoing messages and the data for it until the
// next test.
//
// # Tuning p
//
// A Tuner is a tune.Tuner over p: call Run once per iteration; it times the
// iteration and observes the time, so that p moves towards the value that
// makes iterations fastest (explorative exponential search, E06–E09).
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

// Stats describe one run of the loop.
type Stats struct {
	P            float64       // the aggregation parameter the run started with
	Tests        int           // communication tests (yields)
	Arrivals     int           // tests that found arrived data
	Pushes       int           // tests followed by a push
	Computations int           // local computations done between tests
	Remaining    int           // computations done after the communication ended
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
	return run(func() error { return chare.Yield(ctx) }, l, b)
}

// run is Run with the communication test given, for tests without a
// runtime.
func run(test func() error, l *tune.Loop, b Body) (Stats, error) {
	st := Stats{P: l.P()}
	t0 := time.Now()
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
			for i := 0; i < n && b.Compute(); i++ {
				st.Computations++
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
	// Search is the tune.Tuner's: by default p starts at 0 (all
	// communication before the computations) and the first vector is 1,
	// as in the paper; Evals 4, MinStep 1/2; and Jump 1.3, so that a jump
	// of the whole time (more work per computation) is noticed at the
	// first try that sees it (tune.Options.Jump).
	Search tune.Options
	// Fast tunes the step of a fast loop (E11) instead of a fixed p.
	Fast bool
}

// Tuner runs the overlap loop once per iteration with the p its
// tune.Tuner proposes, times each run and observes the time. It belongs
// to one PE.
type Tuner struct {
	t    *tune.Tuner
	fast bool
}

// NewTuner returns a Tuner, or the tune.Options error.
func NewTuner(o TunerOptions) (*Tuner, error) {
	if o.Search == (tune.Options{}) {
		o.Search.Jump = 1.3
	}
	t, err := tune.New(o.Search)
	if err != nil {
		return nil, err
	}
	return &Tuner{t: t, fast: o.Fast}, nil
}

// P is the value the next run will use.
func (t *Tuner) P() float64 { return t.t.Value() }

// Best is the best value found so far and its score (mean seconds per run).
func (t *Tuner) Best() (p, score float64, ok bool) { return t.t.Best() }

// Trajectory is the value and time (seconds) of every run so far.
func (t *Tuner) Trajectory() []tune.Point { return t.t.Trajectory() }

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
	p := t.t.Value()
	if t.fast {
		return tune.NewFastLoop(p)
	}
	return tune.NewLoop(p)
}
