package lb

import (
	"cmp"
	"math/rand/v2"
	"slices"
)

// The protocol of a distributed step (see Distributed), as one PE runs it:
// what it knows, the messages it exchanges, and what it does on each.

// DistGlobal is what every PE knows of the whole machine in a distributed
// step: the results of a reduction, no per-PE data.
type DistGlobal struct {
	NumPEs int
	// Avg is the balanced load: the total work over the total speed of
	// the available PEs.
	Avg float64
	// Max is the highest PE load.
	Max float64
}

// PEInfo is what gossip tells about one underloaded PE.
type PEInfo struct {
	PE    int
	Load  float64 // work over speed, when the PE announced it
	Speed float64
}

// GossipMsg carries what a PE knows of the underloaded PEs, by PE number.
type GossipMsg struct {
	From, To int
	Info     []PEInfo
}

// Offer proposes that object Obj (of work Work) move from PE From to PE
// To. A forced offer comes from an unavailable PE: the receiver takes it
// even above the cap.
type Offer struct {
	From, To, Obj int
	Work          float64
	Force         bool
}

// Reply answers an Offer: From is the PE that was offered the object, To
// the one that offered it. Load is From's load after its decision.
type Reply struct {
	From, To, Obj int
	OK            bool
	Load          float64
}

// Move is an accepted offer: object Obj goes to PE To.
type Move struct{ Obj, To int }

// DistObj is one of a PE's own objects.
type DistObj struct {
	ID         int
	Work       float64
	Migratable bool
}

// DistPE is one PE's state in a distributed step.
type DistPE struct {
	id, npes int
	speed    float64
	avail    bool
	target   float64 // TargetRatio × average: below it, a PE is underloaded; up to it, it accepts
	fanout   int
	forwards int // gossip sends left
	work     float64
	under    bool
	started  bool
	fresh    bool      // has gossip to pass on
	cands    []DistObj // movable objects still here, lightest first
	known    []PEInfo  // by PE
	offered  map[int]DistObj
	moves    []Move
	rng      *rand.Rand
}

// NewDistPE makes PE id's state for a step, from its own stats and
// objects, the reduction's results and the step's settings; seed makes
// its random choices repeatable.
func NewDistPE(id int, st PEStats, objs []DistObj, g DistGlobal, cfg Distributed, seed uint64) *DistPE {
	cfg = cfg.withDefaults(g.NumPEs)
	d := &DistPE{
		id:       id,
		npes:     g.NumPEs,
		speed:    speedOf(st),
		avail:    st.Available,
		target:   cfg.TargetRatio * g.Avg,
		fanout:   cfg.Fanout,
		forwards: cfg.Forwards,
		work:     st.Background,
		offered:  map[int]DistObj{},
		rng:      rand.New(rand.NewPCG(seed^0x446973744c42, uint64(id))), // "DistLB"
	}
	for _, o := range objs {
		d.work += o.Work
		if o.Migratable && o.Work > 0 {
			d.cands = append(d.cands, o)
		}
	}
	slices.SortFunc(d.cands, lighter)
	d.under = d.avail && d.Load() < d.target
	return d
}

func lighter(a, b DistObj) int {
	if c := cmp.Compare(a.Work, b.Work); c != 0 {
		return c
	}
	return a.ID - b.ID
}

// Load is the PE's load now: its work, with the objects it accepted and
// without those it gave away, over its speed.
func (d *DistPE) Load() float64 { return d.work / d.speed }

// Evacuating tells whether the PE is unavailable and still holds objects
// it should give away.
func (d *DistPE) Evacuating() bool { return !d.avail && len(d.cands) > 0 }

// Known returns what the PE heard of the underloaded PEs, by PE number,
// with their loads as far as it knows.
func (d *DistPE) Known() []PEInfo { return d.known }

// Moves returns the PE's accepted offers.
func (d *DistPE) Moves() []Move { return d.moves }

// Gossip takes the gossip messages received since the last call (none at
// the first, which starts the step) and returns those to send. An
// underloaded PE announces itself at the first call; a PE that received
// messages forwards all it knows, up to its number of forwards. (Only
// forwarding news would save messages, but then a PE that nobody happens
// to pick hears nothing: with 8 PEs, one step in twenty left an
// overloaded PE out.)
func (d *DistPE) Gossip(in []GossipMsg) []GossipMsg {
	if !d.started {
		d.started = true
		if d.under {
			d.merge([]PEInfo{{PE: d.id, Load: d.Load(), Speed: d.speed}})
			d.fresh = true
		}
	}
	for _, m := range in {
		d.merge(m.Info)
		d.fresh = true
	}
	if !d.fresh || d.forwards == 0 || d.npes < 2 {
		return nil
	}
	d.fresh = false
	d.forwards--
	info := slices.Clone(d.known) // shared by the messages, which do not change it
	var out []GossipMsg
	for _, to := range d.peers() {
		out = append(out, GossipMsg{From: d.id, To: to, Info: info})
	}
	return out
}

