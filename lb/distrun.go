package lb

import (
	"fmt"
	"time"

	"github.com/charmgo/charm/actor"
	"github.com/charmgo/charm/chare"
)

// A step with the distributed strategy runs as DistributedLB does, with no
// central gather: every PE keeps its objects and decides with DistPE from
// its own loads, one reduction of three numbers (total work, highest
// load), and the gossip and offers it receives from other PEs. PE 0 only
// paces the rounds (gossip, then transfer phases of offer, answer,
// settle): it counts the messages each PE must receive before it acts on
// a round, and the loads after each round, never an object.

// The kinds of round.
const (
	roundGossip = iota
	roundTransfer
	roundReceive
	roundSettle
	roundFinish
)

// distRoot is PE 0's pacing of a distributed step.
type distRoot struct {
	cfg     Distributed
	g       DistGlobal
	seq     int
	acks    int
	sent    int   // peer messages sent in the round
	expect  []int // peer messages each PE gets from the round
	loads   []float64
	before  []float64
	evac    bool
	objs    int
	objLoad LoadStats
	t, high float64
	last    int // the kind of the round under way
	phase   int
	retry   int
	moved   int
	start   time.Time
	stays   []chare.CollID // arrays with elements that stay, from every PE
}

// distStat is a PE's part of the reduction that opens a distributed step.
type distStat struct {
	PE      int
	Work    float64
	Objs    int
	ObjLoad LoadStats
	Stays   []chare.CollID `msgpack:",omitempty"` // arrays with elements that stay (objReport.Stays)
}

// distPeer carries a gossip message, offer or reply from PE to PE, for the
// round that follows round Seq.
type distPeer struct {
	Seq    int
	Gossip *GossipMsg `msgpack:",omitempty"`
	Offer  *Offer     `msgpack:",omitempty"`
	Reply  *Reply     `msgpack:",omitempty"`
}

// distRound tells a PE to act on round Seq once it has Expect messages of
// the round before.
type distRound struct {
	Seq, Kind, Expect int
	T                 float64
	G                 DistGlobal // with the first round
	Seed              uint64
	Coll              chare.CollID
	SyncStep          int
}

// distAck reports a round done: the messages sent to each PE, the PE's
// load and whether it still evacuates.
type distAck struct {
	PE, Seq int
	SentTo  []int
	Load    float64
	Evac    bool
	Moved   int
}

// distPE is a PE's side of a distributed step.
type distPE struct {
	dp    *DistPE
	inbox map[int][]distPeer // by the round they are for
	round *distRound         // waiting for its messages
}

func (st *peState) distStart() {
	r := st.root
	r.dist = &distRoot{cfg: Distributed{}.withDefaults(st.pe.NumPEs()), start: time.Now()}
	for p := range st.pe.NumPEs() {
		st.pe.Actor().Send(p, &stepCollect{Step: r.step, Coll: r.coll, Dist: true})
	}
}

// distCollect is stepCollect for a distributed step: the PE keeps its
// objects and sends three numbers.
func (st *peState) distCollect(rep *peReport) {
	objs := make([]DistObj, len(rep.Objs))
	loads := make([]float64, len(rep.Objs))
	work := rep.Background
	for k, o := range rep.Objs {
		objs[k] = DistObj{ID: st.pe.ID()<<24 | k, Work: o.Load, Migratable: !o.Fixed}
		loads[k] = o.Load
		work += o.Load
	}
	stays := staysIn(rep.Objs, nil)
	st.distObjs, st.distBG = objs, rep.Background
	st.dist = &distPE{inbox: map[int][]distPeer{}}
	st.pe.Actor().Send(0, &distStat{PE: st.pe.ID(), Work: work, Objs: len(objs), ObjLoad: loadStatsOf(loads), Stays: stays})
}

