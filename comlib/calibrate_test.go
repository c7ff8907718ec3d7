package comlib_test

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/comlib"
	"github.com/charmgo/charm/comlib/schedule"
)

// TestX01_CalibrateMeasuresTheModel: the model's parameters come from timings of the running
// system, in one process and across two: every kind of sample at every size, a fit whose
// parameters are finite, a gap that grows with the packet size (a 32 KiB packet cannot leave
// as often as a 16-byte one), and predictions built on it: the synchronous shuffle at the
// lower bound T_ata, and the shift exchange and group shuffle ordered by the sign of the
// measured flow cost T_w (X01, X03, X05, X06). Timings on a shared machine are noisy, so no
// figure is asserted, only the model's shape (in one of up to three calibrations); the test
// logs the parameters.
func TestX01_CalibrateMeasuresTheModel(t *testing.T) {
	sizes := []int{16, 4096, 32768}
	for _, nodes := range []int{1, 2} {
		t.Run(fmt.Sprintf("%dproc", nodes), func(t *testing.T) {
			var c comlib.Calibration
			var cerr error
			runJob(t, 4, nodes, func(m *tmain, _ []string) {
				// One calibration under -race on a loaded machine can come
				// out flat (a gap that does not grow): up to three tries,
				// and the shape must show in one of them.
				for try := 0; try < 3; try++ {
					c, cerr = comlib.Calibrate(m, comlib.CalibrateOptions{Sizes: sizes, Reps: 5})
					if cerr != nil || c.Model.At(32768).G > c.Model.At(16).G {
						break
					}
				}
				m.Exit(0)
			})
			require.NoError(t, cerr)
			require.Equal(t, nodes == 2, c.CrossProcess, "PEs %d and %d", c.From, c.To)
			require.Len(t, c.Samples, len(sizes)*6, "ping-pong, two one-ways, send, handle, receive per size")
			kinds := map[schedule.Kind]int{}
			for _, s := range c.Samples {
				kinds[s.Kind]++
				require.Positive(t, s.Time, "%+v", s)
			}
			require.Equal(t, map[schedule.Kind]int{schedule.PingPong: 3, schedule.OneWay: 6, schedule.Send: 3, schedule.Handle: 3, schedule.Receive: 3}, kinds)
			for _, l := range []schedule.Linear{c.Model.Os, c.Model.Or, c.Model.Ur, c.Model.G, c.Model.L} {
				require.False(t, math.IsNaN(l.PerByte) || math.IsInf(l.PerByte, 0), "%+v", c.Model)
			}
			require.Greater(t, c.Model.At(32768).G, c.Model.At(16).G, "the gap grows with the size: %+v", c.Model)
			for _, b := range sizes {
				p := c.Model.At(b)
				t.Logf("%d B: %+v T_w=%v", b, p, p.Tw())
				const n = 16
				pred := map[string]time.Duration{}
				for _, name := range []string{"shift", "pairwise", "sync", "group"} {
					s, err := schedule.New(name, n, 1, schedule.Options{})
					require.NoError(t, err)
					pred[name] = p.Predict(s)
				}
				require.Equal(t, p.LowerBound(n, 1), pred["sync"], "the synchronous shuffle is optimal in the model")
				require.Equal(t, pred["shift"], pred["pairwise"], "even p: the same rounds")
				if p.Tw() > 0 { // the seed's case: every extra round costs a flow
					require.Less(t, pred["sync"], pred["group"])
					require.Less(t, pred["group"], pred["shift"])
				} else {
					require.GreaterOrEqual(t, pred["sync"], pred["group"])
					require.GreaterOrEqual(t, pred["group"], pred["shift"])
				}
			}
		})
	}
}

func TestCalibrateBadOptions(t *testing.T) {
	cases := []struct {
		o    comlib.CalibrateOptions
		want string
	}{
		{comlib.CalibrateOptions{Sizes: []int{64}}, "need at least two different ones"},
		{comlib.CalibrateOptions{Sizes: []int{64, 64}}, "need at least two different ones"},
		{comlib.CalibrateOptions{Sizes: []int{-1, 64}}, "packet size -1"},
		{comlib.CalibrateOptions{To: 9}, "To=9"},
		{comlib.CalibrateOptions{From: 1, To: 1}, "To=1"},
		{comlib.CalibrateOptions{From: -1}, "From=-1"},
		{comlib.CalibrateOptions{Burst: 1}, "Burst=1"},
		{comlib.CalibrateOptions{Reps: -2}, "Reps=-2"},
	}
	var errs []error
	runJob(t, 2, 1, func(m *tmain, _ []string) {
		for _, c := range cases {
			_, err := comlib.Calibrate(m, c.o)
			errs = append(errs, err)
		}
		m.Exit(0)
	})
	require.Len(t, errs, len(cases))
	for i, c := range cases {
		require.ErrorContains(t, errs[i], c.want, "case %d", i)
	}
	var one error
	runJob(t, 1, 1, func(m *tmain, _ []string) {
		_, one = comlib.Calibrate(m, comlib.CalibrateOptions{})
		m.Exit(0)
	})
	require.ErrorContains(t, one, "at least two PEs")
}
