package comlib_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/array"
	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/chare/reducer"
	"github.com/charmgo/charm/comlib"
	"github.com/charmgo/charm/comlib/route"
	"github.com/charmgo/charm/group"
	"github.com/charmgo/charm/internal/jobtest"
)

type tmain struct{ chare.Chare[tmain] }

func init() {
	chare.Register[tmain](chare.Threaded((*tmain).Start))
	chare.Register[peer]()
}

func (m *tmain) Start([]string) {}

// peer is an element of an all-to-all: in every iteration it sends one
// block to every other element through a proxy delegated to an
// EachToMany instance, and moves on once it has every block of the
// iteration. Moves says where elements migrate before an iteration.
type peer struct {
	array.Element[peer, int]
	Cfg   a2aCfg
	Iter  int
	Got   map[int]int // iteration → blocks received
	Seen  map[[2]int]bool
	Sum   int64
	Count int64
	Dups  int64
}

type a2aCfg struct {
	P     array.Proxy[peer, int] // delegated
	N     int
	Iters int
	Moves map[int]map[int]int // iteration → element → PE
	Done  chare.Callback
	// Inside, if set, makes element 0 migrate inside the bracket of
	// iteration Inside−1 (breaking C08).
	Inside int
}

type block struct {
	From, Iter int
	Val        int64
}

func (p *peer) Start(c a2aCfg) {
	p.Cfg, p.Got, p.Seen = c, map[int]int{}, map[[2]int]bool{}
	p.Iter = -1
	p.next()
}

// next begins the next iteration, or migrates first if planned.
func (p *peer) next() {
	n := p.Iter + 1
	if n == p.Cfg.Iters {
		p.must(p.Contribute([]int64{p.Count, p.Sum, p.Dups}, reducer.SumInt64, p.Cfg.Done))
		return
	}
	if pe, ok := p.Cfg.Moves[n][p.ThisIndex()]; ok && pe != p.PE() {
		p.Migrate(pe)
		p.must(chare.Send0(p, p.ThisProxy().At(p.ThisIndex()), (*peer).Resume)) // follows it
		return
	}
	p.run(n)
}

func (p *peer) Resume() { p.run(p.Iter + 1) }

func (p *peer) run(n int) {
	p.Iter = n
	p.must(chare.BeginIteration(p, p.Cfg.P, n))
	for j := 0; j < p.Cfg.N; j++ {
		if j != p.ThisIndex() {
			p.must(chare.Send(p, p.Cfg.P.At(j), (*peer).Block, block{From: p.ThisIndex(), Iter: n, Val: val(p.ThisIndex(), j, n)}))
		}
	}
	if p.Cfg.Inside > 0 && n == p.Cfg.Inside-1 && p.ThisIndex() == 0 {
		p.Migrate((p.PE() + 1) % p.NumPEs())
		p.must(chare.Send0(p, p.ThisProxy().At(0), (*peer).EndThere))
		return
	}
	p.must(chare.EndIteration(p, p.Cfg.P))
	p.check()
}

// EndThere ends, on another PE, an iteration begun before a migration.
func (p *peer) EndThere() {
	p.must(chare.EndIteration(p, p.Cfg.P))
	p.check()
}

func val(from, to, iter int) int64 { return int64(from*1_000_003 + to*1009 + iter) }

func (p *peer) Block(b block) {
	k := [2]int{b.From, b.Iter}
	if p.Seen[k] {
		p.Dups++
		return
	}
	if b.Val != val(b.From, p.ThisIndex(), b.Iter) {
		p.Abort(fmt.Errorf("element %d: block from %d of iteration %d has %d", p.ThisIndex(), b.From, b.Iter, b.Val))
		return
	}
	p.Seen[k] = true
	p.Got[b.Iter]++
	p.Count++
	p.Sum += b.Val
	p.check()
}

// check moves on once every block of the current iteration is in (C07).
func (p *peer) check() {
	if p.Iter >= 0 && p.Got[p.Iter] == p.Cfg.N-1 {
		p.Got[p.Iter] = -1
		p.next()
	}
}

func (p *peer) must(err error) {
	if err != nil {
		p.Abort(err)
	}
}

