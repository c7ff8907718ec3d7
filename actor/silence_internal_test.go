package actor

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// watchTicks runs checks every tick from `from` to `to` (inclusive) and
// returns the first loss reported.
func watchTicks(w *silenceWatch, from, to time.Time, tick time.Duration, seen []time.Time) (int, string, time.Time) {
	for now := from; !now.After(to); now = now.Add(tick) {
		if n, why := w.check(now, 0, seen); n >= 0 {
			return n, why, now
		}
	}
	return -1, "", time.Time{}
}

func TestSilenceWatch(t *testing.T) {
	const tick = 75 * time.Millisecond
	t0 := time.Unix(1000, 0)
	newWatch := func() *silenceWatch {
		return &silenceWatch{failAfter: 3 * time.Second, stallAfter: 300 * time.Millisecond, last: t0}
	}

	t.Run("a node silent while this process runs is lost", func(t *testing.T) {
		w := newWatch()
		seen := []time.Time{t0, t0, t0.Add(time.Second)}
		n, why, at := watchTicks(w, t0.Add(tick), t0.Add(10*time.Second), tick, seen)
		require.Equal(t, 1, n, "node 1 went silent first")
		require.Greater(t, at.Sub(t0), 3*time.Second)
		require.LessOrEqual(t, at.Sub(t0), 3*time.Second+tick)
		require.Contains(t, why, "no frame for 3.")
		require.Contains(t, why, "it went silent")
		require.NotContains(t, why, "did not run", "no stall happened")
	})

	t.Run("this process stopped: its own stall is not the others' silence", func(t *testing.T) {
		w := newWatch()
		seen := []time.Time{t0, t0, t0}
		require.Equal(t, -1, first(w.check(t0.Add(tick), 0, seen)))
		// Stopped for 6 s: when it runs again, nodes 1 and 2 have been
		// silent for 6 s, but it heard nothing because it did not run.
		resumed := t0.Add(tick + 6*time.Second)
		n, why := w.check(resumed, 0, seen)
		require.Equal(t, -1, n, "lost at once after the stall: %s", why)
		// Their frames, waiting in the sockets, arrive now: no loss.
		fresh := []time.Time{t0, resumed.Add(10 * time.Millisecond), resumed.Add(20 * time.Millisecond)}
		n, why, _ = watchTicks(w, resumed.Add(tick), resumed.Add(3*time.Second), tick, fresh)
		require.Equal(t, -1, n, why)
	})

	t.Run("after a stall, a node still silent is lost, and the message says what was seen", func(t *testing.T) {
		w := newWatch()
		seen := []time.Time{t0, t0}
		resumed := t0.Add(6 * time.Second)
		require.Equal(t, -1, first(w.check(resumed, 0, seen)))
		n, why, at := watchTicks(w, resumed.Add(tick), resumed.Add(10*time.Second), tick, seen)
		require.Equal(t, 1, n)
		// The stall counts for at most stallAfter of the 3 s of silence
		// while this process ran.
		ran := at.Sub(resumed) + w.stallAfter
		require.Greater(t, ran, 3*time.Second, "3 s of silence while this process ran")
		require.LessOrEqual(t, ran, 3*time.Second+tick)
		require.Contains(t, why, "no frame for 8.775s, of which 3.075s")
		require.Contains(t, why, "while this process ran (it did not run for 5.7s: stopped, or starved of CPU)")
	})

	t.Run("a frame after the stall began counts from the frame", func(t *testing.T) {
		w := newWatch()
		// A frame was read just before this process stopped at t0+1s.
		require.Equal(t, -1, first(w.check(t0.Add(time.Second), 0, []time.Time{t0, t0.Add(time.Second)})))
		resumed := t0.Add(5 * time.Second)
		seen := []time.Time{t0, t0.Add(time.Second)}
		require.Equal(t, -1, first(w.check(resumed, 0, seen)))
		n, _, at := watchTicks(w, resumed.Add(tick), resumed.Add(10*time.Second), tick, seen)
		require.Equal(t, 1, n)
		require.Greater(t, at.Sub(resumed)+w.stallAfter, 3*time.Second)
		require.LessOrEqual(t, at.Sub(resumed)+w.stallAfter, 3*time.Second+tick)
	})
}

func first(n int, _ string) int { return n }

// A stall, one check, then a second, shorter stall: both are left out of
// the silence, not only the last one.
func TestSilenceWatchTwoStalls(t *testing.T) {
	const tick = 75 * time.Millisecond
	t0 := time.Unix(1000, 0)
	w := &silenceWatch{failAfter: 3 * time.Second, stallAfter: 300 * time.Millisecond, last: t0}
	seen := []time.Time{t0, t0}
	require.Equal(t, -1, first(w.check(t0.Add(tick), 0, seen)))
	// Stopped for 10 s, runs for one tick, then stalls again for 400 ms.
	resumed := t0.Add(tick + 10*time.Second)
	n, why := w.check(resumed, 0, seen)
	require.Equal(t, -1, n, "lost at the first check after a stop: %s", why)
	n, why = w.check(resumed.Add(tick), 0, seen)
	require.Equal(t, -1, n, "lost one tick after a stop: %s", why)
	again := resumed.Add(tick + 400*time.Millisecond)
	n, why = w.check(again, 0, seen)
	require.Equal(t, -1, n, "lost after a second, short stall: %s", why)

	// Still silent: lost once it was silent for failAfter on the live
	// clock, which counts each stall for at most stallAfter.
	n, why, at := watchTicks(w, again.Add(tick), again.Add(10*time.Second), tick, seen)
	require.Equal(t, 1, n)
	ran := 2*tick + 2*w.stallAfter // live time up to `again`
	require.Greater(t, at.Sub(again)+ran, 3*time.Second)
	require.LessOrEqual(t, at.Sub(again)+ran, 3*time.Second+tick)
	require.Contains(t, why, "it did not run for 9.8s")
}
