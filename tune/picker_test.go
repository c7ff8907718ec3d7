package tune

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// omegas16 are the group shuffle's fan-outs with distinct round counts for
// 16 PEs (15, 8, 5, 4, 3, 2, 1 rounds); 4 is the default.
var omegas16 = []int{1, 2, 3, 4, 5, 8, 15}

// TestPickerSequence follows the search value by value on exact costs
// (no noise: every trial is decided at once) and on costs whose spread
// leaves every trial undecided until MaxTries.
func TestPickerSequence(t *testing.T) {
	flat := func(int) []float64 { return []float64{1, 1, 1} }
	valley := func(v int) []float64 { // best at ω = 8 (index 5)
		i := float64(indexOf(v))
		c := math.Abs(i-5) + 1
		return []float64{c, c}
	}
	// Samples so spread that no gain is sure: the start's, and the others'
	// 5 % faster (undecided) or 5 % slower (not even faster: futile).
	spread := func(f float64) func(int) []float64 {
		return func(v int) []float64 {
			if v != 4 {
				return []float64{f, 2 * f, f, 2 * f}
			}
			return []float64{1, 2, 1, 2}
		}
	}
	for _, c := range []struct {
		name string
		cost func(int) []float64
		want []int
	}{
		// Score 4, try 5 (no gain: given up), try 3 (given up), settle.
		{"flat", flat, []int{4, 5, 3, 4, 4, 4}},
		// 5 and 8 are better, and taken on their second evaluation (one is
		// never enough to take a trial); 15 is worse, given up at once; 5,
		// where the climb came from, is not tried again.
		{"valley", valley, []int{4, 5, 4, 5, 8, 5, 8, 15, 8, 8}},
		// Undecided trials alternate with the incumbent, MaxTries (4) each.
		{"undecided", spread(0.95), []int{4, 5, 4, 5, 4, 5, 4, 5, 3, 4, 3, 4, 3, 4, 3, 4, 4}},
		// Measured twice and not faster: given up before MaxTries.
		{"futile", spread(1.05), []int{4, 5, 4, 5, 3, 4, 3, 4, 4}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ch, err := NewPicker(PickerOptions{Values: omegas16, Start: 4, Warmup: -1})
			require.NoError(t, err)
			var got []int
			for range c.want {
				v := ch.Value()
				got = append(got, v)
				require.NoError(t, ch.Observe(c.cost(v)))
			}
			require.Equal(t, c.want, got)
			require.True(t, ch.Settled())
		})
	}
}

// TestPickerWarmup: the first evaluation (by default) is not scored: a
// start-up that makes it slow does not make the first trial look better.
func TestPickerWarmup(t *testing.T) {
	ch, err := NewPicker(PickerOptions{Values: omegas16, Start: 4})
	require.NoError(t, err)
	var got []int
	for i := 0; i < 6; i++ {
		got = append(got, ch.Value())
		c := 1.0
		if i == 0 {
			c = 100
		}
		require.NoError(t, ch.Observe([]float64{c, c, c}))
	}
	require.Equal(t, []int{4, 4, 5, 3, 4, 4}, got)
	require.Equal(t, 4, ch.Best())
}

func indexOf(v int) int {
	for i, w := range omegas16 {
		if w == v {
			return i
		}
	}
	panic(v)
}

// noisy draws samples of a true cost: log-normal noise of relative spread
// sigma, and one sample in 20 three times as slow (a PE descheduled on a
// shared machine).
func noisy(rng *rand.Rand, cost float64, samples int, sigma float64) []float64 {
	out := make([]float64, samples)
	for i := range out {
		out[i] = cost * math.Exp(sigma*rng.NormFloat64())
		if rng.IntN(20) == 0 {
			out[i] *= 3
		}
	}
	return out
}

// simPicker runs a Picker over omegas16 from 4 for evals evaluations of 6
// samples each; cost(e, v) is the true cost of v at evaluation e. It
// returns the value of each evaluation and the incumbent after the last.
func simPicker(t *testing.T, seed uint64, evals int, sigma float64, cost func(e, v int) float64) ([]int, int) {
	t.Helper()
	ch, err := NewPicker(PickerOptions{Values: omegas16, Start: 4})
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(seed, 7))
	var vals []int
	for e := 1; e <= evals; e++ {
		v := ch.Value()
		vals = append(vals, v)
		require.NoError(t, ch.Observe(noisy(rng, cost(e, v), 6, sigma)))
	}
	return vals, ch.Best()
}

