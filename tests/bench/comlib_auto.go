package main

import (
	"bytes"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/comlib"
	"github.com/charmgo/charm/comlib/route"
	"github.com/charmgo/charm/comlib/schedule"
)

// comlib/alltoall/auto/<bytes>B[/<n>proc]: the all-to-all of
// comlib/alltoall (16 elements, one per PE on 16 PEs, one process, or n =
// 2, 4 or 8 with /<n>proc; 8 processes on a 2-core machine at load ≥ 20
// can miss the launcher's 3 s heartbeat and fail) through comlib.Auto with
// the shipped selection tree (or -comlibselect's) and the size it sends
// declared (AutoOptions.MsgSize: the tree is pruned to one strategy when
// the instance is made; -auto-declare=false sizes each send instead),
// against every fixed
// strategy Auto could have been — Direct and EachToMany with each router
// — in the same job, interleaved run by run (each round runs every one
// of them, in an order drawn per round, each run settled first: see
// runOrder and settledRun). The value is Auto's time per iteration; the baseline is the
// best fixed strategy's (lowest median), named on a comment line with
// what Auto chose. The target: ratio ≤ 1.1 at every size. The
// line's control= is the same ratio for a second Direct instance run in
// the same rounds (never a candidate): what the same code scores against
// the best, so that Auto's ratio can be told from the machine's noise.
//
// comlib/alltoall/auto/grid[/2proc] runs every size of the grid in one job and
// adds the line comlib/alltoall/auto/grid: value = the mean over the
// sizes of Auto's time / the best fixed time at that size; baseline = the
// same mean for the single fixed strategy that does best over the whole
// grid. ratio < 1: Auto beats every single fixed choice.
//
// -auto-pes N runs the exchange on N PEs instead of 16.
//
// -auto-only KEY,KEY… runs only those fixed candidates (no Auto, no
// figure, their medians printed): a few strategies on many processes, or
// one alone under -cpuprofile. Built with -tags charmexp_frameperitem
// (an experiment knob of package actor, for nothing but such
// measurements), every message for another process leaves in a frame of
// its own: what Direct would cost without the transport's coalescing.
//
// comlib/calibrate measures the same candidates over the grid of sizes,
// on 4 and 16 PEs in one process and on 16 PEs in two, and writes a
// selection file (-calibrate-out, default comlib_select.json in the
// current directory) that chooses, by comm_type, comm_size and msg_size,
// the strategy that was fastest; the path is printed. comlib's shipped
// default_select.json is one such file.

var (
	calibrateOut = flag.String("calibrate-out", "comlib_select.json", "comlib/calibrate: where to write the selection file")
	benchSelect  = flag.String(comlib.FlagSelect, "", "comlib/alltoall/auto/*: Auto's selection tree, instead of the shipped one")
	autoDeclare  = flag.Bool("auto-declare", true, "comlib/alltoall/auto/*: Auto declares the message size it sends (AutoOptions.MsgSize); false: each send is sized and walked, and every part of a mixed tree runs")
	clAutoSizes  = []int{16, 128, 1 << 10, 4 << 10, 16 << 10, 64 << 10}
	autoPEs      = flag.Int("auto-pes", clPEs, "comlib/alltoall/auto/*: how many PEs (one element each) the exchange runs on")
	autoOnly     = flag.String("auto-only", "", "comlib/alltoall/auto/*: run only these fixed candidates (comma-separated: strategy=direct,router=mesh,…), without Auto, and print their medians, no figure: to compare a few on many processes, or profile one alone with -cpuprofile")
)

// clMsgSize is the size Auto sees for a block of size bytes of data (its
// three ints and the data): what the benchmark declares and what the
// calibrated tree's msg_size bounds count.
func clMsgSize(size int) int { return comlib.MessageSize(clBlock{Data: make([]byte, size)}) }

