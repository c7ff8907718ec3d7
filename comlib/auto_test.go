package comlib_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/array"
	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/chare/reducer"
	"github.com/charmgo/charm/comlib"
	"github.com/charmgo/charm/comlib/selection"
)

// apeer is an element of an all-to-all whose blocks change size from
// iteration to iteration (and, with Mixed, within one), so that Auto's
// tree sends them through different parts.
type apeer struct {
	array.Element[apeer, int]
	Cfg  acfg
	Iter int
	Got  map[int]int
	Seen map[[2]int]bool
	Cnt  [3]int64 // blocks, sum of values, duplicates
}

type acfg struct {
	P     array.Proxy[apeer, int]
	N     int
	Iters int
	Pads  []int // iteration it pads its blocks with Pads[it%len(Pads)] bytes
	Mixed bool  // blocks to odd (from+to) take the next pad
	Moves map[int]map[int]int
	Done  chare.Callback
}

// ablock's size, as Auto estimates it, is 24 bytes plus its Pad.
type ablock struct {
	From, Iter int
	Val        int64
	Pad        []byte
}

func init() { chare.Register[apeer]() }

func (c acfg) pad(from, to, it int) int {
	k := it
	if c.Mixed && (from+to)%2 == 1 {
		k++
	}
	return c.Pads[k%len(c.Pads)]
}

func (p *apeer) Start(c acfg) {
	p.Cfg, p.Got, p.Seen, p.Iter = c, map[int]int{}, map[[2]int]bool{}, -1
	p.next()
}

func (p *apeer) next() {
	n := p.Iter + 1
	if n == p.Cfg.Iters {
		p.must(p.Contribute(p.Cnt[:], reducer.SumInt64, p.Cfg.Done))
		return
	}
	if pe, ok := p.Cfg.Moves[n][p.ThisIndex()]; ok && pe != p.PE() {
		p.Migrate(pe)
		p.must(chare.Send0(p, p.ThisProxy().At(p.ThisIndex()), (*apeer).Resume))
		return
	}
	p.run(n)
}

func (p *apeer) Resume() { p.run(p.Iter + 1) }

func (p *apeer) run(n int) {
	p.Iter = n
	me := p.ThisIndex()
	p.must(chare.BeginIteration(p, p.Cfg.P, n))
	for j := 0; j < p.Cfg.N; j++ {
		if j != me {
			b := ablock{From: me, Iter: n, Val: val(me, j, n), Pad: make([]byte, p.Cfg.pad(me, j, n))}
			p.must(chare.Send(p, p.Cfg.P.At(j), (*apeer).Block, b))
		}
	}
	p.must(chare.EndIteration(p, p.Cfg.P))
	p.check()
}

func (p *apeer) Block(b ablock) {
	k := [2]int{b.From, b.Iter}
	if p.Seen[k] {
		p.Cnt[2]++
		return
	}
	if b.Val != val(b.From, p.ThisIndex(), b.Iter) || len(b.Pad) != p.Cfg.pad(b.From, p.ThisIndex(), b.Iter) {
		p.Abort(fmt.Errorf("element %d: a bad block from %d of iteration %d", p.ThisIndex(), b.From, b.Iter))
		return
	}
	p.Seen[k] = true
	p.Got[b.Iter]++
	p.Cnt[0]++
	p.Cnt[1] += b.Val
	p.check()
}

func (p *apeer) check() {
	if p.Iter >= 0 && p.Got[p.Iter] == p.Cfg.N-1 {
		p.Got[p.Iter] = -1
		p.next()
	}
}

func (p *apeer) must(err error) {
	if err != nil {
		p.Abort(err)
	}
}

type autoResult struct {
	cnt       [3]int64
	stats     comlib.StatsSnapshot
	served    map[string]int64
	explain   []comlib.Choice
	recovered []int
	parts     int
	fanOuts   map[int]map[int]int // of the parts that tune ω
	newErr    error
}

