package overlap_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/overlap"
)

// lost is a Body whose one datum never comes: a few computations, nothing
// to push, never finished.
type lost struct{ comps int }

func (b *lost) Arrived() int       { return 0 }
func (b *lost) Push() (int, error) { return 0, nil }
func (b *lost) Finished() bool     { return false }
func (b *lost) Compute() bool {
	if b.comps == 0 {
		return false
	}
	b.comps--
	return true
}

// deaf has the Wait method of the old Waiter interface, and ignores its
// deadline: it blocks on a future nobody fills. The loop used to call it
// and hang there.
type deaf struct{ lost }

func (b *deaf) Wait(ctx chare.Context, _ time.Time) error {
	_, err := chare.NewFuture[struct{}](ctx).Get(ctx)
	return err
}

// waker has the old Waiter's Wait as overlap/fmm had it: a wake future
// awaited with the deadline, which stayed in the PE's futures table once
// the deadline passed.
type waker struct{ lost }

func (b *waker) Wait(ctx chare.Context, deadline time.Time) error {
	_, err := chare.NewFuture[struct{}](ctx).GetBefore(ctx, deadline)
	return err
}

type tmain struct{ chare.Chare[tmain] }

func init() { chare.Register[tmain]() }

// TestRunCannotHangAndLeavesNothing: on the runtime, a run whose data
// never come ends by its stall bound with ErrStalled, whatever the Body —
// one with a Wait that ignores its deadline too (the loop calls no
// blocking method of a Body: it naps on its own, chare.Nap) — and, three
// runs later, the PE holds no more futures than before (the old wake
// future stayed once per failed run). The loop naps instead of spinning:
// a run makes a few tests, not the thousands a Body without Wait used to
// spin through in the bound, also with p between 0 and 1.
func TestRunCannotHangAndLeavesNothing(t *testing.T) {
	const stall = 50 * time.Millisecond
	type result struct {
		p       float64
		err     error
		elapsed time.Duration
		st      overlap.Stats
	}
	bodies := []struct {
		name string
		make func() overlap.Body
	}{
		{"plain", func() overlap.Body { return &lost{comps: 3} }},
		{"wait ignoring its deadline", func() overlap.Body { return &deaf{lost{comps: 3}} }},
		{"wait on a future", func() overlap.Body { return &waker{lost{comps: 3}} }},
	}
	ps := []float64{0, 0.25, 1}
	results := map[string]result{}
	var before, after int
	code, err := chare.Run(chare.Config{PEs: 1, Timeout: 20 * time.Second}, func(m *tmain, _ []string) {
		before = chare.PEOf(m).PendingFutures()
		for _, b := range bodies {
			for _, p := range ps {
				l, err := overlap.NewLoop(p)
				if err != nil {
					m.Abort(err)
					return
				}
				t0 := time.Now()
				st, err := overlap.RunWith(m, l, b.make(), overlap.Options{Stall: stall})
				results[fmt.Sprintf("%s/p=%v", b.name, p)] = result{p, err, time.Since(t0), st}
			}
		}
		after = chare.PEOf(m).PendingFutures()
		m.Exit(0)
	})
	require.NoError(t, err)
	require.Equal(t, 0, code)
	require.Len(t, results, len(bodies)*len(ps))
	for name, r := range results {
		require.ErrorIs(t, r.err, overlap.ErrStalled, name)
		require.ErrorContains(t, r.err, "stalled on PE 0", name)
		require.GreaterOrEqual(t, r.elapsed, stall, name)
		require.Less(t, r.elapsed, 2*time.Second, "%s: ended by the stall bound", name)
		if r.p > 0 {
			require.Equal(t, 3, r.st.Computations, "%s: the computations were done first", name)
		} else {
			require.Zero(t, r.st.Computations, "%s: p = 0, none while data are due", name)
		}
		require.Positive(t, r.st.Waits, name)
		require.Less(t, r.st.Tests, 40, "%s: tests in %v (a spinning loop makes thousands): %+v", name, r.elapsed, r.st)
	}
	require.Equal(t, before, after, "futures left on the PE by %d failed runs", len(results))
}
