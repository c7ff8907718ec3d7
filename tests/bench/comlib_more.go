package main

import (
	"fmt"
	"slices"
	"time"

	"github.com/charmgo/charm/array"
	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/chare/reducer"
	"github.com/charmgo/charm/comlib"
	"github.com/charmgo/charm/group"
)

// comlib/multicast/<bytes>B/<strategy>/{1proc,2proc}: PE 0 multicasts
// messages of <bytes> bytes, back to back, to a section of 32 elements
// (the even ones of 64, two on each of 16 PEs) through a Multicast
// instance of the strategy; treechunk is the tree with 8 KiB chunks. The
// value is the time per multicast until every member has every one; the
// baseline is the same multicasts through the undelegated section proxy
// (the runtime's direct multicast: one copy per PE from the root), in the
// same job, interleaved.
//
// comlib/stream/16B[/mesh]/{1proc,2proc}: each of 16 PEs sends 16-byte
// messages round robin to every other PE through a Streaming (or
// MeshStreaming) instance with its default caps; the baseline is the same
// messages through the undelegated group proxy, interleaved. Rates in
// messages per second (higher is better).
//
// comlib/recovery: the all-to-all of 32 elements on 16 PEs (1 KiB blocks,
// mesh router). An element migrates, then two iterations run: the first in
// error mode (C11) with the recovery at its end (C12), the second through
// the router again. The value is the time from asking for the migration
// to the end of those two iterations; the baseline is the same with a
// move to where the element already is (no migration), two optimized
// iterations. comlib/recovery/iterations is how many iterations after the
// migration the next optimized one comes (C12 wants 1), from
// Instance.Exchanges and Instance.Recovered.

var clMcastKinds = []string{"direct", "ring", "multiring", "tree", "dim", "node", "treechunk"}

const (
	clMcastElems = 64
	clMcastChunk = 8 << 10
	clStreamMsgs = 20_000 // per PE, at scale 1
)

func init() {
	chare.Register[clMember](chare.Fast((*clMember).Hit), chare.Transient("got", "runs")) // members never migrate
	chare.Register[clSink](chare.Fast((*clSink).Recv))
	for _, size := range clSizes {
		for _, k := range clMcastKinds {
			for _, nodes := range []int{1, 2} {
				name := fmt.Sprintf("comlib/multicast/%dB/%s/%dproc", size, k, nodes)
				registerPaired(name, func(cfg config) ([]figure, error) { return benchMulticast(cfg, name, size, k, nodes) })
			}
		}
	}
	for _, mesh := range []bool{false, true} {
		for _, nodes := range []int{1, 2} {
			name := "comlib/stream/16B"
			if mesh {
				name += "/mesh"
			}
			name = fmt.Sprintf("%s/%dproc", name, nodes)
			registerPaired(name, func(cfg config) ([]figure, error) { return benchStream(cfg, name, mesh, nodes) })
		}
	}
	registerPaired("comlib/recovery", benchRecovery)
}

// ---- multicast ----

// clMember is an element of the multicast's array.
type clMember struct {
	array.Element[clMember, int]
	got  map[int]int // run → multicasts received
	runs map[int]clMcastRun
}

type clHit struct {
	Run, N int
	Data   []byte
}

type clMcastRun struct {
	Run, N, Bytes int
	Sec           *chare.Section
	Done          chare.Callback
}

func (e *clMember) init() {
	if e.got == nil {
		e.got, e.runs = map[int]int{}, map[int]clMcastRun{}
	}
}

// Expect announces a run (it may come after the run's first multicasts,
// which need not take the same path).
func (e *clMember) Expect(r clMcastRun) {
	e.init()
	e.runs[r.Run] = r
	e.check(r.Run)
}

func (e *clMember) Hit(h clHit) {
	e.init()
	e.got[h.Run]++
	if r, ok := e.runs[h.Run]; ok && len(h.Data) != r.Bytes {
		e.Abort(fmt.Errorf("element %d: a multicast of %d bytes, want %d", e.ThisIndex(), len(h.Data), r.Bytes))
		return
	}
	if e.got[h.Run] > h.N {
		e.Abort(fmt.Errorf("element %d: %d multicasts in run %d, want %d", e.ThisIndex(), e.got[h.Run], h.Run, h.N))
		return
	}
	e.check(h.Run)
}

