package comlib_test

import (
	"bytes"
	"encoding/csv"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/array"
	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/chare/reducer"
	"github.com/charmgo/charm/comlib"
	"github.com/charmgo/charm/internal/core"
	"github.com/charmgo/charm/tune/tunedebug"
)

// tagSink records the tags it gets: each must come once.
type tagSink struct {
	array.Element[tagSink, int]
	Seen       map[uint64]bool
	Count, Dup int64
	Sum        int64
}

func (s *tagSink) Got(m comlib.Tagged[int64]) {
	if s.Seen == nil {
		s.Seen = map[uint64]bool{}
	}
	if s.Seen[m.Tag] {
		s.Dup++
	}
	s.Seen[m.Tag] = true
	if int64(m.Tag) != m.Data {
		s.Dup++ // the tag no longer identifies its data
	}
	s.Count++
	s.Sum += m.Data
}

func (s *tagSink) Totals(cb chare.Callback) {
	_ = s.Contribute([]int64{s.Count, s.Sum, s.Dup}, reducer.SumInt64, cb)
}

// tagTalker sends n tagged messages round-robin over the sinks; tags are
// unique in the job.
type tagTalker struct {
	array.Element[tagTalker, int]
}

type tagTalk struct {
	To       array.Proxy[tagSink, int]
	Sinks, N int
	Flush    bool // flush the instance's buffers after the last send
}

func (t *tagTalker) Talk(m tagTalk) {
	for i := 0; i < m.N; i++ {
		tag := uint64(t.ThisIndex())<<32 | uint64(i)
		if err := chare.Send(t, m.To.At((i+t.ThisIndex())%m.Sinks), (*tagSink).Got, comlib.Tagged[int64]{Tag: tag, Data: int64(tag)}); err != nil {
			t.Abort(err)
			return
		}
	}
	if m.Flush {
		if err := comlib.Flush(t, m.To.Delegated()); err != nil {
			t.Abort(err)
		}
	}
}

func init() {
	chare.Register[tagSink]()
	chare.Register[tagTalker]()
}

type tuneResult struct {
	totals []int64
	tuning []comlib.Tuning
	inst   int
	stats  comlib.StatsSnapshot
}

const tuneTalkers, tuneSinks, tuneN = 8, 16, 2000

func wantTags() (count, sum int64) {
	for t := 0; t < tuneTalkers; t++ {
		for i := 0; i < tuneN; i++ {
			count++
			sum += int64(uint64(t)<<32 | uint64(i))
		}
	}
	return
}

func tuneJob(o comlib.StreamOptions, r *tuneResult) func(*tmain, []string) {
	return tagJob(comlib.Streaming(o), false, r)
}

func tagJob(s comlib.Strategy, flush bool, r *tuneResult) func(*tmain, []string) {
	return func(m *tmain, _ []string) {
		fail := func(err error) { m.Abort(err) }
		sinks, err := array.New[tagSink](m, array.Dims(tuneSinks))
		if err != nil {
			fail(err)
			return
		}
		talkers, err := array.New[tagTalker](m, array.Dims(tuneTalkers))
		if err != nil {
			fail(err)
			return
		}
		inst, err := comlib.New(m, s)
		if err != nil {
			fail(err)
			return
		}
		if err := chare.Send(m, talkers, (*tagTalker).Talk, tagTalk{To: sinks.Delegate(inst), Sinks: tuneSinks, N: tuneN, Flush: flush}); err != nil {
			fail(err)
			return
		}
		qd := chare.NewFuture[any](m)
		m.DetectQuiescence(qd.Callback())
		if _, err := qd.Get(m); err != nil {
			fail(err)
			return
		}
		f := chare.NewFuture[[]int64](m)
		if err := chare.Send(m, sinks, (*tagSink).Totals, f.Callback()); err != nil {
			fail(err)
			return
		}
		if r.totals, err = f.Get(m); err != nil {
			fail(err)
			return
		}
		r.tuning, r.inst, r.stats = inst.Tuning(), inst.ID(), inst.Stats()
		m.Exit(0)
	}
}

