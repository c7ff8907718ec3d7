package actor

import "fmt"

// Completion detection, as Charm++'s CkCompletionDetector: a known number
// of producers (across the job) produce and consume items; once every
// producer called Done, the detector waits until every produced item was
// consumed, then fires its Finished callback.

// DetectorID names one completion detection session across the job.
type DetectorID uint64

// Detection holds the callbacks of a completion detection session. Each runs
// on the PE that started the session; nil ones are skipped.
type Detection struct {
	Producers   int64
	Started     func(pe *PE) // every PE knows the session: producing may begin
	AllProduced func(pe *PE) // every producer called Done
	Finished    func(pe *PE) // and every produced item was consumed
}

type cdCounters struct {
	produced, consumed, done int64
	started                  bool
	// poked says that a Consume poked the root since the last wave read
	// these counters: one such poke per PE and wave is enough (see
	// Consume), not one per consumed run.
	poked bool
}

type cdRoot struct {
	starter   int
	producers int64
	active    bool // a wave is out
	again     bool // a poke arrived during the wave
	seq       uint64
	prev      [3]int64
	prevValid bool
	allFired  bool
	failures  int
	// doneSeen sums the producers that the pokes of ProducerDone report:
	// once it reaches producers, AllProduced fires at once, without
	// waiting for a wave to pass every PE (each hop of which queues behind
	// that PE's messages). The waves still count them too, and check.
	doneSeen int64
	// inited: every PE knows the session and Started went out. Before
	// that a poke only counts: AllProduced must not come before Started,
	// nor a wave start before the first one.
	inited bool
}

type cdLocal struct {
	Detection
}

// cdState is kept in maps on the PEs: counters on every PE, the session's
// callbacks on its starter, the protocol state on the root.
func (pe *PE) cd(id uint64) *cdCounters {
	c := pe.cds[id]
	if c == nil {
		c = &cdCounters{}
		pe.cds[id] = c
	}
	return c
}

// StartDetection begins a completion detection session and returns its ID.
// It must be called on pe; the callbacks run on pe.
func (pe *PE) StartDetection(d Detection) (DetectorID, error) {
	if d.Producers < 0 {
		return 0, fmt.Errorf("actor: completion detection with %d producers", d.Producers)
	}
	pe.qd.nextReq++
	id := uint64(pe.id)<<40 | pe.qd.nextReq
	if pe.cdLocal == nil {
		pe.cdLocal = map[uint64]*cdLocal{}
	}
	pe.cdLocal[id] = &cdLocal{d}
	pe.sendSys(pe.rt.tree.Root, cdBegin{ID: id, Starter: pe.id, Producers: d.Producers})
	return DetectorID(id), nil
}

// Produce counts n items produced on pe for detector id.
func (pe *PE) Produce(id DetectorID, n int64) { pe.cd(uint64(id)).produced += n }

// Consume counts n items consumed on pe for detector id.
func (pe *PE) Consume(id DetectorID, n int64) {
	c := pe.cd(uint64(id))
	c.consumed += n
	if c.started && c.done > 0 && !c.poked {
		// items may still be in flight after the producers finished: tell the
		// root that something changed, without counting for quiescence. A
		// poke already on its way (no wave read the counters since) says it.
		c.poked = true
		pe.sendSys(pe.rt.tree.Root, cdPoke{ID: uint64(id)})
	}
}

// ProducerDone records that n producers on pe finished producing.
func (pe *PE) ProducerDone(id DetectorID, n int64) {
	c := pe.cd(uint64(id))
	c.done += n
	pe.sendSys(pe.rt.tree.Root, cdPoke{ID: uint64(id), Done: n})
}

type cdBegin struct {
	ID        uint64
	Starter   int
	Producers int64
}

func (cdBegin) system() {}
func (b cdBegin) Deliver(root *PE) {
	if root.cdRoots == nil {
		root.cdRoots = map[uint64]*cdRoot{}
	}
	root.cdRoots[b.ID] = &cdRoot{starter: b.Starter, producers: b.Producers}
	cdInit{ID: b.ID}.Deliver(root)
}

// cdInit goes down the tree; cdInitAck comes back up.
type cdInit struct{ ID uint64 }

func (cdInit) system() {}
func (m cdInit) Deliver(pe *PE) {
	pe.cd(m.ID).started = true
	children := pe.rt.tree.Children(pe.id)
	for _, c := range children {
		pe.sendSys(c, m)
	}
	pe.cdAcks(m.ID, len(children))
}