// merge adds what info tells of PEs that d did not know.
func (d *DistPE) merge(info []PEInfo) {
	var out []PEInfo
	i, j := 0, 0
	for i < len(d.known) || j < len(info) {
		switch {
		case j == len(info) || i < len(d.known) && d.known[i].PE < info[j].PE:
			out = append(out, d.known[i])
			i++
		case i == len(d.known) || info[j].PE < d.known[i].PE:
			if info[j].PE >= 0 && info[j].PE < d.npes && info[j].Speed > 0 {
				out = append(out, info[j])
			}
			j++
		default: // known already: what d knows is at least as recent
			out = append(out, d.known[i])
			i++
			j++
		}
	}
	d.known = out
}

// peers draws fanout distinct PEs other than d (all of them if there are
// not more).
func (d *DistPE) peers() []int {
	if d.npes-1 <= d.fanout {
		out := make([]int, 0, d.npes-1)
		for pe := range d.npes {
			if pe != d.id {
				out = append(out, pe)
			}
		}
		return out
	}
	out := make([]int, 0, d.fanout)
	for len(out) < d.fanout {
		pe := d.rng.IntN(d.npes - 1)
		if pe >= d.id {
			pe++
		}
		if !slices.Contains(out, pe) {
			out = append(out, pe)
		}
	}
	return out
}

// Transfer is the PE's part of a transfer phase with threshold t: if it
// is above t, it offers objects, lightest first, to the PEs it heard of
// until it is under t, each where it fits under the cap as far as this
// PE knows. It counts an offered object as gone, and as arrived where it
// offered it, until the reply. An unavailable PE offers all its objects.
func (d *DistPE) Transfer(t float64) []Offer {
	if d.under || len(d.known) == 0 || len(d.cands) == 0 {
		return nil
	}
	if !d.avail {
		return d.evacuate()
	}
	if d.Load() <= t {
		return nil
	}
	// The receivers, by spare capacity as this PE knows it.
	var idx []int
	var cdf []float64
	var total float64
	for i, k := range d.known {
		if k.PE != d.id && k.Load < d.target {
			total += (d.target - k.Load) / d.target
			idx = append(idx, i)
			cdf = append(cdf, total)
		}
	}
	if len(idx) == 0 {
		return nil
	}
	var out []Offer
	for len(d.cands) > 0 && d.Load() > t {
		o := d.cands[0]
		var to *PEInfo
		for range len(idx) {
			u := d.rng.Float64() * total
			i, _ := slices.BinarySearch(cdf, u)
			k := &d.known[idx[min(i, len(idx)-1)]]
			if k.Load+o.Work/k.Speed <= d.target {
				to = k
				break
			}
		}
		if to == nil {
			break // the lightest object fits nowhere this PE tried
		}
		d.cands = d.cands[1:]
		out = append(out, d.offer(o, to, false))
	}
	return out
}

// evacuate offers all the objects of an unavailable PE, heaviest first,
// each to the PE it heard of with the least load as far as it knows.
func (d *DistPE) evacuate() []Offer {
	var out []Offer
	for len(d.cands) > 0 {
		o := d.cands[len(d.cands)-1]
		var to *PEInfo
		for i := range d.known {
			k := &d.known[i]
			if k.PE != d.id && (to == nil || k.Load < to.Load) {
				to = k
			}
		}
		if to == nil {
			break
		}
		d.cands = d.cands[:len(d.cands)-1]
		out = append(out, d.offer(o, to, true))
	}
	return out
}

// offer makes the offer of o to the PE of to, and counts o as gone from d
// and arrived there until the reply.
func (d *DistPE) offer(o DistObj, to *PEInfo, force bool) Offer {
	d.work -= o.Work
	to.Load += o.Work / to.Speed
	d.offered[o.ID] = o
	return Offer{From: d.id, To: to.PE, Obj: o.ID, Work: o.Work, Force: force}
}

// Receive answers offers, in order: the PE accepts an object while its
// load stays at or below the cap, TargetRatio × average, and a forced
// one in any case (if it is available).
func (d *DistPE) Receive(offers []Offer) []Reply {
	out := make([]Reply, 0, len(offers))
	for _, o := range offers {
		ok := d.avail && o.Work >= 0 && (o.Force || (d.work+o.Work)/d.speed <= d.target)
		if ok {
			d.work += o.Work
		}
		out = append(out, Reply{From: d.id, To: o.From, Obj: o.Obj, OK: ok, Load: d.Load()})
	}
	return out
}

// Settle takes the replies to the PE's offers: an accepted object is a
// move, a refused one is back. Each reply updates what the PE knows of the
// replier's load.
func (d *DistPE) Settle(replies []Reply) {
	for _, r := range replies {
		o, ok := d.offered[r.Obj]
		if !ok {
			continue // not an offer of ours: ignore
		}
		delete(d.offered, r.Obj)
		if r.OK {
			d.moves = append(d.moves, Move{Obj: r.Obj, To: r.From})
		} else {
			d.work += o.Work
			i, _ := slices.BinarySearchFunc(d.cands, o, lighter)
			d.cands = slices.Insert(d.cands, i, o)
		}
		if i, found := slices.BinarySearchFunc(d.known, r.From, func(k PEInfo, pe int) int { return k.PE - pe }); found {
			d.known[i].Load = r.Load
		}
	}
}
