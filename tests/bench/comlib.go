package main

import (
	"fmt"
	"slices"
	"time"

	"github.com/charmgo/charm/array"
	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/chare/reducer"
	"github.com/charmgo/charm/comlib"
)

// comlib/alltoall/<bytes>B/<router>/{1proc,2proc}: 16 elements of an
// array, one per PE on 16 PEs, exchange a block of <bytes> bytes with
// every other element in every iteration (240 messages), bracketed by
// BeginIteration and EndIteration. The value is the time per iteration
// through EachToMany with the router; the baseline is the same exchange,
// from the same elements, through comlib.Direct() (every message sent as
// an undelegated proxy would send it), measured in the same job,
// interleaved run by run. Each element begins an iteration only once it
// has every block of the one before (C07), so an iteration's time is the
// slowest element's. 2proc puts PEs 0–7 and 8–15 in two processes.
//
// What the baseline does not do: it never combines messages, so it posts
// one mailbox message (and across processes one envelope) per block; the
// routers post one per stage packet and pay for it with a store and
// forward on the intermediate PEs (and a wait for every stage's packets).
// A one-stage router (direct, sync) among the PEs of one process has
// nothing to combine: EachToMany sends each block straight, as the
// baseline does, and adds only the brackets' own work.

const (
	clPEs   = 16
	clElems = 16
)

var (
	clSizes   = []int{16, 1 << 10, 64 << 10}
	clRouters = comlib.Routers()
)

// clIters is the number of iterations in one timed run: about the same
// amount of work for each size.
func clIters(cfg config, size, nodes int) int {
	base := map[int]float64{16: 60, 1 << 10: 40, 64 << 10: 6}[size]
	if nodes > 1 {
		base /= 3
	}
	return max(2, int(base*cfg.scale))
}

func init() {
	chare.Register[clPeer](chare.Fast((*clPeer).Block), chare.Transient("data")) // data is rebuilt by each run
	for _, size := range clSizes {
		for _, rt := range clRouters {
			for _, nodes := range []int{1, 2} {
				name := fmt.Sprintf("comlib/alltoall/%dB/%s/%dproc", size, rt, nodes)
				registerPaired(name, func(cfg config) ([]figure, error) { return benchAllToAll(cfg, name, size, rt, nodes) })
			}
		}
	}
}

// clPeer is an element of the all-to-all. Iterations are numbered per
// instance (Slot), and continue from run to run.
type clPeer struct {
	array.Element[clPeer, int]
	Run  clRun
	Iter int            // the current iteration, -1 before the first
	Left int            // iterations left in the current run
	Got  map[[2]int]int // (slot, iteration) → blocks received
	data []byte         // what this element sends (read only once sent)
}

type clRun struct {
	P     array.Proxy[clPeer, int] // delegated to the run's instance
	Slot  int
	First int
	Iters int
	N     int
	Bytes int
	Done  chare.Callback
}

type clBlock struct {
	From, Slot, Iter int
	Data             []byte
}

// clByte is the value of every byte element from sends.
func clByte(from int) byte { return byte(from*37 + 1) }

func (p *clPeer) Start(r clRun) {
	if p.Got == nil {
		p.Got = map[[2]int]int{}
	}
	p.Run, p.Left = r, r.Iters
	if len(p.data) != r.Bytes {
		p.data = make([]byte, r.Bytes)
		for i := range p.data {
			p.data[i] = clByte(p.ThisIndex())
		}
	}
	p.begin(r.First)
}

func (p *clPeer) begin(it int) {
	r := &p.Run
	p.Iter = it
	p.must(chare.BeginIteration(p, r.P, it))
	me := p.ThisIndex()
	for k := 1; k < r.N; k++ {
		j := (me + k) % r.N
		p.must(chare.Send(p, r.P.At(j), (*clPeer).Block, clBlock{From: me, Slot: r.Slot, Iter: it, Data: p.data}))
	}
	p.must(chare.EndIteration(p, r.P))
	p.check()
}

func (p *clPeer) Block(b clBlock) {
	if p.Got == nil {
		p.Got = map[[2]int]int{}
	}
	if len(b.Data) > 0 && (b.Data[0] != clByte(b.From) || b.Data[len(b.Data)-1] != clByte(b.From)) {
		p.Abort(fmt.Errorf("element %d: the block from %d of iteration %d is corrupt", p.ThisIndex(), b.From, b.Iter))
		return
	}
	k := [2]int{b.Slot, b.Iter}
	p.Got[k]++
	if p.Got[k] > p.Run.N-1 && p.Run.N > 0 {
		p.Abort(fmt.Errorf("element %d: %d blocks of iteration %d of instance slot %d, want %d", p.ThisIndex(), p.Got[k], b.Iter, b.Slot, p.Run.N-1))
		return
	}
	p.check()
}

// check moves on once every block of the current iteration is in.
func (p *clPeer) check() {
	r := &p.Run
	k := [2]int{r.Slot, p.Iter}
	if p.Left == 0 || p.Got[k] != r.N-1 {
		return
	}
	delete(p.Got, k)
	if p.Left--; p.Left == 0 {
		p.must(p.Contribute(nil, reducer.Nop, r.Done))
		return
	}
	p.begin(p.Iter + 1)
}

