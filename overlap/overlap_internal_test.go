package overlap

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/comlib/tune"
)

// script is a Body driven by a scripted communication test: test k brings
// arrive[k] data (none past the end of the script until all pushes are
// done, then the rest). It records what the loop did, one letter a step:
// T (a test, with + if it found data), P (a push that moved data), C (a
// computation).
type script struct {
	arrive          []int
	atEnd           bool // data arrives only once the computations are done
	expect, arrived int
	toPush, room    int
	comps           int
	tests           int
	trace           strings.Builder
	clock           time.Duration // a fake clock: 1 ms per test
}

// env is the loop's runtime for the script, with wait (nil: no Waiter).
func (s *script) env(wait func(time.Time) error) loopEnv {
	return loopEnv{test: s.test, wait: wait, now: s.now, where: "PE 0"}
}

func (s *script) now() time.Time { return time.Unix(0, 0).Add(s.clock) }

func (s *script) Progress() string {
	return fmt.Sprintf("%d of %d data arrived, %d to push", s.arrived, s.expect, s.toPush)
}

func (s *script) test() error {
	n := 0
	if s.atEnd {
		if s.comps == 0 {
			n = s.expect - s.arrived
		}
	} else if s.tests < len(s.arrive) {
		n = s.arrive[s.tests]
	} else if s.toPush == 0 {
		n = s.expect - s.arrived
	}
	s.tests++
	s.clock += time.Millisecond
	s.arrived += n
	s.trace.WriteString("T")
	if n > 0 {
		s.trace.WriteString("+")
	}
	return nil
}

func (s *script) Arrived() int { return s.arrived }
func (s *script) Push() (int, error) {
	n := min(s.toPush, s.room)
	s.toPush -= n
	if n > 0 {
		s.trace.WriteString("P")
	}
	return n, nil
}
func (s *script) Compute() bool {
	if s.comps == 0 {
		return false
	}
	s.comps--
	s.trace.WriteString("C")
	return true
}
func (s *script) Finished() bool { return s.toPush == 0 && s.arrived == s.expect }

// claim E04
//
// TestE04_ArrivedDataFirstThenPushThenCompute: a test that found data is
// followed by another test; otherwise the loop pushes, and a push is
// followed by a test; only a test that found nothing and a push that moved
// nothing lead to local computations.
func TestE04_ArrivedDataFirstThenPushThenCompute(t *testing.T) {
	s := &script{arrive: []int{0, 1, 1, 0, 0, 2, 0}, expect: 6, toPush: 5, room: 2, comps: 12}
	l, err := tune.NewLoop(2)
	require.NoError(t, err)
	st, err := run(s.env(nil), Options{}, l, s)
	require.NoError(t, err)
	tr := s.trace.String()
	// Test 1: nothing arrived, push 2. Test 2, 3: data arrived, test again.
	// Test 4: push 2; test 5: push 1; test 6: data; test 7: nothing to push,
	// compute 2; test 8 (the rest arrives): done; the 10 computations left.
	require.Equal(t, "TPT+T+TPTPT+TCCT+"+strings.Repeat("C", 10), tr)
	require.Equal(t, Stats{P: 2, Tests: 8, Arrivals: 4, Pushes: 3, Computations: 2, Remaining: 10, Elapsed: st.Elapsed}, st)
	for i := 0; i+1 < strings.LastIndex(tr, "T"); i++ {
		if tr[i] == '+' || tr[i] == 'P' {
			require.Equal(t, byte('T'), tr[i+1], "step %d of %s: after data or a push the loop tests again", i, tr)
		}
	}
}

// computationsBetweenTests returns how many computations follow each test
// in a trace, for the tests while communication lasts.
func computationsBetweenTests(tr string) []int {
	var out []int
	for _, part := range strings.Split(tr, "T")[1:] {
		out = append(out, strings.Count(part, "C"))
	}
	return out
}

// claim E05, claim E10
//
// TestE05_E10_PComputationsBetweenTests: with nothing to push and data that
// comes only at the end, the loop does p computations between tests; a
// non-integer p is realised as ⌊p·i⌋ − ⌊p·(i−1)⌋ at turn i, so the tests
// needed for C computations fall as p grows.
func TestE05_E10_PComputationsBetweenTests(t *testing.T) {
	const comps = 40
	prevTests := math.MaxInt
	for _, p := range []float64{0.5, 1, 2.5, 4, 7.25} {
		t.Run(fmt.Sprint(p), func(t *testing.T) {
			// Data arrives only once every computation is done: a long run of
			// empty tests first.
			s := &script{atEnd: true, expect: 1, comps: comps}
			l, err := tune.NewLoop(p)
			require.NoError(t, err)
			st, err := run(s.env(nil), Options{}, l, s)
			require.NoError(t, err)
			got := computationsBetweenTests(s.trace.String())
			total := 0
			for i, n := range got[:len(got)-1] {
				want := int(math.Floor(p*float64(i+1))) - int(math.Floor(p*float64(i)))
				if total+want > comps {
					want = comps - total
				}
				require.Equal(t, want, n, "turn %d with p=%v: %v", i+1, p, got)
				total += n
			}
			require.Equal(t, comps, st.Computations)
			require.Less(t, st.Tests, prevTests, "p=%v needs fewer tests than a smaller p", p)
			prevTests = st.Tests
		})
	}
}

