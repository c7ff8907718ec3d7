package lb

import (
	"cmp"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
)

// Distributed balances load without gathering the objects anywhere, after
// Charm++'s DistributedLB (Menon and Kalé, SC'13). Each PE knows only its
// own objects; the whole machine shares three numbers, from a reduction:
// the total work, the total speed of the available PEs and the highest PE
// load. A step, on every PE at once:
//
//  1. Gossip. A PE below TargetRatio × average announces its load to
//     Fanout random PEs; a PE that receives gossip forwards all it knows
//     (merged, by PE number) to Fanout random PEs, at most Forwards times.
//     Gossip ends when no message is in flight (quiescence, in the
//     runtime).
//  2. Transfer, in phases with a threshold T that starts at
//     max(TargetRatio × average, (max + average) / 2), so that the most
//     loaded PEs give first. A PE above T that heard of underloaded PEs
//     offers its objects, lightest first, until it is under T: each to a
//     PE drawn among those it heard of with a probability proportional to
//     its spare capacity (C − its load as far as this PE knows, where the
//     cap C is TargetRatio × average), if the object fits there under C.
//  3. The receiver accepts while it stays at or under C and refuses
//     otherwise; the reply carries its load, which corrects the sender's
//     view. A PE with refused offers that is still above T offers again
//     (up to 8 rounds of offers a phase); the phase ends when no offer is
//     in flight.
//  4. A reduction gives the new highest load. While the imbalance is
//     above TargetRatio and T above C, another phase runs, with T lowered
//     to (max + average) / 2, or to halfway to the average if the last
//     phase did not lower the imbalance by 0.01 (as Charm++ does), never
//     below C, for at most MaxPhases phases.
//
// Charm++'s receivers accept up to T, not C; but a PE that received work
// never gives any, so one filled up to an early, high T stays the most
// loaded when T comes down. Capping receivers at C avoids that.
//
// A PE decides only from its own state, the reduction's results and the
// messages it received: DistPE holds that state and its methods are what
// a PE runs on each message, so that the runtime can run them on each PE
// with real messages. Place runs the same steps as a simulation, PE after
// PE in order, with each PE's randomness seeded from Snapshot.Seed and
// its number: the same snapshot gives the same placement.
//
// An object moves at most once: a PE that receives objects was
// underloaded and offers none. An unavailable PE announces nothing and, at
// the first phase, gives all its migratable objects, heaviest first, each
// to the least loaded PE it heard of (as far as it knows), which must
// take it (Offer.Force) whatever its load: the objects have to go.
type Distributed struct {
	// TargetRatio is the imbalance (max/avg) the step aims at; 0 means
	// DefaultDistTargetRatio.
	TargetRatio float64
	// Fanout is the number of PEs a gossip message goes to; 0 means
	// DefaultDistFanout.
	Fanout int
	// Forwards is the most times a PE sends gossip; 0 means 2⌈log2 P⌉
	// (as Charm++ does).
	Forwards int
	// MaxPhases bounds the transfer phases; 0 means
	// DefaultDistMaxPhases.
	MaxPhases int
}

// Defaults of Distributed.
const (
	DefaultDistTargetRatio = 1.05
	DefaultDistFanout      = 2
	DefaultDistMaxPhases   = 10
)

func init() { Register("distributed", func() Strategy { return Distributed{} }) }

func (Distributed) Name() string { return "distributed" }

// withDefaults fills in the zero fields for npes PEs.
func (d Distributed) withDefaults(npes int) Distributed {
	if d.TargetRatio <= 0 {
		d.TargetRatio = DefaultDistTargetRatio
	}
	if d.Fanout <= 0 {
		d.Fanout = DefaultDistFanout
	}
	if d.Forwards <= 0 {
		d.Forwards = 2 * bits.Len(uint(max(npes-1, 1)))
	}
	if d.MaxPhases <= 0 {
		d.MaxPhases = DefaultDistMaxPhases
	}
	return d
}

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
		speed:    1,
		avail:    st.Available,
		target:   cfg.TargetRatio * g.Avg,
		fanout:   cfg.Fanout,
		forwards: cfg.Forwards,
		work:     st.Background,
		offered:  map[int]DistObj{},
		rng:      rand.New(rand.NewPCG(seed^0x446973744c42, uint64(id))), // "DistLB"
	}
	if st.Speed > 0 {
		d.speed = st.Speed
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
		d.work -= o.Work
		to.Load += o.Work / to.Speed
		d.offered[o.ID] = o
		out = append(out, Offer{From: d.id, To: to.PE, Obj: o.ID, Work: o.Work})
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
		d.work -= o.Work
		to.Load += o.Work / to.Speed
		d.offered[o.ID] = o
		out = append(out, Offer{From: d.id, To: to.PE, Obj: o.ID, Work: o.Work, Force: true})
	}
	return out
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