// Move migrates the element (comlib/recovery); Moved follows it and
// answers from the new PE.
func (p *clPeer) Move(m clMove) {
	if m.PE != p.PE() {
		p.must(p.Migrate(m.PE))
	}
	p.must(chare.Send(p, p.ThisProxy().At(p.ThisIndex()), (*clPeer).Moved, m))
}

type clMove struct {
	PE   int
	Done chare.Callback
}

func (p *clPeer) Moved(m clMove) {
	if p.PE() != m.PE {
		p.Abort(fmt.Errorf("element %d is on PE %d after a move to PE %d", p.ThisIndex(), p.PE(), m.PE))
		return
	}
	p.must(m.Done.Send(p, p.PE()))
}

func (p *clPeer) must(err error) {
	if err != nil {
		p.Abort(err)
	}
}

// clExchange runs all-to-all iterations of an array through instances.
type clExchange struct {
	m     *benchMain
	arr   array.Proxy[clPeer, int]
	n     int
	bytes int
	next  []int // per slot, the next iteration
	insts []*comlib.Instance
}

func newExchange(m *benchMain, n, bytes int) (*clExchange, error) {
	arr, err := array.New[clPeer](m, array.Dims(n))
	if err != nil {
		return nil, err
	}
	return &clExchange{m: m, arr: arr, n: n, bytes: bytes}, nil
}

// add creates an instance and returns its slot.
func (x *clExchange) add(s comlib.Strategy) (int, error) {
	in, err := comlib.New(x.m, s)
	if err != nil {
		return 0, err
	}
	x.insts, x.next = append(x.insts, in), append(x.next, 0)
	return len(x.insts) - 1, nil
}

// run runs iters iterations through the instance of slot and returns the
// time per iteration in microseconds.
func (x *clExchange) run(slot, iters int) (float64, error) {
	us, _, err := x.runCPU(slot, iters)
	return us, err
}

// runCPU is run that also returns the process's CPU time per iteration,
// in microseconds (every PE's, and the garbage collector's).
func (x *clExchange) runCPU(slot, iters int) (float64, float64, error) {
	c0 := cpuTime()
	us, err := x.runWall(slot, iters)
	return us, (cpuTime() - c0).Seconds() * 1e6 / float64(iters), err
}

func (x *clExchange) runWall(slot, iters int) (float64, error) {
	f := chare.NewFuture[any](x.m)
	r := clRun{P: x.arr.Delegate(x.insts[slot]), Slot: slot, First: x.next[slot], Iters: iters, N: x.n, Bytes: x.bytes, Done: f.Callback()}
	x.next[slot] += iters
	t0 := time.Now()
	if err := chare.Send(x.m, x.arr, (*clPeer).Start, r); err != nil {
		return 0, err
	}
	if _, err := f.Get(x.m); err != nil {
		return 0, err
	}
	return time.Since(t0).Seconds() * 1e6 / float64(iters), nil
}

func benchAllToAll(cfg config, name string, size int, rt string, nodes int) ([]figure, error) {
	fig := figure{name: name, unit: "us"}
	cpu := figure{name: name + "/cpu", unit: "us"}
	iters := clIters(cfg, size, nodes)
	err := runNodes(clPEs, nodes, name, func(m *benchMain) error {
		x, err := newExchange(m, clElems, size)
		if err != nil {
			return err
		}
		e2m, err := x.add(comlib.EachToMany(comlib.EachToManyOptions{Router: rt, Sources: x.arr}))
		if err != nil {
			return err
		}
		dir, err := x.add(comlib.Direct())
		if err != nil {
			return err
		}
		// Warm up both; the first iteration through EachToMany teaches it
		// where the sources are, and goes directly.
		for _, s := range []int{e2m, dir} {
			if _, err := x.run(s, 2); err != nil {
				return err
			}
		}
		for i := 0; i < pairsOf(cfg); i++ {
			a, ca, err := x.runCPU(e2m, iters)
			if err != nil {
				return err
			}
			b, cb, err := x.runCPU(dir, iters)
			if err != nil {
				return err
			}
			fig.value, fig.baseline = append(fig.value, a), append(fig.baseline, b)
			cpu.value, cpu.baseline = append(cpu.value, ca), append(cpu.baseline, cb)
		}
		// Every timed iteration took the router: nothing was recovered
		// after the first iteration.
		in := x.insts[e2m]
		if rec := in.Recovered(); !slices.Equal(rec, []int{0}) {
			return fmt.Errorf("%s: iterations recovered %v, want only the first [0]", name, rec)
		}
		if last := x.next[e2m] - 1; in.Exchanges(last) == 0 {
			return fmt.Errorf("%s: the last iteration (%d) was not exchanged through the router here", name, last)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if nodes > 1 { // the rusage of this process only: not the job's
		return []figure{fig}, nil
	}
	return []figure{fig, cpu}, nil
}
