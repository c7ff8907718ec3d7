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
// meanwhile. So silence is measured on a live clock that advances, at
// each check, by the time since the previous check but by at most
// stallAfter: a longer gap means this process did not run for most of
// it, and every such stall, however many, is left out. After a stall,
// the other nodes' frames, and the exit of the nodes it launched, are
// seen first and tell what happened. Capping a gap rather than ignoring
// it keeps the clock going in a process starved so much that every gap
// is a little over stallAfter.
type silenceWatch struct {
	failAfter  time.Duration // a node silent this long on the live clock is lost
	stallAfter time.Duration // a gap between checks counts for at most this much
	last       time.Time     // the previous check

	live   time.Duration   // the live clock, from the first check
	seen   []time.Time     // per node: its last frame as of the previous check
	liveAt []time.Duration // per node: the live clock at that frame
}

// check returns the first node other than self that was silent for more
// than failAfter while this process ran, its last frame being at seen[n],
// with what was observed; or -1.
func (w *silenceWatch) check(now time.Time, self int, seen []time.Time) (int, string) {
	if w.last.IsZero() {
		w.last = now
	}
	before := w.live
	step := min(max(now.Sub(w.last), 0), w.stallAfter)
	w.live += step
	if len(w.seen) < len(seen) {
		w.seen = append(w.seen, make([]time.Time, len(seen)-len(w.seen))...)
		w.liveAt = append(w.liveAt, make([]time.Duration, len(seen)-len(w.liveAt))...)
	}
	for n, at := range seen {
		if at.Equal(w.seen[n]) {
			continue
		}
		// A new frame: place it on the live clock. Within the last gap
		// it counts for at most that gap's step; before the previous
		// check, this process is taken to have run since.
		w.seen[n] = at
		if since := at.Sub(w.last); since >= 0 {
			w.liveAt[n] = before + min(since, step)
		} else {
			w.liveAt[n] = before + since
		}
	}
	w.last = now
	for n, at := range seen {
		if n == self {
			continue
		}
		quiet := w.live - w.liveAt[n] // silence while this process ran
		if quiet <= w.failAfter {
			continue
		}
		silent := now.Sub(at)
		why := fmt.Sprintf("no frame for %v", silent.Round(time.Millisecond))
		if stalled := silent - quiet; stalled > 0 {
			why = fmt.Sprintf("no frame for %v, of which %v while this process ran (it did not run for %v: stopped, or starved of CPU)",
				silent.Round(time.Millisecond), quiet.Round(time.Millisecond), stalled.Round(time.Millisecond))
		}
		return n, why + "; it went silent: no exit frame came from it, and its connection was not seen to close"
	}
	return -1, ""
}