func (m *distStat) Describe() string { return fmt.Sprintf("PE %d's load for a distributed step", m.PE) }
func (m *distStat) Deliver(ap *actor.PE) {
	st := stateOf(ap, m, false) // root checked below
	if st == nil {
		return
	}
	np := st.pe.NumPEs()
	if st.root == nil || st.root.dist == nil || m.PE < 0 || m.PE >= np {
		st.pe.Fail(fmt.Errorf("lb: an unexpected distributed-step load from PE %d", m.PE))
		return
	}
	d := st.root.dist
	if d.before == nil {
		d.before, d.loads = make([]float64, np), make([]float64, np)
	}
	d.before[m.PE], d.loads[m.PE] = m.Work, m.Work
	d.stays = append(d.stays, m.Stays...)
	if m.Objs > 0 {
		mean := d.objLoad.Mean
		if d.objs == 0 {
			d.objLoad = m.ObjLoad
			mean = 0
		} else {
			d.objLoad.Min, d.objLoad.Max = min(d.objLoad.Min, m.ObjLoad.Min), max(d.objLoad.Max, m.ObjLoad.Max)
		}
		d.objLoad.Mean = mean + m.ObjLoad.Mean*float64(m.Objs) // a sum until every PE is in
		d.objs += m.Objs
	}
	if d.acks++; d.acks < np {
		return
	}
	d.acks = 0
	if d.objs > 0 {
		d.objLoad.Mean /= float64(d.objs)
	}
	var total float64
	d.g = DistGlobal{NumPEs: np}
	for _, w := range d.before {
		total += w
		d.g.Max = max(d.g.Max, w)
	}
	d.g.Avg = total / float64(np)
	d.high = d.g.Max
	d.t = d.cfg.firstThreshold(d.g)
	if total == 0 || d.g.Max <= d.cfg.TargetRatio*d.g.Avg {
		st.distRound(d.next(roundFinish))
		return
	}
	st.distRound(d.next(roundGossip))
}

// distRound sends every PE the next round.
func (st *peState) distRound(kind int) {
	r := st.root
	d := r.dist
	d.seq++
	expect := d.expect
	if expect == nil {
		expect = make([]int, st.pe.NumPEs())
	}
	syncStep := 0
	if kind == roundFinish && r.coll != 0 {
		r.steps[r.coll]++
		syncStep = r.steps[r.coll]
	}
	for p := range st.pe.NumPEs() {
		st.pe.Actor().Send(p, &distRound{Seq: d.seq, Kind: kind, Expect: expect[p], T: d.t, G: d.g,
			Seed: uint64(r.step) + 1, Coll: r.coll, SyncStep: syncStep})
	}
	d.expect, d.sent = make([]int, st.pe.NumPEs()), 0
}

func (m *distRound) Describe() string { return fmt.Sprintf("round %d of a distributed step", m.Seq) }
func (m *distRound) Deliver(ap *actor.PE) {
	st := stateOf(ap, m, false)
	if st == nil {
		return
	}
	if st.dist == nil {
		st.pe.Fail(fmt.Errorf("lb: round %d of a distributed step that this PE did not start", m.Seq))
		return
	}
	st.dist.round = m
	st.distAct()
}

func (m *distPeer) Describe() string {
	return fmt.Sprintf("a distributed step's message for round %d", m.Seq+1)
}
func (m *distPeer) Deliver(ap *actor.PE) {
	st := stateOf(ap, m, false)
	if st == nil {
		return
	}
	if st.dist == nil || (m.Gossip == nil && m.Offer == nil && m.Reply == nil) {
		st.pe.Fail(fmt.Errorf("lb: an unexpected distributed-step message for round %d", m.Seq+1))
		return
	}
	st.dist.inbox[m.Seq+1] = append(st.dist.inbox[m.Seq+1], *m)
	st.distAct()
}

