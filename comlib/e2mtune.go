package comlib

import (
	"fmt"
	"time"

	"github.com/charmgo/charm/comlib/agree"
	"github.com/charmgo/charm/comlib/bracket"
	"github.com/charmgo/charm/comlib/schedule"
	"github.com/charmgo/charm/tune"
	"github.com/charmgo/charm/tune/tunedebug"
)

// Tuning the group router's fan-out ω of an EachToMany instance
// (EachToManyOptions.Tune). Every PE's bracket machine asks its Follower
// for the ω of an iteration before it starts the exchange, and waits
// (Effects.Wait, then Resume) while the Follower does not know it; PE 0's
// Decider gives ω to segments of iterations and announces them (ctlMsg
// Range) to every PE. A PE reports each exchange it finishes whose
// segment its range reports, with the ω it used and its duration, and
// sends a segment's reports to PE 0 in one message (ctlMsg Measures,
// agree.Batcher): at the segment's last scored iteration, when the
// Decider needs them, the lead iterations' with the next segment's;
// the Decider checks the ω, takes the slowest participant's time as the
// iteration's cost and chooses ω with it among one candidate per number
// of rounds (omegaCandidates, tune.Picker): it leaves the start only for a
// candidate measured faster by more than the noise, and settles once
// neither neighbour is. Settled, it announces ranges in which only every
// Every-th segment is reported (EachToManyOptions.Every, default 16): the
// reports — messages to PE 0, which is also in the exchange — were what
// tuning cost once there was nothing left to search (one per PE per
// iteration, before they went per segment), and the reported segments
// still re-check the settled ω. Every stage packet
// names its sender's ω (bracket.Packet.Variant), so PEs that disagree on
// a quiet iteration end the job with an error naming both.

// startTuning makes the Follower, and on PE 0 the Decider.
func (e *e2m) startTuning() error {
	pes := e.s.pe.NumPEs()
	e.fol = agree.NewFollower(e.sp.Window)
	e.bat = agree.NewBatcher(e.sp.Window, agree.DefaultLead(e.sp.Window)) // the Decider's lead: its default
	e.starts = map[int]time.Time{}
	if e.s.pe.ID() != 0 {
		return nil
	}
	start := e.sp.Omega
	if start == 0 {
		start = schedule.DefaultOmega(pes)
	}
	d, err := agree.NewDecider(agree.Options{Values: omegaCandidates(pes, start), Start: min(start, max(1, pes-1)), Length: e.sp.Window, Every: e.sp.Every})
	if err != nil {
		return fmt.Errorf("tuning ω: %w", err)
	}
	e.dec = d
	st := e.in.st
	tunedebug.ReportFunc(e.s.pe.Job(), fmt.Sprintf("comlib%d-omega", e.in.id), func() []tune.Point { return st.tuning(0).Omega })
	return nil
}

// omegaCandidates are the fan-outs tuning chooses among for pes PEs: one
// per number of rounds (schedule.GroupOmegas), since ω values with the
// same rounds cost about the same and a search over all of 1..P−1
// wanders over a flat landscape. The start stands in for the candidate
// with its rounds, so that tuning starts from, and falls back to, exactly
// the ω asked for.
func omegaCandidates(pes, start int) []int {
	ws := schedule.GroupOmegas(pes)
	start = min(start, max(1, pes-1))
	rounds := func(w int) int { return (pes - 1 + w - 1) / w }
	for i, w := range ws {
		if rounds(w) == rounds(start) {
			ws[i] = start
		}
	}
	return ws
}

// tuneStarts notes when exchanges start here.
func (e *e2m) tuneStarts(fx *bracket.Effects[wenv]) {
	if len(fx.Exchanges) == 0 {
		return
	}
	now := time.Now()
	for _, n := range fx.Exchanges {
		e.starts[n] = now
	}
}

// tuneEffects asks PE 0 for the ω of iterations that wait for it, and
// reports the exchanges that finished.
func (e *e2m) tuneEffects(fx *bracket.Effects[wenv]) {
	for _, n := range fx.Wait {
		if seg, ask := e.fol.Need(n); ask {
			e.in.st.waited.Add(1)
			e.toRoot(ctlMsg{Inst: e.in.id, Need: &seg})
		}
	}
	if len(fx.Finished) == 0 {
		return
	}
	now := time.Now()
	pe := e.s.pe.ID()
	for _, f := range fx.Finished {
		t0, ok := e.starts[f.Iter]
		delete(e.starts, f.Iter)
		if !ok {
			t0 = now
		}
		for n := range e.starts { // exchanges a recovery interrupted never finish
			if n < f.Iter-64 {
				delete(e.starts, n)
			}
		}
		e.in.st.ranFanOut(f.Iter, pe, f.Variant)
		if !e.fol.Reported(f.Iter) {
			continue // a quiet segment: the search has settled
		}
		e.in.st.reported.Add(1)
		batch := e.bat.Add(agree.Report{PE: pe, Iter: f.Iter, Step: f.Step, Parts: f.Parts, Value: f.Variant,
			Cost: float64(now.Sub(t0).Nanoseconds())})
		if batch != nil {
			e.in.st.reportMsgs.Add(1)
			e.toRoot(ctlMsg{Inst: e.in.id, Measures: batch})
		}
	}
}

