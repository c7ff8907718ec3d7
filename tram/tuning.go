package tram

import (
	"fmt"
	"math"
	"time"

	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/comlib"
	"github.com/charmgo/charm/comlib/tune"
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
// slowly). Quiescence steps have no Finished and are not tuned.

// maxTunedItems caps the buffer the search may try.
const maxTunedItems = 1 << 16

// stepTuner is the tuning state on the starting PE.
type stepTuner struct {
	t          *tune.Tuner
	baseItems  int
	basePeriod time.Duration
	t0         time.Time
	inserted0  int
	items      int           // the size in force
	period     time.Duration // the period in force
}

func newStepTuner(items int, period time.Duration) (*stepTuner, error) {
	t, err := tune.New(tune.Options{Start: math.Log2(float64(items)), Step: 1, MinStep: 0.5})
	if err != nil {
		return nil, err
	}
	return &stepTuner{t: t, baseItems: items, basePeriod: period}, nil
}

// next returns the size and period for the next step.
func (s *stepTuner) next() (int, time.Duration) {
	n := int(math.Round(math.Exp2(s.t.Value())))
	n = min(max(n, 1), maxTunedItems)
	var p time.Duration
	if s.basePeriod > 0 {
		p = max(time.Duration(float64(s.basePeriod)*float64(n)/float64(s.baseItems)), 10*time.Microsecond)
	}
	s.items, s.period = n, p
	return n, p
}

// trajectory reports the buffer sizes (items per peer) and costs (seconds
// per item).
func (s *stepTuner) trajectory() []tune.Point {
	pts := s.t.Trajectory()
	for i := range pts {
		pts[i].Value = math.Round(math.Exp2(pts[i].Value))
	}
	return pts
}

// tuneStep prepares a tuned step on the starting branch: the sizes for m
// and a Finished callback that scores the step, then calls fin.
func (b *branch[C, T]) tuneStep(m *beginMsg, fin chare.Callback, items int, period time.Duration) (chare.Callback, error) {
	if b.tuner == nil {
		t, err := newStepTuner(items, period)
		if err != nil {
			return fin, err
		}
		b.tuner = t
	}
	m.BufferItems, m.Period = b.tuner.next()
	b.tuner.t0, b.tuner.inserted0 = time.Now(), b.inserted()
	return chare.FuncCallback(b.PE(), func(ctx chare.Context, v any) {
		st := b.tuner
		items := max(b.inserted()-st.inserted0, 1)
		if err := st.t.Observe(time.Since(st.t0).Seconds() / float64(items)); err != nil {
			b.Abort(err)
			return
		}
		// -tunedebug DIR writes the trajectory when the job ends.
		comlib.ReportTuning(ctx, fmt.Sprintf("tram-%v-pe%d", b.ThisProxy().Route().Coll, b.PE()), st.trajectory())
		if err := fin.Send(ctx, v); err != nil {
			b.Abort(err)
		}
	}), nil
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
// Options.Tune: per step, the buffer size (items per peer) and its time
// per item in seconds. It is kept on the PE that calls Start: call it
// there.
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

// Best returns the best buffer size found so far and its time per item.
func (s Streamer[C, T]) Best(from chare.Context) (items int, perItem float64, ok bool) {
	b, _ := s.branchAny(from)
	if b == nil || b.tuner == nil {
		return 0, 0, false
	}
	v, c, ok := b.tuner.t.Best()
	return int(math.Round(math.Exp2(v))), c, ok
}
