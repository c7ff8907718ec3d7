package tune

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// drive runs a noise-free cost through a tuner and returns one row per
// scored value: the value, and the vector after scoring it.
type step struct{ value, vector float64 }

func drive(t *testing.T, tu *Tuner, f func(float64) float64, n, evals int) []step {
	t.Helper()
	var out []step
	for i := 0; i < n; i++ {
		v := tu.Value()
		for k := 0; k < evals; k++ {
			require.NoError(t, tu.Observe(f(v)))
		}
		out = append(out, step{v, tu.Vector()})
	}
	return out
}

// TestE06_GrowReverseShrink follows the search step by step on |p − 10|:
// the vector doubles while tries improve (0, 1, 3, 7), reverses and halves
// when one is worse (15), and closes in on 10.
func TestE06_GrowReverseShrink(t *testing.T) {
	tu, err := New(Options{Start: 0, Step: 1, MinStep: 0.5, Evals: 1})
	require.NoError(t, err)
	got := drive(t, tu, func(p float64) float64 { return math.Abs(p - 10) }, 12, 1)
	want := []step{
		{0, 1},   // first score; the first vector points right (E08)
		{1, 2},   // better: grow
		{3, 4},   // better: grow
		{7, 8},   // better: grow
		{15, -4}, // worse: reverse, halve
		{3, 2},   // worse (than 7): reverse, halve
		{9, 4},   // better: grow
		{13, -2}, // worse
		{7, 1},   // worse
		{10, 2},  // better: the optimum
		{12, -1}, // worse
		{9, 0.5}, // worse; the vector is now at its minimum (E09)
	}
	require.Equal(t, want, got)
	b, s, ok := tu.Best()
	require.True(t, ok)
	require.Equal(t, 10.0, b)
	require.Equal(t, 0.0, s)
}

// TestE09_MinimumLengthAndRefresh: the vector never gets shorter than
// MinStep; boxed in by two worse tries at that length, the tuner scores its
// anchor again; and if the ground has moved it leaves at once.
func TestE09_MinimumLengthAndRefresh(t *testing.T) {
	tu, err := New(Options{Start: 10, Step: 1, MinStep: 1, Evals: 1})
	require.NoError(t, err)
	opt := 10.0
	f := func(p float64) float64 { return math.Abs(p - opt) }
	got := drive(t, tu, f, 5, 1)
	require.Equal(t, []step{{10, 1}, {11, -1}, {9, 1}, {10, 1}, {11, -1}}, got,
		"after 11 and 9 are both worse at the minimum length, 10 is scored again")
	for _, s := range got {
		require.GreaterOrEqual(t, math.Abs(s.vector), 1.0)
	}
	// The optimum moves to 20. The stale score of 10 (0) makes 9 look worse;
	// the re-score of 10 (now 10) loses to the 11 tried just before (1, from
	// before the move), so the search jumps to 11 and heads right — but with
	// that stale 1 as its bar, 13 and 10 look worse; the next re-score (11
	// now costs 9) loses to 13 (7), and from there the vector grows rightwards
	// until 27 overshoots.
	opt = 20
	got = drive(t, tu, f, 8, 1)
	require.Equal(t, []step{{9, 1}, {10, 2}, {13, -1}, {10, 1}, {11, 2}, {15, 4}, {19, 8}, {27, -4}}, got)
	b, s, _ := tu.Best()
	require.Equal(t, 19.0, b)
	require.Equal(t, 1.0, s)
}