// flushReports sends PE 0 the reports about ω that this PE holds
// (Instance.Flush): the last segment's lead iterations, or a scored part
// the job stopped in, which FanOuts of PE 0's process would otherwise
// miss for the PEs of other processes.
func (e *e2m) flushReports() {
	if e.bat == nil {
		return
	}
	if batch := e.bat.Flush(); batch != nil {
		e.in.st.reportMsgs.Add(1)
		e.toRoot(ctlMsg{Inst: e.in.id, Measures: batch})
	}
}

// tuneControl handles the agreement's messages.
func (e *e2m) tuneControl(m ctlMsg) error {
	if e.fol == nil {
		return fmt.Errorf("a message about ω for an instance that does not tune it")
	}
	switch {
	case m.Range != nil:
		if err := e.fol.Take(*m.Range); err != nil {
			return err
		}
		fx := e.m.Resume()
		e.apply(&fx)
	case e.dec == nil:
		return fmt.Errorf("a report or request about ω reached PE %d, not PE 0", e.s.pe.ID())
	case m.Need != nil:
		e.announce(e.dec.Request(*m.Need))
	case len(m.Measures) > 0:
		for _, r := range m.Measures {
			rs, err := e.dec.Report(r)
			if err != nil {
				return err // a PE ran with an ω other than the plan's: the plan is broken
			}
			if used := e.dec.Used(r.Iter); used != nil {
				for pe, w := range used {
					e.in.st.ranFanOut(r.Iter, pe, w)
				}
			}
			if len(rs) > 0 { // an evaluation ended
				e.in.st.omegaTrajectory(e.dec.Trajectory())
			}
			e.announce(rs)
		}
	}
	return nil
}

func (e *e2m) announce(rs []agree.Range) {
	for i := range rs {
		e.broadcastCtl(ctlMsg{Inst: e.in.id, Range: &rs[i]})
	}
}

// ranFanOut records the ω a PE's exchange of an iteration ran with.
func (s *Stats) ranFanOut(iter, pe, omega int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fanOuts == nil {
		s.fanOuts = map[int]map[int]int{}
	}
	if s.fanOuts[iter] == nil {
		s.fanOuts[iter] = map[int]int{}
		keepLatest(s.fanOuts, &s.fanOrder, iter)
	}
	s.fanOuts[iter][pe] = omega
}

// omegaTrajectory stores the decider's trajectory as PE 0's.
func (s *Stats) omegaTrajectory(pts []tune.Point) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tuningOf(0).Omega = pts
}

// FanOuts returns, for an EachToMany instance with Tune, the fan-out ω
// that each PE's exchange of each iteration ran with: iteration → PE → ω.
// Each process holds its own PEs'; PE 0's process holds every PE's for
// the iterations reported to the decider (all while the search runs; once
// it settles, those of every Every-th segment), once every participant's
// report has arrived: a PE sends a segment's reports at its last scored
// iteration and those of its lead iterations with the next reported
// segment's, so after the last iteration the last ones are still held on
// their PEs until Flush is called there (on every PE, after its last
// EndIteration; they reach PE 0 before anything the PE sends it after
// the Flush). Iterations recovered in error mode run no exchange and are
// absent.
// It holds the latest 4096 iterations (in the order first reported).
func (in *Instance) FanOuts() map[int]map[int]int {
	if in.st == nil {
		return nil
	}
	in.st.mu.Lock()
	defer in.st.mu.Unlock()
	out := make(map[int]map[int]int, len(in.st.fanOuts))
	for it, byPE := range in.st.fanOuts {
		cp := make(map[int]int, len(byPE))
		for pe, w := range byPE {
			cp[pe] = w
		}
		out[it] = cp
	}
	return out
}

// reports is one PE's reports about ω in one message (agree.Batcher).
// It is decoded by reflection: the message's bytes are checked as its
// type (mpcheck.SeqAs), lengths and what the reports will take. (A
// decoder of its own, which grew the slice as reports arrived, made the
// check count its bytes only, while each nil became a 48-byte report.)
type reports []agree.Report