func init() {
	for _, nodes := range []int{1, 2, 4, 8} {
		for _, size := range clAutoSizes {
			registerPaired(autoName(fmt.Sprintf("%dB", size), nodes), func(cfg config) ([]figure, error) {
				return benchAuto(cfg, []int{size}, false, nodes)
			})
		}
		registerPaired(autoName("grid", nodes), func(cfg config) ([]figure, error) { return benchAuto(cfg, clAutoSizes, true, nodes) })
	}
	registerPaired("comlib/calibrate", benchCalibrate)
}

// candidate is a fixed strategy: its container in a selection file.
type candidate struct {
	key    string // "strategy=direct", "router=mesh"
	router string // "" for Direct
}

// candidates lists Direct and EachToMany with every router that works on
// pes PEs (route.Names: schedules that are routers join by themselves).
func candidates(pes int) []candidate {
	out := []candidate{{key: "strategy=direct"}}
	for _, r := range route.Names() {
		if _, err := route.New(r, pes, route.Options{}); err != nil {
			continue
		}
		out = append(out, candidate{key: "router=" + r, router: r})
	}
	return out
}

// pickCandidates returns the candidates named in list (keys separated by
// commas, in list's order), for -auto-only.
func pickCandidates(cands []candidate, list string) ([]candidate, error) {
	var keep []candidate
	for _, key := range strings.Split(list, ",") {
		i := slices.IndexFunc(cands, func(c candidate) bool { return c.key == key })
		if i < 0 {
			return nil, fmt.Errorf("%q is not a candidate (strategy=direct or router=NAME of comlib/route)", key)
		}
		if slices.ContainsFunc(keep, func(c candidate) bool { return c.key == key }) {
			return nil, fmt.Errorf("%q is named twice", key)
		}
		keep = append(keep, cands[i])
	}
	return keep, nil
}

func (c candidate) strategy(x *clExchange) comlib.Strategy {
	if c.router == "" {
		return comlib.Direct()
	}
	return comlib.EachToMany(comlib.EachToManyOptions{Router: c.router, Sources: x.arr})
}

// clAutoIters: about the same work per run at every size.
func clAutoIters(cfg config, size, nodes int) int {
	base := 40.0
	switch {
	case size >= 64<<10:
		base = 4
	case size >= 16<<10:
		base = 10
	case size >= 4<<10:
		base = 20
	}
	if nodes > 1 {
		base /= 2
	}
	return max(2, int(base*cfg.scale))
}

// sweep measures, in one job, the candidates (and Auto, if auto) at each
// size, interleaved: samples[size][k] are the times per iteration of
// candidate k, then Auto's and the control's (a second Direct instance).
type sweep struct {
	cands   []candidate
	samples map[int][][]float64
	chose   map[int]map[string]int64 // Auto's choices by size
	iters   map[int]int              // iterations per run, by size
	pes     int
	model   *schedule.Model // calibrated in the same job (comlib/calibrate only)
}