// TestE07_ScoreIsMeanOfN: the value changes only every n evaluations, and a
// value is judged by its mean, not by any single evaluation.
func TestE07_ScoreIsMeanOfN(t *testing.T) {
	tu, err := New(Options{Start: 2, Step: 1, Evals: 3})
	require.NoError(t, err)
	for _, c := range []float64{5, 5, 5} {
		require.Equal(t, 2.0, tu.Value())
		require.NoError(t, tu.Observe(c))
	}
	for _, c := range []float64{9, 1, 1} { // one bad evaluation, mean 11/3 < 5
		require.Equal(t, 3.0, tu.Value())
		require.NoError(t, tu.Observe(c))
	}
	b, s, ok := tu.Best()
	require.True(t, ok)
	require.Equal(t, 3.0, b)
	require.InDelta(t, 11.0/3, s, 1e-12)
	require.Equal(t, 5.0, tu.Value(), "better: the vector grew from 1 to 2")
	require.Equal(t, 2, tu.Updates())
	tr := tu.Trajectory()
	require.Len(t, tr, 6)
	require.Equal(t, Point{Eval: 4, Value: 3, Cost: 9}, tr[3])
}

// TestE08_BoundShrinksVector steps along a cost that rises with p: tries
// that would cross 0 get a shorter vector, and at 0 the vector turns right.
func TestE08_BoundShrinksVector(t *testing.T) {
	tu, err := New(Options{Min: 0, Start: 2, Step: 1, MinStep: 0.5, Evals: 1})
	require.NoError(t, err)
	got := drive(t, tu, func(p float64) float64 { return p + 1 }, 6, 1)
	require.Equal(t, []step{
		{2, 1},      // first vector rightwards
		{3, -0.5},   // worse: reverse, halve
		{1.5, -1},   // better: grow
		{0.5, -0.5}, // better: grown to −2, but 0.5−2 would cross 0: halved to fit
		{0, 1},      // better: grown to −1, but no room left of 0: turned right
		{1, 0.5},    // worse: reversed and halved to −0.5, turned right again
	}, got)
}

// TestE08_UpperBound: with Max set (a fan-out bounded by the number of
// peers) no try crosses it either: a vector that would is shortened to fit,
// and with no room left on the right it turns left.
func TestE08_UpperBound(t *testing.T) {
	tu, err := New(Options{Min: 1, Max: 5, Start: 2, Step: 1, MinStep: 1, Evals: 1})
	require.NoError(t, err)
	got := drive(t, tu, func(p float64) float64 { return 10 - p }, 6, 1)
	require.Equal(t, []step{
		{2, 1},  // first vector rightwards
		{3, 2},  // better: grow
		{5, -4}, // better: grown to 4, no room right of 5: turned left
		{1, -2}, // worse: reversed and halved to 2, no room: turned left again
		{3, -1}, // worse: the same, at half the length
		{4, 1},  // worse at the shortest length: the anchor 5 is scored again next
	}, got)
	for seed := 0; seed < 200; seed++ { // any costs: every try stays in [1, 5]
		tu, err := New(Options{Min: 1, Max: 5, Start: 3, Step: 1, MinStep: 1, Evals: 1})
		require.NoError(t, err)
		x := uint32(seed*2654435761 + 1)
		for i := 0; i < 60; i++ {
			v := tu.Value()
			require.True(t, v >= 1 && v <= 5, "seed %d: try %v outside [1, 5]", seed, v)
			x ^= x << 13
			x ^= x >> 17
			x ^= x << 5
			require.NoError(t, tu.Observe(float64(x%1000)))
		}
	}
}

// TestE09_JumpRescoresAtOnce: with Jump, one try scored far above the
// anchor (the whole cost tripled) sends the search back to the anchor at
// once, where the paper's rule waits for two worse tries at the shortest
// vector; the fresh score replaces the stale one.
func TestE09_JumpRescoresAtOnce(t *testing.T) {
	for _, jump := range []float64{0, 1.5} {
		tu, err := New(Options{Start: 10, Step: 1, MinStep: 1, Evals: 1, Jump: jump})
		require.NoError(t, err)
		require.NoError(t, tu.Observe(1)) // the anchor 10, scored 1
		require.Equal(t, 11.0, tu.Value())
		require.NoError(t, tu.Observe(3)) // the ground moved: 3 > 1.5·1
		if jump == 0 {
			require.Equal(t, 9.0, tu.Value(), "the paper's rule: reverse and try the other side")
			continue
		}
		require.Equal(t, 10.0, tu.Value(), "Jump: the anchor is scored again")
		require.NoError(t, tu.Observe(2.5))
		_, s, _ := tu.Best()
		require.Equal(t, 2.5, s, "the fresh score replaces the stale one")
	}
}

