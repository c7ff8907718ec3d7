package tram

import (
	"fmt"
	"math"
	"time"

	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/tune"
	"github.com/charmgo/charm/tune/tunedebug"
)

// Online tuning (Options.Tune). The PE that calls Start holds a
// tune.Tuner over log2 of the items per peer's buffer, so that the
// explorative exponential search (E06–E09) doubles and halves the buffer:
// from the configured size it tries ×2, ×8, … while steps get cheaper, and
// closes in when one is dearer. Each step is scored by its time per item:
// from Start to the step's Finished callback, over the items inserted on
// that PE during the step (a step's time, if it inserted none). Start puts
// the size to use in the step's begin message, so every PE's buffers
// change together at a step boundary, when they are empty. A flush period,
// if one is set, scales with the buffer (a larger buffer fills more
// slowly), times a factor that a second search tunes (over log2 of the
// factor, within 1/8 and 8): while the size search holds its settled size
// (Options.Hold below), a held score of the size and a score of the
// factor take turns, each measured with the other parameter still
// (tune.Tuner.Between), so the period never moves under a try of the size.
// Quiescence steps have no Finished and are not tuned.
//
// A step's time on a shared machine is noisy, and the configured size is
// usually a good one, so the search is made to earn every move: a value is
// scored by the median of 4 steps (a step slowed by another program does
// not count), a try must beat its anchor by tuneMargin and by tuneZ
// standard errors, measured in turn with it, to replace it, and
// once the search has settled it holds its best size for tuneHold scores
// before it tries the neighbours again, so that most steps run at the best
// size rather than at tries (with a flush period set, a score of the
// period's factor comes between each two held scores: the size is held
// for 64 to 96 steps, and the period's scores, its tries among them, take
// about half of them). It has no Jump (tune.Options): on a shared
// machine a spoilt score is far likelier than a moved optimum, and the
// hold ends after tuneHold scores anyway (see package tune's
// TestE12_TunedBufferKeepsAGoodStart).

// maxTunedItems caps the buffer the search may try.
const maxTunedItems = 1 << 16

// tuneBand: without TuneMin and TuneMax the search stays within a factor
// of tuneBand of the configured size, so that an unbounded search cannot
// settle on a size no step ever fills.
const tuneBand = 8

const (
	tuneMargin = 0.02 // a try must be 2 % faster than its anchor to move it
	tuneHold   = 8    // scores (of 4 steps) to hold the best size once settled
	// tuneZ: and faster by 2 standard errors of the steps' spread
	// (tune.Options.Z), measured in turn with the anchor's steps
	// (tune.Options.Paired), so that one lucky score on a shared machine
	// does not move the search on the margin alone.
	tuneZ = 2
)

// checkTuneBounds refuses Options.TuneMin and TuneMax out of range or out
// of order (0 leaves a bound to tuneBounds).
func checkTuneBounds(lo, hi int) error {
	if lo < 0 || hi < 0 || lo > maxTunedItems || hi > maxTunedItems || lo > 0 && hi > 0 && lo > hi {
		return fmt.Errorf("tram: tuned buffer bounds TuneMin=%d, TuneMax=%d are not within [1, %d] in order (0: unset)", lo, hi, maxTunedItems)
	}
	return nil
}

// tuneBounds resolves Options.TuneMin and TuneMax for a search that
// starts at start items: a bound left 0 is start/tuneBand or
// start×tuneBand (within [1, maxTunedItems], and on the right side of the
// other bound).
func tuneBounds(lo, hi, start int) (int, int, error) {
	if err := checkTuneBounds(lo, hi); err != nil {
		return 0, 0, err
	}
	if hi == 0 {
		hi = min(maxTunedItems, max(lo, start*tuneBand))
	}
	if lo == 0 {
		lo = max(1, min(hi, start/tuneBand))
	}
	return lo, hi, nil
}

// stepTuner is the tuning state on the starting PE.
type stepTuner struct {
	t *tune.Tuner // nil when the bounds hold the size
	// pt tunes log2 of the factor on the flush period; nil without a
	// period, or when the bounds hold the size (the control runs at the
	// configured size and period). periodTurn: the step in force is
	// scored for pt.
	pt         *tune.Tuner
	periodTurn bool
	held       []tune.Point // the held control's steps (the latest tune.MaxTrajectory)
	heldN      int          // steps scored while held
	baseItems  int          // the configured size, within the bounds
	cfgItems   int          // the configured size: the flush period is set for it
	basePeriod time.Duration
	t0         time.Time
	inserted0  int
	items      int           // the size in force
	period     time.Duration // the period in force
	// scored is the Finished callback of every tuned step, made once
	// (function callbacks are kept until the job ends: one a step grew
	// without bound in a long job); fin is
	// the step's own Finished, which it calls after scoring the step.
	scored chare.Callback
	fin    chare.Callback
}