func runSweep(cfg config, pes, nodes int, sizes []int, auto bool, name string) (*sweep, error) {
	sw := &sweep{cands: candidates(pes), samples: map[int][][]float64{}, chose: map[int]map[string]int64{}, iters: map[int]int{}, pes: pes}
	only := auto && *autoOnly != ""
	if only {
		keep, err := pickCandidates(sw.cands, *autoOnly)
		if err != nil {
			return nil, fmt.Errorf("-auto-only on %d PEs: %w", pes, err)
		}
		sw.cands, auto = keep, false
	}
	err := runNodes(pes, nodes, name, func(m *benchMain) error {
		if !auto && !only { // calibration: the cost model breaks ties (winners)
			cal, err := comlib.Calibrate(m, comlib.CalibrateOptions{Sizes: sizes, Reps: 3})
			if err != nil {
				return err
			}
			sw.model = &cal.Model
		}
		for _, size := range sizes {
			x, err := newExchange(m, pes, size)
			if err != nil {
				return err
			}
			var slots []int
			for _, c := range sw.cands {
				s, err := x.add(c.strategy(x))
				if err != nil {
					return fmt.Errorf("%s: %w", c.key, err)
				}
				slots = append(slots, s)
			}
			autoSlot := -1
			if auto {
				// Auto declares the size it will carry, as an MPI
				// collective's count: the tree is pruned to one strategy.
				o := comlib.AutoOptions{Sources: x.arr}
				if *autoDeclare {
					o.MsgSize = clMsgSize(size)
				}
				s, err := x.add(comlib.Auto(o))
				if err != nil {
					return err
				}
				autoSlot = s
				slots = append(slots, s)
				// The control: a second Direct instance, run in the same
				// rounds but never a candidate, so that its ratio to the
				// best fixed choice shows what the same code scores.
				if s, err = x.add(comlib.Direct()); err != nil {
					return err
				}
				slots = append(slots, s)
			}
			// Warm up (EachToMany learns its sources), then size the runs
			// to about 20 ms each at scale 1: short runs on a shared
			// machine measure its noise.
			slowest := 0.0
			for _, s := range slots {
				if _, err := x.run(s, 2); err != nil {
					return err
				}
				us, err := x.run(s, 3)
				if err != nil {
					return err
				}
				slowest = max(slowest, us)
			}
			iters := max(clAutoIters(cfg, size, nodes), min(2000, int(20e3*cfg.scale/max(slowest, 1))))
			sw.iters[size] = iters
			res := make([][]float64, len(slots))
			for i := 0; i < pairsOf(cfg); i++ {
				for _, k := range runOrder(i, len(slots)) {
					us, err := settledRun(x, slots[k], iters)
					if err != nil {
						return err
					}
					res[k] = append(res[k], us)
				}
			}
			sw.samples[size] = res
			if auto {
				sw.chose[size] = x.insts[autoSlot].Served()
			}
		}
		return nil
	})
	return sw, err
}

// runOrder is the order of the candidates in round i: a permutation
// drawn from a seed of i, so that the figures are reproducible and no
// candidate always follows the same one. In a fixed order Auto (last)
// always ran after the slowest router, and paid for what that run left
// behind — garbage to collect, stacks grown and shrunk again, messages
// still in flight on a loaded machine: at 4 KiB Auto, which was Direct
// there, measured 4× Direct's median.
func runOrder(i, n int) []int {
	return rand.New(rand.NewPCG(uint64(i), 0x5eed)).Perm(n)
}

// settledRun times iters iterations through slot after what the previous
// run left is cleared away for every candidate alike: a collection in
// this process, then one untimed iteration of the same slot (the other
// process's heap is not collected, but the warm iteration absorbs its
// start-up there too).
func settledRun(x *clExchange, slot, iters int) (float64, error) {
	runtime.GC()
	if _, err := x.run(slot, 1); err != nil {
		return 0, err
	}
	return x.run(slot, iters)
}

// best returns the candidate with the lowest median at size.
func (sw *sweep) best(size int) int {
	b := 0
	for k := range sw.cands {
		if median(sw.samples[size][k]) < median(sw.samples[size][b]) {
			b = k
		}
	}
	return b
}

// autoName is comlib/alltoall/auto/<what>, with /2proc for two processes.
func autoName(what string, nodes int) string {
	if nodes > 1 {
		return fmt.Sprintf("comlib/alltoall/auto/%s/%dproc", what, nodes)
	}
	return "comlib/alltoall/auto/" + what
}