// TestRunStopsOnMissingData: data that never comes ends the run, after
// Options.Stall without progress, with an error that wraps ErrStalled and
// names the PE and what the Body still waits for, rather than a hang —
// whether the loop spins on tests (no Waiter) or sleeps in Wait (which is
// told the deadline, and times out there as a chare future would). Data
// that keeps coming, slower than tests but within the bound, is no stall.
func TestRunStopsOnMissingData(t *testing.T) {
	const stall = time.Second // 1 000 tests of the fake clock
	for _, c := range []struct {
		name     string
		waiter   bool
		spurious bool // the wait returns at once with nothing changed
		arrive   []int
		wantErr  bool
	}{
		{"spinning", false, false, nil, true},
		{"waiting", true, false, nil, true},
		{"woken for nothing", true, true, nil, true},
		{"trickle within the bound", false, false, trickle(10, 900), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := &script{arrive: c.arrive, expect: 11, comps: 5}
			if s.arrive == nil {
				s.arrive = make([]int, 1e5) // nothing comes
			}
			var deadlines []time.Time
			var wait func(time.Time) error
			if c.waiter {
				wait = func(d time.Time) error {
					deadlines = append(deadlines, d)
					if c.spurious {
						s.clock += time.Millisecond
						return nil
					}
					s.clock = max(s.clock, d.Sub(time.Unix(0, 0)))
					return errors.New("no value by the deadline")
				}
			}
			l, err := tune.NewLoop(2)
			require.NoError(t, err)
			st, err := run(s.env(wait), Options{Stall: stall}, l, s)
			if !c.wantErr {
				require.NoError(t, err)
				require.Equal(t, 11, s.arrived)
				return
			}
			require.ErrorIs(t, err, ErrStalled)
			require.ErrorContains(t, err, "on PE 0")
			require.ErrorContains(t, err, "for 1s (Options.Stall)")
			require.ErrorContains(t, err, "0 of 11 data arrived, 0 to push")
			require.ErrorContains(t, err, "is data missing")
			require.Equal(t, 5, st.Computations, "the computations were done first")
			require.LessOrEqual(t, s.clock, stall+10*time.Millisecond, "stopped at the bound")
			for _, d := range deadlines {
				require.False(t, d.IsZero(), "every wait has a deadline")
				require.LessOrEqual(t, d.Sub(time.Unix(0, 0)), stall+10*time.Millisecond)
			}
		})
	}
}

// Data treated while the loop waits (a Waiter's entry methods run then)
// are progress: a PE that receives one datum per wait for longer than the
// stall bound is not stalled, and each datum is counted as arrived; nor is
// one whose last datum comes as the deadline passes.
func TestRunDataDuringWaitIsProgress(t *testing.T) {
	const stall = time.Second
	for _, c := range []struct {
		name       string
		atDeadline bool // the wait times out, the datum arriving as it does
	}{
		{"woken by data", false},
		{"data at the deadline", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := &script{arrive: make([]int, 1e5), expect: 30, comps: 2} // tests bring nothing
			wait := func(d time.Time) error {
				s.clock += 100 * time.Millisecond // 30 data: 3 s in all, beyond the bound
				s.arrived++
				if c.atDeadline {
					s.clock = max(s.clock, d.Sub(time.Unix(0, 0)))
					return errors.New("no value by the deadline")
				}
				return nil
			}
			l, err := tune.NewLoop(2)
			require.NoError(t, err)
			st, err := run(s.env(wait), Options{Stall: stall}, l, s)
			require.NoError(t, err)
			require.Equal(t, 30, s.arrived)
			require.Equal(t, 29, st.Arrivals, "each datum that came during a wait was treated as arrived (the last ends the loop)")
		})
	}
}

// trickle is a script's arrivals: n data, one every gap tests.
func trickle(n, gap int) []int {
	a := make([]int, n*gap+1)
	for i := 1; i <= n; i++ {
		a[i*gap] = 1
	}
	return a
}