// a2aResult is what an all-to-all job reports.
type a2aResult struct {
	count, sum, dups int64
	stats            comlib.StatsSnapshot
	recovered        []int
	exchanges        map[int]int
	exchangedOn      map[int][]int       // the PEs (of PE 0's process) that took the router
	fanOuts          map[int]map[int]int // EachToManyOptions.Tune
	tuning           []comlib.Tuning
}

func wantA2A(n, iters int) (count, sum int64) {
	for it := 0; it < iters; it++ {
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				if i != j {
					count++
					sum += val(i, j, it)
				}
			}
		}
	}
	return
}

// a2a returns a job that runs an all-to-all of n elements for iters
// iterations through the strategy, with the given moves.
func a2a(n, iters int, opt comlib.EachToManyOptions, moves map[int]map[int]int, r *a2aResult) func(*tmain, []string) {
	return a2aThen(n, iters, func(arr array.Proxy[peer, int]) comlib.Strategy {
		opt.Sources = arr
		return comlib.EachToMany(opt)
	}, moves, r, nil)
}

// a2aThen is a2a through the strategy that strat makes for the array,
// which runs after(m, arr) once every element is done, before it reads
// the instance's statistics (an Auto instance's FanOuts are its parts').
func a2aThen(n, iters int, strat func(array.Proxy[peer, int]) comlib.Strategy, moves map[int]map[int]int, r *a2aResult, after func(*tmain, array.Proxy[peer, int]) error) func(*tmain, []string) {
	return func(m *tmain, _ []string) {
		arr, err := array.New[peer](m, array.Dims(n))
		if err != nil {
			m.Abort(err)
			return
		}
		inst, err := comlib.New(m, strat(arr))
		if err != nil {
			m.Abort(err)
			return
		}
		f := chare.NewFuture[[]int64](m)
		if err := chare.Send(m, arr, (*peer).Start, a2aCfg{P: arr.Delegate(inst), N: n, Iters: iters, Moves: moves, Done: f.Callback()}); err != nil {
			m.Abort(err)
			return
		}
		v, err := f.Get(m)
		if err != nil {
			m.Abort(err)
			return
		}
		r.count, r.sum, r.dups = v[0], v[1], v[2]
		// Every message sent has arrived before the statistics are read:
		// a report to PE 0 may still sit in a process's outgoing frame
		// when the last element is done (FanOuts in 2 processes).
		qd := chare.NewFuture[any](m)
		m.DetectQuiescence(qd.Callback())
		if _, err := qd.Get(m); err != nil {
			m.Abort(err)
			return
		}
		if after != nil {
			if err := after(m, arr); err != nil {
				m.Abort(err)
				return
			}
		}
		r.stats, r.recovered = inst.Stats(), inst.Recovered()
		r.exchanges, r.exchangedOn = map[int]int{}, map[int][]int{}
		for it := 0; it < iters; it++ {
			r.exchanges[it] = inst.Exchanges(it)
			r.exchangedOn[it] = inst.ExchangedOn(it)
		}
		r.fanOuts, r.tuning = inst.FanOuts(), inst.Tuning()
		for _, p := range inst.Parts() {
			for it, byPE := range p.FanOuts() {
				if r.fanOuts == nil {
					r.fanOuts = map[int]map[int]int{}
				}
				r.fanOuts[it] = byPE
			}
		}
		m.Exit(0)
	}
}

func runJob(t *testing.T, pes, nodes int, start func(*tmain, []string)) {
	t.Helper()
	runJobFlags(t, pes, nodes, nil, start)
}

// runJobFlags is runJob with runtime flags (-tunedebug, say).
func runJobFlags(t *testing.T, pes, nodes int, flags map[string]string, start func(*tmain, []string)) {
	t.Helper()
	code, err := jobtest.Run(t, chare.Config{PEs: pes, Nodes: nodes, Timeout: 60 * time.Second, Flags: flags}, start)
	require.NoError(t, err)
	require.Equal(t, 0, code)
}

