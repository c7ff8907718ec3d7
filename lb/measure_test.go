package lb_test

import (
	"runtime"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/array"
	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/chare/reducer"
	"github.com/charmgo/charm/lb"
)

// burner burns a known amount of CPU work per call.
type burner struct {
	array.Element[burner, int]
	Sink uint64
}

// unitWork is one unit of synthetic load: a fixed number of rounds of
// arithmetic that the compiler cannot drop.
func unitWork(x uint64) uint64 {
	for range 1_500_000 {
		x = x*6364136223846793005 + 1442695040888963407
	}
	return x
}

type loadOut struct {
	Units     int
	CPU, Wall float64
}

func (b *burner) units() int { return 1 + b.ThisIndex()%4 }

func (b *burner) Burn(cb chare.Callback) {
	for range b.units() {
		b.Sink = unitWork(b.Sink + 1)
	}
	inJob.NoError(b.Contribute(nil, reducer.Nop, cb))
}

// Report gives the load measured so far (Burn's, now that it returned).
func (b *burner) Report(cb chare.Callback) {
	l := b.Load()
	inJob.NoError(b.Contribute(loadOut{b.units(), l.CPU.Seconds(), l.Wall.Seconds()}, loadGather, cb))
}

var loadGather = reducer.GatherOf[int, loadOut]()

func init() { chare.Register[burner]() }

// TestMeasurementWithMorePEsThanCores: 8 PEs on fewer cores burn loads of
// 1 to 4 units at once. The CPU time measured per element stays
// proportional to its units (a PE that waits for a core in the middle of a
// method is not charged for the wait), while wall times need not.
func TestMeasurementWithMorePEsThanCores(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("CPU time per PE is measured on Linux only")
	}
	const pes, n = 8, 32
	var out []reducer.Pair[int, loadOut]
	runLB(t, pes, map[string]string{lb.FlagBalancer: "dummy"}, func(m *lbMain) {
		a, err := array.New[burner](m, array.Dims(n))
		inJob.NoError(err)
		burnt := chare.NewFuture[any](m)
		inJob.NoError(chare.Send(m, a, (*burner).Burn, burnt.Callback()))
		get(m, burnt)
		f := chare.NewFutureFor(m, loadGather)
		inJob.NoError(chare.Send(m, a, (*burner).Report, f.Callback()))
		out = get(m, f)
	})
	require.Len(t, out, n)
	var per, wall []float64
	for _, it := range out {
		o := it.Value
		require.Positive(t, o.CPU, "element %v", it.Index)
		per = append(per, o.CPU/float64(o.Units))
		wall = append(wall, o.Wall/float64(o.Units))
	}
	slices.Sort(per)
	slices.Sort(wall)
	med := per[len(per)/2]
	near := 0
	for _, v := range per {
		if v >= 0.75*med && v <= med/0.75 {
			near++
		}
	}
	t.Logf("CPU seconds per unit: %.4f..%.4f (spread %.2f), %d of %d within 25%% of the median; wall: %.4f..%.4f (spread %.2f); %d cores",
		per[0], per[n-1], per[n-1]/per[0], near, n, wall[0], wall[n-1], wall[n-1]/wall[0], runtime.NumCPU())
	// One or two outliers may come from a machine busy with other work;
	// the load of almost every element must be its work's.
	require.GreaterOrEqual(t, near, n*9/10, "CPU time per unit of load is off by more than 25%% for %d of %d elements", n-near, n)
}
