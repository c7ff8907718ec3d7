package comlib_test

import (
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/array"
	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/comlib"
	"github.com/charmgo/charm/comlib/agree"
	"github.com/charmgo/charm/tune/tunedebug"
)

// TestOmegaTunedPerInstance: an all-to-all through the group router with
// Tune changes its fan-out ω while it runs; every PE exchanges every
// iteration with the same ω (as each reported it to the decider, across
// processes too), also after an element migrates in the middle (a
// recovery); every block arrives exactly once; each PE sends its reports
// once per segment; the trajectory is reported by Instance.Tuning and
// written by -tunedebug. Window 1 makes every PE wait for the ω of each
// iteration: the waiting path all the time.
func TestOmegaTunedPerInstance(t *testing.T) {
	const n, iters, moveAt = 12, 42, 20
	for _, c := range []struct {
		pes, nodes, window int
	}{{6, 1, 0}, {6, 1, 1}, {4, 2, 0}} {
		t.Run(fmt.Sprintf("p%d/%dproc/window%d", c.pes, c.nodes, c.window), func(t *testing.T) {
			dir := t.TempDir()
			var r a2aResult
			moves := map[int]map[int]int{moveAt: {0: c.pes - 1}} // element 0 leaves PE 0 (across processes with 2)
			// Every 1: every segment is reported, also once the search has
			// settled (with the default, the segments after a settle are
			// quiet and PE 0's process would not learn the other process's
			// ω of them; TestOmegaQuietOnceSettled covers that).
			opt := comlib.EachToManyOptions{Router: "group", Tune: true, Window: c.window, Every: 1}
			runJobFlags(t, c.pes, c.nodes, map[string]string{tunedebug.Flag: dir}, a2a(n, iters, opt, moves, &r))
			checkA2A(t, n, iters, r)
			require.Contains(t, r.recovered, moveAt, "the migration was recovered")

			seen := map[int]bool{}
			for it, byPE := range r.fanOuts {
				var w int
				for pe, x := range byPE {
					if w == 0 {
						w = x
					}
					require.Equal(t, w, x, "iteration %d: PE %d ran with ω %d, another with %d (%v)", it, pe, x, w, byPE)
				}
				require.True(t, w >= 1 && w <= c.pes-1, "iteration %d: ω %d outside 1..%d", it, w, c.pes-1)
				seen[w] = true
			}
			// PE 0's process knows its own PEs' ω of every iteration, and
			// the other process's from their reports. A PE sends those of a
			// segment at its last scored iteration, the lead iterations with
			// the next segment's (agree.Batcher), so when the job ends the
			// last segment's lead and the reports of a scored part not yet
			// whole are still held there; what was sent has arrived (the job
			// waits for quiescence before it reads FanOuts).
			known := iters - 1
			if c.nodes > 1 {
				w := max(c.window, 8) // the default Window
				scored := w - agree.DefaultLead(w)
				known = ((iters-scored)/w)*w + scored - 1 // the last segment's last scored iteration
			}
			for it := 1; it <= known; it++ {
				if it == moveAt {
					continue // recovered: no exchange
				}
				require.Len(t, r.fanOuts[it], c.pes, "iteration %d: every PE's ω is known (%v)", it, r.fanOuts[it])
			}
			// One report message per PE per segment, the segment cut by the
			// recovery aside (there the lead iterations fill its score and go
			// one by one), where every iteration used to be one.
			local := int64(c.pes / c.nodes)
			w := max(c.window, 8)
			if c.window == 1 {
				w = 1
			}
			segs := int64((iters + w - 1) / w)
			t.Logf("%d reports in %d messages from PE 0's process", r.stats.Reported, r.stats.ReportMsgs)
			require.Positive(t, r.stats.ReportMsgs)
			require.LessOrEqual(t, r.stats.ReportMsgs, local*(segs+int64(agree.DefaultLead(w))), "report messages")
			require.GreaterOrEqual(t, len(seen), 2, "ω changed while the job ran: %v", seen)
			var byIter []string
			for it := 0; it < iters; it++ {
				for _, w := range r.fanOuts[it] {
					byIter = append(byIter, fmt.Sprintf("%d:%d", it, w))
					break
				}
			}
			t.Logf("ω by iteration: %v", byIter)

			var pts int
			for _, tu := range r.tuning {
				if len(tu.Omega) > 0 {
					require.Equal(t, 0, tu.PE, "PE 0 decides")
					pts = len(tu.Omega)
				}
			}
			require.GreaterOrEqual(t, pts, 4, "evaluations in the trajectory")
			f, err := os.Open(filepath.Join(dir, "comlib1-omega.csv"))
			require.NoError(t, err)
			defer f.Close()
			rows, err := csv.NewReader(f).ReadAll()
			require.NoError(t, err)
			require.Equal(t, []string{"eval", "value", "cost"}, rows[0])
			require.Len(t, rows, pts+1, "one row per evaluation")
			for _, row := range rows[1:] {
				w, err := strconv.ParseFloat(row[1], 64)
				require.NoError(t, err)
				require.True(t, w >= 1 && w <= float64(c.pes-1), "ω %v in the CSV", w)
			}
			_, err = os.Stat(filepath.Join(dir, "comlib1-omega.svg"))
			require.NoError(t, err)
		})
	}
}

