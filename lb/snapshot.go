package lb

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
)

// Object is one object of a snapshot: an array element (or any load the
// strategy may or may not move).
type Object struct {
	// ID is the object's position in Snapshot.Objects.
	ID int
	// Coll and Index name the object in the runtime (the array and the
	// index's msgpack bytes); strategies do not look at them.
	Coll  uint64
	Index string
	// Load is the object's measured (or user-set) load since the last
	// step, in seconds of wall time; CPU is its CPU time where measured
	// (else 0).
	Load float64
	CPU  float64
	// PE is where the object is now.
	PE int
	// Migratable is false for objects that must stay on PE.
	Migratable bool
}

// PEStats is what a snapshot knows of one PE.
type PEStats struct {
	// Background is the PE's load that no object accounts for (runtime
	// work, non-migratable chares), in seconds; Idle its idle time.
	Background float64
	Idle       float64
	// Speed is the PE's relative speed, a finite number above 0 (give 1
	// for a PE like the others); a strategy divides loads by it. Check
	// refuses a snapshot with another speed, 0 included.
	Speed float64
	// Available is false for a PE that must not receive objects.
	Available bool
}

// Edge is the communication between two objects since the last step.
type Edge struct {
	From, To int // object IDs
	Msgs     int
	Bytes    int64
}

// Snapshot is the input of a strategy: the objects, the PEs and,
// optionally, the communication graph.
type Snapshot struct {
	Objects []Object
	PEs     []PEStats
	Comm    []Edge
	// Step is the number of the load-balancing step (0 for the first);
	// Seed makes randomized strategies repeatable.
	Step int
	Seed uint64
}

// Placement gives, for every object (by ID), the PE it must be on after
// the step.
type Placement []int

// Strategy computes a placement from a snapshot. Strategies are pure: they
// do not touch the snapshot.
type Strategy interface {
	Name() string
	Place(s *Snapshot) (Placement, error)
}

// Validate checks a placement against its snapshot: one PE per object,
// an existing and available PE for each, non-migratable objects where
// they are.
func Validate(s *Snapshot, p Placement) error {
	if s == nil {
		return errNilSnapshot
	}
	if len(p) != len(s.Objects) {
		return fmt.Errorf("lb: the placement has %d entries for %d objects", len(p), len(s.Objects))
	}
	for i, o := range s.Objects {
		pe := p[i]
		if pe < 0 || pe >= len(s.PEs) {
			return fmt.Errorf("lb: object %d placed on PE %d, which does not exist (PEs 0..%d)", i, pe, len(s.PEs)-1)
		}
		if !o.Migratable && pe != o.PE {
			return fmt.Errorf("lb: object %d is not migratable but was moved from PE %d to %d", i, o.PE, pe)
		}
		if pe != o.PE && !s.PEs[pe].Available {
			return fmt.Errorf("lb: object %d moved to PE %d, which is not available", i, pe)
		}
	}
	return nil
}

var errNilSnapshot = errors.New("lb: a nil snapshot")

// Check verifies a snapshot: object IDs match positions, PEs exist, every
// load and time is a finite number of seconds, at least 0, and every PE's
// speed a finite number above 0. One NaN or infinite figure would make
// every PE load and the imbalance NaN, and the placement meaningless, so
// the error names the object or PE that has it.
func (s *Snapshot) Check() error {
	if s == nil {
		return errNilSnapshot
	}
	if len(s.PEs) == 0 {
		return errors.New("lb: a snapshot without PEs")
	}
	for i, pe := range s.PEs {
		if err := seconds(pe.Background); err != nil {
			return fmt.Errorf("lb: PE %d has a background load of %w", i, err)
		}
		if err := seconds(pe.Idle); err != nil {
			return fmt.Errorf("lb: PE %d has an idle time of %w", i, err)
		}
		if math.IsNaN(pe.Speed) || math.IsInf(pe.Speed, 0) || pe.Speed <= 0 {
			return fmt.Errorf("lb: PE %d has speed %g: a speed is a finite number above 0 (1 for a PE like the others)", i, pe.Speed)
		}
	}
	for i, o := range s.Objects {
		if o.ID != i {
			return fmt.Errorf("lb: object at position %d has ID %d", i, o.ID)
		}
		if o.PE < 0 || o.PE >= len(s.PEs) {
			return fmt.Errorf("lb: object %d%s is on PE %d, which does not exist", i, o.name(), o.PE)
		}
		if err := seconds(o.Load); err != nil {
			return fmt.Errorf("lb: object %d%s on PE %d has a load of %w", i, o.name(), o.PE, err)
		}
		if err := seconds(o.CPU); err != nil {
			return fmt.Errorf("lb: object %d%s on PE %d has a CPU time of %w", i, o.name(), o.PE, err)
		}
	}
	for _, e := range s.Comm {
		if e.From < 0 || e.From >= len(s.Objects) || e.To < 0 || e.To >= len(s.Objects) {
			return fmt.Errorf("lb: an edge %d→%d between objects that do not exist", e.From, e.To)
		}
	}
	return nil
}