// distRetries bounds the rounds of offers in a phase: a PE whose offers
// were refused tries again, with what the replies told it, as Charm++'s
// DistributedLB does on a negative acknowledgement.
const distRetries = 8

// firstThreshold is the threshold of the first transfer phase.
func (d Distributed) firstThreshold(g DistGlobal) float64 {
	return max(d.TargetRatio*g.Avg, (g.Max+g.Avg)/2)
}

// nextThreshold is the threshold of the phase after one with threshold t
// that took the highest load from oldMax to newMax.
func (d Distributed) nextThreshold(g DistGlobal, t, oldMax, newMax float64) float64 {
	if math.Abs(newMax-oldMax)/g.Avg < 0.01 {
		return max(d.TargetRatio*g.Avg, (t+g.Avg)/2)
	}
	return max(d.TargetRatio*g.Avg, (newMax+g.Avg)/2)
}

// Place runs a distributed step as a simulation over the snapshot.
func (d Distributed) Place(s *Snapshot) (Placement, error) {
	if err := s.Check(); err != nil {
		return nil, err
	}
	p := current(s)
	n := len(s.PEs)
	d = d.withDefaults(n)

	// The reduction: total work and speed of the available PEs (with the
	// objects that must leave the others), the highest load.
	speed := speeds(s)
	work := make([]float64, n)
	mine := make([][]DistObj, n)
	var total, speedSum float64
	evacuate := false
	for i, pe := range s.PEs {
		work[i] = pe.Background
		if pe.Available {
			total += pe.Background
			speedSum += speed[i]
		}
	}
	for _, o := range s.Objects {
		work[o.PE] += o.Load
		mine[o.PE] = append(mine[o.PE], DistObj{ID: o.ID, Work: o.Load, Migratable: o.Migratable})
		if s.PEs[o.PE].Available || o.Migratable {
			total += o.Load
		}
		if !s.PEs[o.PE].Available && o.Migratable && o.Load > 0 {
			evacuate = true
		}
	}
	g := DistGlobal{NumPEs: n}
	for i := range work {
		g.Max = max(g.Max, work[i]/speed[i])
	}
	if speedSum == 0 || total == 0 {
		return p, nil
	}
	g.Avg = total / speedSum
	if g.Max <= d.TargetRatio*g.Avg && !evacuate {
		return p, nil
	}

	pes := make([]*DistPE, n)
	for i := range pes {
		pes[i] = NewDistPE(i, s.PEs[i], mine[i], g, d, s.Seed)
	}

	// Gossip until no message is in flight.
	inbox := make([][]GossipMsg, n)
	for {
		next := make([][]GossipMsg, n)
		sent := 0
		for i, pe := range pes {
			for _, m := range pe.Gossip(inbox[i]) {
				next[m.To] = append(next[m.To], m)
				sent++
			}
		}
		if sent == 0 {
			break
		}
		inbox = next
	}

	// Transfer phases.
	t := d.firstThreshold(g)
	high := g.Max
	for phase := 0; phase < d.MaxPhases; phase++ {
		for range distRetries {
			offers := make([][]Offer, n)
			sent := 0
			for _, pe := range pes {
				for _, o := range pe.Transfer(t) {
					offers[o.To] = append(offers[o.To], o)
					sent++
				}
			}
			if sent == 0 {
				break
			}
			replies := make([][]Reply, n)
			for i, pe := range pes {
				for _, r := range pe.Receive(offers[i]) {
					replies[r.To] = append(replies[r.To], r)
				}
			}
			for i, pe := range pes {
				pe.Settle(replies[i])
			}
		}
		var newHigh float64
		evacuate = false
		for _, pe := range pes {
			newHigh = max(newHigh, pe.Load())
			evacuate = evacuate || pe.Evacuating()
		}
		if (newHigh <= d.TargetRatio*g.Avg || t <= d.TargetRatio*g.Avg) && !evacuate {
			break
		}
		t = d.nextThreshold(g, t, high, newHigh)
		high = newHigh
	}
	for _, pe := range pes {
		for _, m := range pe.Moves() {
			p[m.Obj] = m.To
		}
	}
	return p, nil
}
