package overlap

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// script is a Body driven by a scripted communication test: test k brings
// arrive[k] data (none past the end of the script until all pushes are
// done, then the rest). It records what the loop did, one letter a step:
// T (a test, with + if it found data), P (a push that moved data), C (a
// computation), N (a nap).
type script struct {
	arrive          []int
	atEnd           bool // data arrives only once the computations are done
	expect, arrived int
	toPush, room    int
	comps           int
	tests           int
	trace           strings.Builder
	clock           time.Duration   // a fake clock: 1 ms per test
	naps            []time.Duration // each nap's length: the deadline's distance (0: none)
}

// env is the loop's runtime for the script, with nap (nil: the script's
// own, which brings nothing and lasts 1 ms or until the deadline).
func (s *script) env(nap func(time.Time) (bool, error)) loopEnv {
	if nap == nil {
		nap = s.nap
	}
	return loopEnv{test: s.test, nap: nap, now: s.now, where: "PE 0"}
}

// nap records a nap and its bound; no message comes during it.
func (s *script) nap(deadline time.Time) (bool, error) {
	s.trace.WriteString("N")
	d := time.Duration(0)
	if !deadline.IsZero() {
		d = deadline.Sub(s.now())
	}
	s.naps = append(s.naps, d)
	if d > 0 {
		s.clock += d
	} else {
		s.clock += time.Millisecond
	}
	return false, nil
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
	l, err := NewLoop(2)
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
			l, err := NewLoop(p)
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

// TestRunStopsOnMissingData: data that never come end the run, after
// Options.Stall without progress, with an error that wraps ErrStalled and
// names the PE and what the Body still waits for, rather than a hang: the
// loop's nap ends by the bound (a nap woken for nothing changes nothing).
// Data that keep coming, slower than tests but within the bound, are no
// stall.
func TestRunStopsOnMissingData(t *testing.T) {
	const stall = time.Second // 1 000 tests of the fake clock
	for _, c := range []struct {
		name     string
		spurious bool // naps end at once, woken by a message that brings nothing
		arrive   []int
		wantErr  bool
	}{
		{"napping", false, nil, true},
		{"woken for nothing", true, nil, true},
		{"trickle within the bound", false, nil, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := &script{arrive: c.arrive, expect: 11, comps: 5}
			if s.arrive == nil {
				s.arrive = make([]int, 1e5) // nothing comes
			}
			var nap func(time.Time) (bool, error)
			if !c.wantErr { // a datum every 900 ms: 10 s in all
				nap = func(time.Time) (bool, error) {
					s.clock += 900 * time.Millisecond
					s.arrived++
					return true, nil
				}
			}
			if c.spurious {
				nap = func(d time.Time) (bool, error) {
					s.naps = append(s.naps, d.Sub(s.now()))
					s.clock += time.Millisecond
					return true, nil
				}
			}
			l, err := NewLoop(2)
			require.NoError(t, err)
			st, err := run(s.env(nap), Options{Stall: stall}, l, s)
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
			require.NotEmpty(t, s.naps)
			for _, d := range s.naps {
				require.Positive(t, d, "every nap ends by the bound")
				require.LessOrEqual(t, d, stall)
			}
		})
	}
}

// Data treated while the loop naps (the entry methods run then) are
// progress: a PE that receives one datum per nap for longer than the
// stall bound is not stalled, and each datum is counted as arrived; nor is
// one whose last datum comes as the nap's deadline passes.
func TestRunDataDuringNapIsProgress(t *testing.T) {
	const stall = time.Second
	for _, c := range []struct {
		name       string
		atDeadline bool // the nap ends at its deadline, the datum arriving as it does
	}{
		{"woken by data", false},
		{"data at the deadline", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := &script{arrive: make([]int, 1e5), expect: 30, comps: 2} // tests bring nothing
			nap := func(d time.Time) (bool, error) {
				s.clock += 100 * time.Millisecond // 30 data: 3 s in all, beyond the bound
				s.arrived++
				if c.atDeadline {
					s.clock = max(s.clock, d.Sub(time.Unix(0, 0)))
					return false, nil
				}
				return true, nil
			}
			l, err := NewLoop(2)
			require.NoError(t, err)
			st, err := run(s.env(nap), Options{Stall: stall}, l, s)
			require.NoError(t, err)
			require.Equal(t, 30, s.arrived)
			require.Equal(t, 29, st.Arrivals, "each datum that came during a nap was treated as arrived (the last ends the loop)")
		})
	}
}

