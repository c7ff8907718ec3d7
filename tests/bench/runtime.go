package main

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	goruntime "runtime"
	"runtime/pprof"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/charmgo/charm/array"
	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/chare/reducer"
	"github.com/charmgo/charm/group"
)

func init() {
	chare.Register[benchMain]()
	chare.Register[m2mBranch]()
	chare.Register[bcElem](chare.Fast((*bcElem).Hit), chare.Fast((*bcElem).Sum), chare.Transient("got")) // never moves
	registerPaired("runtime/manytomany", func(cfg config) ([]figure, error) {
		return benchManyToMany(cfg, "runtime/manytomany", cfg.pes)
	})
	for _, p := range []int{16, 64} {
		name := fmt.Sprintf("runtime/manytomany/%dpe", p)
		registerPaired(name, func(cfg config) ([]figure, error) { return benchManyToMany(cfg, name, p) })
	}
	register("runtime/broadcast", benchBroadcast)
	register("runtime/reduction", benchReduction)
	register("runtime/qd", benchQD)
}

type benchMain struct {
	chare.Chare[benchMain]
}

// runJob runs body as the main function of a job on cfg.pes PEs and
// returns its error; the job exits when body returns.
func runJob(pes int, body func(m *benchMain) error) error { return runNodes(pes, 1, "", body) }

// runNodes runs body as the main function of a job of pes PEs on nodes
// processes; the other nodes are copies of this program running only the
// named benchmark, which join the job and exit with it.
func runNodes(pes, nodes int, bench string, body func(m *benchMain) error) error {
	var berr error
	cfg := chare.Config{PEs: pes, Nodes: nodes, Timeout: 5 * time.Minute, Flags: jobFlags(), Wait: benchWait}
	if nodes > 1 {
		exe, err := os.Executable()
		if err != nil {
			return err
		}
		cfg.Launch = []string{exe, "-run", "^" + regexp.QuoteMeta(bench) + "$", "-reps", strconv.Itoa(benchReps), "-wait", benchWait.String()}
	}
	code, err := chare.Run(cfg, func(m *benchMain, _ []string) {
		berr = body(m)
		m.Exit(0)
	})
	if chare.IsLaunchedNode() {
		pprof.StopCPUProfile()
		os.Exit(code)
	}
	if err != nil {
		return err
	}
	if berr != nil {
		return berr
	}
	if code != 0 {
		return fmt.Errorf("job exited with code %d", code)
	}
	return nil
}

// ---- runtime/manytomany ----

// m2mMsg is the small message of the many-to-many benchmarks.
type m2mMsg struct{ From, Seq int64 }

type m2mStart struct {
	K    int
	Done chare.Callback
}

type m2mBranch struct {
	group.Branch[m2mBranch]
	m2mCount
}

// m2mCount counts a many-to-many member's messages over the repetitions.
// The counts run on: the next repetition's messages may arrive before its
// Start does (they come from other members).
type m2mCount struct {
	got, want int
	sent      bool // contributed for the current repetition
	done      chare.Callback
}

// expect begins a repetition in which n more messages will arrive.
func (c *m2mCount) expect(n int, done chare.Callback) {
	c.want, c.done, c.sent = c.want+n, done, false
}

// check joins the repetition's barrier (done), once, when every message
// came; from is the member counting.
func (c *m2mCount) check(from interface {
	Contribute(any, reducer.Reducer, chare.Callback) error
}) {
	if c.got == c.want && !c.sent {
		c.sent = true
		_ = from.Contribute(nil, reducer.Nop, c.done)
	}
}

func (b *m2mBranch) Start(s m2mStart) {
	p, me := b.NumPEs(), b.PE()
	b.expect(s.K*(p-1), s.Done)
	g := b.ThisProxy()
	for k := 0; k < s.K; k++ {
		for d := 1; d < p; d++ {
			_ = chare.Send(b, g.At((me+d)%p), (*m2mBranch).Recv, m2mMsg{From: int64(me), Seq: int64(k)})
		}
	}
	b.check(b)
}

