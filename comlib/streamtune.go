package comlib

import (
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/internal/core"
	"github.com/charmgo/charm/tune"
	"github.com/charmgo/charm/tune/tunedebug"
)

// streamTuner tunes a Streaming instance on one PE: the cap of messages
// per buffer and, if the instance has a period, the flush period. The two
// tuners take turns, one window of messages each, every window scored by
// its wall time per message; the other's value stays in force meanwhile.
type streamTuner struct {
	t      *stream
	cap    *tune.Tuner
	period *tune.Tuner // nil without a period
	turn   int         // 0: the cap is being evaluated, 1: the period
	n      int         // messages in the current window
	start  time.Time
}

func newStreamTuner(t *stream) (*streamTuner, error) {
	// The cap is tuned as its base-2 logarithm: a buffer size's effect is
	// about its scale, and steps of a fixed ratio explore 8 and 4096 alike.
	ct, err := tune.New(tune.Options{Min: 0, Start: math.Log2(float64(t.sp.MaxMsgs)), Step: 1, MinStep: 0.25})
	if err != nil {
		return nil, fmt.Errorf("comlib: %v: tuning the cap: %w", t.in, err)
	}
	st := &streamTuner{t: t, cap: ct}
	if t.sp.Period > 0 {
		us := float64(t.sp.Period) / float64(time.Microsecond)
		min := math.Min(10, us)
		if st.period, err = tune.New(tune.Options{Min: min, Start: us, Step: math.Max(us/2, min), MinStep: math.Max(us/8, min)}); err != nil {
			return nil, fmt.Errorf("comlib: %v: tuning the period: %w", t.in, err)
		}
	}
	pe := t.s.pe.ID()
	t.in.st.tuned(pe, nil, nil) // known from the start, even before a window ends
	for _, name := range []string{"cap", "period"} {
		if name == "period" && st.period == nil {
			continue
		}
		name := name
		tunedebug.ReportFunc(t.s.pe.Job(), fmt.Sprintf("comlib%d-pe%d-%s", t.in.id, pe, name), func() []tune.Point {
			tu := t.in.st.tuning(pe)
			if name == "cap" {
				return tu.Cap
			}
			return tu.Period
		})
	}
	return st, nil
}

// count notes one message sent through the instance; a full window is an
// evaluation.
func (st *streamTuner) count() {
	if st.t.sp.Scored {
		return // the program scores (Instance.Score)
	}
	if st.n == 0 {
		st.start = time.Now()
	}
	st.n++
	if st.n < st.t.sp.Window {
		return
	}
	cost := float64(time.Since(st.start).Nanoseconds()) / float64(st.n)
	st.n = 0
	if err := st.observe(cost); err != nil {
		st.t.s.pe.Fail(err)
	}
}

// observe ends an evaluation of the value in force with its cost, and puts
// the tuners' next values in force.
func (st *streamTuner) observe(cost float64) error {
	if !(cost >= 0) || math.IsInf(cost, 0) { // (a window timed at 0 on a coarse clock is fine)
		return fmt.Errorf("comlib: %v: a tuning cost of %v: want a finite number ≥ 0", st.t.in, cost)
	}
	tu := st.cap
	if st.turn == 1 {
		tu = st.period
	}
	v := tu.Value()
	if st.turn == 0 {
		v = float64(st.capOf(v))
	}
	if err := tu.Observe(cost); err != nil {
		return fmt.Errorf("comlib: %v: %w", st.t.in, err)
	}
	pt := tune.Point{Value: v, Cost: cost}
	if st.turn == 0 {
		st.t.in.st.tuned(st.t.s.pe.ID(), &pt, nil)
	} else {
		st.t.in.st.tuned(st.t.s.pe.ID(), nil, &pt)
	}
	st.apply()
	if st.period != nil {
		st.turn = 1 - st.turn
	}
	return nil
}

// apply puts the tuners' values in force.
func (st *streamTuner) apply() {
	c := st.capOf(st.cap.Value())
	if err := st.t.ch.SetCaps(c, st.t.sp.MaxBytes); err != nil {
		st.t.s.pe.Fail(fmt.Errorf("comlib: %v: %w", st.t.in, err))
	}
	if st.period != nil {
		st.t.period = time.Duration(st.period.Value() * float64(time.Microsecond))
	}
}

// capOf is the cap for the cap tuner's value (a base-2 logarithm).
func (st *streamTuner) capOf(v float64) int { return max(1, int(math.Round(math.Exp2(v)))) }

// Tuning is what a PE's tuners did. For a Streaming instance with Tune:
// one point per evaluation (a window of messages), the value in force and
// its wall time per message in nanoseconds. Cap values are messages (tuned
// as their base-2 logarithm); period values are microseconds; Period is
// empty when the instance has no period. For an EachToMany instance with
// Tune, PE 0 (the decider) has Omega: one point per evaluation, the fan-out
// ω in force and the mean over its measured iterations of the slowest
// participant's exchange time, in nanoseconds.
type Tuning struct {
	PE                 int
	Cap, Period, Omega []tune.Point // the latest tune.MaxTrajectory evaluations each

	caps, periods int // evaluations so far
}

// Tuning returns, for each PE of this process that tunes the instance
// (StreamOptions.Tune; for EachToManyOptions.Tune, PE 0 alone), the
// trajectory of its parameters, by PE.
func (in *Instance) Tuning() []Tuning {
	if in.st == nil {
		return nil
	}
	in.st.mu.Lock()
	defer in.st.mu.Unlock()
	var out []Tuning
	for _, tu := range in.st.tunings {
		out = append(out, tu.copy())
	}
	sort.Slice(out, func(i, j int) bool { return out[i].PE < out[j].PE })
	return out
}