type cdInitAck struct{ ID uint64 }

func (cdInitAck) system()          {}
func (m cdInitAck) Deliver(pe *PE) { pe.cdAcks(m.ID, -1) }

func (pe *PE) cdAcks(id uint64, delta int) {
	if pe.cdPending == nil {
		pe.cdPending = map[uint64]int{}
	}
	n := pe.cdPending[id] + delta
	pe.cdPending[id] = n
	if n > 0 {
		return
	}
	delete(pe.cdPending, id)
	if parent := pe.rt.tree.Parent(pe.id); parent >= 0 {
		pe.sendSys(parent, cdInitAck{ID: id})
		return
	}
	r := pe.cdRoots[id]
	r.inited = true
	// Run at once on a root that is the starter, as AllProduced and
	// Finished are: the three reach the starter in their order.
	pe.cdFire(r.starter, cdFire{ID: id, What: cdStarted})
	if r.producers > 0 && r.doneSeen >= r.producers {
		pe.cdAllProduced(id, r)
	}
	pe.cdWave(id)
}

// cdPoke tells the root that counters changed; Done is the producers
// that a ProducerDone finished (0 from a Consume).
type cdPoke struct {
	ID   uint64
	Done int64
}

func (cdPoke) system() {}
func (p cdPoke) Deliver(root *PE) {
	r := root.cdRoots[p.ID]
	if r == nil {
		return // finished already
	}
	r.doneSeen += p.Done
	if !r.inited {
		return // the first wave starts with Started, and counts this too
	}
	if p.Done > 0 && r.doneSeen >= r.producers {
		root.cdAllProduced(p.ID, r)
	}
	if r.active {
		r.again = true
		return
	}
	root.cdWave(p.ID)
}

func (pe *PE) cdWave(id uint64) {
	r := pe.cdRoots[id]
	r.active, r.again = true, false
	r.seq++
	waveDown{Kind: waveCD, ID: id, Seq: r.seq}.Deliver(pe)
}

func (pe *PE) cdWaveDone(id uint64, sums [3]int64) {
	r := pe.cdRoots[id]
	r.active = false
	if sums[2] > r.producers {
		pe.rt.Abort(fmt.Errorf("actor: completion detector %#x: %d producers done, only %d expected", id, sums[2], r.producers))
		return
	}
	if sums[2] < r.producers {
		if r.again {
			pe.cdWave(id)
		}
		return // wait for the next poke
	}
	pe.cdAllProduced(id, r)
	if sums[0] == sums[1] && r.prevValid && sums == r.prev {
		delete(pe.cdRoots, id)
		pe.cdFire(r.starter, cdFire{ID: id, What: cdFinished})
		return
	}
	if sums[0] == sums[1] {
		r.failures = 0
	} else {
		r.failures++
	}
	r.prev, r.prevValid = sums, true
	pe.After(backoff(r.failures), func(pe *PE) {
		if rr := pe.cdRoots[id]; rr != nil && !rr.active {
			pe.cdWave(id)
		}
	})
}

// cdAllProduced tells the starter, once, that every producer is done.
func (pe *PE) cdAllProduced(id uint64, r *cdRoot) {
	if !r.allFired {
		r.allFired = true
		pe.cdFire(r.starter, cdFire{ID: id, What: cdAllProduced})
	}
}

// cdFire sends f to the starter, or runs it at once when the root is the
// starter: the step's end is not made to wait behind the root's queue of
// messages once more.
func (pe *PE) cdFire(starter int, f cdFire) {
	if starter == pe.id {
		f.Deliver(pe)
		return
	}
	pe.sendSys(starter, f)
}

type cdWhat uint8

const (
	cdStarted cdWhat = iota
	cdAllProduced
	cdFinished
)

type cdFire struct {
	ID   uint64
	What cdWhat
}

func (cdFire) system() {}
func (f cdFire) Deliver(pe *PE) {
	l := pe.cdLocal[f.ID]
	if l == nil {
		return
	}
	var fn func(*PE)
	switch f.What {
	case cdStarted:
		fn = l.Started
	case cdAllProduced:
		fn = l.AllProduced
	case cdFinished:
		fn = l.Finished
		delete(pe.cdLocal, f.ID)
	}
	if fn != nil {
		fn(pe)
	}
}
