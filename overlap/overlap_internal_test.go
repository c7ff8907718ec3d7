package overlap

import (
	"fmt"
	"math"
	"strings"
	"testing"

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
	st, err := run(s.test, nil, l, s)
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
			st, err := run(s.test, nil, l, s)
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

// TestRunStopsOnMissingData: data that never comes ends the run with an
// error that says so rather than a hang.
func TestRunStopsOnMissingData(t *testing.T) {
	defer func(n int) { maxTests = n }(maxTests)
	maxTests = 1000
	s := &script{arrive: make([]int, maxTests+1), expect: 1}
	l, err := tune.NewLoop(1)
	require.NoError(t, err)
	_, err = run(s.test, nil, l, s)
	require.ErrorContains(t, err, "is data missing")
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
			var wait func() error
			if c.withWait {
				wait = func() error {
					s.trace.WriteString("W")
					s.arrive = []int{s.expect - s.arrived}
					s.tests = 0
					return nil
				}
			}
			l, err := tune.NewLoop(2)
			require.NoError(t, err)
			st, err := run(s.test, wait, l, s)
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