// TestOmegaTuneNeedsGroupRouter: Tune is the group router's; another
// router gets an error naming it.
func TestOmegaTuneNeedsGroupRouter(t *testing.T) {
	sp, err := comlib.ParseStrategy("each-to-many:mesh")
	require.NoError(t, err)
	sp.EachToMany.Tune = true
	var got error
	runJob(t, 2, 1, func(m *tmain, _ []string) {
		_, got = comlib.NewSpec(m, sp)
		m.Exit(0)
	})
	require.ErrorContains(t, got, `Tune tunes the group router's fan-out ω; router "mesh" has none`)
}

// TestOmegaTunedFromParsedSpec: a Spec from ParseStrategy with Tune set
// and no Window or Every takes the defaults; a negative Window or Every,
// and Every without Tune, are errors naming them.
func TestOmegaTunedFromParsedSpec(t *testing.T) {
	sp, err := comlib.ParseStrategy("each-to-many:group")
	require.NoError(t, err)
	sp.EachToMany.Tune = true
	var okErr error
	var badErrs []error
	runJob(t, 4, 1, func(m *tmain, _ []string) {
		arr, err := array.New[peer](m, array.Dims(4))
		if err != nil {
			m.Abort(err)
			return
		}
		sp.EachToMany.Sources = arr.Route().Coll
		_, okErr = comlib.NewSpec(m, sp)
		for _, bad := range []func(*comlib.Spec){
			func(s *comlib.Spec) { s.EachToMany.Window = -2 },
			func(s *comlib.Spec) { s.EachToMany.Every = -1 },
			func(s *comlib.Spec) { s.EachToMany.Tune, s.EachToMany.Every = false, 4 },
		} {
			b := sp
			bad(&b)
			_, err := comlib.NewSpec(m, b)
			badErrs = append(badErrs, err)
		}
		m.Exit(0)
	})
	require.NoError(t, okErr)
	require.Len(t, badErrs, 3)
	require.ErrorContains(t, badErrs[0], "Window -2")
	require.ErrorContains(t, badErrs[1], "Every=-1")
	require.ErrorContains(t, badErrs[2], "Every=4 says how often a tuned ω is re-checked; it needs Tune")
}

