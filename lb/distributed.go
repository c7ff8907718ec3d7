package lb

import (
	"math"
	"math/bits"
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
// messages it received: DistPE (strategy_distpe.go) holds that state and
// its methods are what a PE runs on each message, so that the runtime
// (distrun.go) can run them on each PE with real messages. Place runs the same steps as a simulation, PE after
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
	d.TargetRatio = orDefault(d.TargetRatio, DefaultDistTargetRatio)
	d.Fanout = orDefault(d.Fanout, DefaultDistFanout)
	d.Forwards = orDefault(d.Forwards, 2*bits.Len(uint(max(npes-1, 1))))
	d.MaxPhases = orDefault(d.MaxPhases, DefaultDistMaxPhases)
	return d
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
	next := (newMax + g.Avg) / 2
	if math.Abs(newMax-oldMax)/g.Avg < 0.01 {
		next = (t + g.Avg) / 2 // the last phase did not help: halfway down
	}
	return max(d.TargetRatio*g.Avg, next)
}

// Place runs a distributed step as a simulation over the snapshot.
func (d Distributed) Place(s *Snapshot) (Placement, error) {
	if s == nil {
		return nil, errNilSnapshot
	}
	return withPlan(s, d.withDefaults(len(s.PEs)).place)
}

func (d Distributed) place(pl *plan) {
	s := pl.s
	n := len(s.PEs)

	// The reduction: total work and speed of the available PEs (with the
	// objects that must leave the others), the highest load.
	var total, speed float64
	for _, pe := range pl.avail {
		total += s.PEs[pe].Background
		speed += pl.speed[pe]
	}
	work := make([]float64, n)
	for i, pe := range s.PEs {
		work[i] = pe.Background
	}
	mine := make([][]DistObj, n)
	evacuate := false
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
	if total == 0 {
		return
	}
	g := DistGlobal{NumPEs: n, Avg: total / speed}
	for i := range work {
		g.Max = max(g.Max, work[i]/pl.speed[i])
	}
	target := d.TargetRatio * g.Avg
	if g.Max <= target && !evacuate {
		return
	}

	pes := make([]*DistPE, n)
	for i := range pes {
		pes[i] = NewDistPE(i, s.PEs[i], mine[i], g, d, s.Seed)
	}
	gossip(pes)
	t, high := d.firstThreshold(g), g.Max
	for range d.MaxPhases {
		for range distRetries {
			if !offerRound(pes, t) {
				break
			}
		}
		var newHigh float64
		evacuate = false
		for _, pe := range pes {
			newHigh = max(newHigh, pe.Load())
			evacuate = evacuate || pe.Evacuating()
		}
		if (newHigh <= target || t <= target) && !evacuate {
			break
		}
		t = d.nextThreshold(g, t, high, newHigh)
		high = newHigh
	}
	for _, pe := range pes {
		for _, m := range pe.Moves() {
			pl.p[m.Obj] = m.To
		}
	}
}

// gossip runs the PEs' gossip until no message is in flight.
func gossip(pes []*DistPE) {
	inbox := make([][]GossipMsg, len(pes))
	for {
		next := make([][]GossipMsg, len(pes))
		sent := 0
		for i, pe := range pes {
			for _, m := range pe.Gossip(inbox[i]) {
				next[m.To] = append(next[m.To], m)
				sent++
			}
		}
		if sent == 0 {
			return
		}
		inbox = next
	}
}

// offerRound runs a round of offers at threshold t: the PEs above it
// offer, the receivers answer, the offerers settle. It reports whether
// there was any offer.
func offerRound(pes []*DistPE, t float64) bool {
	offers := make([][]Offer, len(pes))
	sent := 0
	for _, pe := range pes {
		for _, o := range pe.Transfer(t) {
			offers[o.To] = append(offers[o.To], o)
			sent++
		}
	}
	if sent == 0 {
		return false
	}
	replies := make([][]Reply, len(pes))
	for i, pe := range pes {
		for _, r := range pe.Receive(offers[i]) {
			replies[r.To] = append(replies[r.To], r)
		}
	}
	for i, pe := range pes {
		pe.Settle(replies[i])
	}
	return true
}