// checkTuned: every tagged message arrived exactly once, and on every PE
// of this process that sent, the cap (and the period, when there is one)
// took more than one value, each at least its bound.
func checkTuned(t *testing.T, r tuneResult, pes []int, period bool) {
	t.Helper()
	count, sum := wantTags()
	require.Equal(t, []int64{count, sum, 0}, r.totals, "count, sum, duplicates or mislabelled")
	got := map[int]comlib.Tuning{}
	for _, tu := range r.tuning {
		got[tu.PE] = tu
	}
	for _, pe := range pes {
		tu, ok := got[pe]
		require.True(t, ok, "PE %d tuned", pe)
		series := map[string][]float64{}
		for _, p := range tu.Cap {
			series["cap"] = append(series["cap"], p.Value)
			require.GreaterOrEqual(t, p.Value, 1.0)
			require.Positive(t, p.Cost)
		}
		if period {
			for _, p := range tu.Period {
				series["period"] = append(series["period"], p.Value)
				require.GreaterOrEqual(t, p.Value, 10.0, "µs")
			}
		} else {
			require.Empty(t, tu.Period, "no period to tune")
		}
		for name, vs := range series {
			distinct := map[float64]bool{}
			for _, v := range vs {
				distinct[v] = true
			}
			require.Greater(t, len(distinct), 1, "PE %d: the %s moved: %v", pe, name, vs)
		}
	}
}

// TestStreamingTunes: Streaming (and MeshStreaming) with Tune moves its cap (and its period)
// on every PE while every message still arrives exactly once, identified
// by its tag; -tunedebug writes each trajectory as CSV and SVG.
func TestStreamingTunes(t *testing.T) {
	for _, c := range []struct {
		name string
		o    comlib.StreamOptions
		mesh bool
	}{
		{"cap", comlib.StreamOptions{MaxMsgs: 16, Tune: true, Window: 64}, false},
		{"cap and period", comlib.StreamOptions{MaxMsgs: 16, Period: 500 * time.Microsecond, NoIdleFlush: true, Tune: true, Window: 64}, false},
		{"mesh", comlib.StreamOptions{MaxMsgs: 16, Tune: true, Window: 64}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			var r tuneResult
			s := comlib.Streaming(c.o)
			if c.mesh {
				s = comlib.MeshStreaming(c.o)
			}
			code, err := chare.Run(chare.Config{PEs: 4, Timeout: 60 * time.Second, Flags: map[string]string{tunedebug.Flag: dir}}, tagJob(s, false, &r))
			require.NoError(t, err)
			require.Zero(t, code)
			period := c.o.Period > 0
			if len(r.tuning) > 0 {
				t.Logf("PE %d: cap %v; period %v", r.tuning[0].PE, r.tuning[0].Cap, r.tuning[0].Period)
			}
			checkTuned(t, r, []int{0, 1, 2, 3}, period)
			require.Less(t, r.stats.Packets, r.stats.Messages/4, "still aggregating: %v", r.stats)
			for _, tu := range r.tuning {
				for name, pts := range map[string]int{"cap": len(tu.Cap), "period": len(tu.Period)} {
					if name == "period" && !period {
						continue
					}
					base := filepath.Join(dir, fmt.Sprintf("comlib%d-pe%d-%s", r.inst, tu.PE, name))
					f, err := os.Open(base + ".csv")
					require.NoError(t, err)
					rows, err := csv.NewReader(f).ReadAll()
					f.Close()
					require.NoError(t, err)
					require.Len(t, rows, pts+1, "%s: header and a row per evaluation", base)
					b, err := os.ReadFile(base + ".svg")
					require.NoError(t, err)
					require.Equal(t, 2*pts, countCircles(t, b), "%s: a circle per evaluation in each panel", base)
				}
			}
		})
	}
}

func countCircles(t *testing.T, b []byte) int {
	d := xml.NewDecoder(bytes.NewReader(b))
	n := 0
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			return n
		}
		require.NoError(t, err)
		if e, ok := tok.(xml.StartElement); ok && e.Name.Local == "circle" {
			n++
		}
	}
}

// TestStreamingTunesAcrossProcesses: the same over two processes; node
// 0 sees the trajectories of its own PEs (0 and 1).
func TestStreamingTunesAcrossProcesses(t *testing.T) {
	var r tuneResult
	runJob(t, 4, 2, tuneJob(comlib.StreamOptions{MaxMsgs: 16, Tune: true, Window: 64}, &r))
	checkTuned(t, r, []int{0, 1}, false)
	for _, tu := range r.tuning {
		require.Less(t, tu.PE, 2, "only this process's PEs")
	}
}

// TestE03_FlushSendsWhatWaits: with caps that are never reached and
// neither a period nor idle flushes, messages leave only because each
// sender calls comlib.Flush after its last send (in one process and in
// two); without it the job would not end (its timeout fails the test).
func TestE03_FlushSendsWhatWaits(t *testing.T) {
	o := comlib.StreamOptions{MaxMsgs: 1 << 20, MaxBytes: 1 << 30, NoIdleFlush: true}
	count, sum := wantTags()
	t.Run("1proc", func(t *testing.T) {
		var r tuneResult
		runJob(t, 4, 1, tagJob(comlib.Streaming(o), true, &r))
		require.Equal(t, []int64{count, sum, 0}, r.totals)
		require.Positive(t, r.stats.Packets)
		require.LessOrEqual(t, r.stats.Packets, int64(tuneTalkers*4), "from the flushes alone: at most one block per talker and PE")
	})
	t.Run("2proc", func(t *testing.T) {
		var r tuneResult
		runJob(t, 4, 2, tagJob(comlib.Streaming(o), true, &r))
		require.Equal(t, []int64{count, sum, 0}, r.totals)
	})
}