// TestRunNeverSpins: whatever p, a test that found nothing to treat or
// push and led to no computation — none left, or none due at this turn
// (p = 0, or p < 1 spread over the turns) — is followed by a nap, never
// straight by another test. The loop used to spin there: a Body with no
// Wait method tested until the data came (or the stall bound), and a p
// between 0 and 1 tested about 1/p times per computation. A nap with
// computations left (p > 0) is short: 50 µs, doubling over a row of
// empty turns up to 1 ms; one with none left or p = 0 lasts until a
// message comes or the stall bound.
func TestRunNeverSpins(t *testing.T) {
	const stall = time.Second
	for _, c := range []struct {
		name  string
		p     float64
		fast  bool
		comps int
	}{
		{"p=0", 0, false, 5},
		{"fast loop of step 0", 0, true, 5},
		{"p=0.1", 0.1, false, 20},
		{"p=0.5", 0.5, false, 20},
		{"p=1, nothing left to compute", 1, false, 3},
		{"p=2.5", 2.5, false, 20},
	} {
		t.Run(c.name, func(t *testing.T) {
			// Tests bring nothing; a long nap stands for the time until
			// the data come, at the next test.
			s := &script{arrive: make([]int, 1e5), expect: 2, toPush: 2, room: 4, comps: c.comps}
			nap := func(d time.Time) (bool, error) {
				long := d.IsZero() || d.Sub(s.now()) > napMax
				woken, err := s.nap(d)
				if long {
					s.arrive, s.tests = []int{s.expect - s.arrived}, 0
				}
				return woken, err
			}
			var l *Loop
			var err error
			if c.fast {
				l, err = NewFastLoop(c.p)
			} else {
				l, err = NewLoop(c.p)
			}
			require.NoError(t, err)
			st, err := run(s.env(nap), Options{Stall: stall}, l, s)
			require.NoError(t, err)
			tr := s.trace.String()
			require.NotContains(t, tr, "TT", "two tests in a row, nothing between: %s", tr)
			require.Equal(t, c.comps, st.Computations+st.Remaining)
			require.Equal(t, st.Waits, strings.Count(tr, "N"))
			require.LessOrEqual(t, st.Tests, st.Arrivals+st.Pushes+st.Waits+st.Computations+1, tr)
			short, long := 0, 0
			for _, d := range s.naps {
				if d <= napMax {
					require.GreaterOrEqual(t, d, napMin)
					short++
				} else {
					require.LessOrEqual(t, d, stall, "a long nap lasts until the bound, from the last progress")
					require.Greater(t, d, stall*9/10)
					long++
				}
			}
			if c.p > 0 && c.p < 1 {
				require.Positive(t, short, "p in (0, 1) naps shortly on turns with no computation due: %s", tr)
			} else {
				require.Zero(t, short, "only p in (0, 1) naps shortly")
			}
			require.Positive(t, long, "data were due with nothing to compute: %s", tr)
		})
	}
}

// TestRunShortNapsDouble: the short naps of a row of turns with no
// computation due double from 50 µs up to 1 ms; a computation (progress)
// starts the row again.
func TestRunShortNapsDouble(t *testing.T) {
	s := &script{atEnd: true, expect: 1, comps: 3}
	l, err := NewLoop(1.0 / 8) // one computation every 8 turns
	require.NoError(t, err)
	_, err = run(s.env(nil), Options{Stall: time.Second}, l, s)
	require.NoError(t, err)
	us := time.Microsecond
	row := []time.Duration{50 * us, 100 * us, 200 * us, 400 * us, 800 * us, 1000 * us, 1000 * us}
	want := append(append(append([]time.Duration{}, row...), row...), row...)
	require.Equal(t, want, s.naps[:len(want)], s.trace.String())
	require.Equal(t, "TNTNTNTNTNTNTNTC", s.trace.String()[:16])
}

// claim E04
//
// TestE04_NapsWhenNothingIsLeftToCompute: a turn that finds no
// computation left naps (N) instead of testing again at once; the test
// after a nap is a normal test. While computations remain the loop never
// naps.
func TestE04_NapsWhenNothingIsLeftToCompute(t *testing.T) {
	for _, c := range []struct {
		name     string
		comps    int
		wantNaps int
	}{
		{"computations outlast the data", 40, 0},
		{"data comes after the computations", 3, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			// Data arrives at test 10 (the script's slice), or, after a
			// nap, at the next test: a nap stands for the time it takes.
			s := &script{arrive: []int{0, 0, 0, 0, 0, 0, 0, 0, 0, 1}, expect: 1, comps: c.comps}
			nap := func(time.Time) (bool, error) {
				s.trace.WriteString("N")
				s.arrive = []int{s.expect - s.arrived}
				s.tests = 0
				return true, nil
			}
			l, err := NewLoop(2)
			require.NoError(t, err)
			st, err := run(s.env(nap), Options{}, l, s)
			require.NoError(t, err)
			require.Equal(t, c.wantNaps, st.Waits, s.trace.String())
			require.Equal(t, c.wantNaps, strings.Count(s.trace.String(), "N"))
			require.Equal(t, c.comps, st.Computations+st.Remaining)
			if c.wantNaps > 0 {
				// 2 computations, then the last one and none left: nap.
				require.Equal(t, "TCCTCNT+", s.trace.String())
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
			l, err := NewLoop(1)
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
