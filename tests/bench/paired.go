package main

import (
	"fmt"
	"math"
	"runtime/metrics"
	"slices"
	"sync"
	"time"
)

// minPairs is the fewest interleaved pairs a paired benchmark measures: two
// separate runs on a shared 2-core machine disagree by more than the
// effects measured, so figure and baseline alternate in one run.
const minPairs = 5

// pairsOf is the number of pairs to measure under cfg.
func pairsOf(cfg config) int { return max(cfg.reps, minPairs) }

// figure is one paired line: the samples of a figure and of its baseline,
// sample i of each measured next to the other.
type figure struct {
	name     string
	unit     string
	value    []float64
	baseline []float64
	note     string // appended to the line, such as "best_p=8"
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n == 0 {
		return 0
	}
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func (f figure) ratios() []float64 {
	r := make([]float64, len(f.value))
	for i := range r {
		r[i] = f.value[i] / f.baseline[i]
	}
	return r
}

// String formats the line: medians, the pairs' median ratio, and minima.
func (f figure) String() string {
	if f.note != "" {
		g := f
		g.note = ""
		return g.String() + " " + f.note
	}
	r := f.ratios()
	if len(r) == 1 { // a computed figure, such as buffer memory
		return fmt.Sprintf("bench %s value=%.4g unit=%s baseline=%.4g ratio=%.3f", f.name, f.value[0], f.unit, f.baseline[0], r[0])
	}
	lo, hi, level := medianCI(r)
	return fmt.Sprintf("bench %s value=%.4g unit=%s baseline=%.4g ratio=%.3f min=%.4g baseline_min=%.4g ratio_min=%.3f pairs=%d ratio_ci=%.3f..%.3f ci=%.2f",
		f.name, median(f.value), f.unit, median(f.baseline), median(r), slices.Min(f.value), slices.Min(f.baseline), slices.Min(r), len(r), lo, hi, level)
}

// medianCI returns a confidence interval for the median of the
// distribution xs were drawn from, and its level: the k-th smallest and
// k-th largest of xs, with k the largest for which the interval holds the
// median with probability at least 0.95 (a sign test: each sample falls
// below the median with probability ½, whatever the distribution). With
// fewer than 6 samples no interval reaches 0.95, and the range of xs is
// returned with the level it has (0.94 for 5). A paired figure's
// ratio_ci says which ratios the noise of the run cannot tell from its
// median: a target inside it is met or missed by chance.
func medianCI(xs []float64) (lo, hi, level float64) {
	n := len(xs)
	if n == 0 {
		return 0, 0, 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	// binomBelow(n, j): the chance that fewer than j samples fall below
	// the median (and as likely, fewer than j above it).
	k, cover := 1, 1-2*binomBelow(n, 1)
	for j := 2; 2*j <= n; j++ {
		c := 1 - 2*binomBelow(n, j)
		if c < 0.95 {
			break
		}
		k, cover = j, c
	}
	return s[k-1], s[n-k], cover
}

// binomBelow is P(Binomial(n, ½) < j), its terms computed from
// logarithms so that no count of pairs overflows.
func binomBelow(n, j int) float64 {
	ln, _ := math.Lgamma(float64(n + 1))
	p := 0.0
	for i := 0; i < j && i <= n; i++ {
		a, _ := math.Lgamma(float64(i + 1))
		b, _ := math.Lgamma(float64(n - i + 1))
		p += math.Exp(ln - a - b - float64(n)*math.Ln2)
	}
	return p
}

// peakHeap samples the bytes of live heap objects every millisecond until
// stop, and returns the highest: the memory of messages in flight, among
// the rest.
type peakHeap struct {
	stopc chan struct{}
	wg    sync.WaitGroup
	peak  uint64
}

func startPeak() *peakHeap {
	p := &peakHeap{stopc: make(chan struct{})}
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() {
		metrics.Read(s)
		if s[0].Value.Kind() == metrics.KindUint64 {
			p.peak = max(p.peak, s[0].Value.Uint64())
		}
	}
	read()
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-p.stopc:
				read()
				return
			case <-t.C:
				read()
			}
		}
	}()
	return p
}

func (p *peakHeap) stop() float64 {
	close(p.stopc)
	p.wg.Wait()
	return float64(p.peak)
}

// heapObjects returns how many heap objects the process has allocated so
// far.
func heapObjects() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:objects"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}
