package tram

import (
	"time"

	"github.com/charmgo/charm/actor"
)

// idleFlusher is periodic flushing (claim T24) for one PE: every period,
// if nothing was inserted or received since the last check, flush runs.
// The streamer's and the delegate's branches share it.
type idleFlusher struct {
	period  time.Duration
	busy    bool // something happened since the last check
	ticking bool
}

// arm schedules the next check on ap, unless flushing is off or a check is
// pending. After each check, keep says whether to go on.
func (f *idleFlusher) arm(ap *actor.PE, flush func(), keep func() bool) {
	if f.period <= 0 || f.ticking {
		return
	}
	f.ticking = true
	ap.After(f.period, func(*actor.PE) {
		f.ticking = false
		if !f.busy {
			flush()
		}
		f.busy = false
		if keep() {
			f.arm(ap, flush, keep)
		}
	})
}
