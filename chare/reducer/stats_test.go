package reducer

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// twoPass computes the mean and population variance directly.
func twoPass(xs []float64) (mean, variance float64) {
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	for _, x := range xs {
		variance += (x - mean) * (x - mean)
	}
	return mean, variance / float64(len(xs))
}

func requireRelative(t *testing.T, want, got float64, what string) {
	t.Helper()
	require.LessOrEqual(t, math.Abs(got-want), 1e-9*math.Abs(want), "%s: want %v, got %v", what, want, got)
}

func TestStatsSmall(t *testing.T) {
	for _, tc := range []struct {
		name string
		cs   []contrib
		want Statistics
	}{
		{"Single", values(4.0), Statistics{Count: 1, Mean: 4}},
		{"Ints", values(2, 4, 4, 4, 5, 5, 7, 9), Statistics{Count: 8, Mean: 5, Variance: 4}},
		{"MixedTypes", values[any](int8(1), uint16(2), float32(3), int64(4), 5.0, time.Duration(5)), Statistics{Count: 6, Mean: 20.0 / 6, Variance: 80.0/6 - (20.0/6)*(20.0/6)}},
		{"Constant", values(7, 7, 7), Statistics{Count: 3, Mean: 7, Variance: 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := mustReduce(t, Stats, tc.cs).(Statistics)
			require.Equal(t, tc.want.Count, got.Count)
			require.InDelta(t, tc.want.Mean, got.Mean, 1e-12)
			require.InDelta(t, tc.want.Variance, got.Variance, 1e-12)
		})
	}
}

func TestStatsMatchesTwoPassInAnyOrder(t *testing.T) {
	// Values far from zero with a small spread: the textbook one-pass
	// formula (sum of squares) loses most digits here, Chan's does not.
	rng := rand.New(rand.NewPCG(11, 12))
	xs := make([]float64, 1000)
	cs := make([]contrib, len(xs))
	for i := range xs {
		xs[i] = 1e6 + rng.NormFloat64()*3
		cs[i] = contrib{index: i, value: xs[i]}
	}
	mean, variance := twoPass(xs)
	for seed := range uint64(20) {
		res, err := reduceRandom(Stats, cs, rand.New(rand.NewPCG(seed, 99)))
		require.NoError(t, err)
		got := res.(Statistics)
		require.Equal(t, int64(len(xs)), got.Count)
		requireRelative(t, mean, got.Mean, "mean")
		requireRelative(t, variance, got.Variance, "variance")
		requireRelative(t, variance*1000/999, got.SampleVariance(), "sample variance")
	}
}

func TestStatsContiguousChunks(t *testing.T) {
	// As the runtime does: fold each PE's contributors, then combine the
	// PEs' partial results, here in chunks of arbitrary sizes.
	rng := rand.New(rand.NewPCG(5, 6))
	xs := make([]float64, 1000)
	for i := range xs {
		xs[i] = rng.Float64()*100 - 30
	}
	mean, variance := twoPass(xs)
	var total any
	for rest := xs; len(rest) > 0; {
		n := min(len(rest), 1+rng.IntN(120))
		chunk, err := reduceInOrderPartial(Stats, rest[:n])
		require.NoError(t, err)
		if total == nil {
			total = chunk
		} else {
			total, err = Stats.Combine(chunk, total)
			require.NoError(t, err)
		}
		rest = rest[n:]
	}
	res, err := Stats.Result(total)
	require.NoError(t, err)
	got := res.(Statistics)
	require.Equal(t, int64(1000), got.Count)
	requireRelative(t, mean, got.Mean, "mean")
	requireRelative(t, variance, got.Variance, "variance")
}

// reduceInOrderPartial folds numbers into a Stats partial result.
func reduceInOrderPartial(r Reducer, xs []float64) (any, error) {
	var acc any
	for i, x := range xs {
		p, err := r.Lift(x, i)
		if err != nil {
			return nil, err
		}
		if i == 0 {
			acc = p
		} else if acc, err = r.Combine(acc, p); err != nil {
			return nil, err
		}
	}
	return acc, nil
}

func TestStatsEmptyMoments(t *testing.T) {
	// A zero Moments is a neutral element, and its Statistics are zero.
	one := Moments{Count: 1, Mean: 3}
	got, err := Stats.Combine(Moments{}, one)
	require.NoError(t, err)
	require.Equal(t, one, got)
	got, err = Stats.Combine(one, Moments{})
	require.NoError(t, err)
	require.Equal(t, one, got)
	res, err := Stats.Result(Moments{})
	require.NoError(t, err)
	require.Equal(t, Statistics{}, res)
}

func TestStatisticsSampleVariance(t *testing.T) {
	require.InDelta(t, 4.0*8/7, Statistics{Count: 8, Mean: 5, Variance: 4}.SampleVariance(), 1e-12)
	require.True(t, math.IsNaN(Statistics{Count: 1, Mean: 5}.SampleVariance()))
	require.True(t, math.IsNaN(Statistics{}.SampleVariance()))
}

func TestStatsErrors(t *testing.T) {
	for _, v := range []any{"1", nil, true, []float64{1}} {
		_, err := Stats.Lift(v, 0)
		require.Error(t, err)
		require.ErrorIs(t, err, ErrType)
	}
	_, err := Stats.Lift("1", 0)
	require.EqualError(t, err, "reducer stats: contribution of type string, want an integer or float type")
	_, err = Stats.Combine(Statistics{}, Moments{})
	require.ErrorIs(t, err, ErrType)
	_, err = Stats.Combine(Moments{}, Statistics{})
	require.EqualError(t, err, "reducer stats: partial result of type reducer.Statistics, want reducer.Moments")
	_, err = Stats.Result(1.0)
	require.ErrorIs(t, err, ErrType)
}