// requireCarried: the optimized iterations of an exchange among PEs of
// one process on a one-stage router (direct, sync) send each message
// straight, by the way Direct sends it, with no packet; every other
// exchange carries its messages in packets.
func requireCarried(t *testing.T, router string, omega, pes, nodes int, s comlib.StatsSnapshot) {
	t.Helper()
	r, err := route.New(router, pes, route.Options{Omega: omega})
	require.NoError(t, err)
	if nodes == 1 && r.Stages() == 1 {
		require.Zero(t, s.Packets, "%s: straight, not in packets: %v", router, s)
		require.Positive(t, s.Straight, "%s: %v", router, s)
		return
	}
	require.Positive(t, s.Packets, "%s: %v", router, s)
	require.Zero(t, s.Straight, "%s: %v", router, s)
}

func checkA2A(t *testing.T, n, iters int, r a2aResult) {
	t.Helper()
	count, sum := wantA2A(n, iters)
	require.Zero(t, r.dups, "duplicated blocks")
	require.Equal(t, count, r.count, "blocks received (lost = %d)", count-r.count)
	require.Equal(t, sum, r.sum)
}

// TestC06_BracketedAllToAllEveryRouter: an all-to-all in brackets through
// each router arrives exactly once; after the first iteration (which
// teaches the strategy where its sources are) every iteration is
// exchanged through the router by every PE.
func TestC06_BracketedAllToAllEveryRouter(t *testing.T) {
	const n, iters, pes = 12, 5, 4
	for _, rt := range comlib.Routers() {
		t.Run(rt, func(t *testing.T) {
			var r a2aResult
			runJob(t, pes, 1, a2a(n, iters, comlib.EachToManyOptions{Router: rt}, nil, &r))
			checkA2A(t, n, iters, r)
			require.Equal(t, []int{0}, r.recovered, "only the first iteration is recovered")
			for it := 1; it < iters; it++ {
				require.Equal(t, pes, r.exchanges[it], "iteration %d through the router on every PE", it)
			}
			requireCarried(t, rt, 0, pes, 1, r.stats)
		})
	}
}

// TestC12_MigrationRecoversInOneIteration: an element that migrates
// before iteration 3 puts that iteration in error mode; the next one is
// optimized again.
func TestC12_MigrationRecoversInOneIteration(t *testing.T) {
	const n, iters, pes = 8, 7, 4
	var r a2aResult
	moves := map[int]map[int]int{3: {0: 3}}
	runJob(t, pes, 1, a2a(n, iters, comlib.EachToManyOptions{Router: "mesh"}, moves, &r))
	checkA2A(t, n, iters, r)
	require.Equal(t, []int{0, 3}, r.recovered)
	for it := 4; it < iters; it++ {
		require.Equal(t, pes, r.exchanges[it], "iteration %d optimized again", it)
	}
	require.Positive(t, r.stats.ErrorTime)
}

// TestC11_ErrorModeOnlyForWhatHasNotLeft: element 0 moves from PE 0 to
// PE 3 before iteration 3. PE 0 waits for a source that never begins
// there, so it never starts that iteration's exchange: its messages go
// directly. PE 3 finds the move when element 0 begins there (C10) and
// enters error mode (C11): element 0's messages go directly, and so do
// those of PE 3's own sources unless they had all ended the iteration,
// and PE 3 started its exchange, before element 0 arrived. PE 0 then
// declares the iteration in error on every PE, but what a PE had already
// passed to the router stays on that path: which of PEs 1, 2 and 3 take
// the router depends on timing, so error mode is not "direct on every
// PE". After the recovery every PE exchanges through the router again
// (C12).
func TestC11_ErrorModeOnlyForWhatHasNotLeft(t *testing.T) {
	const n, iters, pes = 8, 6, 4
	var r a2aResult
	runJob(t, pes, 1, a2a(n, iters, comlib.EachToManyOptions{Router: "mesh"}, map[int]map[int]int{3: {0: 3}}, &r))
	checkA2A(t, n, iters, r)
	require.Equal(t, []int{0, 3}, r.recovered)
	all := []int{0, 1, 2, 3}
	for it := 0; it < iters; it++ {
		switch it {
		case 0: // the first iteration teaches the strategy its list
			require.Empty(t, r.exchangedOn[it], "iteration 0")
		case 3:
			require.NotContains(t, r.exchangedOn[it], 0, "PE 0 lost a source: its exchange never starts")
			require.Subset(t, []int{1, 2, 3}, r.exchangedOn[it])
		default:
			require.Equal(t, all, r.exchangedOn[it], "iteration %d through the router on every PE", it)
		}
	}
	// Directly (messages to an element on the sender's PE are delivered
	// there, not sent): every message of iteration 0 but the n local
	// ones, and of iteration 3 at least those of element 1 (left on PE 0;
	// element 0 has gone) and of element 0 (which began on PE 3 after the
	// move was found, beside elements 6 and 7); at most all of both.
	perIter := int64(n * (n - 1))
	require.GreaterOrEqual(t, r.stats.Direct, perIter-n+(n-1)+(n-3), "%v", r.stats)
	require.LessOrEqual(t, r.stats.Direct, 2*perIter, "%v", r.stats)
	require.Positive(t, r.stats.ErrorTime)
}

