package lb

import "math/rand/v2"

// Rotate moves every migratable object to the next available PE after its
// own, cyclically: (PE+1) mod P when every PE is available. It is a test
// of migration, not a balancer.
type Rotate struct{}

func (Rotate) Name() string { return "rotate" }

func (Rotate) Place(s *Snapshot) (Placement, error) {
	return withPlan(s, func(pl *plan) {
		// next[pe] is the first available PE after pe, cyclically (after
		// the last PE comes the first available one).
		next := make([]int, len(s.PEs))
		nxt := pl.avail[0]
		for pe := len(s.PEs) - 1; pe >= 0; pe-- {
			next[pe] = nxt
			if s.PEs[pe].Available {
				nxt = pe
			}
		}
		for i, o := range s.Objects {
			if o.Migratable {
				pl.p[i] = next[o.PE]
			}
		}
	})
}

// Random moves every migratable object to an available PE drawn at
// random; the draw depends only on Snapshot.Seed.
type Random struct{}

func (Random) Name() string { return "random" }

func (Random) Place(s *Snapshot) (Placement, error) {
	return withPlan(s, func(pl *plan) {
		rng := rand.New(rand.NewPCG(s.Seed, 0x52616e646f6d)) // "Random"
		p, avail := pl.p, pl.avail
		for i, o := range s.Objects {
			if o.Migratable {
				p[i] = avail[rng.IntN(len(avail))]
			}
		}
	})
}

// Dummy moves nothing (Charm++'s DummyLB): a step with it measures the
// cost of the step itself.
type Dummy struct{}

func (Dummy) Name() string { return "dummy" }

func (Dummy) Place(s *Snapshot) (Placement, error) { return withPlan(s, func(*plan) {}) }