func benchAuto(cfg config, sizes []int, grid bool, nodes int) ([]figure, error) {
	name := autoName(fmt.Sprintf("%dB", sizes[0]), nodes)
	if grid {
		name = autoName("grid", nodes)
	}
	sw, err := runSweep(cfg, *autoPEs, nodes, sizes, true, name)
	if err != nil {
		return nil, err
	}
	if *autoOnly != "" {
		for _, size := range sizes {
			fmt.Printf("# %s (-auto-only, %d iterations a run): %s\n", autoName(fmt.Sprintf("%dB", size), nodes), sw.iters[size], sw.medians(size))
		}
		return nil, nil
	}
	var figs []figure
	autoK := len(sw.cands)
	// The grid score: mean over sizes of time / the best fixed median
	// (the candidates, Auto, the control).
	score := make([]float64, autoK+2)
	for _, size := range sizes {
		b := sw.best(size)
		bm := median(sw.samples[size][b])
		for k := range score {
			score[k] += median(sw.samples[size][k]) / bm / float64(len(sizes))
		}
		sname := autoName(fmt.Sprintf("%dB", size), nodes)
		fmt.Printf("# %s: best fixed %s (median %.4g us); auto chose %s; medians: %s\n",
			sname, sw.cands[b].key, bm, servedString(sw.chose[size]), sw.medians(size))
		control := figure{value: sw.samples[size][autoK+1], baseline: sw.samples[size][b]}
		figs = append(figs, figure{name: sname, unit: "us",
			value: sw.samples[size][autoK], baseline: sw.samples[size][b],
			note: fmt.Sprintf("control=%.3f", median(control.ratios()))})
	}
	if grid {
		single := 0
		for k := range sw.cands {
			if score[k] < score[single] {
				single = k
			}
		}
		fmt.Printf("# %s: the best single fixed choice over the grid is %s (mean time/best %.3f); auto %.3f; control %.3f\n",
			name, sw.cands[single].key, score[single], score[autoK], score[autoK+1])
		figs = append(figs, figure{name: name, unit: "x_best", value: []float64{score[autoK]}, baseline: []float64{score[single]},
			note: fmt.Sprintf("control=%.3f", score[autoK+1])})
	}
	return figs, nil
}

func servedString(m map[string]int64) string {
	var parts []string
	for k, n := range m {
		parts = append(parts, fmt.Sprintf("%s×%d", k, n))
	}
	sort.Strings(parts)
	if len(parts) == 0 {
		return "nothing"
	}
	return strings.Join(parts, " ")
}

// medians lists every candidate's median at size (Auto's last, if any).
func (sw *sweep) medians(size int) string {
	var parts []string
	for k, xs := range sw.samples[size] {
		name := "auto"
		switch {
		case k < len(sw.cands):
			name = sw.cands[k].key
		case k > len(sw.cands):
			name = "control"
		}
		parts = append(parts, fmt.Sprintf("%s=%.4g", name, median(xs)))
	}
	return strings.Join(parts, " ")
}

// ---- calibration ----

// calConfig is one setting the calibration measures.
type calConfig struct {
	pes, nodes int
}

var calConfigs = []calConfig{{4, 1}, {16, 1}, {16, 2}}

func benchCalibrate(cfg config) ([]figure, error) {
	results := map[calConfig][]string{} // winners by size
	var figs []figure
	for _, cc := range calConfigs {
		if chare.IsLaunchedNode() && cc.nodes == 1 {
			continue // a launched node only joins the two-process job
		}
		name := fmt.Sprintf("comlib/calibrate/%dpe/%dproc", cc.pes, cc.nodes)
		sw, err := runSweep(cfg, cc.pes, cc.nodes, clAutoSizes, false, "comlib/calibrate")
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		var predict func(string, int) (float64, bool)
		if sw.model != nil {
			predict = modelPredict(*sw.model, sw.pes)
		}
		results[cc] = sw.winners(clAutoSizes, predict)
		for i, size := range clAutoSizes {
			b := sw.best(size)
			fmt.Printf("# %s/%dB: %s (then %s); medians: %s\n", name, size, sw.cands[b].key, results[cc][i], sw.medians(size))
			figs = append(figs, figure{name: fmt.Sprintf("%s/%dB", name, size), unit: "us",
				value: sw.samples[size][b], baseline: sw.samples[size][0]})
		}
	}
	data := calibratedTree(results)
	if _, err := comlib.ParseSelection(data); err != nil {
		return nil, fmt.Errorf("the calibrated tree does not load: %w", err)
	}
	if err := os.WriteFile(*calibrateOut, data, 0o644); err != nil {
		return nil, err
	}
	abs, _ := filepath.Abs(*calibrateOut)
	fmt.Printf("# comlib/calibrate: wrote %s (use it with -comlibselect %s, or copy it to comlib/default_select.json)\n", abs, abs)
	return figs, nil
}