func TestFlushNeedsAComlibProxy(t *testing.T) {
	runJob(t, 1, 1, func(m *tmain, _ []string) {
		defer m.Exit(0)
		err := comlib.Flush(m, countingDelegate{})
		if err == nil || !strings.Contains(err.Error(), "countingDelegate, not to a comlib instance") {
			m.Abort(fmt.Errorf("want an error naming the delegate, got %v", err))
		}
	})
}

type countingDelegate struct{}

func (countingDelegate) Send(chare.Context, chare.Envelope) error      { return nil }
func (countingDelegate) Broadcast(chare.Context, chare.Envelope) error { return nil }
func (countingDelegate) Multicast(chare.Context, chare.Envelope) error { return nil }

// scoredTalker runs iterations on its PE: each sends a few tagged
// messages through a Streaming instance with Scored, reads the cap in
// force and scores the iteration by a cost whose optimum the sender's own
// time cannot see (cap 32: what the receivers would want, say).
type scoredTalker struct {
	array.Element[scoredTalker, int]
	Caps []int
}

type scoredStep struct {
	To    array.Proxy[tagSink, int]
	I, N  int
	Done  chare.Callback
	Valid chare.Callback // errors Score and Buffering must give
}

// scoredCost is 1 + (log2(cap) − 5)²: lowest at cap 32.
func scoredCost(cap int) float64 {
	d := math.Log2(float64(cap)) - 5
	return 1 + d*d
}

func (s *scoredTalker) Step(m scoredStep) {
	for k := 0; k < 8; k++ {
		tag := uint64(s.ThisIndex())<<32 | uint64(m.I*8+k)
		if err := chare.Send(s, m.To.At(k%tuneSinks), (*tagSink).Got, comlib.Tagged[int64]{Tag: tag, Data: int64(tag)}); err != nil {
			s.Abort(err)
			return
		}
	}
	d, err := core.Resolve(s, m.To.Delegated())
	if err != nil {
		s.Abort(err)
		return
	}
	in := d.(*comlib.Instance)
	if cap, _, err := in.Buffering(s); err == nil { // not ready on this PE yet: no score
		s.Caps = append(s.Caps, cap)
		if err := in.Score(s, scoredCost(cap)); err != nil {
			s.Abort(err)
			return
		}
	}
	if m.I+1 < m.N {
		m.I++
		if err := chare.Send(s, s.ThisProxy().At(s.ThisIndex()), (*scoredTalker).Step, m); err != nil {
			s.Abort(err)
		}
		return
	}
	var errs []string
	for _, cost := range []float64{0, -1, math.NaN(), math.Inf(1)} {
		if err := in.Score(s, cost); err != nil {
			errs = append(errs, err.Error())
		}
	}
	if err := m.Valid.Send(s, errs); err != nil {
		s.Abort(err)
		return
	}
	if err := m.Done.Send(s, s.Caps); err != nil {
		s.Abort(err)
	}
}

func init() { chare.Register[scoredTalker]() }

