package main

import (
	"fmt"
	"sort"
	"strings"

	"github.com/charmgo/charm/comlib"
	"github.com/charmgo/charm/comlib/schedule"
)

// comlib/alltoall/group/tuned/<bytes>B: the all-to-all of comlib/alltoall
// (16 elements, one per PE on 16 PEs, one process) through EachToMany with
// the group router and Tune, which tunes the fan-out ω while it runs; the
// baseline is the group router at its default ω = ⌈√15⌉ = 4, the same
// array, interleaved run by run. The tuned instance first warms up for
// clTuneWarm iterations (its first evaluations), and keeps tuning in the
// timed runs (the search never stops probing, E09): the figure includes
// what tuning costs. The note gives the ω used most in the timed runs and
// how often each was used, the share of the timed PE iterations
// reported to the decider (1 while the search runs; about 1/16 once it
// has settled, EachToManyOptions.Every), the messages that carried them
// per timed PE iteration (one per PE per reported segment, agree.Batcher:
// about 1/8 while the search runs) and the exchange's own stage packets
// per iteration, for scale. The two instances run in an order drawn per
// pair, each run after a collection and one untimed iteration
// (settledRun).

const clTuneWarm = 120

func init() {
	for _, size := range clSizes {
		name := fmt.Sprintf("comlib/alltoall/group/tuned/%dB", size)
		registerPaired(name, func(cfg config) ([]figure, error) { return benchGroupTuned(cfg, name, size) })
	}
}

func benchGroupTuned(cfg config, name string, size int) ([]figure, error) {
	fig := figure{name: name, unit: "us"}
	iters := clIters(cfg, size, 1)
	used := map[int]int{}  // ω → iterations of the timed runs (PE 0's view)
	var waited float64     // PE iterations that waited for their ω, per timed iteration
	var reported float64   // PE iterations reported to the decider, per timed PE iteration
	var reportMsgs float64 // messages carrying those reports, per timed PE iteration
	var packets float64    // stage packets per timed iteration (all PEs)
	err := runNodes(clPEs, 1, name, func(m *benchMain) error {
		x, err := newExchange(m, clElems, size)
		if err != nil {
			return err
		}
		tuned, err := x.add(comlib.EachToMany(comlib.EachToManyOptions{Router: "group", Tune: true, Sources: x.arr}))
		if err != nil {
			return err
		}
		def, err := x.add(comlib.EachToMany(comlib.EachToManyOptions{Router: "group", Sources: x.arr}))
		if err != nil {
			return err
		}
		if _, err := x.run(tuned, clTuneWarm); err != nil {
			return err
		}
		if _, err := x.run(def, 2); err != nil { // the first iteration learns the sources
			return err
		}
		first := x.next[tuned]
		s0 := x.insts[tuned].Stats()
		for i := 0; i < pairsOf(cfg); i++ {
			// Each run settled first, and the order swapped every pair
			// (runOrder): in a fixed order one instance always paid for
			// what the other's run left behind.
			var us [2]float64
			for _, k := range runOrder(i, 2) {
				if us[k], err = settledRun(x, [2]int{tuned, def}[k], iters); err != nil {
					return err
				}
			}
			fig.value, fig.baseline = append(fig.value, us[0]), append(fig.baseline, us[1])
		}
		in := x.insts[tuned]
		s1 := in.Stats()
		waited = float64(s1.Waited-s0.Waited) / float64(x.next[tuned]-first)
		reported = float64(s1.Reported-s0.Reported) / float64((x.next[tuned]-first)*clPEs)
		reportMsgs = float64(s1.ReportMsgs-s0.ReportMsgs) / float64((x.next[tuned]-first)*clPEs)
		packets = float64(s1.Packets-s0.Packets) / float64(x.next[tuned]-first)
		for it, byPE := range in.FanOuts() {
			if it < first {
				continue
			}
			w := -1
			for pe, v := range byPE {
				if w >= 0 && v != w {
					return fmt.Errorf("%s: iteration %d ran with ω %d on PE %d and %d elsewhere", name, it, v, pe, w)
				}
				w = v
			}
			used[w]++
		}
		if len(used) == 0 {
			return fmt.Errorf("%s: no timed iteration of the tuned instance went through the router", name)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	var ws []int
	top := 0
	for w := range used {
		ws = append(ws, w)
		if used[w] > used[top] {
			top = w
		}
	}
	sort.Ints(ws)
	var parts []string
	for _, w := range ws {
		parts = append(parts, fmt.Sprintf("%d:%d", w, used[w]))
	}
	fig.note = fmt.Sprintf("omega=%d default_omega=%d waited_per_iteration=%.2f reported=%.2f report_msgs=%.3f packets_per_iteration=%.0f omega_iterations=%s", top, schedule.DefaultOmega(clPEs), waited, reported, reportMsgs, packets, strings.Join(parts, ","))
	return []figure{fig}, nil
}