// TestC13_SwapDetectedByIdentity: two elements swap PEs; the counts do
// not change, so the original's test (C10, CountOnly) misses it; the
// identity check catches it. Every block arrives once either way.
func TestC13_SwapDetectedByIdentity(t *testing.T) {
	const n, iters, pes = 8, 6, 4
	for _, countOnly := range []bool{false, true} {
		t.Run(fmt.Sprintf("countOnly=%v", countOnly), func(t *testing.T) {
			var r a2aResult
			// Block map: elements 0 and 7 start on PEs 0 and 3.
			moves := map[int]map[int]int{2: {0: 3, 7: 0}}
			runJob(t, pes, 1, a2a(n, iters, comlib.EachToManyOptions{Router: "hypercube", CountOnly: countOnly}, moves, &r))
			checkA2A(t, n, iters, r)
			if countOnly {
				require.Equal(t, []int{0}, r.recovered, "a swap leaves the counts alone")
			} else {
				require.Equal(t, []int{0, 2}, r.recovered, "the identity check sees the swap")
			}
		})
	}
}

// TestC12_EmptyPEsAndManyMoves: elements leave PEs empty and come back,
// several times; every block arrives once.
func TestC12_EmptyPEsAndManyMoves(t *testing.T) {
	const n, iters, pes = 6, 8, 4
	var r a2aResult
	moves := map[int]map[int]int{
		2: {0: 1, 1: 1, 2: 1}, // PE 0 empties
		4: {3: 0, 4: 0},
		5: {0: 2, 5: 0},
	}
	runJob(t, pes, 1, a2a(n, iters, comlib.EachToManyOptions{Router: "tree", Degree: 2}, moves, &r))
	checkA2A(t, n, iters, r)
	require.GreaterOrEqual(t, len(r.recovered), 3)
	require.Equal(t, 0, r.recovered[0])
}

// TestC12_AcrossProcesses: the all-to-all with migrations between
// processes (4 PEs in 2 processes).
func TestC12_AcrossProcesses(t *testing.T) {
	const n, iters, pes = 8, 6, 4
	var r a2aResult
	moves := map[int]map[int]int{2: {0: 3}, 4: {7: 0, 1: 2}}
	runJob(t, pes, 2, a2a(n, iters, comlib.EachToManyOptions{Router: "mesh"}, moves, &r))
	checkA2A(t, n, iters, r)
	require.Equal(t, 0, r.recovered[0])
	require.Contains(t, r.recovered, 2)
}

// TestC08_MigrationInsideBracket: an element that migrates between its
// BeginIteration and EndIteration gets an error naming it and the
// iteration; the job ends instead of hanging.
func TestC08_MigrationInsideBracket(t *testing.T) {
	const n, pes = 8, 4
	code, err := chare.Run(chare.Config{PEs: pes, Timeout: 30 * time.Second}, func(m *tmain, _ []string) {
		arr, _ := array.New[peer](m, array.Dims(n))
		inst, err := comlib.New(m, comlib.EachToMany(comlib.EachToManyOptions{Router: "direct", Sources: arr}))
		if err != nil {
			m.Abort(err)
			return
		}
		f := chare.NewFuture[[]int64](m)
		_ = chare.Send(m, arr, (*peer).Start, a2aCfg{P: arr.Delegate(inst), N: n, Iters: 5, Inside: 3, Done: f.Callback()})
		_, _ = f.Get(m)
		m.Exit(0)
	})
	require.Equal(t, 1, code)
	require.ErrorContains(t, err, "element 0")
	require.ErrorContains(t, err, "C08")
}