func TestNewRejectsBadOptions(t *testing.T) {
	for _, tc := range []struct {
		o    Options
		name string
	}{
		{Options{Min: 1, Start: 0.5}, "Start"},
		{Options{Step: -1}, "Step"},
		{Options{Step: 1, MinStep: 2}, "MinStep"},
		{Options{MinStep: -1}, "MinStep"},
		{Options{Grow: 0.5}, "Grow"},
		{Options{Shrink: 1.5}, "Shrink"},
		{Options{Evals: -2}, "Evals"},
		{Options{Min: math.NaN()}, "Min"},
		{Options{Step: math.Inf(1)}, "Step"},
		{Options{Min: 1, Max: 4, Start: 5}, "Start"},
		{Options{Min: 1, Max: 1.5, Step: 1, MinStep: 1}, "Max"},
		{Options{Jump: 0.9}, "Jump"},
		{Options{Jump: -1}, "Jump"},
	} {
		_, err := New(tc.o)
		require.Error(t, err, "%+v", tc.o)
		require.Contains(t, err.Error(), "Options."+tc.name)
	}
}

func TestObserveRejectsBadCost(t *testing.T) {
	tu, err := New(Options{Evals: 1})
	require.NoError(t, err)
	for _, c := range []float64{math.NaN(), math.Inf(1), -1} {
		err := tu.Observe(c)
		require.Error(t, err)
		require.Contains(t, err.Error(), "cost")
	}
	require.Empty(t, tu.Trajectory())
	require.Equal(t, 0.0, tu.Value())
}

func TestWriteCSV(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, WriteCSV(&buf, []Point{{1, 0, 150}, {2, 1.5, 97.25}}))
	require.Equal(t, "eval,value,cost\n1,0,150\n2,1.5,97.25\n", buf.String())
}

// TestE10_NonIntegerIsAnAverage: at call i a Spread gives ⌊p·i⌋ − ⌊p·(i−1)⌋,
// so each count is ⌊p⌋ or ⌈p⌉ and the first i sum to ⌊p·i⌋.
func TestE10_NonIntegerIsAnAverage(t *testing.T) {
	for _, tc := range []struct {
		p    float64
		want []int
	}{
		{2.5, []int{2, 3, 2, 3, 2, 3}},
		{1.0 / 3, []int{0, 0, 1, 0, 0, 1}},
		{0, []int{0, 0, 0}},
		{4, []int{4, 4, 4}},
		{0.75, []int{0, 1, 1, 1, 0, 1, 1, 1}},
	} {
		s, err := NewSpread(tc.p)
		require.NoError(t, err)
		var got []int
		for range tc.want {
			got = append(got, s.Next())
		}
		require.Equal(t, tc.want, got, "p=%v", tc.p)
	}
	s, err := NewSpread(1.7)
	require.NoError(t, err)
	total := 0
	for i := 1; i <= 1000; i++ {
		total += s.Next()
		require.Equal(t, int(math.Floor(1.7*float64(i))), total, "call %d", i)
	}
	_, err = NewSpread(-1)
	require.ErrorContains(t, err, "-1")
}

