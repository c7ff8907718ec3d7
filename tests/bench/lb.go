package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sort"
	"time"

	"github.com/charmgo/charm/lb"
)

// lb/strategy-time: the time Greedy takes to place 100,000 objects on 64
// PEs, best of -reps, in ms. The baseline, measured in the same run on the
// same loads, is the time to sort them (sort.Float64s on a copy): the
// n log n part that taking objects heaviest first costs in any case, so
// the ratio is what the rest of the strategy adds to a sort.
//
// lb/strategy-time/<strategy> measures the other centralized strategies
// and the distributed one (whose time is its whole simulation, every PE
// in turn) on the same snapshot, against the same baseline.
//
// The snapshot (seeded, the same in every run): loads drawn from an
// exponential distribution, placed with a skew (PE ⌊64 u^1.5⌋ for u
// uniform: the first PE has 4 times its share), and a ring of
// communication (object i sends 1 KB to object i+1) for Comm. -scale does
// not change it: the figure is defined for 100,000 objects.

const (
	lbObjects = 100_000
	lbPEs     = 64
)

func init() {
	register("lb/strategy-time", func(cfg config) ([]result, error) {
		return benchStrategyTime(cfg, "lb/strategy-time", "greedy")
	})
	for _, name := range []string{"greedyrefine", "refine", "comm", "distributed"} {
		register("lb/strategy-time/"+name, func(cfg config) ([]result, error) {
			return benchStrategyTime(cfg, "lb/strategy-time/"+name, name)
		})
	}
}

// lbSnapshot is the benchmarks' snapshot.
func lbSnapshot() *lb.Snapshot {
	r := rand.New(rand.NewPCG(2024, 1))
	s := &lb.Snapshot{PEs: make([]lb.PEStats, lbPEs), Seed: 1}
	for i := range s.PEs {
		s.PEs[i] = lb.PEStats{Speed: 1, Available: true}
	}
	s.Objects = make([]lb.Object, lbObjects)
	s.Comm = make([]lb.Edge, 0, lbObjects)
	for i := range s.Objects {
		s.Objects[i] = lb.Object{ID: i, Load: r.ExpFloat64() * 1e-3, PE: int(lbPEs * math.Pow(r.Float64(), 1.5)), Migratable: true}
		s.Comm = append(s.Comm, lb.Edge{From: i, To: (i + 1) % lbObjects, Msgs: 1, Bytes: 1024})
	}
	return s
}

func benchStrategyTime(cfg config, name, strategy string) ([]result, error) {
	st, err := lb.Lookup(strategy)
	if err != nil {
		return nil, err
	}
	s := lbSnapshot()
	var p lb.Placement
	took, err := best(cfg.reps, false, func() (float64, error) {
		runtime.GC()
		start := time.Now()
		p, err = st.Place(s)
		ms := float64(time.Since(start)) / 1e6
		if err != nil {
			return 0, err
		}
		return ms, lb.Validate(s, p)
	})
	if err != nil {
		return nil, err
	}
	loads := make([]float64, len(s.Objects))
	for i, o := range s.Objects {
		loads[i] = o.Load
	}
	base, err := best(cfg.reps, false, func() (float64, error) {
		c := slices.Clone(loads)
		runtime.GC()
		start := time.Now()
		sort.Float64s(c)
		return float64(time.Since(start)) / 1e6, nil
	})
	if err != nil {
		return nil, err
	}
	fmt.Printf("# %s max/avg=%.4f (before %.3f) migrations=%d of %d objects on %d PEs\n",
		strategy, lb.MaxOverAvg(s.PELoads(p)), lb.MaxOverAvg(s.PELoads(nil)), s.Migrations(p), len(s.Objects), len(s.PEs))
	return []result{{name, took, "ms", base}}, nil
}