// TestStreamingScoredByTheProgram: with Scored, the program's Score calls
// are the evaluations: the cap moves from 4 to the optimum of a cost the
// sender's own time cannot see (32), and stays near it; a cost that is not positive and
// finite is an error, and so are Score on an instance that is not scored
// and Scored without Tune.
func TestStreamingScoredByTheProgram(t *testing.T) {
	const steps = 120
	var caps []int
	var errs []string
	runJob(t, 2, 1, func(m *tmain, _ []string) {
		sinks, err := array.New[tagSink](m, array.Dims(tuneSinks))
		require.NoError(t, err)
		talkers, err := array.New[scoredTalker](m, array.Dims(1))
		require.NoError(t, err)
		inst, err := comlib.New(m, comlib.Streaming(comlib.StreamOptions{MaxMsgs: 4, Tune: true, Scored: true}))
		require.NoError(t, err)
		ready := chare.NewFuture[any](m) // the instance is ready on every PE
		m.DetectQuiescence(ready.Callback())
		_, err = ready.Get(m)
		require.NoError(t, err)
		done, valid := chare.NewFuture[[]int](m), chare.NewFuture[[]string](m)
		require.NoError(t, chare.Send(m, talkers.At(0), (*scoredTalker).Step, scoredStep{To: sinks.Delegate(inst), N: steps, Done: done.Callback(), Valid: valid.Callback()}))
		caps, err = done.Get(m)
		require.NoError(t, err)
		errs, err = valid.Get(m)
		require.NoError(t, err)

		// Score on a Streaming instance that scores by itself.
		plain, err := comlib.New(m, comlib.Streaming(comlib.StreamOptions{Tune: true}))
		require.NoError(t, err)
		qd := chare.NewFuture[any](m)
		m.DetectQuiescence(qd.Callback())
		_, err = qd.Get(m)
		require.NoError(t, err)
		// Ready on PE 0 by now: the score runs at once and returns its error.
		require.ErrorContains(t, plain.Score(m, 1), "not Streaming with StreamOptions{Tune: true, Scored: true}")
		_, err = comlib.New(m, comlib.Streaming(comlib.StreamOptions{Scored: true}))
		require.ErrorContains(t, err, "needs Tune")
		m.Exit(0)
	})
	require.Len(t, errs, 4, "costs 0, -1, NaN and +Inf refused: %v", errs)
	for _, e := range errs {
		require.Contains(t, e, "positive, finite")
	}
	require.Len(t, caps, steps, "every iteration scored: %v", caps)
	requireNearOptimum(t, caps)
}

// TestAutoStreamingContainerScored: a selection file's streaming
// container with tune=true and scored=true reaches Auto: Buffering on the
// Auto instance reads its one Streaming part's cap, and the program's
// Score calls on the instance are that part's evaluations, so the cap
// moves from the file's maxmsgs=4 to the cost's optimum (32) as it does
// on a Streaming instance made directly. Score on an Auto instance none
// of whose parts is scored is an error naming its parts.
func TestAutoStreamingContainerScored(t *testing.T) {
	const steps = 120
	const tree = `{"msg_size<=64": {"strategy=streaming": {"maxmsgs=4": {}, "tune=true": {}, "scored=true": {}}},
 "msg_size=any": {"strategy=direct": {}}}`
	var caps []int
	var parts []string
	var plainErr error
	runJob(t, 2, 1, func(m *tmain, _ []string) {
		sinks, err := array.New[tagSink](m, array.Dims(tuneSinks))
		require.NoError(t, err)
		talkers, err := array.New[scoredTalker](m, array.Dims(1))
		require.NoError(t, err)
		inst, err := comlib.New(m, comlib.Auto(comlib.AutoOptions{Tree: mustTree(t, tree)}))
		require.NoError(t, err)
		plain, err := comlib.New(m, comlib.Auto(comlib.AutoOptions{Tree: mustTree(t,
			`{"msg_size<=64": {"strategy=streaming": {"tune=true": {}}}, "msg_size=any": {"strategy=direct": {}}}`)}))
		require.NoError(t, err)
		ready := chare.NewFuture[any](m) // the instances are ready on every PE
		m.DetectQuiescence(ready.Callback())
		_, err = ready.Get(m)
		require.NoError(t, err)
		for _, p := range inst.Parts() {
			parts = append(parts, p.String())
		}
		plainErr = plain.Score(m, 1)
		done, valid := chare.NewFuture[[]int](m), chare.NewFuture[[]string](m)
		require.NoError(t, chare.Send(m, talkers.At(0), (*scoredTalker).Step, scoredStep{To: sinks.Delegate(inst), N: steps, Done: done.Callback(), Valid: valid.Callback()}))
		caps, err = done.Get(m)
		require.NoError(t, err)
		_, err = valid.Get(m)
		require.NoError(t, err)
		m.Exit(0)
	})
	require.Len(t, parts, 2, "a streaming part and a direct one")
	require.ErrorContains(t, plainErr, "none of whose parts (strategy=streaming(tune=true), strategy=direct) is a streaming container with tune=true and scored=true")
	require.Len(t, caps, steps, "every iteration scored: %v", caps)
	require.Equal(t, 4, caps[0], "the search starts at the file's maxmsgs")
	requireNearOptimum(t, caps)
}

// requireNearOptimum checks that at least 15 of the last 20 caps are
// within 16..64, around the program's optimum of 32 (the search starts
// at 4).
func requireNearOptimum(t *testing.T, caps []int) {
	t.Helper()
	t.Logf("caps: %v", caps)
	last := caps[len(caps)-20:]
	near := 0
	for _, c := range last {
		if c >= 16 && c <= 64 {
			near++
		}
	}
	require.GreaterOrEqual(t, near, 15, "of the last 20 caps within 16..64 (optimum 32, start 4): %v", last)
}