// TestC12_SeveralInstancesAtOnce: two arrays, each with its own
// EachToMany instance (different routers), exchange at the same time
// while elements of both migrate; each instance recovers on its own.
func TestC12_SeveralInstancesAtOnce(t *testing.T) {
	const n, iters, pes = 8, 6, 4
	var r1, r2 a2aResult
	runJob(t, pes, 1, func(m *tmain, _ []string) {
		type run struct {
			arr  array.Proxy[peer, int]
			inst *comlib.Instance
			f    chare.Future[[]int64]
			r    *a2aResult
		}
		var runs []run
		for k, rt := range []string{"mesh", "hypercube"} {
			arr, _ := array.New[peer](m, array.Dims(n))
			inst, err := comlib.New(m, comlib.EachToMany(comlib.EachToManyOptions{Router: rt, Sources: arr}))
			if err != nil {
				m.Abort(err)
				return
			}
			moves := map[int]map[int]int{2 + k: {k: 3}}
			f := chare.NewFuture[[]int64](m)
			_ = chare.Send(m, arr, (*peer).Start, a2aCfg{P: arr.Delegate(inst), N: n, Iters: iters, Moves: moves, Done: f.Callback()})
			runs = append(runs, run{arr, inst, f, []*a2aResult{&r1, &r2}[k]})
		}
		for _, rn := range runs {
			v, err := rn.f.Get(m)
			if err != nil {
				m.Abort(err)
				return
			}
			rn.r.count, rn.r.sum, rn.r.dups = v[0], v[1], v[2]
			rn.r.recovered = rn.inst.Recovered()
		}
		m.Exit(0)
	})
	checkA2A(t, n, iters, r1)
	checkA2A(t, n, iters, r2)
	require.Equal(t, []int{0, 2}, r1.recovered)
	require.Equal(t, []int{0, 3}, r2.recovered)
}

// gpeer is a group branch in an all-to-all among the branches.
type gpeer struct {
	group.Branch[gpeer]
	Cfg  gcfg
	Iter int
	Got  map[int]int
	Sum  int64
}

type gcfg struct {
	P     group.Proxy[gpeer]
	Iters int
	Done  chare.Callback
}

func (g *gpeer) Start(c gcfg) {
	g.Cfg, g.Got, g.Iter = c, map[int]int{}, -1
	g.next()
}

func (g *gpeer) next() {
	n := g.Iter + 1
	if n == g.Cfg.Iters {
		if err := g.Contribute(g.Sum, reducer.SumInt64, g.Cfg.Done); err != nil {
			g.Abort(err)
		}
		return
	}
	g.Iter = n
	must := func(err error) {
		if err != nil {
			g.Abort(err)
		}
	}
	must(chare.BeginIteration(g, g.Cfg.P, n))
	for pe := 0; pe < g.NumPEs(); pe++ {
		if pe != g.PE() {
			must(chare.Send(g, g.Cfg.P.At(pe), (*gpeer).Block, block{From: g.PE(), Iter: n, Val: val(g.PE(), pe, n)}))
		}
	}
	must(chare.EndIteration(g, g.Cfg.P))
	g.check()
}

func (g *gpeer) Block(b block) {
	g.Got[b.Iter]++
	g.Sum += b.Val
	g.check()
}

func (g *gpeer) check() {
	if g.Iter >= 0 && g.Got[g.Iter] == g.NumPEs()-1 {
		g.Got[g.Iter] = -1
		g.next()
	}
}

func init() { chare.Register[gpeer]() }