// tuned appends an evaluation to a PE's trajectory (nil: none).
func (s *Stats) tuned(pe int, capPt, periodPt *tune.Point) {
	s.mu.Lock()
	defer s.mu.Unlock()
	tu := s.tuningOf(pe)
	if capPt != nil {
		tu.caps++
		capPt.Eval = tu.caps
		tu.Cap = tune.Append(tu.Cap, *capPt)
	}
	if periodPt != nil {
		tu.periods++
		periodPt.Eval = tu.periods
		tu.Period = tune.Append(tu.Period, *periodPt)
	}
}

// tuningOf returns a PE's trajectories, made if need be (s.mu held).
func (s *Stats) tuningOf(pe int) *Tuning {
	if s.tunings == nil {
		s.tunings = map[int]*Tuning{}
	}
	tu := s.tunings[pe]
	if tu == nil {
		tu = &Tuning{PE: pe}
		s.tunings[pe] = tu
	}
	return tu
}

// tuning is a copy of a PE's trajectories.
func (s *Stats) tuning(pe int) Tuning {
	s.mu.Lock()
	defer s.mu.Unlock()
	tu := s.tunings[pe]
	if tu == nil {
		return Tuning{PE: pe}
	}
	return tu.copy()
}

func (tu *Tuning) copy() Tuning {
	return Tuning{PE: tu.PE, Cap: append([]tune.Point(nil), tu.Cap...), Period: append([]tune.Point(nil), tu.Period...),
		Omega: append([]tune.Point(nil), tu.Omega...)}
}

// Flush sends the calling PE's buffers of the comlib instance that a proxy
// is delegated to (pass proxy.Delegated()), from any process: EasyMSG's
// flush, for a program that knows a phase of sends is over before the PE
// runs out of work. A proxy delegated elsewhere is an error naming it.
func Flush(from chare.Context, d chare.Delegate) error {
	r, err := core.Resolve(from, d)
	if err != nil {
		return err
	}
	in, ok := r.(*Instance)
	if !ok {
		return fmt.Errorf("comlib: Flush of a proxy delegated to %T, not to a comlib instance", r)
	}
	return in.Flush(from)
}

// Flush sends this PE's buffers of the instance now (EasyMSG's flush); for
// an EachToMany instance with Tune, the reports about ω that the PE holds
// (see FanOuts); for an Auto instance, its parts'. It does nothing for an instance that buffers nothing; on a PE where the
// instance is not ready yet it waits, after the sends made before it, and
// flushes what they buffered. Call it from an entry method on the PE whose
// buffers should leave.
func (in *Instance) Flush(from chare.Context) error {
	return in.do(from, opFlush, nil, 0)
}

// Score ends, on the calling PE, an evaluation of the Streaming instance's
// tuned cap (and period) with the cost the program measured since the
// last Score — its iteration's time, say (StreamOptions.Scored). The cost
// must be positive and finite. On an Auto instance it goes to every part
// that is a streaming container with tune=true and scored=true (one at
// least, else an error), whether or not that part carried messages since
// the last Score: give a tree at most one scored streaming container per
// size range the program uses, or a part that carried nothing is scored
// with another part's cost. On a PE where the instance is not ready
// yet, the score waits behind the sends made before it, and then a Score
// on an instance that is not Streaming with Tune and Scored ends the job
// (when the instance is ready, it is an error returned here).
func (in *Instance) Score(from chare.Context, cost float64) error {
	if !(cost > 0) || math.IsInf(cost, 0) {
		return fmt.Errorf("comlib: Score on %v with a cost of %v: want a positive, finite number", in, cost)
	}
	return in.doOp(from, op{kind: opScore, cost: cost})
}

// Buffering returns the cap of messages per buffer and the flush period in
// force on the calling PE for a Streaming instance (tuned ones change
// them), or for an Auto instance with one Streaming part, that part's; an
// error for another strategy or an instance not ready here.
func (in *Instance) Buffering(from chare.Context) (maxMsgs int, period time.Duration, err error) {
	pe := chare.PEOf(from)
	if pe == nil {
		return 0, 0, chare.ErrNoContext
	}
	if in == nil || in.id == 0 || pe.Job() != in.job {
		return 0, 0, fmt.Errorf("comlib: Buffering of an instance that is not this job's")
	}
	strat, err := stateOf(pe).strategyOf(in.id)
	if err != nil {
		return 0, 0, fmt.Errorf("comlib: Buffering of %v: %w", in, err)
	}
	if a, ok := strat.(*autoPE); ok {
		if len(a.streams) != 1 {
			return 0, 0, fmt.Errorf("comlib: Buffering of %v, an Auto instance with %d Streaming parts, not one (ask its Parts)", in, len(a.streams))
		}
		part := a.parts[a.streams[0]]
		if strat, err = stateOf(pe).strategyOf(part.id); err != nil {
			return 0, 0, fmt.Errorf("comlib: Buffering of %v: its part %v: %w", in, part, err)
		}
	}
	t, ok := strat.(*stream)
	if !ok {
		return 0, 0, fmt.Errorf("comlib: Buffering of %v, which is not Streaming", in)
	}
	return t.ch.Options().MaxItems, t.period, nil
}