func newStepTuner(items int, period time.Duration, lo, hi int) (*stepTuner, error) {
	lo, hi, err := tuneBounds(lo, hi, items)
	if err != nil {
		return nil, err
	}
	st := &stepTuner{baseItems: min(max(items, lo), hi), cfgItems: max(items, 1), basePeriod: period}
	if lo == hi {
		return st, nil
	}
	lo2, hi2 := math.Log2(float64(lo)), math.Log2(float64(hi))
	step := math.Min(1, hi2-lo2)
	st.t, err = tune.New(tune.Options{Min: lo2, Max: hi2, Start: math.Log2(float64(items)), Step: step, MinStep: step / 2,
		Median: true, Margin: tuneMargin, Hold: tuneHold, Z: tuneZ, Paired: true})
	if err != nil || period <= 0 {
		return st, err
	}
	// Over log2 of the factor shifted by the band, so that the start,
	// factor 1, is not 0 (which tune.Options reads as unset: Min). Factors
	// that would put the configured period below minTunedPeriod are left
	// out: they would all run at the floor (a configured period at the
	// floor or below it is tried upwards only).
	plo := min(max(0, math.Log2(float64(minTunedPeriod)/float64(period))+periodBand), periodBand)
	st.pt, err = tune.New(tune.Options{Min: plo, Max: 2 * periodBand, Start: periodBand, Step: 1, MinStep: 0.5,
		Median: true, Margin: tuneMargin, Hold: tuneHold, Z: tuneZ, Paired: true})
	return st, err
}

// periodBand is log2 of tuneBand: the period's factor stays within 1/8
// and 8.
var periodBand = math.Log2(tuneBand)

// next returns the size and period for the next step.
func (s *stepTuner) next() (int, time.Duration) {
	n := s.baseItems
	if s.t != nil {
		n = int(math.Round(math.Exp2(s.t.Value())))
		n = min(max(n, 1), maxTunedItems)
	}
	var p time.Duration
	if s.basePeriod > 0 {
		p = s.scaledPeriod(n, s.factor())
	}
	s.items, s.period = n, p
	return n, p
}

// observe scores the step in force.
func (s *stepTuner) observe(cost float64) error {
	if s.t == nil {
		s.heldN++
		s.held = tune.Append(s.held, tune.Point{Eval: s.heldN, Value: float64(s.items), Cost: cost})
		return nil
	}
	if s.periodTurn {
		err := s.pt.Observe(cost)
		if s.pt.Between() {
			s.periodTurn = false // a score of the factor made: the size's turn
		}
		return err
	}
	err := s.t.Observe(cost)
	// Settled and holding, between two of its scores: the factor's turn.
	s.periodTurn = s.pt != nil && s.t.Holding() && s.t.Between()
	return err
}

// factor is the flush period's factor in force (1 untuned).
func (s *stepTuner) factor() float64 {
	if s.pt == nil {
		return 1
	}
	return factorOf(s.pt.Value())
}

// factorOf is the factor of the period search's value v.
func factorOf(v float64) float64 { return math.Exp2(v - periodBand) }

// scaledPeriod is the flush period for n items per peer and factor f:
// the configured period scaled to the size, times f, within the floor.
func (s *stepTuner) scaledPeriod(n int, f float64) time.Duration {
	return max(time.Duration(float64(s.basePeriod)*float64(n)/float64(s.cfgItems)*f), minTunedPeriod)
}

// periodTrajectory reports the period factor's search: per step scored
// for it, the flush period at the configured size (µs) and the cost.
func (s *stepTuner) periodTrajectory() []tune.Point {
	if s.pt == nil {
		return nil
	}
	pts := s.pt.Trajectory()
	for i := range pts {
		pts[i].Value = float64(s.scaledPeriod(s.cfgItems, factorOf(pts[i].Value))) / float64(time.Microsecond)
	}
	return pts
}

// bestPeriod is the flush period at the configured size that the period
// search holds best; ok is false without one, or before its first score.
func (s *stepTuner) bestPeriod() (time.Duration, bool) {
	if s.pt == nil {
		return 0, false
	}
	v, _, ok := s.pt.Best()
	if !ok {
		return 0, false
	}
	return s.scaledPeriod(s.cfgItems, factorOf(v)), true
}

// minTunedPeriod is the shortest flush period tuning sets.
const minTunedPeriod = 10 * time.Microsecond

// best returns the best size so far and its score.
func (s *stepTuner) best() (int, float64, bool) {
	if s.t == nil {
		if len(s.held) == 0 {
			return 0, 0, false
		}
		sum := 0.0
		for _, p := range s.held {
			sum += p.Cost
		}
		return s.baseItems, sum / float64(len(s.held)), true
	}
	v, c, ok := s.t.Best()
	return int(math.Round(math.Exp2(v))), c, ok
}