// autoJob runs the all-to-all through Auto(o) (Sources set here).
func autoJob(c acfg, o comlib.AutoOptions, r *autoResult) func(*tmain, []string) {
	return func(m *tmain, _ []string) {
		arr, err := array.New[apeer](m, array.Dims(c.N))
		if err != nil {
			m.Abort(err)
			return
		}
		o.Sources = arr
		inst, err := comlib.New(m, comlib.Auto(o))
		if err != nil {
			r.newErr = err
			m.Exit(0)
			return
		}
		f := chare.NewFuture[[]int64](m)
		c.P, c.Done = arr.Delegate(inst), f.Callback()
		if err := chare.Send(m, arr, (*apeer).Start, c); err != nil {
			m.Abort(err)
			return
		}
		v, err := f.Get(m)
		if err != nil {
			m.Abort(err)
			return
		}
		copy(r.cnt[:], v)
		r.stats, r.served, r.explain, r.recovered, r.parts = inst.Stats(), inst.Served(), inst.Explain(), inst.Recovered(), len(inst.Parts())
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

// wantServed counts the blocks per container as the tree should choose.
func wantServed(c acfg, choose func(size int) string) (map[string]int64, map[int]map[string]int64) {
	all, per := map[string]int64{}, map[int]map[string]int64{}
	for it := 0; it < c.Iters; it++ {
		per[it] = map[string]int64{}
		for i := 0; i < c.N; i++ {
			for j := 0; j < c.N; j++ {
				if i != j {
					k := choose(24 + c.pad(i, j, it))
					all[k]++
					per[it][k]++
				}
			}
		}
	}
	return all, per
}

const (
	mesh      = "strategy=eachtomany(router=mesh)"
	hypercube = "router=hypercube"
	direct    = "strategy=direct"
)

// sizeTree sends small blocks through the mesh, middle ones through the
// hypercube and large ones directly, in one process; its creation-time
// operators stand above and below the msg_size ones.
const sizeTree = `{
  "collective=alltoall": {
    "comm_size<=2": {"strategy=direct": {}},
    "comm_size=any": {
      "msg_size<=64": {"comm_type=intra": {"strategy=eachtomany": {"router=mesh": {}}}, "comm_type=inter": {"strategy=direct": {}}},
      "msg_size<=4096": {"comm_type=intra": {"router=hypercube": {}}, "comm_type=inter": {"strategy=direct": {}}},
      "msg_size=any": {"strategy=direct": {}}
    }
  },
  "collective=any": {"strategy=direct": {}}
}`

func sizeChoice(size int) string {
	switch {
	case size <= 64:
		return mesh
	case size <= 4096:
		return hypercube
	}
	return direct
}

func mustTree(t *testing.T, src string) *selection.Tree {
	t.Helper()
	tr, err := comlib.ParseSelection([]byte(src))
	require.NoError(t, err)
	return tr
}

// TestS05_AutoChoosesPerMessageSize: the tree is pruned when the instance
// is made, so that each message's walk is msg_size only; every block
// arrives once, each container carries the blocks its size range holds —
// also when one iteration mixes sizes — and both bracketed parts see
// every bracket (only the first iteration is recovered).
func TestS05_AutoChoosesPerMessageSize(t *testing.T) {
	for _, mixed := range []bool{false, true} {
		t.Run(fmt.Sprintf("mixed=%v", mixed), func(t *testing.T) {
			c := acfg{N: 8, Iters: 6, Pads: []int{0, 1000, 10000}, Mixed: mixed}
			var r autoResult
			runJob(t, 4, 1, autoJob(c, comlib.AutoOptions{Tree: mustTree(t, sizeTree)}, &r))
			require.NoError(t, r.newErr)
			count, sum := wantA2A(c.N, c.Iters)
			require.Equal(t, [3]int64{count, sum, 0}, r.cnt)
			all, per := wantServed(c, sizeChoice)
			require.Equal(t, all, r.served)
			require.Equal(t, 3, r.parts)
			require.Equal(t, count, r.stats.Messages)
			require.Equal(t, []int{0}, r.recovered, "the bracketed parts all saw every bracket")
			require.Positive(t, r.stats.Packets)

			got := map[int]map[string]int64{}
			for _, ch := range r.explain {
				if got[ch.Iteration] == nil {
					got[ch.Iteration] = map[string]int64{}
				}
				got[ch.Iteration][ch.Container] += ch.Messages
				// S05/S08: the creation facts were decided by Prune; the
				// walk at each send meets msg_size operators only.
				require.True(t, strings.HasPrefix(ch.Trace, "collective=alltoall (pruned) > comm_size=any (pruned) > msg_size"), ch.Trace)
				require.NotContains(t, ch.Trace, "comm_type=intra >", "comm_type is decided at creation")
				if ch.Container != direct {
					require.Contains(t, ch.Trace, "comm_type=intra (pruned)")
				}
				// S08: the walk tests msg_size branches and the container only.
				require.True(t, strings.HasSuffix(ch.Trace, map[string]string{mesh: "; 2 nodes", hypercube: "; 3 nodes", direct: "; 4 nodes"}[ch.Container]), ch.Trace)
				require.Equal(t, ch.Container, sizeChoice(ch.MinBytes))
				require.Equal(t, ch.Container, sizeChoice(ch.MaxBytes))
			}
			require.Equal(t, per, got)
		})
	}
}

// TestS06_AutoPrunedAcrossProcesses: with two processes comm_type=inter
// holds, below the msg_size operators too, so the pruned tree keeps the
// direct strategy only: one part, whatever the size.
func TestS06_AutoPrunedAcrossProcesses(t *testing.T) {
	c := acfg{N: 8, Iters: 4, Pads: []int{0, 1000, 10000}}
	var r autoResult
	runJob(t, 4, 2, autoJob(c, comlib.AutoOptions{Tree: mustTree(t, sizeTree)}, &r))
	require.NoError(t, r.newErr)
	require.Equal(t, 1, r.parts)
	require.Equal(t, []string{direct}, keys(r.served))
	require.NotEmpty(t, r.explain)
	for _, ch := range r.explain {
		require.Equal(t, direct, ch.Container)
		if strings.Contains(ch.Trace, "msg_size<=") {
			require.Contains(t, ch.Trace, "comm_type=inter (pruned)")
		}
	}
}

func keys(m map[string]int64) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// Auto through migrations: every bracketed part recovers the iterations
// the moves put in error mode, and nothing is lost.
func TestC12_AutoRecoversEveryPart(t *testing.T) {
	c := acfg{N: 8, Iters: 7, Pads: []int{0, 1000}, Moves: map[int]map[int]int{3: {0: 3, 5: 1}}}
	var r autoResult
	runJob(t, 4, 1, autoJob(c, comlib.AutoOptions{Tree: mustTree(t, sizeTree)}, &r))
	require.NoError(t, r.newErr)
	count, sum := wantA2A(c.N, c.Iters)
	require.Equal(t, [3]int64{count, sum, 0}, r.cnt)
	require.Equal(t, []int{0, 3}, r.recovered)
	all, _ := wantServed(c, sizeChoice)
	require.Equal(t, all, r.served)
}

// The job's tree: -comlibselect replaces the default; a container the
// facts keep that needs Sources fails New with the container's name.
func TestAutoTreeFromFlagAndErrors(t *testing.T) {
	file := filepath.Join(t.TempDir(), "sel.json")
	require.NoError(t, os.WriteFile(file, []byte(`{"msg_size<=100": {"router=tree": {"degree=3": {}}}, "msg_size=any": {"strategy=direct": {}}}`), 0o644))
	c := acfg{N: 6, Iters: 3, Pads: []int{0, 500}}
	var r autoResult
	code, err := chare.Run(chare.Config{PEs: 3, Flags: map[string]string{comlib.FlagSelect: file}}, autoJob(c, comlib.AutoOptions{}, &r))
	require.NoError(t, err)
	require.Zero(t, code)
	require.NoError(t, r.newErr)
	all, _ := wantServed(c, func(size int) string {
		if size <= 100 {
			return "router=tree(degree=3)"
		}
		return direct
	})
	require.Equal(t, all, r.served)

	// No Sources for an each-to-many container.
	code, err = chare.Run(chare.Config{PEs: 2}, func(m *tmain, _ []string) {
		_, r.newErr = comlib.New(m, comlib.Auto(comlib.AutoOptions{Tree: mustTree(t, `{"router=mesh": {}}`)}))
		m.Exit(0)
	})
	require.NoError(t, err)
	require.Zero(t, code)
	require.ErrorContains(t, r.newErr, "container router=mesh")
	require.ErrorContains(t, r.newErr, "needs AutoOptions.Sources")
}

// TestS05_AutoBecomesItsOnlyStrategy: when pruning leaves one container
// whatever the size, Auto makes that one part and sends skip the size
// estimate and the walk (0 nodes per send, sizes not measured); a
// bracketed one still recovers after migrations (C12), and every message
// is counted in Served, Explain and Stats.
func TestS05_AutoBecomesItsOnlyStrategy(t *testing.T) {
	for _, tc := range []struct {
		name, tree, container, trace string
		moves                        map[int]map[int]int
		recovered                    []int
	}{
		{"direct", `{"collective=alltoall": {"msg_size=any": {"strategy=direct": {}}}, "collective=any": {"router=mesh": {}}}`,
			direct, "collective=alltoall (pruned) > msg_size=any; 0 nodes", nil, nil},
		{"every branch mesh, with moves", `{"msg_size<=64": {"strategy=eachtomany": {"router=mesh": {}}}, "msg_size=any": {"comm_type=intra": {"strategy=eachtomany": {"router=mesh": {}}}, "comm_type=any": {"strategy=direct": {}}}}`,
			mesh, "msg_size=* (every branch); 0 nodes", map[int]map[int]int{3: {0: 3, 5: 1}}, []int{0, 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := acfg{N: 8, Iters: 6, Pads: []int{0, 1000, 10000}, Moves: tc.moves}
			var r autoResult
			runJob(t, 4, 1, autoJob(c, comlib.AutoOptions{Tree: mustTree(t, tc.tree)}, &r))
			require.NoError(t, r.newErr)
			count, sum := wantA2A(c.N, c.Iters)
			require.Equal(t, [3]int64{count, sum, 0}, r.cnt)
			require.Equal(t, 1, r.parts)
			require.Equal(t, map[string]int64{tc.container: count}, r.served)
			require.Equal(t, count, r.stats.Messages)
			if tc.recovered != nil {
				require.Equal(t, tc.recovered, r.recovered)
			}
			per := map[int]int64{}
			for _, ch := range r.explain {
				require.Equal(t, tc.container, ch.Container)
				require.Equal(t, tc.trace, ch.Trace)
				require.Equal(t, -1, ch.MinBytes, "sizes are not estimated")
				require.Contains(t, ch.String(), "messages of any size")
				per[ch.Iteration] += ch.Messages
			}
			for it := 0; it < c.Iters; it++ {
				require.Equal(t, int64(c.N*(c.N-1)), per[it], "iteration %d", it)
			}
		})
	}
}

// TestS05_DeclaredMsgSizeMakesOnePart: with AutoOptions.MsgSize the tree
// is pruned on msg_size too when the instance is made, so a tree that
// mixes containers by size makes exactly one part — the container for the
// declared size — and no other part runs an exchange: every block goes
// through it (the declaration, not each block's size, decides, as an MPI
// collective's count does), nothing is walked per send, and its trace has
// every branch decided at creation. In one process and across two, with
// migrations for the bracketed ones.
func TestS05_DeclaredMsgSizeMakesOnePart(t *testing.T) {
	// Across processes, small messages directly and large through the mesh.
	const interTree = `{"msg_size<=64": {"strategy=direct": {}}, "msg_size=any": {"comm_type=inter": {"router=mesh": {}}, "comm_type=any": {"strategy=direct": {}}}}`
	moves := map[int]map[int]int{3: {0: 3, 5: 1}}
	for _, tc := range []struct {
		name      string
		nodes     int
		tree      string
		size      int
		container string
		trace     string
		moves     map[int]map[int]int
		recovered []int
	}{
		{"small: the mesh", 1, sizeTree, 24, mesh,
			"collective=alltoall (pruned) > comm_size=any (pruned) > msg_size<=64 (pruned) > comm_type=intra (pruned); 0 nodes", moves, []int{0, 3}},
		{"middle: the hypercube", 1, sizeTree, 1024, hypercube,
			"collective=alltoall (pruned) > comm_size=any (pruned) > msg_size<=4096 (pruned) > comm_type=intra (pruned); 0 nodes", nil, []int{0}},
		{"large: direct", 1, sizeTree, 10024, direct,
			"collective=alltoall (pruned) > comm_size=any (pruned) > msg_size=any (pruned); 0 nodes", nil, nil},
		{"2 processes, small: direct", 2, interTree, 24, direct, "msg_size<=64 (pruned); 0 nodes", nil, nil},
		{"2 processes, large: the mesh", 2, interTree, 10024, "router=mesh",
			"msg_size=any (pruned) > comm_type=inter (pruned); 0 nodes", moves, []int{0, 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := acfg{N: 8, Iters: 6, Pads: []int{0, 1000, 10000}, Mixed: true, Moves: tc.moves}
			var r autoResult
			runJob(t, 4, tc.nodes, autoJob(c, comlib.AutoOptions{Tree: mustTree(t, tc.tree), MsgSize: tc.size}, &r))
			require.NoError(t, r.newErr)
			count, sum := wantA2A(c.N, c.Iters)
			require.Equal(t, [3]int64{count, sum, 0}, r.cnt)
			require.Equal(t, 1, r.parts, "one part: the declared size's container")
			if tc.nodes == 1 {
				require.Equal(t, count, r.stats.Messages)
				require.Equal(t, map[string]int64{tc.container: count}, r.served)
			} else { // Stats and Served count this process's sends: half the elements
				require.Equal(t, count/2, r.stats.Messages)
				require.Equal(t, map[string]int64{tc.container: count / 2}, r.served)
			}
			if tc.recovered != nil {
				require.Equal(t, tc.recovered, r.recovered)
			} else {
				require.Empty(t, r.recovered)
			}
			if tc.container != direct {
				require.Positive(t, r.stats.Packets, "the exchanges ran through the part")
			}
			require.NotEmpty(t, r.explain)
			for _, ch := range r.explain {
				require.Equal(t, tc.container, ch.Container)
				require.Equal(t, tc.trace, ch.Trace)
				require.Equal(t, -1, ch.MinBytes, "sizes are not estimated")
			}
		})
	}
}

// A negative declared size fails New with an error naming it.
func TestAutoNegativeMsgSize(t *testing.T) {
	var newErr error
	code, err := chare.Run(chare.Config{PEs: 2}, func(m *tmain, _ []string) {
		_, newErr = comlib.New(m, comlib.Auto(comlib.AutoOptions{MsgSize: -1}))
		m.Exit(0)
	})
	require.NoError(t, err)
	require.Zero(t, code)
	require.ErrorContains(t, newErr, "AutoOptions.MsgSize -1 is negative")
}

// MessageSize is the size a send is walked with: declaring it for a
// sample block chooses what the undeclared instance chose for the block.
func TestMessageSizeIsAutosEstimate(t *testing.T) {
	for _, pad := range []int{0, 1000, 10000} {
		require.Equal(t, 24+pad, comlib.MessageSize(ablock{Pad: make([]byte, pad)}))
		require.Equal(t, 24+pad, comlib.MessageSize(&ablock{Pad: make([]byte, pad)}))
	}
	require.Zero(t, comlib.MessageSize(nil))
}

// TestAutoGroupContainerTunesOmega: a selection tree's router=group
// container with tune=true makes an Auto part that tunes ω as
// EachToManyOptions.Tune does: every PE exchanges every iteration with the
// same ω, ω changes while the job runs, and every block arrives once —
// also across a migration (a recovery).
func TestAutoGroupContainerTunesOmega(t *testing.T) {
	const tree = `{"msg_size<=64": {"router=group": {"tune=true": {}, "window=1": {}}}, "msg_size=any": {"strategy=direct": {}}}`
	c := acfg{N: 8, Iters: 24, Pads: []int{0}, Moves: map[int]map[int]int{10: {0: 3}}}
	var r autoResult
	runJob(t, 4, 1, autoJob(c, comlib.AutoOptions{Tree: mustTree(t, tree)}, &r))
	require.NoError(t, r.newErr)
	count, sum := wantA2A(c.N, c.Iters)
	require.Equal(t, [3]int64{count, sum, 0}, r.cnt)
	require.Contains(t, r.recovered, 10, "the migration was recovered")
	seen := map[int]bool{}
	for it, byPE := range r.fanOuts {
		w := -1
		for pe, x := range byPE {
			if w < 0 {
				w = x
			}
			require.Equal(t, w, x, "iteration %d: PE %d ran with ω %d, another with %d", it, pe, x, w)
		}
		seen[w] = true
	}
	for it := 1; it < c.Iters; it++ {
		if it != 10 {
			require.Len(t, r.fanOuts[it], 4, "iteration %d: every PE's ω is known (%v)", it, r.fanOuts[it])
		}
	}
	require.GreaterOrEqual(t, len(seen), 2, "ω changed while the job ran: %v", seen)
}

// TestAutoParsesTheFileOnce: with -comlibselect, the file is parsed once
// per process, not again by every PE from the strategy table (a file of
// a few megabytes took seconds per PE).
func TestAutoParsesTheFileOnce(t *testing.T) {
	file := filepath.Join(t.TempDir(), "sel.json")
	require.NoError(t, os.WriteFile(file, []byte(`{"msg_size<=100": {"router=tree": {"degree=3": {}}}, "msg_size=any": {"strategy=direct": {}}}`), 0o644))
	c := acfg{N: 8, Iters: 2, Pads: []int{0, 500}}
	var r autoResult
	before := comlib.SelectionParses()
	code, err := chare.Run(chare.Config{PEs: 4, Flags: map[string]string{comlib.FlagSelect: file}}, autoJob(c, comlib.AutoOptions{}, &r))
	require.NoError(t, err)
	require.Zero(t, code)
	require.NoError(t, r.newErr)
	require.Equal(t, 2, r.parts, "the tree chose by size: two parts")
	require.Equal(t, int64(1), comlib.SelectionParses()-before, "selection trees parsed by a job of 4 PEs in one process")
}