// seconds checks a load or a time.
func seconds(v float64) error {
	if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		return fmt.Errorf("%g: want a finite number of seconds, at least 0", v)
	}
	return nil
}

// name is the object's runtime name, if the snapshot gives one, for an
// error message.
func (o Object) name() string {
	if o.Index == "" && o.Coll == 0 {
		return ""
	}
	return fmt.Sprintf(" (index %s of collection %d)", o.Index, o.Coll)
}

// PELoads returns each PE's load under a placement (nil: the current one):
// its objects' loads plus its background load, divided by its speed.
func (s *Snapshot) PELoads(p Placement) []float64 {
	if s == nil {
		return nil
	}
	loads := make([]float64, len(s.PEs))
	for i, pe := range s.PEs {
		loads[i] = pe.Background
	}
	for i, o := range s.Objects {
		where := o.PE
		if p != nil {
			where = p[i]
		}
		loads[where] += o.Load
	}
	for i, pe := range s.PEs {
		if pe.Speed > 0 {
			loads[i] /= pe.Speed
		}
	}
	return loads
}

// MaxOverAvg is the imbalance of a set of PE loads: the largest over the
// mean (1 is perfect balance; 0 if there is no load).
func MaxOverAvg(loads []float64) float64 {
	var sum, mx float64
	for _, l := range loads {
		sum += l
		mx = max(mx, l)
	}
	if sum == 0 {
		return 0
	}
	return mx / (sum / float64(len(loads)))
}

// Migrations counts the objects a placement moves.
func (s *Snapshot) Migrations(p Placement) int {
	if s == nil {
		return 0
	}
	n := 0
	for i, o := range s.Objects {
		if p[i] != o.PE {
			n++
		}
	}
	return n
}

var strategies = map[string]func() Strategy{}

// Register makes a strategy known by name (for -balancer).
func Register(name string, make func() Strategy) { strategies[strings.ToLower(name)] = make }

// Names lists the known strategies, sorted.
func Names() []string {
	var out []string
	for n := range strategies {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Lookup returns the strategy called name (case does not matter).
func Lookup(name string) (Strategy, error) {
	if mk := strategies[strings.ToLower(strings.TrimSpace(name))]; mk != nil {
		return mk(), nil
	}
	return nil, fmt.Errorf("lb: unknown strategy %q (known: %s)", name, strings.Join(Names(), ", "))
}

// ParseBalancer reads a -balancer value: one strategy, or a
// comma-separated list whose first entry runs at the first step and whose
// last runs at every later step (as Charm++'s +balancer A,B does).
func ParseBalancer(v string) ([]Strategy, error) {
	if strings.TrimSpace(v) == "" {
		return nil, errors.New("lb: -balancer needs a strategy name")
	}
	var out []Strategy
	for _, name := range strings.Split(v, ",") {
		s, err := Lookup(name)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// ForStep returns the strategy of step n from a -balancer list.
func ForStep(list []Strategy, n int) Strategy {
	if len(list) == 0 {
		return nil
	}
	return list[min(n, len(list)-1)]
}
