package agree

import (
	"fmt"
	"math"
	"math/rand"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSegment(t *testing.T) {
	for _, c := range []struct{ n, length, want int }{
		{0, 3, 0}, {2, 3, 0}, {3, 3, 1}, {-1, 3, -1}, {-3, 3, -1}, {-4, 3, -2}, {7, 1, 7},
	} {
		require.Equal(t, c.want, Segment(c.n, c.length), "Segment(%d, %d)", c.n, c.length)
	}
}

func TestFollowerTakesRangesAndAsksOnce(t *testing.T) {
	f := NewFollower(3)
	_, ok := f.Value(4)
	require.False(t, ok)
	seg, ask := f.Need(4)
	require.Equal(t, 1, seg)
	require.True(t, ask, "the first time: ask the decider")
	_, ask = f.Need(5)
	require.False(t, ask, "the same segment: asked already")
	require.NoError(t, f.Take(Range{From: 1, To: 2, Value: 4}))
	v, ok := f.Value(5)
	require.True(t, ok)
	require.Equal(t, 4, v)
	v, ok = f.Value(8)
	require.True(t, ok)
	require.Equal(t, 4, v)
	_, ok = f.Value(9)
	require.False(t, ok)
	require.NoError(t, f.Take(Range{From: 2, To: 2, Value: 4}), "a copy of a known range is harmless")
	err := f.Take(Range{From: 2, To: 3, Value: 5})
	require.ErrorContains(t, err, "segments 2..2 were given value 4 and now 5")
	_, ok = f.Value(9)
	require.False(t, ok, "a refused range changes nothing")
	require.NoError(t, f.Take(Range{From: 0, To: 0, Value: 4}))
	require.Equal(t, plan{{0, 2, 4, 0}}, f.plan, "neighbours with one value merge")
	require.Error(t, f.Take(Range{From: 3, To: 2, Value: 1}), "an empty range")
}

func TestNewDeciderRejectsBadOptions(t *testing.T) {
	for _, c := range []struct {
		o    Options
		want string
	}{
		{Options{Min: 1, Max: 3, Start: 0}, "Options.Start 0"},
		{Options{Min: 4, Max: 3, Start: 4}, "Options.Min 4 above"},
		{Options{Min: 1, Max: 3, Start: 1, Length: -1}, "Options.Length -1"},
		{Options{Min: 1, Max: 3, Start: 1, Length: 2, Lead: 2}, "Options.Lead 2"},
		{Options{Values: []int{1, 2, 3, 5}, Start: 4}, "Start 4 is not one of Values [1 2 3 5]"},
		{Options{Values: []int{1, 2, 2}, Start: 1}, "holds 2 twice"},
		{Options{Values: []int{1, 2, 4}, Start: 2, Evals: 3}, "Evals=3 does not apply with Values"},
	} {
		_, err := NewDecider(c.o)
		require.ErrorContains(t, err, c.want)
	}
}

// report sends every participant's report of iteration n at cost c.
func reportAll(t *testing.T, d *Decider, n, parts, value int, c float64) []Range {
	t.Helper()
	var out []Range
	for pe := 0; pe < parts; pe++ {
		rs, err := d.Report(Report{PE: pe, Iter: n, Step: 1, Parts: parts, Value: value, Cost: c + float64(pe)})
		require.NoError(t, err)
		out = append(out, rs...)
	}
	return out
}

// TestDeciderAnnouncesAfterMeasuring: the first request starts the plan;
// once Length−Lead iterations of the value under evaluation are measured
// (every participant reported; the cost is the slowest), the next segment
// is announced with the tuner's next value; requests for segments not yet
// announced extend the value in force.
func TestDeciderAnnouncesAfterMeasuring(t *testing.T) {
	d, err := NewDecider(Options{Min: 1, Max: 7, Start: 2, Length: 3, Lead: 1, Evals: 1})
	require.NoError(t, err)
	require.Equal(t, []Range{{0, 0, 2, 0}}, d.Request(0))
	require.Equal(t, []Range{{0, 0, 2, 0}}, d.Request(0), "asked again: the same answer")
	require.Empty(t, reportAll(t, d, 0, 4, 2, 100))
	require.Equal(t, []Range{{1, 1, 3, 0}}, reportAll(t, d, 1, 4, 2, 100), "two measured: the tuner tries 3 from segment 1")
	require.Equal(t, []tune1{{2, 103}}, points(d))
	require.Equal(t, map[int]int{0: 2, 1: 2, 2: 2, 3: 2}, d.Used(1))
	// Iteration 2 (segment 0, value 2) is measured late: not counted for 3.
	require.Empty(t, reportAll(t, d, 2, 4, 2, 500))
	// A PE reaches segment 3 before segment 1 is measured: 2 and 3 get 3.
	require.Equal(t, []Range{{2, 3, 3, 0}}, d.Request(3))
	require.Empty(t, reportAll(t, d, 3, 4, 3, 50))
	require.Equal(t, []Range{{4, 4, 5, 0}}, reportAll(t, d, 6, 4, 3, 50), "3 was better: the vector grows")
	require.Equal(t, []Range{{-2, -1, 2, 0}}, d.Request(-2), "an older segment gets the first value")
	v, ok := d.Value(-5)
	require.True(t, ok)
	require.Equal(t, 2, v)
}

type tune1 struct{ value, cost float64 }

func points(d *Decider) []tune1 {
	var out []tune1
	for _, p := range d.Trajectory() {
		out = append(out, tune1{p.Value, p.Cost})
	}
	return out
}

func TestDeciderRefusesBrokenReports(t *testing.T) {
	d, err := NewDecider(Options{Min: 1, Max: 7, Start: 2})
	require.NoError(t, err)
	_, err = d.Report(Report{PE: 3, Iter: 0, Parts: 2, Value: 2, Cost: 1})
	require.ErrorContains(t, err, "PE 3 ran iteration 0 with value 2 before any value was announced")
	d.Request(0)
	_, err = d.Report(Report{PE: 3, Iter: 1, Parts: 2, Value: 4, Cost: 1})
	require.ErrorContains(t, err, "PE 3 ran iteration 1 with value 4; the value announced for it is 2")
	_, err = d.Report(Report{PE: 3, Iter: 1, Parts: 2, Value: 2, Cost: math.NaN()})
	require.ErrorContains(t, err, "cost NaN")
	_, err = d.Report(Report{PE: 3, Iter: 1, Step: 2, Parts: 3, Value: 2, Cost: 1})
	require.NoError(t, err)
	_, err = d.Report(Report{PE: 3, Iter: 1, Step: 2, Parts: 3, Value: 2, Cost: 1})
	require.ErrorContains(t, err, "PE 3 reported iteration 1 twice")
	_, err = d.Report(Report{PE: 1, Iter: 1, Step: 2, Parts: 2, Value: 2, Cost: 1})
	require.ErrorContains(t, err, "among 2 participants, another PE among 3")
	rs, err := d.Report(Report{PE: 1, Iter: 1, Step: 1, Parts: 2, Value: 2, Cost: 1})
	require.NoError(t, err, "a report of an older step is stale")
	require.Empty(t, rs)
}

// TestDeciderFixed: with nothing to tune (Fixed, or Min = Max) one range
// covers every segment from the first asked, and only every 16th segment
// is reported (the value is checked, nothing is scored).
func TestDeciderFixed(t *testing.T) {
	for _, o := range []Options{{Min: 1, Max: 5, Start: 3, Fixed: true, Length: 3}, {Min: 1, Max: 1, Start: 1, Length: 3}} {
		d, err := NewDecider(o)
		require.NoError(t, err)
		require.Equal(t, []Range{{5, math.MaxInt, o.Start, 16}}, d.Request(5))
		_, err = d.Report(Report{PE: 1, Iter: 15, Step: 1, Parts: 3, Value: o.Start, Cost: 1})
		require.ErrorContains(t, err, "PE 1 reported iteration 15, of segment 5, which was announced quiet")
		require.Empty(t, reportAll(t, d, 48, 3, o.Start, 1), "segment 16")
		require.Empty(t, reportAll(t, d, 50, 3, o.Start, 1))
		require.Empty(t, d.Trajectory())
		require.Equal(t, []Range{{4, 4, o.Start, 16}}, d.Request(4))
		require.Len(t, d.plan, 1, "the older segment merges with the range after it")
	}
}

// TestRangeReported: a range with Every ≤ 1 reports every segment; with k,
// the multiples of k (negative segments too).
func TestRangeReported(t *testing.T) {
	for _, c := range []struct {
		every int
		segs  []int // reported among -4..8
	}{
		{0, []int{-4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7, 8}},
		{1, []int{-4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7, 8}},
		{4, []int{-4, 0, 4, 8}},
		{3, []int{-3, 0, 3, 6}},
	} {
		var got []int
		for seg := -4; seg <= 8; seg++ {
			if (Range{From: -4, To: 8, Value: 1, Every: c.every}).Reported(seg) {
				got = append(got, seg)
			}
		}
		require.Equal(t, c.segs, got, "Every %d", c.every)
	}
}

// TestFollowerReports: a Follower reports the iterations of reported
// segments only, and none it has no value for; a range that gives known
// segments their value but another Every is refused (the PEs would
// disagree on which iterations the Decider waits for); ranges that say
// the same merge, Every 0 and 1 being one rule.
func TestFollowerReports(t *testing.T) {
	f := NewFollower(2)
	require.False(t, f.Reported(0), "not known")
	require.NoError(t, f.Take(Range{From: 0, To: 4, Value: 3, Every: 4}))
	var got []int
	for n := 0; n < 12; n++ {
		if f.Reported(n) {
			got = append(got, n)
		}
	}
	require.Equal(t, []int{0, 1, 8, 9}, got, "segments 0 and 4")
	err := f.Take(Range{From: 4, To: 5, Value: 3})
	require.ErrorContains(t, err, "segments 4..4 were given value 3 reported every 4 segments and now every 1")
	require.NoError(t, f.Take(Range{From: 5, To: 6, Value: 3, Every: 4}))
	require.Equal(t, plan{{0, 6, 3, 4}}, f.plan)
	require.NoError(t, f.Take(Range{From: 7, To: 7, Value: 3, Every: 1}))
	require.NoError(t, f.Take(Range{From: 8, To: 8, Value: 3}))
	require.Equal(t, plan{{0, 6, 3, 4}, {7, 8, 3, 1}}, f.plan)
}

// agreeSim plays PEs that run iterations one after another, each only
// with a value it knows, and a Decider; every message — ranges, requests,
// reports — is delivered in a random order (not even FIFO per pair).
type agreeSim struct {
	t      *testing.T
	rng    *rand.Rand
	d      *Decider
	fs     []*Follower
	next   []int         // the iteration each PE runs next
	ran    []map[int]int // PE → iteration → value used
	inbox  []func()      // messages in flight
	asleep []bool        // waiting for a range
	waits  int
	bs     []*Batcher // each PE's reports, one message per segment
	// PE iterations reported and left quiet (Range.Every), and report
	// messages sent
	reports, quiet, msgs int
	broken               bool // PEs use a value of their own when they do not know it (the negative control)
}

func (s *agreeSim) run(iters int) error {
	for guard := 0; guard < 1_000_000; guard++ {
		var ready []int
		for pe, n := range s.next {
			// A PE may run n only once every PE has run n−1 (the exchange
			// needs them all), and at most one iteration ahead.
			ok := n < iters && !s.asleep[pe]
			for _, m := range s.next {
				ok = ok && m >= n
			}
			if ok {
				ready = append(ready, pe)
			}
		}
		if len(ready) == 0 && len(s.inbox) == 0 {
			for pe, n := range s.next {
				if n < iters {
					return fmt.Errorf("PE %d waits at iteration %d with nothing in flight", pe, n)
				}
			}
			return nil
		}
		if len(ready) > 0 && (len(s.inbox) == 0 || s.rng.Intn(2) == 0) {
			s.step(ready[s.rng.Intn(len(ready))])
			continue
		}
		i := s.rng.Intn(len(s.inbox))
		m := s.inbox[i]
		s.inbox = append(s.inbox[:i], s.inbox[i+1:]...)
		m()
	}
	return fmt.Errorf("the simulation does not end")
}

func (s *agreeSim) step(pe int) {
	n := s.next[pe]
	v, ok := s.fs[pe].Value(n)
	if !ok && s.broken {
		v, ok = 1+pe%2, true
	}
	if !ok {
		s.waits++
		if seg, ask := s.fs[pe].Need(n); ask {
			s.inbox = append(s.inbox, func() { s.broadcast(s.d.Request(seg)) })
		}
		s.asleep[pe] = true // until a range comes
		return
	}
	s.ran[pe][n] = v
	s.next[pe]++
	if !s.broken && !s.fs[pe].Reported(n) {
		s.quiet++
		return
	}
	s.reports++
	cost := float64(1+abs(v-4)) * (1 + 0.2*s.rng.Float64())
	batch := s.bs[pe].Add(Report{PE: pe, Iter: n, Step: 1, Parts: len(s.fs), Value: v, Cost: cost})
	if batch == nil {
		return // held: it goes with the segment's message
	}
	s.msgs++
	s.inbox = append(s.inbox, func() {
		for _, r := range batch {
			rs, err := s.d.Report(r)
			if s.broken && err != nil {
				return
			}
			require.NoError(s.t, err)
			s.broadcast(rs)
		}
	})
}

func (s *agreeSim) broadcast(rs []Range) {
	for _, r := range rs {
		for pe := range s.fs {
			r, pe := r, pe
			s.inbox = append(s.inbox, func() {
				require.NoError(s.t, s.fs[pe].Take(r))
				s.asleep[pe] = false
			})
		}
	}
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

func newAgreeSim(t *testing.T, seed int64, pes int, o Options) *agreeSim {
	d, err := NewDecider(o)
	require.NoError(t, err)
	s := &agreeSim{t: t, rng: rand.New(rand.NewSource(seed)), d: d, next: make([]int, pes), asleep: make([]bool, pes)}
	for pe := 0; pe < pes; pe++ {
		s.fs = append(s.fs, NewFollower(d.Length()))
		s.bs = append(s.bs, NewBatcher(d.Length(), d.Lead()))
		s.ran = append(s.ran, map[int]int{})
	}
	return s
}

// TestAgreementUnderAnyOrder: whatever order the messages take, every PE
// runs every iteration with the value the Decider announced for it, no PE
// is left waiting, the value changes as the tuner explores, and PEs do
// wait when the announcement is late (Lead 0 makes it late every time).
func TestAgreementUnderAnyOrder(t *testing.T) {
	const iters = 60
	for _, o := range []Options{
		{Min: 1, Max: 7, Start: 2},
		{Min: 1, Max: 7, Start: 2, Length: 1, Lead: 0},
		{Min: 1, Max: 3, Start: 3, Length: 4, Lead: 3, Evals: 4},
		{Values: []int{1, 2, 3, 5, 8}, Start: 2},
		{Values: []int{1, 2, 3, 5, 8}, Start: 2, Length: 1, Lead: 0},
	} {
		waits := 0
		for seed := int64(1); seed <= 30; seed++ {
			t.Run(fmt.Sprintf("len%d/lead%d/values%v/seed%d", o.Length, o.Lead, o.Values, seed), func(t *testing.T) {
				s := newAgreeSim(t, seed, 5, o)
				require.NoError(t, s.run(iters))
				seen := map[int]bool{}
				for n := 0; n < iters; n++ {
					want, ok := s.d.Value(n)
					require.True(t, ok)
					seen[want] = true
					if o.Values != nil {
						require.Contains(t, o.Values, want, "iteration %d", n)
					}
					for pe := range s.fs {
						require.Equal(t, want, s.ran[pe][n], "PE %d, iteration %d", pe, n)
					}
				}
				require.GreaterOrEqual(t, len(seen), 2, "the value changes")
				waits += s.waits
				// At most one report message per PE per segment (Batcher).
				segs := (iters + s.d.Length() - 1) / s.d.Length()
				require.LessOrEqual(t, s.msgs, len(s.fs)*segs, "report messages (%d PE iterations reported)", s.reports)
			})
		}
		require.Positive(t, waits, "some PE waited for an announcement (%+v)", o)
	}
}

// TestAgreementNegativeControl: PEs that pick a value of their own when
// they do not know one disagree, and the check above sees it.
func TestAgreementNegativeControl(t *testing.T) {
	s := newAgreeSim(t, 1, 5, Options{Min: 1, Max: 7, Start: 2, Length: 1, Lead: 0})
	s.broken = true
	require.NoError(t, s.run(30))
	differ := 0
	for n := 0; n < 30; n++ {
		for pe := 1; pe < len(s.fs); pe++ {
			if s.ran[pe][n] != s.ran[0][n] {
				differ++
				break
			}
		}
	}
	require.Positive(t, differ, "without waiting, PEs run iterations with different values")
}

// TestDeciderDefaults: segments of 8 iterations, the next announced once
// the first 6 of one are measured (a lead of 2), one segment per score.
func TestDeciderDefaults(t *testing.T) {
	d, err := NewDecider(Options{Min: 1, Max: 7, Start: 2})
	require.NoError(t, err)
	require.Equal(t, 8, d.Length())
	require.Equal(t, []Range{{0, 0, 2, 0}}, d.Request(0))
	for n := 0; n < 5; n++ {
		require.Empty(t, reportAll(t, d, n, 2, 2, 10), "iteration %d", n)
	}
	require.Equal(t, []Range{{1, 1, 3, 0}}, reportAll(t, d, 5, 2, 2, 10), "the sixth measured iteration closes the score")
	require.Len(t, d.Trajectory(), 1)
}

// TestDeciderChoosesAmongValues: with Values the Decider scores the start
// (after a segment of warm-up),
// then tries its right neighbour, alternating with the start, and moves
// only once the neighbour measured better twice; a neighbour measured
// worse is given up at once, and with both given up it stays, reported
// only every Every segments from then on.
func TestDeciderChoosesAmongValues(t *testing.T) {
	d, err := NewDecider(Options{Values: []int{1, 2, 4, 8}, Start: 2, Length: 2, Lead: 1, Every: 4})
	require.NoError(t, err)
	cost := map[int]float64{1: 30, 2: 20, 4: 10, 8: 20} // 4 is best
	var used, reported []int
	d.Request(0)
	for n := 0; n < 2*12; n += 2 {
		v, ok := d.Value(n)
		require.True(t, ok, "iteration %d announced", n)
		used = append(used, v)
		if d.reported(n / 2) {
			reported = append(reported, n/2)
			reportAll(t, d, n, 1, v, cost[v])
			reportAll(t, d, n+1, 1, v, cost[v])
		}
	}
	// 2 warms up, then is scored; 4 tried, 2 again, 4 again: better
	// twice, taken; 8 worse at once; 2, where it came from, not tried
	// again: settled at 4, and quiet but for segments 8 and 12.
	require.Equal(t, []int{2, 2, 4, 2, 4, 8, 4, 4, 4, 4, 4, 4}, used)
	require.Equal(t, []int{0, 1, 2, 3, 4, 5, 8}, reported)
	require.Len(t, d.Trajectory(), len(reported))
	require.Equal(t, plan{{0, 1, 2, 0}, {2, 2, 4, 0}, {3, 3, 2, 0}, {4, 4, 4, 0}, {5, 5, 8, 0}, {6, 12, 4, 4}}, d.plan,
		"the settled value's announcements merge into one range")
}

// TestDeciderTrajectoryIsBounded: a long job keeps the latest
// MaxTrajectory evaluations, numbered as they came.
func TestDeciderTrajectoryIsBounded(t *testing.T) {
	d, err := NewDecider(Options{Values: []int{1, 2, 4}, Start: 2, Length: 1, Lead: 0, Every: 1})
	require.NoError(t, err)
	const evals = MaxTrajectory + 100
	d.Request(0)
	for n := 0; n < evals; n++ {
		v, ok := d.Value(n)
		require.True(t, ok)
		reportAll(t, d, n, 1, v, 10)
		if _, ok := d.Value(n + 1); !ok {
			d.Request(n + 1)
		}
	}
	tr := d.Trajectory()
	require.Len(t, tr, MaxTrajectory)
	require.Equal(t, 101, tr[0].Eval, "the oldest evaluations went")
	require.Equal(t, evals, tr[len(tr)-1].Eval)
}

// TestAgreementWhileQuiet: once the Picker settles, most segments are
// quiet; whatever order the messages take, every PE still runs every
// iteration with the value announced for it, and no PE reports a quiet
// iteration (the Decider would refuse it).
func TestAgreementWhileQuiet(t *testing.T) {
	const iters = 240
	o := Options{Values: []int{1, 2, 3, 5, 8}, Start: 2, Length: 2, Lead: 1, Every: 4}
	var reports, quiet int
	for seed := int64(1); seed <= 20; seed++ {
		t.Run(fmt.Sprintf("seed%d", seed), func(t *testing.T) {
			s := newAgreeSim(t, seed, 5, o)
			require.NoError(t, s.run(iters))
			for n := 0; n < iters; n++ {
				want, ok := s.d.Value(n)
				require.True(t, ok)
				for pe := range s.fs {
					require.Equal(t, want, s.ran[pe][n], "PE %d, iteration %d", pe, n)
				}
			}
			require.Equal(t, 5*iters, s.reports+s.quiet)
			require.LessOrEqual(t, 2*s.msgs, s.reports+5, "one message per reported segment of 2 iterations")
			reports, quiet = reports+s.reports, quiet+s.quiet
		})
	}
	t.Logf("%d PE iterations reported, %d quiet", reports, quiet)
	require.Greater(t, quiet, reports, "most iterations are quiet once settled (%d reported, %d quiet)", reports, quiet)
}

// TestE12_DeciderReconvergesWhileQuiet (E12's "it re-converges by
// itself", kept while most segments go unreported): a settled Picker,
// reported only every Every segments, still sees the costs change: the
// first re-check that finds its value's cost moved makes the next
// segments reported, the search opens again, finds the new best and goes
// quiet there.
func TestE12_DeciderReconvergesWhileQuiet(t *testing.T) {
	const length, every, segs, shift = 2, 8, 160, 60 // the costs change at segment 60
	d, err := NewDecider(Options{Values: []int{1, 2, 4, 8}, Start: 2, Length: length, Lead: 1, Every: every})
	require.NoError(t, err)
	f := NewFollower(d.Length())
	before := map[int]float64{1: 30, 2: 20, 4: 10, 8: 20} // 4 is best
	after := map[int]float64{1: 10, 2: 20, 4: 40, 8: 80}  // 1 is best, 4 four times slower
	used := make([]int, segs)
	reported := map[int]bool{}
	for seg := 0; seg < segs; seg++ {
		n := seg * length
		if _, ok := f.Value(n); !ok {
			_, ask := f.Need(n)
			require.True(t, ask)
			for _, r := range d.Request(seg) {
				require.NoError(t, f.Take(r))
			}
		}
		v, _ := f.Value(n)
		used[seg] = v
		cost := before
		if seg >= shift {
			cost = after
		}
		for i := 0; i < length; i++ {
			if !f.Reported(n + i) {
				continue
			}
			reported[seg] = true
			for _, r := range reportAll(t, d, n+i, 3, v, cost[v]) {
				require.NoError(t, f.Take(r))
			}
		}
	}
	quietIn := func(lo, hi int) (q int) {
		for seg := lo; seg < hi; seg++ {
			if !reported[seg] {
				q++
			}
		}
		return q
	}
	require.Equal(t, 4, used[shift-1], "settled at 4 before the change")
	require.GreaterOrEqual(t, quietIn(20, shift), (shift-20)*(every-1)/every-1, "quiet while settled")
	firstCheck := shift + mod(-shift, every) // 64
	require.True(t, reported[firstCheck], "the re-check at segment %d", firstCheck)
	require.Equal(t, 4, used[firstCheck])
	require.True(t, reported[firstCheck+1] && reported[firstCheck+2], "a moved cost is re-checked at once: %v", used[firstCheck:firstCheck+4])
	require.Equal(t, 1, used[segs-1], "re-converged at the new best: %v", used[shift:])
	moved := slices.Index(used[shift:], 1) + shift
	require.Less(t, moved, firstCheck+20, "the search after the change took %d segments: %v", moved-firstCheck, used[shift:])
	require.Greater(t, quietIn(moved+20, segs), 0, "quiet again once settled at 1: %v", used[moved:])
}

// A PE that asks for the next segment before the re-check in progress is
// measured (under load, or with no Lead) does not break the quiet plan:
// the Decider extends it, quiet, to the next multiple of Every, which
// becomes the re-check, and the plan keeps one range for the settled
// value however long the job runs (review: it grew by two ranges per
// re-check, each a reported segment).
func TestQuietPlanStaysOneRangeWhenAPEIsAhead(t *testing.T) {
	const every = 4
	d, err := NewDecider(Options{Values: []int{2, 4}, Start: 2, Length: 2, Lead: 1, Every: every})
	require.NoError(t, err)
	f := NewFollower(d.Length())
	take := func(rs []Range) {
		for _, r := range rs {
			require.NoError(t, f.Take(r))
		}
	}
	cost := map[int]float64{2: 10, 4: 20} // the start is best: it settles there
	take(d.Request(0))
	reports := 0
	for seg := 0; seg < 4000; seg++ {
		n := seg * 2
		// The PE is one segment ahead: it needs seg+1 before seg is measured.
		if _, ok := f.Value(n + 2); !ok {
			if s, ask := f.Need(n + 2); ask {
				take(d.Request(s))
			}
		}
		v, ok := f.Value(n)
		require.True(t, ok, "segment %d has a value", seg)
		for _, it := range []int{n, n + 1} {
			if f.Reported(it) {
				reports++
				take(reportAll(t, d, it, 1, v, cost[v]))
			}
		}
	}
	require.LessOrEqual(t, len(d.plan), 8, "ranges in the plan (the first: %v)", d.plan[:min(4, len(d.plan))])
	require.LessOrEqual(t, len(f.plan), 8, "the follower's plan")
	require.Less(t, reports, 2*4000/every+40, "most segments quiet")
}
