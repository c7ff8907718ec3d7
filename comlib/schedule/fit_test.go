package schedule_test

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/comlib/schedule"
)

var truth = schedule.Model{
	Os: schedule.Linear{Base: 800 * time.Nanosecond, PerByte: 0.05},
	Or: schedule.Linear{Base: 600 * time.Nanosecond, PerByte: 0.08},
	Ur: schedule.Linear{Base: 300 * time.Nanosecond, PerByte: 0.25},
	G:  schedule.Linear{Base: 1500 * time.Nanosecond, PerByte: 0.4},
	L:  schedule.Linear{Base: 5 * time.Microsecond, PerByte: 0.1},
}

// synth measures truth at several sizes, each timing off by a relative error drawn with
// standard deviation noise.
func synth(rng *rand.Rand, noise float64, reps int, kinds ...schedule.Kind) []schedule.Sample {
	var out []schedule.Sample
	for _, b := range []int{64, 1 << 10, 8 << 10, 64 << 10, 256 << 10} {
		p := truth.At(b)
		for range reps {
			for _, kind := range kinds {
				counts := []int{1}
				if kind == schedule.OneWay {
					counts = []int{1, 4, 16, 64}
				}
				for _, c := range counts {
					var ideal time.Duration
					switch kind {
					case schedule.Send:
						ideal = p.Os
					case schedule.Receive:
						ideal = p.Or
					case schedule.Handle:
						ideal = p.Ur
					case schedule.OneWay:
						ideal = p.Os + time.Duration(c-1)*p.G + p.L + p.Or + p.Ur
					case schedule.PingPong:
						ideal = 2 * (p.Os + p.L + p.Or + p.Ur)
					}
					d := float64(ideal) * (1 + noise*rng.NormFloat64())
					out = append(out, schedule.Sample{Kind: kind, Bytes: b, Count: c, Time: time.Duration(d)})
				}
			}
		}
	}
	return out
}

var allKinds = []schedule.Kind{schedule.Send, schedule.Receive, schedule.Handle, schedule.OneWay, schedule.PingPong}

func TestFitRecoversTheModelExactlyWithoutNoise(t *testing.T) {
	m, err := schedule.Fit(synth(rand.New(rand.NewPCG(1, 2)), 0, 1, allKinds...))
	require.NoError(t, err)
	for _, b := range []int{0, 100, 4096, 1 << 20} {
		got, want := m.At(b), truth.At(b)
		for _, pair := range [][2]time.Duration{{got.Os, want.Os}, {got.Or, want.Or}, {got.Ur, want.Ur}, {got.G, want.G}, {got.L, want.L}} {
			require.InEpsilon(t, float64(pair[1]), float64(pair[0]), 1e-3, "at %d bytes: %+v want %+v", b, got, want)
		}
	}
}

func TestFitWithNoiseIsCloseEnoughToPredict(t *testing.T) {
	for seed := uint64(0); seed < 10; seed++ {
		fitNoisy(t, seed)
	}
}

// fitNoisy fits timings with 5 % noise (8 repetitions of each) and checks g, T_w and the
// predicted exchange times against the truth.
func fitNoisy(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 11))
	m, err := schedule.Fit(synth(rng, 0.05, 8, allKinds...))
	require.NoError(t, err)
	rel := func(got, want time.Duration) float64 { return math.Abs(float64(got-want)) / float64(want) }
	for _, b := range []int{1 << 10, 8 << 10, 64 << 10} {
		got, want := m.At(b), truth.At(b)
		require.Less(t, rel(got.G, want.G), 0.03, "g at %d B: %v want %v", b, got.G, want.G)
		require.Less(t, rel(got.Tw(), want.Tw()), 0.12, "T_w at %d B: %v want %v", b, got.Tw(), want.Tw())
		// What matters: the predicted exchange times.
		for _, name := range []string{"shift", "sync", "group"} {
			s, err := schedule.New(name, 16, 4, schedule.Options{})
			require.NoError(t, err)
			require.Less(t, rel(got.Predict(s), want.Predict(s)), 0.05, "%s at %d B", name, b)
		}
	}
}

func TestFitNamesWhatTheSamplesLeaveUndetermined(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	cases := []struct {
		kinds []schedule.Kind
		want  string
	}{
		{[]schedule.Kind{schedule.OneWay, schedule.PingPong}, "do not determine Or apart from Os: add Receive samples or Send samples"},
		{[]schedule.Kind{schedule.Send, schedule.Receive, schedule.OneWay, schedule.PingPong}, "do not determine L apart from Ur: add OneWay or PingPong samples or Handle samples"},
		{[]schedule.Kind{schedule.Send, schedule.Receive, schedule.Handle, schedule.PingPong}, "do not determine G: add OneWay samples with two or more different Counts"},
		{[]schedule.Kind{schedule.Send, schedule.Receive, schedule.Handle}, "do not determine G"},
	}
	for _, c := range cases {
		_, err := schedule.Fit(synth(rng, 0.01, 2, c.kinds...))
		require.ErrorContains(t, err, c.want, "%v", c.kinds)
	}
	// One size only: the per-byte parts are not determined.
	one := []schedule.Sample{}
	for _, s := range synth(rng, 0, 1, allKinds...) {
		if s.Bytes == 1<<10 {
			one = append(one, s)
		}
	}
	_, err := schedule.Fit(one)
	require.ErrorContains(t, err, "do not determine Os per byte")
}

func TestFitRejectsBadSamples(t *testing.T) {
	good := schedule.Sample{Kind: schedule.Send, Bytes: 8, Time: time.Microsecond}
	cases := []struct {
		bad  schedule.Sample
		want string
	}{
		{schedule.Sample{Kind: 0, Bytes: 8, Time: 1}, "sample 1: unknown kind Kind(0)"},
		{schedule.Sample{Kind: 99, Bytes: 8, Time: 1}, "sample 1: unknown kind Kind(99)"},
		{schedule.Sample{Kind: schedule.Send, Bytes: -1, Time: 1}, "sample 1 (Send): negative size -1 bytes"},
		{schedule.Sample{Kind: schedule.PingPong, Bytes: 1, Count: 3, Time: 1}, "sample 1 (PingPong): count 3"},
		{schedule.Sample{Kind: schedule.OneWay, Bytes: 1, Count: -2, Time: 1}, "sample 1 (OneWay): count -2"},
		{schedule.Sample{Kind: schedule.Handle, Bytes: 1, Time: -5}, "sample 1 (Handle): negative time -5ns"},
	}
	for _, c := range cases {
		_, err := schedule.Fit([]schedule.Sample{good, c.bad})
		require.ErrorContains(t, err, c.want)
	}
	_, err := schedule.Fit(nil)
	require.ErrorContains(t, err, "no samples")
}