// TestOmegaQuietOnceSettled: a long all-to-all with Tune settles on an ω
// and then leaves most iterations unreported (EachToManyOptions.Every,
// default 16; with Every 1 all are reported): the
// PEs report far fewer than all their iterations, yet every block arrives
// exactly once and every PE runs every iteration with the same ω — in 1
// process, where FanOuts holds every PE's ω for every iteration, and in
// 2, where PE 0's process holds its own PEs' (and the others' for the
// reported iterations).
func TestOmegaQuietOnceSettled(t *testing.T) {
	const n, iters = 8, 400
	for _, c := range []struct{ pes, nodes, every int }{{4, 1, 0}, {4, 2, 0}, {4, 1, 1}} {
		t.Run(fmt.Sprintf("p%d/%dproc/every%d", c.pes, c.nodes, c.every), func(t *testing.T) {
			var r a2aResult
			opt := comlib.EachToManyOptions{Router: "group", Tune: true, Window: 2, Every: c.every}
			runJob(t, c.pes, c.nodes, a2a(n, iters, opt, nil, &r))
			checkA2A(t, n, iters, r)
			local := c.pes / c.nodes // PEs in PE 0's process
			for it := 1; it < iters; it++ {
				byPE := r.fanOuts[it]
				require.GreaterOrEqual(t, len(byPE), local, "iteration %d: this process's PEs' ω (%v)", it, byPE)
				for pe, w := range byPE {
					require.Equal(t, byPE[0], w, "iteration %d: PE %d ran with ω %d, PE 0 with %d", it, pe, w, byPE[0])
				}
			}
			ran := int64(local * (iters - 1)) // the first iteration is recovered: no exchange
			t.Logf("%d of %d PE iterations reported to the decider, in %d messages", r.stats.Reported, ran, r.stats.ReportMsgs)
			// Segments of 2 iterations, the second the lead: one message
			// per PE per reported segment (agree.Batcher).
			require.LessOrEqual(t, r.stats.ReportMsgs, (r.stats.Reported+int64(local))/2+int64(local), "report messages")
			if c.every == 1 {
				require.Equal(t, ran, r.stats.Reported, "Every 1: every iteration is reported")
				return
			}
			require.Positive(t, r.stats.Reported)
			require.Less(t, r.stats.Reported, ran/2, "most iterations are quiet once the search settles")
		})
	}
}

// FlushReports sends the reports about ω that the element's PE holds
// (Instance.Flush); its result reaches the caller after them.
func (p *peer) FlushReports() int {
	p.must(comlib.Flush(p, p.Cfg.P.Delegated()))
	return p.ThisIndex()
}

// TestOmegaFlushSendsHeldReports: after the last iteration each PE still
// holds the reports of its last segment's lead iterations (agree.Batcher),
// so PE 0's process does not know the other process's ω for them
// (FanOuts); once every PE has called Flush, it knows every PE's ω of
// every iteration, also when the tuned instance is an Auto instance's part
// (Flush on the Auto instance reaches its parts). In one process FanOuts
// knows them all either way.
func TestOmegaFlushSendsHeldReports(t *testing.T) {
	const n, pes = 8, 4
	const iters = 8*5 + 7 // the default Window of 8, its lead 2: iteration 46 is a lead iteration, held
	for _, c := range []struct {
		nodes int
		flush bool
		auto  bool // the tuned instance is the part of an Auto instance
	}{{2, false, false}, {2, true, false}, {1, false, false}, {2, false, true}, {2, true, true}} {
		t.Run(fmt.Sprintf("%dproc/flush=%v/auto=%v", c.nodes, c.flush, c.auto), func(t *testing.T) {
			var r a2aResult
			var flushed []int
			after := func(m *tmain, arr array.Proxy[peer, int]) error {
				if !c.flush {
					return nil
				}
				for i := 0; i < n; i++ {
					f, err := chare.Call0(m, arr.At(i), (*peer).FlushReports)
					if err != nil {
						return err
					}
					got, err := f.Get(m)
					if err != nil {
						return err
					}
					flushed = append(flushed, got)
				}
				return nil
			}
			// Every 1: every segment is reported, settled or not.
			strat := func(arr array.Proxy[peer, int]) comlib.Strategy {
				if c.auto {
					tree := mustTree(t, `{"msg_size=any": {"router=group": {"tune=true": {}, "every=1": {}}}}`)
					return comlib.Auto(comlib.AutoOptions{Tree: tree, Sources: arr})
				}
				return comlib.EachToMany(comlib.EachToManyOptions{Router: "group", Tune: true, Every: 1, Sources: arr})
			}
			runJob(t, pes, c.nodes, a2aThen(n, iters, strat, nil, &r, after))
			checkA2A(t, n, iters, r)
			if c.flush {
				require.Len(t, flushed, n, "every element flushed its PE")
			}
			var missing []int
			for it := 1; it < iters; it++ { // iteration 0 is recovered: no exchange
				if len(r.fanOuts[it]) < pes {
					missing = append(missing, it)
				}
			}
			if c.nodes > 1 && !c.flush {
				require.Contains(t, missing, iters-1, "the last lead iteration's reports are held on the other process's PEs")
				return
			}
			require.Empty(t, missing, "iterations without every PE's ω in PE 0's process")
		})
	}
}
