package comlib

import (
	"fmt"

	"github.com/charmgo/charm/chare"
)

// Report is an instance's statistics over the whole job: Job, the sums
// of every process's, and Process, each process's (node's) own, as
// Instance.Stats returns it there.
type Report struct {
	Job     StatsSnapshot
	Process []StatsSnapshot
}

// Report gathers the instance's statistics from every process of the
// job and sends a Report to cb. Each process's figures are read when the
// request reaches it: wait for quiescence first for final ones.
func (in *Instance) Report(from chare.Context, cb chare.Callback) error {
	pe := chare.PEOf(from)
	if pe == nil {
		return chare.ErrNoContext
	}
	if in == nil || in.id == 0 {
		return fmt.Errorf("comlib: Report on an instance that comlib.New did not make")
	}
	if pe.Job() != in.job {
		return fmt.Errorf("comlib: %v belongs to another job", in)
	}
	s := stateOf(pe)
	if s.b == nil {
		return fmt.Errorf("comlib: the manager has no branch on PE %d yet (call Report after the instance's first use, or from PE 0)", pe.ID())
	}
	if s.reqs == nil {
		s.reqs = map[uint64]*statsReq{}
	}
	s.nextReq++
	nodes := pe.Job().Runtime().NumNodes()
	s.reqs[s.nextReq] = &statsReq{cb: cb, per: make([]StatsSnapshot, nodes)}
	return chare.Send(s.ctx(), s.g, (*branch).Count, countMsg{PE: pe.ID(), ID: s.nextReq, Instance: in.id})
}

// statsReq is a Report waiting for every PE's answer on the PE that made it.
type statsReq struct {
	cb  chare.Callback
	got int
	per []StatsSnapshot // by process
}

type countMsg struct {
	PE       int // the PE that asks
	ID       uint64
	Instance uint32
}

type countAnswer struct {
	ID    uint64
	Node  int
	First bool // from the first PE of its process, which reads the process's figures
	Stats StatsSnapshot
}

// Count answers a Report: the first PE of each process sends the
// process's figures (shared by its PEs), the others that they are there.
func (b *branch) Count(m countMsg) {
	rt := b.Here().Job().Runtime()
	a := countAnswer{ID: m.ID, Node: rt.NodeOf(b.PE())}
	if rt.FirstPE(a.Node) == b.PE() {
		a.First, a.Stats = true, b.st.instance(m.Instance).Stats()
	}
	if err := chare.Send(b, b.ThisProxy().At(m.PE), (*branch).Counted, a); err != nil {
		b.Abort(err)
	}
}

// Counted collects the answers to a Report made on this PE.
func (b *branch) Counted(a countAnswer) {
	s := b.st
	r := s.reqs[a.ID]
	if r == nil || a.Node < 0 || a.Node >= len(r.per) {
		b.Abort(fmt.Errorf("comlib: an answer to statistics request %d from node %d, which PE %d did not ask", a.ID, a.Node, b.PE()))
		return
	}
	if a.First {
		r.per[a.Node] = a.Stats
	}
	if r.got++; r.got < b.NumPEs() {
		return
	}
	delete(s.reqs, a.ID)
	if err := r.cb.Send(b, newReport(r.per)); err != nil {
		b.Abort(err)
	}
}

// newReport sums the processes' figures.
func newReport(per []StatsSnapshot) Report {
	r := Report{Process: per}
	for _, p := range per {
		j := &r.Job
		j.Messages += p.Messages
		j.Bytes += p.Bytes
		j.Packets += p.Packets
		j.Direct += p.Direct
		j.Straight += p.Straight
		j.Held += p.Held
		j.Iterations += p.Iterations
		j.Optimized += p.Optimized
		j.Recoveries += p.Recoveries
		j.ErrorTime += p.ErrorTime
		j.Dests += p.Dests
		j.Waited += p.Waited
		j.Reported += p.Reported
		j.ReportMsgs += p.ReportMsgs
	}
	return r
}