// A Spread whose p changes carries the fraction owed: p = 0.5 twice (total
// 1) then p = 0.25 twice (0.5 more) gives 0,1 then 0,0 — then one more at
// 0.25 completes the 1.75: 1.
func TestE10_SpreadCarriesAcrossChanges(t *testing.T) {
	s, err := NewSpread(0.5)
	require.NoError(t, err)
	require.Equal(t, 0, s.Next())
	require.Equal(t, 1, s.Next())
	require.NoError(t, s.Set(0.25))
	got := []int{s.Next(), s.Next(), s.Next(), s.Next()}
	require.Equal(t, []int{0, 0, 0, 1}, got)
	require.NoError(t, s.Set(0.6))
	require.Equal(t, 0, s.Next())
	require.Equal(t, 1, s.Next()) // 0 carried + 1.2
	require.Error(t, s.Set(math.NaN()))
	require.Equal(t, 0.6, s.P())
}

// TestValueStaysFinite: options whose sums could overflow are refused,
// naming the option, and under flat noisy costs — where lucky tries keep
// doubling the vector — Value stays finite and within its bounds, however
// long the vector grows (with Step 1e308 it became +Inf at evaluation 57).
func TestValueStaysFinite(t *testing.T) {
	for _, tc := range []struct {
		o    Options
		name string
	}{
		{Options{Step: 1e308}, "Options.Step 1e+308 is beyond"},
		{Options{Min: -1e308}, "Options.Min -1e+308 is beyond"},
		{Options{Max: 1e308}, "Options.Max 1e+308 is beyond"},
		{Options{Start: 1e308}, "Options.Start 1e+308 is beyond"},
	} {
		_, err := New(tc.o)
		require.ErrorContains(t, err, tc.name, "%+v", tc.o)
		require.ErrorContains(t, err, "MaxMagnitude")
	}
	for _, o := range []Options{
		{Step: MaxMagnitude, Evals: 1},
		{Step: 1e300, Evals: 2},
		{Step: 1, Grow: 1e300, Evals: 1},
		{Min: -MaxMagnitude, Start: MaxMagnitude, Step: MaxMagnitude, Evals: 1},
		{Min: -1e300, Max: 1e300, Step: 1e299, Grow: 1e10, Evals: 1},
		{Step: 1e300, Evals: 3, Paired: true, Hold: 2, Jump: 1.5},
	} {
		tu, err := New(o)
		require.NoError(t, err, "%+v", o)
		hi := o.Max
		if hi == 0 {
			hi = MaxMagnitude
		}
		rng := rand.New(rand.NewPCG(1, 2))
		for i := range 5000 {
			v := tu.Value()
			require.False(t, math.IsInf(v, 0) || math.IsNaN(v), "%+v: evaluation %d: Value %v", o, i+1, v)
			require.GreaterOrEqual(t, v, o.Min, "%+v: evaluation %d", o, i+1)
			require.LessOrEqual(t, v, hi, "%+v: evaluation %d", o, i+1)
			require.NoError(t, tu.Observe(1+0.1*rng.Float64()))
		}
		b, _, _ := tu.Best()
		require.False(t, math.IsInf(b, 0) || math.IsNaN(b))
	}
}

// TestNewNamesTheOptionsGiven: an error names the options the caller set,
// and says which values are defaults (Min 10 above Max 5 was reported as
// "Options.Start 10 is above Options.Max 5", with Start not set).
func TestNewNamesTheOptionsGiven(t *testing.T) {
	for _, tc := range []struct {
		o    Options
		want string
	}{
		{Options{Min: 10, Max: 5}, "tune: Options.Min 10 is above Options.Max 5"},
		{Options{Min: 1, Max: 4, Start: 5}, "tune: Options.Start 5 is above Options.Max 4"},
		{Options{MinStep: 2}, "tune: Options.MinStep 2 is outside (0, Step=1, the default]"},
		{Options{Min: 1, Max: 1.5, Step: 2}, "tune: Options.Max 1.5 leaves less than MinStep 1 (not set: Step/2) above Min 1"},
		{Options{Min: MaxMagnitude, Step: 2}, "tune: Options.Min 4.4942328371557893e+307 leaves less than MinStep 1 (not set: Step/2) below MaxMagnitude"},
	} {
		_, err := New(tc.o)
		require.ErrorContains(t, err, tc.want, "%+v", tc.o)
	}
}