// TestRunPZeroDoesNotSpin: with p = 0 (no computation between tests, as
// the linear search's start and a fast loop of step 0 have) a test that
// finds nothing to treat or push does not lead straight to another: a
// Waiter sleeps until data comes, a Body that cannot sleep does one
// computation. The tests made are bounded by the arrivals, pushes and
// computations, however long the data take.
func TestRunPZeroDoesNotSpin(t *testing.T) {
	for _, c := range []struct {
		name      string
		fast      bool
		waiter    bool
		wantTrace string
	}{
		// Each wait stands for the time until the next datum.
		{"waiter", false, true, "TPTWT+TWT+TWT+CCCCC"},
		{"fast loop of step 0, waiter", true, true, "TPTWT+TWT+TWT+CCCCC"},
		// Data come only once the computations are done.
		{"no waiter", false, false, "TPTCTCTCTCTCT+"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := &script{expect: 3, toPush: 2, room: 4, comps: 5}
			if !c.waiter {
				s.atEnd = true
			} else {
				s.arrive = make([]int, 1000) // nothing comes unless waited for
			}
			var wait func(time.Time) error
			if c.waiter {
				wait = func(time.Time) error {
					s.trace.WriteString("W")
					s.arrive, s.tests = make([]int, 1000), 0
					s.arrive[0] = 1
					return nil
				}
			}
			var l *tune.Loop
			var err error
			if c.fast {
				l, err = tune.NewFastLoop(0)
			} else {
				l, err = tune.NewLoop(0)
			}
			require.NoError(t, err)
			st, err := run(s.env(wait), Options{}, l, s)
			require.NoError(t, err)
			require.Equal(t, c.wantTrace, s.trace.String())
			require.Equal(t, 5, st.Computations+st.Remaining)
			require.LessOrEqual(t, st.Tests, st.Arrivals+st.Pushes+st.Waits+st.Computations+1)
		})
	}
}

// claim E04
//
// TestE04_WaitsWhenNothingIsLeftToCompute: with a wait, a turn that finds
// no computation left sleeps (W) instead of testing again at once; the
// test after a wait is a normal test. While computations remain, and
// without a wait, the loop never sleeps.
func TestE04_WaitsWhenNothingIsLeftToCompute(t *testing.T) {
	for _, c := range []struct {
		name      string
		withWait  bool
		comps     int
		wantWaits int
	}{
		{"computations outlast the data", true, 40, 0},
		{"data comes after the computations", true, 3, 1},
		{"no wait given", false, 3, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			// Data arrives at test 10 (the script's slice), or, after a
			// wait, at the next test: a wait stands for the time it takes.
			s := &script{arrive: []int{0, 0, 0, 0, 0, 0, 0, 0, 0, 1}, expect: 1, comps: c.comps}
			var wait func(time.Time) error
			if c.withWait {
				wait = func(time.Time) error {
					s.trace.WriteString("W")
					s.arrive = []int{s.expect - s.arrived}
					s.tests = 0
					return nil
				}
			}
			l, err := tune.NewLoop(2)
			require.NoError(t, err)
			st, err := run(s.env(wait), Options{}, l, s)
			require.NoError(t, err)
			require.Equal(t, c.wantWaits, st.Waits, s.trace.String())
			require.Equal(t, c.wantWaits, strings.Count(s.trace.String(), "W"))
			require.Equal(t, c.comps, st.Computations+st.Remaining)
			if c.wantWaits > 0 {
				// 2 computations, then the last one and none left: wait.
				require.Equal(t, "TCCTCWT+", s.trace.String())
			}
		})
	}
}

// TestTunerStallBound: a Tuner's runs have the stall bound given, or
// DefaultStall until 10 times its longest run exceeds it.
func TestTunerStallBound(t *testing.T) {
	for _, c := range []struct {
		name    string
		given   time.Duration
		longest time.Duration
		want    time.Duration
	}{
		{"default", 0, 0, DefaultStall},
		{"short runs", 0, time.Second, DefaultStall},
		{"long runs", 0, 10 * time.Second, 100 * time.Second},
		{"given", time.Second, 10 * time.Second, time.Second},
		{"off", -1, 10 * time.Second, -1},
	} {
		t.Run(c.name, func(t *testing.T) {
			tu, err := NewTuner(TunerOptions{Stall: c.given})
			require.NoError(t, err)
			tu.longest = c.longest
			require.Equal(t, c.want, tu.options().Stall)
		})
	}
}

// TestRunStallDefaultAndOff: data that come after 70 s of empty tests (the
// fake clock) stall a run at the default bound, DefaultStall, and not one
// whose bound is off.
func TestRunStallDefaultAndOff(t *testing.T) {
	for _, c := range []struct {
		name    string
		stall   time.Duration
		wantErr bool
	}{{"default", 0, true}, {"off", -1, false}} {
		t.Run(c.name, func(t *testing.T) {
			s := &script{arrive: make([]int, 70000), expect: 1}
			l, err := tune.NewLoop(1)
			require.NoError(t, err)
			_, err = run(s.env(nil), Options{Stall: c.stall}, l, s)
			if !c.wantErr {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, ErrStalled)
			require.ErrorContains(t, err, "for 1m0s")
			require.InDelta(t, DefaultStall, s.clock, float64(2*time.Millisecond), "stopped at the bound (from the first empty test)")
		})
	}
}