// distAct runs the waiting round once its messages are here.
func (st *peState) distAct() {
	ds := st.dist
	m := ds.round
	if m == nil || len(ds.inbox[m.Seq]) < m.Expect {
		return
	}
	ds.round = nil
	in := ds.inbox[m.Seq]
	delete(ds.inbox, m.Seq)
	if ds.dp == nil {
		ds.dp = NewDistPE(st.pe.ID(), PEStats{Background: st.distBG, Speed: 1, Available: true}, st.distObjs, m.G, Distributed{}, m.Seed)
	}
	ack := &distAck{PE: st.pe.ID(), Seq: m.Seq, SentTo: make([]int, st.pe.NumPEs())}
	send := func(to int, p *distPeer) {
		p.Seq = m.Seq
		ack.SentTo[to]++
		st.pe.Actor().Send(to, p)
	}
	switch m.Kind {
	case roundGossip:
		var msgs []GossipMsg
		for _, p := range in {
			msgs = append(msgs, *p.Gossip)
		}
		for _, g := range ds.dp.Gossip(msgs) {
			send(g.To, &distPeer{Gossip: &g})
		}
	case roundTransfer:
		for _, o := range ds.dp.Transfer(m.T) {
			send(o.To, &distPeer{Offer: &o})
		}
	case roundReceive:
		var offers []Offer
		for _, p := range in {
			offers = append(offers, *p.Offer)
		}
		for _, r := range ds.dp.Receive(offers) {
			send(r.To, &distPeer{Reply: &r})
		}
	case roundSettle:
		var replies []Reply
		for _, p := range in {
			replies = append(replies, *p.Reply)
		}
		ds.dp.Settle(replies)
	case roundFinish:
		var moves []move
		for _, mv := range ds.dp.Moves() {
			moves = append(moves, move{K: mv.Obj & (1<<24 - 1), To: mv.To})
		}
		ack.Moved = len(moves)
		st.dist = nil
		(&stepOrders{Step: -1, Coll: m.Coll, SyncStep: m.SyncStep, Moves: moves}).apply(st)
	}
	ack.Load, ack.Evac = ds.dp.Load(), ds.dp.Evacuating()
	st.pe.Actor().Send(0, ack)
}

func (m *distAck) Describe() string { return fmt.Sprintf("PE %d's end of round %d", m.PE, m.Seq) }
func (m *distAck) Deliver(ap *actor.PE) {
	st := stateOf(ap, m, true)
	if st == nil {
		return
	}
	r := st.root
	if r == nil || r.dist == nil || m.PE < 0 || m.PE >= st.pe.NumPEs() || len(m.SentTo) > st.pe.NumPEs() {
		st.pe.Fail(fmt.Errorf("lb: an unexpected distributed-step round end from PE %d", m.PE))
		return
	}
	d := r.dist
	for to, n := range m.SentTo {
		d.expect[to] += n
		d.sent += n
	}
	d.loads[m.PE] = m.Load
	d.evac = d.evac || m.Evac
	d.moved += m.Moved
	if d.acks++; d.acks < st.pe.NumPEs() {
		return
	}
	d.acks = 0
	kind := st.distNext()
	d.evac = false
	if kind >= 0 {
		st.distRound(kind)
	}
}

// distNext decides the round after round seq, as Distributed.Place's loop
// does; -1 ends the step.
func (st *peState) distNext() int {
	r := st.root
	d := r.dist
	switch d.last {
	case roundGossip:
		if d.sent > 0 {
			return d.next(roundGossip)
		}
		return d.next(roundTransfer)
	case roundTransfer:
		if d.sent > 0 {
			return d.next(roundReceive)
		}
		return st.distPhaseEnd()
	case roundReceive:
		return d.next(roundSettle)
	case roundSettle:
		if d.retry++; d.retry < distRetries {
			return d.next(roundTransfer)
		}
		return st.distPhaseEnd()
	case roundFinish:
		st.distReport()
		return -1
	}
	return -1
}

func (d *distRoot) next(kind int) int { d.last = kind; return kind }

// distPhaseEnd ends a transfer phase: another, or the finish.
func (st *peState) distPhaseEnd() int {
	d := st.root.dist
	var high float64
	for _, l := range d.loads {
		high = max(high, l)
	}
	d.phase++
	d.retry = 0
	if d.phase >= d.cfg.MaxPhases || (high <= d.cfg.TargetRatio*d.g.Avg || d.t <= d.cfg.TargetRatio*d.g.Avg) && !d.evac {
		return d.next(roundFinish)
	}
	d.t = d.cfg.nextThreshold(d.g, d.t, d.high, high)
	d.high = high
	return d.next(roundTransfer)
}

// distReport records the step's report, built from the loads PE 0 saw.
func (st *peState) distReport() {
	r := st.root
	d := r.dist
	rep := Report{Step: r.step, Strategy: "distributed", Objects: d.objs, ObjLoad: d.objLoad,
		Before: d.before, After: d.loads, PELoadBefore: loadStatsOf(d.before), PELoadAfter: loadStatsOf(d.loads),
		MaxAvgBefore: MaxOverAvg(d.before), MaxAvgAfter: MaxOverAvg(d.loads), Migrations: d.moved,
		StrategyTime: time.Since(d.start), Unmovable: st.unmovable(d.stays)}
	r.dist = nil
	st.record(rep)
	st.stepDone()
}