func (e *clMember) check(run int) {
	r, ok := e.runs[run]
	if !ok || e.got[run] != r.N {
		return
	}
	delete(e.runs, run)
	delete(e.got, run)
	if err := e.ContributeTo(r.Sec, nil, reducer.Nop, r.Done); err != nil {
		e.Abort(err)
	}
}

func clMcastOptions(kind string) comlib.MulticastOptions {
	if kind == "treechunk" {
		return comlib.MulticastOptions{Kind: "tree", Chunk: clMcastChunk}
	}
	return comlib.MulticastOptions{Kind: kind}
}

func clMcastCount(cfg config, size, nodes int) int {
	base := map[int]float64{16: 2000, 1 << 10: 2000, 64 << 10: 300}[size]
	if nodes > 1 {
		base /= 3
	}
	return max(2, int(base*cfg.scale))
}

func benchMulticast(cfg config, name string, size int, kind string, nodes int) ([]figure, error) {
	fig := figure{name: name, unit: "us"}
	n := clMcastCount(cfg, size, nodes)
	err := runNodes(clPEs, nodes, name, func(m *benchMain) error {
		arr, err := array.New[clMember](m, array.Dims(clMcastElems))
		if err != nil {
			return err
		}
		var members []int
		for i := 0; i < clMcastElems; i += 2 {
			members = append(members, i)
		}
		sec, err := arr.Section(m, members)
		if err != nil {
			return err
		}
		inst, err := comlib.New(m, comlib.Multicast(clMcastOptions(kind)))
		if err != nil {
			return err
		}
		via := sec.Delegate(inst)
		data := make([]byte, size)
		run := 0
		measure := func(s array.Section[clMember, int], count int) (float64, error) {
			run++
			f := chare.NewFuture[any](m)
			if err := chare.Send(m, sec, (*clMember).Expect, clMcastRun{Run: run, N: count, Bytes: size, Sec: sec.Info(), Done: f.Callback()}); err != nil {
				return 0, err
			}
			t0 := time.Now()
			for i := 0; i < count; i++ {
				if err := chare.Send(m, s, (*clMember).Hit, clHit{Run: run, N: count, Data: data}); err != nil {
					return 0, err
				}
			}
			if _, err := f.Get(m); err != nil {
				return 0, err
			}
			return time.Since(t0).Seconds() * 1e6 / float64(count), nil
		}
		for _, s := range []array.Section[clMember, int]{via, sec} { // warm up
			if _, err := measure(s, 2); err != nil {
				return err
			}
		}
		for i := 0; i < pairsOf(cfg); i++ {
			a, err := measure(via, n)
			if err != nil {
				return err
			}
			b, err := measure(sec, n)
			if err != nil {
				return err
			}
			fig.value, fig.baseline = append(fig.value, a), append(fig.baseline, b)
		}
		if st := inst.Stats(); st.Packets == 0 && kind != "direct" {
			return fmt.Errorf("%s: no multicast went along the plan (%v)", name, st)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return []figure{fig}, nil
}

// ---- streaming ----

type clSmall struct {
	From, Seq int32
	X         int64
}

// clSink is a branch of the streaming benchmark.
type clSink struct {
	group.Branch[clSink]
	got, want int
	done      bool
	cb        chare.Callback
}

type clStreamRun struct {
	G    group.Proxy[clSink] // delegated, or not
	K    int                 // messages to each other PE
	Done chare.Callback
}

func (b *clSink) Start(r clStreamRun) {
	p, me := b.NumPEs(), b.PE()
	// Counts run on over the runs: a next run's messages may arrive
	// before its Start does.
	b.want, b.cb, b.done = b.want+r.K*(p-1), r.Done, false
	for k := 0; k < r.K; k++ {
		for d := 1; d < p; d++ {
			if err := chare.Send(b, r.G.At((me+d)%p), (*clSink).Recv, clSmall{From: int32(me), Seq: int32(k)}); err != nil {
				b.Abort(err)
				return
			}
		}
	}
	b.check()
}

func (b *clSink) Recv(clSmall) {
	b.got++
	b.check()
}

func (b *clSink) check() {
	if b.got == b.want && !b.done {
		b.done = true
		if err := b.Contribute(nil, reducer.Nop, b.cb); err != nil {
			b.Abort(err)
		}
	}
}

func benchStream(cfg config, name string, mesh bool, nodes int) ([]figure, error) {
	fig := figure{name: name, unit: "msgs/s"}
	k := max(1, int(float64(clStreamMsgs)/float64(clPEs-1)*cfg.scale))
	if nodes > 1 {
		k = max(1, k/2)
	}
	err := runNodes(clPEs, nodes, name, func(m *benchMain) error {
		g, err := group.New[clSink](m)
		if err != nil {
			return err
		}
		s := comlib.Streaming(comlib.StreamOptions{})
		if mesh {
			s = comlib.MeshStreaming(comlib.StreamOptions{})
		}
		inst, err := comlib.New(m, s)
		if err != nil {
			return err
		}
		via := g.Delegate(inst)
		measure := func(p group.Proxy[clSink], k int) (float64, error) {
			f := chare.NewFuture[any](m)
			t0 := time.Now()
			if err := chare.Send(m, g, (*clSink).Start, clStreamRun{G: p, K: k, Done: f.Callback()}); err != nil {
				return 0, err
			}
			if _, err := f.Get(m); err != nil {
				return 0, err
			}
			return float64(clPEs*(clPEs-1)*k) / time.Since(t0).Seconds(), nil
		}
		for _, p := range []group.Proxy[clSink]{via, g} {
			if _, err := measure(p, 2); err != nil {
				return err
			}
		}
		for i := 0; i < pairsOf(cfg); i++ {
			a, err := measure(via, k)
			if err != nil {
				return err
			}
			b, err := measure(g, k)
			if err != nil {
				return err
			}
			fig.value, fig.baseline = append(fig.value, a), append(fig.baseline, b)
		}
		if st := inst.Stats(); st.Packets == 0 {
			return fmt.Errorf("%s: nothing was buffered (%v)", name, st)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return []figure{fig}, nil
}

// ---- recovery ----

const (
	clRecElems = 32
	clRecBytes = 1 << 10
	clRecMover = 0 // starts on PE 0 (block map)
)

func benchRecovery(cfg config) ([]figure, error) {
	t := figure{name: "comlib/recovery", unit: "us"}
	its := figure{name: "comlib/recovery/iterations", unit: "iterations"}
	err := runJob(clPEs, func(m *benchMain) error {
		x, err := newExchange(m, clRecElems, clRecBytes)
		if err != nil {
			return err
		}
		e2m, err := x.add(comlib.EachToMany(comlib.EachToManyOptions{Router: "mesh", Sources: x.arr}))
		if err != nil {
			return err
		}
		in := x.insts[e2m]
		if _, err := x.run(e2m, 3); err != nil {
			return err
		}
		full := in.Exchanges(x.next[e2m] - 1) // PEs in an optimized iteration
		if full == 0 {
			return fmt.Errorf("comlib/recovery: iteration %d was not optimized", x.next[e2m]-1)
		}
		move := func(to int) error {
			f := chare.NewFuture[int](m)
			if err := chare.Send(m, x.arr.At(clRecMover), (*clPeer).Move, clMove{PE: to, Done: f.Callback()}); err != nil {
				return err
			}
			_, err := f.Get(m)
			return err
		}
		// step moves the element to PE to and runs two iterations.
		step := func(to int) (float64, error) {
			t0 := time.Now()
			if err := move(to); err != nil {
				return 0, err
			}
			for i := 0; i < 2; i++ {
				if _, err := x.run(e2m, 1); err != nil {
					return 0, err
				}
			}
			return time.Since(t0).Seconds() * 1e6, nil
		}
		for i := 0; i < pairsOf(cfg); i++ {
			to := 5 + i%2*6 // PEs 5 and 11 in turn
			mig := x.next[e2m]
			a, err := step(to)
			if err != nil {
				return err
			}
			b, err := step(to) // no migration
			if err != nil {
				return err
			}
			// The iterations after the migration up to the first that every
			// PE with sources exchanged through the router again.
			n := 0
			for it := mig; it < x.next[e2m]; it++ {
				if in.Exchanges(it) == full {
					n = it - mig
					break
				}
			}
			if n == 0 {
				return fmt.Errorf("comlib/recovery: no optimized iteration in %d..%d after the migration before %d (exchanges %d, want %d; recovered %v)",
					mig, x.next[e2m]-1, mig, in.Exchanges(mig), full, in.Recovered())
			}
			if !slices.Contains(in.Recovered(), mig) {
				return fmt.Errorf("comlib/recovery: iteration %d (after a migration) was not recovered: %v", mig, in.Recovered())
			}
			t.value, t.baseline = append(t.value, a), append(t.baseline, b)
			its.value, its.baseline = append(its.value, float64(n)), append(its.baseline, 1)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return []figure{t, its}, nil
}