// trajectory reports the buffer sizes (items per peer) and costs (seconds
// per item).
func (s *stepTuner) trajectory() []tune.Point {
	if s.t == nil {
		return append([]tune.Point(nil), s.held...)
	}
	pts := s.t.Trajectory()
	for i := range pts {
		pts[i].Value = math.Round(math.Exp2(pts[i].Value))
	}
	return pts
}

// tuneStep prepares a tuned step on the starting branch: the sizes for m
// and a Finished callback that scores the step, then calls fin.
func (b *branch[C, T]) tuneStep(m *beginMsg, fin chare.Callback, items int, period time.Duration, lo, hi int) (chare.Callback, error) {
	if b.tuner == nil {
		t, err := newStepTuner(items, period, lo, hi)
		if err != nil {
			return fin, err
		}
		b.tuner = t
	}
	st := b.tuner
	m.BufferItems, m.Period = st.next()
	st.t0, st.inserted0, st.fin = time.Now(), b.inserted(), fin
	if st.scored.Kind == 0 {
		st.scored = chare.FuncCallback(b, b.PE(), func(ctx chare.Context, v any) {
			items := max(b.inserted()-st.inserted0, 1)
			if err := st.observe(time.Since(st.t0).Seconds() / float64(items)); err != nil {
				b.Abort(err)
				return
			}
			// -tunedebug DIR writes the trajectory when the job ends.
			name := fmt.Sprintf("tram-%v-pe%d", b.ThisProxy().Route().Coll, b.PE())
			tunedebug.Report(ctx, name, st.trajectory())
			if pts := st.periodTrajectory(); len(pts) > 0 {
				tunedebug.Report(ctx, name+"-period", pts)
			}
			if err := st.fin.Send(ctx, v); err != nil {
				b.Abort(err)
			}
		})
	}
	return st.scored, nil
}

// inserted counts the items inserted on this PE so far (0 before its
// set-up).
func (b *branch[C, T]) inserted() int {
	if b.agg == nil {
		return 0
	}
	return b.agg.Stats().Inserted
}

// resize applies a tuned size and period at the beginning of a step.
func (b *branch[C, T]) resize(items int, period time.Duration) {
	if items > 0 && b.agg != nil {
		b.agg.SetBufferItems(items)
	}
	if period > 0 {
		b.idle.period = period
	}
}

// Tuning returns the tuner's trajectory when the streamer has
// Options.Tune: per step scored for the size (all but the flush period's
// turns), the buffer size (items per peer) and its time per item in
// seconds. It is kept on the PE that calls Start: call it there.
func (s Streamer[C, T]) Tuning(from chare.Context) []tune.Point {
	b, _ := s.branchAny(from)
	if b == nil || b.tuner == nil {
		return nil
	}
	return b.tuner.trajectory()
}

// Tuned returns the buffer size (items per peer) and flush period of the
// last tuned step, from the PE that calls Start; ok is false before one.
func (s Streamer[C, T]) Tuned(from chare.Context) (items int, period time.Duration, ok bool) {
	b, _ := s.branchAny(from)
	if b == nil || b.tuner == nil || b.tuner.items == 0 {
		return 0, 0, false
	}
	return b.tuner.items, b.tuner.period, true
}

// Best returns the best buffer size found so far and its time per item
// (while the size is held, the median of its held scores, which the
// period's tries between them may have moved).
func (s Streamer[C, T]) Best(from chare.Context) (items int, perItem float64, ok bool) {
	b, _ := s.branchAny(from)
	if b == nil || b.tuner == nil {
		return 0, 0, false
	}
	return b.tuner.best()
}

// BestPeriod returns the flush period, at the configured buffer size,
// that the tuning of the period holds best (Options.Tune with a
// FlushPeriod; a step's period also scales with its size). ok is false
// before the period's first score, or without a tuned period.
func (s Streamer[C, T]) BestPeriod(from chare.Context) (period time.Duration, ok bool) {
	b, _ := s.branchAny(from)
	if b == nil || b.tuner == nil {
		return 0, false
	}
	return b.tuner.bestPeriod()
}

// Buffering returns the buffer size (items per peer) and flush period in
// force on the caller's PE: with Options.Tune, what the last step's begin
// message set there. ok is false before the PE's set-up.
func (s Streamer[C, T]) Buffering(from chare.Context) (items int, period time.Duration, ok bool) {
	b, _ := s.branchAny(from)
	if b == nil || b.agg == nil {
		return 0, 0, false
	}
	return b.agg.Sizing().BufferItems, b.idle.period, true
}
