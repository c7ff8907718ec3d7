package tram

import (
	"fmt"

	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/internal/core"
)

// A streamer's figures over the job. Each PE's Aggregator counts what it
// did (Stats); Streamer.Report gathers every PE's into a StreamerReport,
// with the sums per process and over the job.

// StreamerReport is what Streamer.Report gathers.
type StreamerReport struct {
	Job     Stats   // the sums over every PE
	PE      []Stats // by PE, as the PE's Aggregator counts
	Process []Stats // by process (node), the sums of its PEs
}

// Report gathers the streamer's figures from every PE of the job and
// sends a StreamerReport to cb. A PE's figures are read when the request
// reaches it: after a step's Finished callback, or quiescence, for final
// ones. A PE not set up yet reports zeros.
func (s Streamer[C, T]) Report(from chare.Context, cb chare.Callback) error {
	pe := chare.PEOf(from)
	if pe == nil {
		return chare.ErrNoContext
	}
	b, err := s.branchAny(from)
	if err != nil {
		return err
	}
	ms, err := methodsOf[C, T]()
	if err != nil {
		return err
	}
	id := b.reports.add(cb, pe.NumPEs())
	return ms.count.Send(from, s.G, request{PE: pe.ID(), ID: id})
}

// Count answers a Report request with this PE's figures.
func (b *branch[C, T]) Count(r request) {
	var st Stats
	if b.agg != nil {
		st = b.agg.Stats()
	}
	if err := b.ms.answer.Send(b, b.ThisProxy().At(r.PE), statsAnswer{ID: r.ID, PE: b.PE(), Stats: st}); err != nil {
		b.Abort(err)
	}
}

// Answer collects the answers to a Report made on this PE.
func (b *branch[C, T]) Answer(a statsAnswer) {
	done, rep, cb, err := b.reports.answer(a, b.Here().Job().Runtime().NodeOf)
	if err != nil {
		b.Abort(fmt.Errorf("tram: streamer %v: %w", core.CollectionOf(&b.Base).ID, err))
		return
	}
	if done {
		if err := cb.Send(b, rep); err != nil {
			b.Abort(err)
		}
	}
}

type statsAnswer struct {
	ID    uint64
	PE    int
	Stats Stats
}

// reports are the Report requests made on one PE, waiting for answers.
type reports struct {
	next uint64
	m    map[uint64]*statsWait
}

type statsWait struct {
	cb  chare.Callback
	got int
	per []Stats
}

func (r *reports) add(cb chare.Callback, pes int) uint64 {
	if r.m == nil {
		r.m = map[uint64]*statsWait{}
	}
	r.next++
	r.m[r.next] = &statsWait{cb: cb, per: make([]Stats, pes)}
	return r.next
}

// answer takes one PE's answer; with the last one it returns the report
// and its callback.
func (r *reports) answer(a statsAnswer, nodeOf func(pe int) int) (bool, StreamerReport, chare.Callback, error) {
	w := r.m[a.ID]
	if w == nil {
		return false, StreamerReport{}, chare.Callback{}, fmt.Errorf("an answer from PE %d to statistics request %d, which was not made here", a.PE, a.ID)
	}
	if a.PE < 0 || a.PE >= len(w.per) {
		return false, StreamerReport{}, chare.Callback{}, fmt.Errorf("an answer from PE %d, which does not exist", a.PE)
	}
	w.per[a.PE] = a.Stats
	if w.got++; w.got < len(w.per) {
		return false, StreamerReport{}, chare.Callback{}, nil
	}
	delete(r.m, a.ID)
	return true, sumStats(w.per, nodeOf), w.cb, nil
}

// sumStats sums the figures of every PE per process and over the job.
func sumStats(perPE []Stats, nodeOf func(pe int) int) StreamerReport {
	job, proc := sumByProcess(perPE, nodeOf)
	return StreamerReport{Job: job, PE: perPE, Process: proc}
}

// sumByProcess sums per-PE figures over the job and per process (node).
func sumByProcess[S interface{ add(S) S }](perPE []S, nodeOf func(pe int) int) (job S, proc []S) {
	for pe, s := range perPE {
		job = job.add(s)
		n := nodeOf(pe)
		for len(proc) <= n {
			var zero S
			proc = append(proc, zero)
		}
		proc[n] = proc[n].add(s)
	}
	return job, proc
}

func (s Stats) add(o Stats) Stats {
	return Stats{
		Buffered: s.Buffered + o.Buffered, BufferedBytes: s.BufferedBytes + o.BufferedBytes,
		Inserted: s.Inserted + o.Inserted, Routed: s.Routed + o.Routed,
		Flushes: s.Flushes + o.Flushes, FullFlushes: s.FullFlushes + o.FullFlushes, FullestSent: s.FullestSent + o.FullestSent,
		Direct: s.Direct + o.Direct, Local: s.Local + o.Local,
	}
}