// TestC06_GroupBranchesAsSources: the branches of a group exchange
// all-to-all through EachToMany; after the first iteration every one
// goes through the router.
func TestC06_GroupBranchesAsSources(t *testing.T) {
	const pes, iters = 5, 4
	var sum int64
	var rec []int
	var ex []int
	runJob(t, pes, 1, func(m *tmain, _ []string) {
		g, _ := group.New[gpeer](m)
		inst, err := comlib.New(m, comlib.EachToMany(comlib.EachToManyOptions{Router: "hypercube", Sources: g}))
		if err != nil {
			m.Abort(err)
			return
		}
		f := chare.NewFuture[int64](m)
		_ = chare.Send(m, g, (*gpeer).Start, gcfg{P: g.Delegate(inst), Iters: iters, Done: f.Callback()})
		sum, _ = f.Get(m)
		rec = inst.Recovered()
		for it := 0; it < iters; it++ {
			ex = append(ex, inst.Exchanges(it))
		}
		m.Exit(0)
	})
	var want int64
	for it := 0; it < iters; it++ {
		for i := 0; i < pes; i++ {
			for j := 0; j < pes; j++ {
				if i != j {
					want += val(i, j, it)
				}
			}
		}
	}
	require.Equal(t, want, sum)
	require.Equal(t, []int{0}, rec)
	require.Equal(t, []int{0, pes, pes, pes}, ex)
}

// TestX02_EachToManyRunsEverySchedule: EachToMany runs each complete-exchange schedule as its
// router (named as the schedule, or parsed from "each-to-many:NAME"), and every block of an
// all-to-all arrives exactly once, on 5 PEs in one process (odd: pairwise leaves a PE idle
// per round, xor falls back to the next power of two's rounds) and on 4 PEs in two.
func TestX02_EachToManyRunsEverySchedule(t *testing.T) {
	const n, iters = 10, 4
	cases := []struct {
		router string
		omega  int
	}{{"shift", 0}, {"pairwise", 0}, {"xor", 0}, {"sync", 0}, {"group", 0}, {"group", 1}, {"group", 3}}
	for _, c := range cases {
		for _, nodes := range []int{1, 2} {
			pes := 5
			if nodes == 2 {
				pes = 4
			}
			t.Run(fmt.Sprintf("%s/omega%d/%dproc", c.router, c.omega, nodes), func(t *testing.T) {
				sp, err := comlib.ParseStrategy("each-to-many:" + c.router)
				require.NoError(t, err)
				require.Equal(t, c.router, sp.EachToMany.Router)
				var r a2aResult
				runJob(t, pes, nodes, a2a(n, iters, comlib.EachToManyOptions{Router: sp.EachToMany.Router, Omega: c.omega}, nil, &r))
				checkA2A(t, n, iters, r)
				for it := 1; it < iters; it++ { // the first teaches where the sources are
					require.Equal(t, pes/nodes, r.exchanges[it], "iteration %d through the schedule on every PE of this process", it)
				}
				requireCarried(t, c.router, c.omega, pes, nodes, r.stats)
			})
		}
	}
}

// TestStraightMigrationRecovers: on the direct router in one process the
// optimized iterations send every message straight (no packet); two
// elements that migrate before iteration 3 still put that iteration in
// error mode, the strategy re-learns where they are (C12), the next
// iterations are optimized on every PE again, and every block arrives
// exactly once.
func TestStraightMigrationRecovers(t *testing.T) {
	const n, iters, pes = 8, 7, 4
	var r a2aResult
	runJob(t, pes, 1, a2a(n, iters, comlib.EachToManyOptions{Router: "direct"}, map[int]map[int]int{3: {0: 3, 5: 1}}, &r))
	checkA2A(t, n, iters, r)
	require.Equal(t, []int{0, 3}, r.recovered)
	for it := 4; it < iters; it++ {
		require.Equal(t, pes, r.exchanges[it], "iteration %d optimized again on every PE", it)
	}
	require.Zero(t, r.stats.Packets, "%v", r.stats)
	require.Positive(t, r.stats.Straight, "%v", r.stats)
	require.Positive(t, r.stats.Direct, "the iterations in error mode went directly: %v", r.stats)
}