// winners picks a candidate per size for a tree of at most two size
// ranges, Direct on one side of a bound and one router on the other (or
// one of them for every size). One router at most, and one bound, not one
// per size, so that noise between neighbouring sizes does not make the
// tree alternate.
//
// The winners are what an Auto that declares its message size
// (AutoOptions.MsgSize) runs: its tree is pruned to one container at
// creation, so a shape is scored by its mean time over the grid relative
// to the best candidate at each size, with nothing charged at the sizes
// its other part carries. (An Auto that does not declare its size keeps
// both parts of a mixed tree and pays the router's empty exchange at the
// sizes Direct carries: the package doc says so, and tells to declare.)
// A router must earn its part: the shape replaces Direct only if it gains
// more than 10 % of the best time per size it routes (Auto's own target),
// so that noise on a loaded machine does not buy a router, and an
// undeclared Auto an idle part, for nothing.
//
// The shape with the lowest score wins, but measurements within noise do
// not decide: if Direct alone scores within tieBand of the best, Direct;
// else, among the router shapes within tieBand, the one whose routed
// sizes the cost model predicts fastest, when predict knows every router
// among them (the complete-exchange schedules; nil predict, or a router
// it does not know, leaves the lowest score).
func (sw *sweep) winners(sizes []int, predict func(router string, size int) (float64, bool)) []string {
	const gainPerRoutedSize = 0.1
	tieBand := 0.05 * float64(len(sizes)) // 5 % of the best time at each size
	norm := func(k, size int) float64 {
		return median(sw.samples[size][k]) / median(sw.samples[size][sw.best(size)])
	}
	type shape struct {
		r      int // the router's candidate, 0 for Direct alone
		routed []bool
		score  float64
	}
	direct := shape{routed: make([]bool, len(sizes))}
	for _, size := range sizes {
		direct.score += norm(0, size)
	}
	shapes := []shape{direct}
	for r := 1; r < len(sw.cands); r++ {
		for cut := 1; cut <= len(sizes); cut++ {
			// low: the router below cut (Direct from cut on); !low: the
			// router for the last cut sizes. cut = len(sizes): the router only.
			for _, low := range []bool{true, false} {
				if !low && cut == len(sizes) {
					continue // the same shape as low
				}
				sh := shape{r: r, routed: make([]bool, len(sizes))}
				for i, size := range sizes {
					sh.routed[i] = low && i < cut || !low && i >= len(sizes)-cut
					if sh.routed[i] {
						sh.score += norm(r, size)
					} else {
						sh.score += norm(0, size)
					}
				}
				sh.score += gainPerRoutedSize * float64(cut)
				shapes = append(shapes, sh)
			}
		}
	}
	best := 0
	for i, sh := range shapes {
		if sh.score < shapes[best].score-1e-9 {
			best = i
		}
	}
	if best != 0 && shapes[0].score > shapes[best].score+tieBand && predict != nil {
		// Router shapes within noise of the best: the model decides, if it
		// predicts them all.
		known := true
		pick, pickT := best, math.Inf(1)
		for i, sh := range shapes[1:] {
			if sh.score > shapes[best].score+tieBand {
				continue
			}
			t := 0.0
			for j, size := range sizes {
				if !sh.routed[j] {
					continue
				}
				v, ok := predict(sw.cands[sh.r].router, size)
				if !ok {
					known = false
				}
				t += v / median(sw.samples[size][sw.best(size)])
			}
			if t < pickT {
				pick, pickT = i+1, t
			}
		}
		if known {
			best = pick
		}
	} else if shapes[0].score <= shapes[best].score+tieBand {
		best = 0
	}
	out := make([]string, len(sizes))
	for i := range sizes {
		out[i] = sw.cands[0].key
		if shapes[best].routed[i] {
			out[i] = sw.cands[shapes[best].r].key
		}
	}
	return out
}