// TestPickerDoesNotLose: where the start is best or the landscape is flat,
// with 30 % noise and outliers, the search stays with the start in nearly
// every run and pays little for its trials. Without the noise bar (Z and
// MinGain tiny) it would wander on the flat landscape.
func TestPickerDoesNotLose(t *testing.T) {
	const runs, evals = 200, 60
	for _, c := range []struct {
		name   string
		cost   []float64 // by index of omegas16
		stayed float64   // fewest runs that end at the start
		excess float64   // most mean cost over the start's, as a fraction
	}{
		{"flat", []float64{1, 1, 1, 1, 1, 1, 1}, 0.85, 0.001},
		{"start best", []float64{3, 2, 1.5, 1, 1.2, 1.5, 2}, 0.97, 0.03},
		{"neighbours close", []float64{1.3, 1.1, 1.02, 1, 1.02, 1.1, 1.3}, 0.88, 0.02},
	} {
		t.Run(c.name, func(t *testing.T) {
			stayed := 0
			var excess float64
			for seed := range uint64(runs) {
				vals, best := simPicker(t, seed, evals, 0.3, func(_, v int) float64 { return c.cost[indexOf(v)] })
				if best == 4 {
					stayed++
				}
				var sum float64
				for _, v := range vals {
					sum += c.cost[indexOf(v)]
				}
				excess += sum/float64(len(vals))/c.cost[3] - 1
			}
			excess /= runs
			t.Logf("%d of %d runs end at the start; mean excess %.4f", stayed, runs, excess)
			require.GreaterOrEqual(t, float64(stayed)/runs, c.stayed)
			require.LessOrEqual(t, excess, c.excess)
		})
	}
}

// TestPickerFindsBetter: an optimum two candidates to the right (ω = 8,
// 35 % faster than the start, each step 20 % or more) is found within 40
// evaluations in at least 55 % of runs, under 20 % noise with outliers,
// and the last 20 evaluations run at least 22 % faster than the start
// would. (The search gives a trial 4 evaluations: more find it more often
// — 5 in 74 % — but leave the search open longer where nothing is better.)
func TestPickerFindsBetter(t *testing.T) {
	const runs = 200
	cost := []float64{1.6, 1.3, 1.1, 1, 0.8, 0.65, 0.9}
	found := 0
	var late float64
	for seed := range uint64(runs) {
		vals, _ := simPicker(t, seed, 60, 0.2, func(_, v int) float64 { return cost[indexOf(v)] })
		if vals[39] == 8 {
			found++
		}
		var sum float64
		for _, v := range vals[40:] {
			sum += cost[indexOf(v)]
		}
		late += sum / 20
	}
	late /= runs
	t.Logf("ω = 8 at evaluation 40 in %d of %d runs; mean cost of evaluations 41–60 %.3f", found, runs, late)
	require.GreaterOrEqual(t, float64(found)/runs, 0.55)
	require.LessOrEqual(t, late, 0.78)
}

// TestPickerBurstsOfLoad: on a flat landscape whose evaluations are each
// slowed or sped up as a whole (a burst of load from other jobs, 15 %)
// besides their samples' own noise, the search stays with the start in
// at least 75 % of runs: it takes a trial only for a gain beyond the
// spread of whole evaluations too. (Judged by the samples' spread alone
// it stayed in 61 %.)
func TestPickerBurstsOfLoad(t *testing.T) {
	const runs = 200
	stayed := 0
	for seed := range uint64(runs) {
		ch, err := NewPicker(PickerOptions{Values: omegas16, Start: 4})
		require.NoError(t, err)
		rng := rand.New(rand.NewPCG(seed, 7))
		for e := 0; e < 60; e++ {
			require.NoError(t, ch.Observe(noisy(rng, math.Exp(0.15*rng.NormFloat64()), 6, 0.2)))
		}
		if ch.Best() == 4 {
			stayed++
		}
	}
	t.Logf("%d of %d runs end at the start", stayed, runs)
	require.GreaterOrEqual(t, float64(stayed)/runs, 0.75)
}

