package actor

import (
	"fmt"
	"time"
)

// silenceWatch decides, from the times of the last frames from each node,
// whether a node is lost. It does no I/O: heartbeat calls check on every
// tick with the current time.
//
// Silence is only evidence while this process runs to hear the frames: a
// process that was stopped (SIGSTOP, a debugger) or starved of CPU sees
// every other node silent when it runs again, though their frames wait
// in its sockets and the nodes may have ended the job, or exited,
// meanwhile. So the time this process did not run (the last gap between
// two checks longer than stallAfter) does not count as silence: after a
// stall, the other nodes' frames, and the exit of the nodes it launched,
// are seen first and tell what happened.
type silenceWatch struct {
	failAfter  time.Duration // a node silent this long is lost
	stallAfter time.Duration // a gap between checks this long is a stall of this process
	last       time.Time     // the previous check
	stallFrom  time.Time     // the last stall: from the check before it
	stallTo    time.Time     // to the check after it (zero: none yet)
}

// check returns the first node other than self that was silent for more
// than failAfter while this process ran, its last frame being at seen[n],
// with what was observed; or -1.
func (w *silenceWatch) check(now time.Time, self int, seen []time.Time) (int, string) {
	if !w.last.IsZero() && now.Sub(w.last) > w.stallAfter {
		w.stallFrom, w.stallTo = w.last, now
	}
	w.last = now
	for n, at := range seen {
		if n == self {
			continue
		}
		silent := now.Sub(at)
		var stalled time.Duration
		if from := laterOf(at, w.stallFrom); w.stallTo.After(from) {
			stalled = w.stallTo.Sub(from)
		}
		if silent-stalled <= w.failAfter {
			continue
		}
		why := fmt.Sprintf("no frame for %v", silent.Round(time.Millisecond))
		if stalled > 0 {
			why = fmt.Sprintf("no frame for %v, of which %v while this process ran (it did not run for %v: stopped, or starved of CPU)",
				silent.Round(time.Millisecond), (silent - stalled).Round(time.Millisecond), w.stallTo.Sub(w.stallFrom).Round(time.Millisecond))
		}
		return n, why + "; it went silent: no exit frame came from it, and its connection was not seen to close"
	}
	return -1, ""
}

func laterOf(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
