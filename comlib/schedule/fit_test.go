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

// TestFitKeepsTwNonNegative fits noisy timings of a system whose T_w is zero at every size (one
// process: L ≈ g − O_s − O_r − U_r): an unconstrained fit puts T_w below zero for most seeds, by
// up to 3 µs at 256 KiB, and a negative T_w makes every prediction too low. The fit must keep T_w ≥ 0 over the
// sizes measured, and still find g.
func TestFitKeepsTwNonNegative(t *testing.T) {
	zeroTw := schedule.Model{
		Os: schedule.Linear{Base: 300 * time.Nanosecond, PerByte: 0.05},
		Or: schedule.Linear{Base: 200 * time.Nanosecond, PerByte: 0.05},
		Ur: schedule.Linear{Base: 100 * time.Nanosecond, PerByte: 0.1},
		G:  schedule.Linear{Base: 1000 * time.Nanosecond, PerByte: 0.4},
		L:  schedule.Linear{Base: 400 * time.Nanosecond, PerByte: 0.2},
	}
	sizes := []int{64, 1 << 10, 8 << 10, 64 << 10, 256 << 10}
	for seed := uint64(0); seed < 20; seed++ {
		samples := synthOf(zeroTw, sizes, rand.New(rand.NewPCG(seed, 5)), 0.05, 4, allKinds...)
		m, err := schedule.Fit(samples)
		require.NoError(t, err, "seed %d", seed)
		for _, b := range []int{64, 100, 1 << 10, 5000, 64 << 10, 256 << 10} {
			// The fitted lines themselves, not At (which keeps T_w ≥ 0 by raising L): up to
			// half a nanosecond of rounding in each of the five bases.
			require.GreaterOrEqual(t, fittedTw(m, b), -2.5, "seed %d, %d B: %+v", seed, b, m)
			got, want := m.At(b), zeroTw.At(b)
			require.GreaterOrEqual(t, got.Tw(), time.Duration(0), "seed %d, %d B: %+v", seed, b, got)
			require.InEpsilon(t, float64(want.G), float64(got.G), 0.05, "seed %d, g at %d B", seed, b)
			// T_w is small next to the exchange's k(p−1)g, as it is in truth.
			require.Less(t, got.Tw(), want.G, "seed %d, T_w at %d B", seed, b)
		}
	}
}

// fittedTw is T_w = O_s + L − g + O_r + U_r from a model's lines, in nanoseconds.
func fittedTw(m schedule.Model, bytes int) float64 {
	b := float64(bytes)
	at := func(l schedule.Linear) float64 { return float64(l.Base) + l.PerByte*b }
	return at(m.Os) + at(m.L) - at(m.G) + at(m.Or) + at(m.Ur)
}

// synthOf measures model at the sizes, as synth does truth.
func synthOf(model schedule.Model, sizes []int, rng *rand.Rand, noise float64, reps int, kinds ...schedule.Kind) []schedule.Sample {
	var out []schedule.Sample
	for _, b := range sizes {
		p := model.At(b)
		for range reps {
			for _, kind := range kinds {
				counts := []int{1}
				if kind == schedule.OneWay {
					counts = []int{1, 4, 16, 64}
				}
				for _, c := range counts {
					ideal := map[schedule.Kind]time.Duration{
						schedule.Send: p.Os, schedule.Receive: p.Or, schedule.Handle: p.Ur,
						schedule.OneWay:   p.Os + time.Duration(c-1)*p.G + p.L + p.Or + p.Ur,
						schedule.PingPong: 2 * (p.Os + p.L + p.Or + p.Ur),
					}[kind]
					d := float64(ideal) * (1 + noise*rng.NormFloat64())
					out = append(out, schedule.Sample{Kind: kind, Bytes: b, Count: c, Time: time.Duration(d)})
				}
			}
		}
	}
	return out
}