// TestPickerSearchesAgainWhenCostMoves: settled at the start, the search
// opens again when the start's cost doubles and the optimum moves to
// ω = 8, and finds it within 30 evaluations in at least 65 % of runs.
func TestPickerSearchesAgainWhenCostMoves(t *testing.T) {
	const runs, shift = 200, 40
	before := []float64{3, 2, 1.5, 1, 1.2, 1.5, 2}
	after := []float64{4, 3, 2.5, 2, 1.6, 1.25, 1.8}
	found := 0
	for seed := range uint64(runs) {
		vals, _ := simPicker(t, seed, shift+30, 0.2, func(e, v int) float64 {
			if e > shift {
				return after[indexOf(v)]
			}
			return before[indexOf(v)]
		})
		if vals[shift-1] != 4 {
			continue // not settled at the start before the shift: counts as a miss
		}
		if vals[len(vals)-1] == 8 {
			found++
		}
	}
	t.Logf("back at the optimum within 30 evaluations in %d of %d runs", found, runs)
	require.GreaterOrEqual(t, float64(found)/runs, 0.65)
}

// TestPickerDrifting: a settled Picker is Drifting while its latest
// evaluation moved by more than Drift and the move is not yet confirmed;
// an evaluation back at the old cost clears it, three in a row open the
// search (no longer settled, not drifting).
func TestPickerDrifting(t *testing.T) {
	c, err := NewPicker(PickerOptions{Values: []int{1, 2, 3}, Start: 2})
	require.NoError(t, err)
	cost := map[int]float64{1: 20, 2: 10, 3: 20}
	for i := 0; i < 20 && !c.Settled(); i++ {
		require.NoError(t, c.Observe([]float64{cost[c.Value()], cost[c.Value()]}))
	}
	require.True(t, c.Settled())
	require.False(t, c.Drifting())
	require.NoError(t, c.Observe([]float64{30, 30}))
	require.True(t, c.Drifting(), "3× the settled cost")
	require.NoError(t, c.Observe([]float64{10, 10}))
	require.False(t, c.Drifting(), "back: a burst, not a move")
	for i := 0; i < 2; i++ {
		require.NoError(t, c.Observe([]float64{30, 30}))
		require.True(t, c.Drifting())
	}
	require.NoError(t, c.Observe([]float64{30, 30}))
	require.False(t, c.Settled(), "three in a row: the search opens")
	require.False(t, c.Drifting())
}

// TestNewPickerRejectsBadOptions names the option that is wrong.
func TestNewPickerRejectsBadOptions(t *testing.T) {
	for _, c := range []struct {
		o    PickerOptions
		want string
	}{
		{PickerOptions{}, "Values is empty"},
		{PickerOptions{Values: []int{1, 2}, Start: 3}, "Start 3 is not one of Values [1 2]"},
		{PickerOptions{Values: []int{1, 2, 1}, Start: 1}, "holds 1 twice"},
		{PickerOptions{Values: []int{1}, Start: 1, MinGain: 1}, "MinGain 1"},
		{PickerOptions{Values: []int{1}, Start: 1, Z: -1}, "Z -1"},
		{PickerOptions{Values: []int{1}, Start: 1, MaxTries: -1}, "MaxTries -1"},
		{PickerOptions{Values: []int{1}, Start: 1, Drift: 0.5}, "Drift 0.5"},
		{PickerOptions{Values: []int{1}, Start: 1, Keep: -2}, "Keep -2"},
	} {
		_, err := NewPicker(c.o)
		require.ErrorContains(t, err, c.want)
	}
}

// TestPickerObserveRejectsBadCost: no costs, or a cost that is not a
// finite non-negative number, is an error and changes nothing.
func TestPickerObserveRejectsBadCost(t *testing.T) {
	ch, err := NewPicker(PickerOptions{Values: omegas16, Start: 4, Warmup: -1})
	require.NoError(t, err)
	require.ErrorContains(t, ch.Observe(nil), "value 4 with no cost")
	for _, bad := range []float64{math.NaN(), math.Inf(1), -1} {
		require.ErrorContains(t, ch.Observe([]float64{1, bad}), "not a finite non-negative number")
	}
	require.NoError(t, ch.Observe([]float64{1}))
	require.Equal(t, 5, ch.Value(), "the refused evaluations did not count: the first one scored the start")
}

// TestTrajectoryIsBounded: a tuner keeps the latest MaxTrajectory
// evaluations, numbered from the first.
func TestTrajectoryIsBounded(t *testing.T) {
	tu, err := New(Options{Min: 0, Start: 3, Step: 1, MinStep: 1, Evals: 1})
	require.NoError(t, err)
	const n = MaxTrajectory + 10
	for i := 0; i < n; i++ {
		require.NoError(t, tu.Observe(float64(1+i%7)))
	}
	tr := tu.Trajectory()
	require.Equal(t, MaxTrajectory, len(tr), "points kept")
	require.Equal(t, 11, tr[0].Eval)
	require.Equal(t, n, tr[len(tr)-1].Eval)
}