func (b *m2mBranch) Recv(m m2mMsg) {
	b.got++
	b.check(b)
}

// benchManyToMany measures p PEs each sending k small messages to every
// other PE, against the same sends between p raw protoactor-go actors, in
// interleaved pairs. The baseline posts one mailbox message per message; a
// PE posts one batch per destination per entry method (see actor/pe.go).
// The total is 800,000 messages whatever p, so k shrinks as p grows. A
// .../mem line gives the peak bytes of live heap objects during a run, and
// an .../allocs line the heap objects allocated per message (by the whole
// process, so the rest of the job's work is in it too).
func benchManyToMany(cfg config, name string, p int) ([]figure, error) {
	if p < 2 {
		return nil, fmt.Errorf("%s needs at least 2 PEs", name)
	}
	k := max(1, int(800_000*cfg.scale/float64(p*(p-1))))
	total := float64(p * k * (p - 1))
	return pairedManyToMany(cfg, name, p, total, func(m *benchMain) (chare.Target[m2mBranch], error) {
		return group.New[m2mBranch](m)
	}, (*m2mBranch).Start, func() (float64, error) { return rawManyToMany(p, k) }, k)
}

// pairedManyToMany runs the many-to-many pairs in a job of p PEs: the
// collection made by create is sent start (k messages to every other
// member), then the baseline raw runs; total messages each. Its lines are
// the rate, .../mem (peak live heap) and .../allocs (heap objects per
// message).
func pairedManyToMany[T any](cfg config, name string, p int, total float64, create func(*benchMain) (chare.Target[T], error),
	start func(*T, m2mStart), raw func() (float64, error), k int) ([]figure, error) {
	rate := figure{name: name, unit: "msgs/s"}
	mem := figure{name: name + "/mem", unit: "bytes"}
	allocs := figure{name: name + "/allocs", unit: "objects/msg"}
	err := runJob(p, func(m *benchMain) error {
		c, err := create(m)
		if err != nil {
			return err
		}
		for i := 0; i < pairsOf(cfg); i++ {
			goruntime.GC()
			peak := startPeak()
			a0 := heapObjects()
			f := chare.NewFuture[any](m)
			t0 := time.Now()
			if err := chare.Send(m, c, start, m2mStart{K: k, Done: f.Callback()}); err != nil {
				return err
			}
			if _, err := f.Get(m); err != nil {
				return err
			}
			rate.value = append(rate.value, total/time.Since(t0).Seconds())
			allocs.value = append(allocs.value, float64(heapObjects()-a0)/total)
			mem.value = append(mem.value, peak.stop())
			goruntime.GC()
			peak = startPeak()
			a0 = heapObjects()
			base, err := raw()
			if err != nil {
				return err
			}
			rate.baseline = append(rate.baseline, base)
			allocs.baseline = append(allocs.baseline, float64(heapObjects()-a0)/total)
			mem.baseline = append(mem.baseline, peak.stop())
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return []figure{rate, mem, allocs}, nil
}

type rawStart struct{}

func rawManyToMany(p, k int) (float64, error) {
	done := newSignal()
	var finished atomic.Int64
	got := make([]int, p) // each touched only by its own actor
	want := k * (p - 1)
	rs, err := newRaw(p, func(rs *rawSystem, i int, msg any) {
		switch msg.(type) {
		case rawStart:
			for s := 0; s < k; s++ {
				for d := 1; d < p; d++ {
					rs.send((i+d)%p, m2mMsg{From: int64(i), Seq: int64(s)})
				}
			}
		case m2mMsg:
			got[i]++
			if got[i] == want && finished.Add(1) == int64(p) {
				done.fire()
			}
		}
	})
	if err != nil {
		return 0, err
	}
	defer rs.stop()
	t0 := time.Now()
	for i := 0; i < p; i++ {
		rs.send(i, rawStart{})
	}
	select {
	case <-done.wait():
	case <-time.After(60 * time.Second):
		return 0, errors.New("raw many-to-many did not finish in 60 s")
	}
	return float64(p*want) / time.Since(t0).Seconds(), nil
}

// ---- runtime/broadcast and runtime/reduction ----

const bcElems = 1024

type bcElem struct {
	array.Element[bcElem, int]
	got int
}

type bcMsg struct {
	N    int
	Done chare.Callback
}

// Hit counts broadcasts; after the N-th the element joins a barrier.
func (e *bcElem) Hit(m bcMsg) {
	e.got++
	if e.got == m.N {
		e.got = 0
		_ = e.Contribute(nil, reducer.Nop, m.Done)
	}
}

// Sum contributes the element's index to a sum.
func (e *bcElem) Sum(done chare.Callback) {
	_ = e.Contribute(e.ThisIndex(), reducer.SumInt, done)
}

func benchBroadcast(cfg config) ([]result, error) {
	rate, err := measureBroadcast(cfg, cfg.pes, 1, "")
	if err != nil {
		return nil, err
	}
	base, err := best(cfg.reps, true, func() (float64, error) { return rawBroadcast(cfg.pes, int(2000*cfg.scale)) })
	if err != nil {
		return nil, err
	}
	return []result{{"runtime/broadcast", rate, "bcasts/s", base}}, nil
}

// measureBroadcast is the chare side of the broadcast benchmarks.
func measureBroadcast(cfg config, pes, nodes int, name string) (float64, error) {
	n := int(2000 * cfg.scale)
	var rate float64
	err := runNodes(pes, nodes, name, func(m *benchMain) error {
		a, err := array.New[bcElem](m, array.Dims(bcElems))
		if err != nil {
			return err
		}
		rate, err = best(cfg.reps, true, func() (float64, error) {
			f := chare.NewFuture[any](m)
			t0 := time.Now()
			for i := 0; i < n; i++ {
				if err := chare.Send(m, a, (*bcElem).Hit, bcMsg{N: n, Done: f.Callback()}); err != nil {
					return 0, err
				}
			}
			if _, err := f.Get(m); err != nil {
				return 0, err
			}
			return float64(n) / time.Since(t0).Seconds(), nil
		})
		return err
	})
	return rate, err
}

// rawBroadcast: the root actor sends each broadcast to every actor, which
// calls a method on each of its share of the 1,024 elements; after the last
// broadcast every actor acknowledges.
type rawBcast struct{ n int }

// rawElem stands for an array element in the raw baselines; its methods
// are called through an interface, as entry methods are.
type rawElem struct{ index, got int }

type rawElement interface {
	hit(m *rawBcast)
	value() int
}

func (e *rawElem) hit(*rawBcast) { e.got++ }
func (e *rawElem) value() int    { return e.index }

// rawShares deals the 1,024 elements to p actors, round-robin.
func rawShares(p int) [][]rawElement {
	shares := make([][]rawElement, p)
	for e := 0; e < bcElems; e++ {
		shares[e%p] = append(shares[e%p], &rawElem{index: e})
	}
	return shares
}

func rawBroadcast(p, n int) (float64, error) {
	done := newSignal()
	var acks atomic.Int64
	got := make([]int, p)
	shares := rawShares(p)
	rs, err := newRaw(p, func(rs *rawSystem, i int, msg any) {
		if m, ok := msg.(*rawBcast); ok {
			for _, e := range shares[i] {
				e.hit(m)
			}
			got[i]++
			if got[i] == m.n && acks.Add(1) == int64(p) {
				done.fire()
			}
		}
	})
	if err != nil {
		return 0, err
	}
	defer rs.stop()
	t0 := time.Now()
	for b := 0; b < n; b++ {
		m := &rawBcast{n: n}
		for i := 0; i < p; i++ {
			rs.send(i, m)
		}
	}
	select {
	case <-done.wait():
	case <-time.After(60 * time.Second):
		return 0, errors.New("raw broadcast did not finish in 60 s")
	}
	return float64(n) / time.Since(t0).Seconds(), nil
}

func benchReduction(cfg config) ([]result, error) {
	lat, err := measureReduction(cfg, cfg.pes, 1, "")
	if err != nil {
		return nil, err
	}
	base, err := best(cfg.reps, false, func() (float64, error) { return rawReduction(cfg.pes, int(1000*cfg.scale)) })
	if err != nil {
		return nil, err
	}
	return []result{{"runtime/reduction", lat, "us", base}}, nil
}

// measureReduction is the chare side of the reduction benchmarks.
func measureReduction(cfg config, pes, nodes int, name string) (float64, error) {
	n := int(1000 * cfg.scale)
	var lat float64
	err := runNodes(pes, nodes, name, func(m *benchMain) error {
		a, err := array.New[bcElem](m, array.Dims(bcElems))
		if err != nil {
			return err
		}
		lat, err = best(cfg.reps, false, func() (float64, error) {
			t0 := time.Now()
			for i := 0; i < n; i++ {
				f := chare.NewFuture[int](m)
				if err := chare.Send(m, a, (*bcElem).Sum, f.Callback()); err != nil {
					return 0, err
				}
				sum, err := f.Get(m)
				if err != nil {
					return 0, err
				}
				if sum != bcElems*(bcElems-1)/2 {
					return 0, fmt.Errorf("sum over %d elements is %d", bcElems, sum)
				}
			}
			return time.Since(t0).Seconds() * 1e6 / float64(n), nil
		})
		return err
	})
	return lat, err
}

// rawReduction: per round, the root asks every actor for the sum of its
// elements' indices and adds up the replies.
type rawAsk struct{ round int }

func rawReduction(p, n int) (float64, error) {
	replies := make(chan int, p)
	shares := rawShares(p)
	rs, err := newRaw(p, func(rs *rawSystem, i int, msg any) {
		if _, ok := msg.(rawAsk); ok {
			s := 0
			for _, e := range shares[i] {
				s += e.value()
			}
			replies <- s
		}
	})
	if err != nil {
		return 0, err
	}
	defer rs.stop()
	t0 := time.Now()
	for r := 0; r < n; r++ {
		for i := 0; i < p; i++ {
			rs.send(i, rawAsk{r})
		}
		sum := 0
		for i := 0; i < p; i++ {
			select {
			case s := <-replies:
				sum += s
			case <-time.After(10 * time.Second):
				return 0, errors.New("raw reduction stalled")
			}
		}
		if sum != bcElems*(bcElems-1)/2 {
			return 0, fmt.Errorf("raw sum %d", sum)
		}
	}
	return time.Since(t0).Seconds() * 1e6 / float64(n), nil
}

// ---- runtime/qd ----

func benchQD(cfg config) ([]result, error) {
	p := cfg.pes
	n := int(1000 * cfg.scale)
	var lat float64
	err := runJob(p, func(m *benchMain) error {
		var err error
		lat, err = best(cfg.reps, false, func() (float64, error) {
			t0 := time.Now()
			for i := 0; i < n; i++ {
				f := chare.NewFuture[any](m)
				m.DetectQuiescence(f.Callback())
				if _, err := f.Get(m); err != nil {
					return 0, err
				}
			}
			return time.Since(t0).Seconds() * 1e6 / float64(n), nil
		})
		return err
	})
	if err != nil {
		return nil, err
	}
	// Baseline: one fan-out and fan-in over the same number of raw actors,
	// the least any distributed detection must do.
	base, err := best(cfg.reps, false, func() (float64, error) { return rawReduction(p, n) })
	if err != nil {
		return nil, err
	}
	return []result{{"runtime/qd", lat, "us", base}}, nil
}