// modelPredict predicts, from a calibrated model, a complete-exchange
// schedule's time on pes participants (one packet per block) in the
// units of the samples (µs); other routers are not predicted.
func modelPredict(m schedule.Model, pes int) func(router string, size int) (float64, bool) {
	return func(router string, size int) (float64, bool) {
		if !slices.Contains(schedule.Names(), router) {
			return 0, false
		}
		s, err := schedule.New(router, pes, 1, schedule.Options{})
		if err != nil {
			return 0, false
		}
		return us(m.At(size).Predict(s)), true
	}
}

// sizeBranches writes the msg_size branches for the winners by size: the
// bound between two sizes whose winners differ is their geometric mean,
// in message bytes (clMsgSize).
func sizeBranches(w []string) []kv {
	var out []kv
	for i := 0; i < len(w); i++ {
		if i+1 < len(w) && w[i+1] == w[i] {
			continue
		}
		if i+1 == len(w) {
			out = append(out, kv{"msg_size=any", container(w[i])})
			break
		}
		bound := int(math.Sqrt(float64(clMsgSize(clAutoSizes[i])) * float64(clMsgSize(clAutoSizes[i+1]))))
		out = append(out, kv{fmt.Sprintf("msg_size<=%d", bound), container(w[i])})
	}
	if len(out) == 1 { // one winner for every size
		return []kv{{out[0].k, out[0].v}}
	}
	return out
}

// kv is an ordered JSON member.
type kv struct {
	k string
	v any // []kv or a container ([]kv with parameters)
}

func container(key string) []kv { return []kv{{key, []kv{}}} }

func writeKV(b *bytes.Buffer, members []kv, indent string) {
	if len(members) == 0 {
		b.WriteString("{}")
		return
	}
	if _, leaf := members[0].v.([]kv); leaf && len(members) == 1 && len(members[0].v.([]kv)) == 0 {
		fmt.Fprintf(b, "{%s: {}}", strconv.Quote(members[0].k))
		return
	}
	b.WriteString("{\n")
	for i, m := range members {
		fmt.Fprintf(b, "%s  %s: ", indent, strconv.Quote(m.k))
		writeKV(b, m.v.([]kv), indent+"  ")
		if i+1 < len(members) {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString(indent + "}")
}

// calibratedTree builds the selection file: collective=alltoall, then
// comm_type, then comm_size (the PE counts measured: up to each, the
// winners measured there), then msg_size; other collectives go directly.
func calibratedTree(res map[calConfig][]string) []byte {
	byType := func(nodes int) []kv {
		var ps []int
		for cc := range res {
			if cc.nodes == nodes {
				ps = append(ps, cc.pes)
			}
		}
		slices.Sort(ps)
		var out []kv
		for i, p := range ps {
			key := fmt.Sprintf("comm_size<=%d", p)
			if i+1 == len(ps) {
				key = "comm_size=any"
			}
			out = append(out, kv{key, sizeBranches(res[calConfig{p, nodes}])})
		}
		if len(out) == 0 {
			return container("strategy=direct")
		}
		return out
	}
	top := []kv{
		{"collective=alltoall", []kv{
			{"comm_type=intra", byType(1)},
			{"comm_type=inter", byType(2)},
		}},
		{"collective=any", container("strategy=direct")},
	}
	var b bytes.Buffer
	writeKV(&b, top, "")
	b.WriteByte('\n')
	return b.Bytes()
}

// jobFlags are the runtime flags the benchmark's jobs get: -comlibselect.
func jobFlags() map[string]string {
	if *benchSelect == "" {
		return nil
	}
	return map[string]string{comlib.FlagSelect: *benchSelect}
}
