package comlib

import (
	"errors"
	"fmt"
	"strings"

	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/comlib/mcast"
	"github.com/charmgo/charm/comlib/route"
)

// Spec is a strategy's description, as it travels in the strategy table:
// its Kind, and the parameters of that kind in the field named after it
// (the fields of the other kinds are not read). Each parameter means one
// thing. A zero parameter stands for its default; New applies the
// defaults, in one function per kind, before it checks the Spec, so a
// Spec from ParseStrategy or ContainerSpec may leave them zero.
type Spec struct {
	Kind string // "direct", "streaming", "each-to-many", "multicast" or "auto"

	Streaming  StreamSpec       // Kind "streaming": Streaming and MeshStreaming
	EachToMany EachToManySpec   // Kind "each-to-many"
	Multicast  MulticastOptions // Kind "multicast"

	// Kind "auto": the selection tree, the facts it is pruned with, and
	// the instances of its containers.
	Auto *AutoSpec `msgpack:",omitempty"`
}

// StreamSpec is Streaming's part of a Spec: its options, and whether the
// buffers go over a mesh (MeshStreaming).
type StreamSpec struct {
	StreamOptions
	Mesh bool // two hops over a √P mesh of PEs
}

// EachToManySpec is EachToMany's part of a Spec: EachToManyOptions, with
// the sources named by their collection. The fields mean what
// EachToManyOptions's of the same name do: Tune tunes the group router's
// fan-out ω, Window is the number of iterations per tuning segment, and
// Every says how many segments pass per reported one once settled.
type EachToManySpec struct {
	Router    string
	Degree    int // tree router's arity
	Omega     int // group router's fan-out (0: ⌈√(P−1)⌉)
	Sources   chare.CollID
	CountOnly bool // detect migrations by count alone (the original's C10)
	Tune      bool // tune ω online (group router)
	Window    int  // iterations per tuning segment
	Every     int  // once settled, segments per reported one
}

// The defaults of the strategies' parameters (withDefaults applies them).
const (
	defaultMaxMsgs      = 64       // StreamOptions.MaxMsgs
	defaultMaxBytes     = 32 << 10 // StreamOptions.MaxBytes
	defaultLarge        = 8 << 10  // StreamOptions.Large
	defaultStreamWindow = 256      // StreamOptions.Window, with Tune
	defaultRouter       = "direct" // EachToManyOptions.Router
	defaultE2MWindow    = 8        // EachToManyOptions.Window, with Tune
	defaultEvery        = 16       // EachToManyOptions.Every, with Tune
	defaultMcastKind    = "tree"   // MulticastOptions.Kind
)

// withDefaults returns s with its zero parameters set to their defaults:
// the one place Streaming's defaults are applied.
func (s StreamSpec) withDefaults() StreamSpec {
	if s.MaxMsgs == 0 {
		s.MaxMsgs = defaultMaxMsgs
	}
	if s.MaxBytes == 0 {
		s.MaxBytes = defaultMaxBytes
	}
	if s.Large == 0 {
		s.Large = defaultLarge
	}
	if s.Tune && !s.Scored && s.Window == 0 { // Scored: Window is not used
		s.Window = defaultStreamWindow
	}
	return s
}

// withDefaults returns s with its zero parameters set to their defaults:
// the one place EachToMany's defaults are applied. Window and Every have
// defaults only with Tune (without it they stay zero, and Every is an
// error).
func (s EachToManySpec) withDefaults() EachToManySpec {
	if s.Router == "" {
		s.Router = defaultRouter
	}
	if s.Tune && s.Window == 0 {
		s.Window = defaultE2MWindow
	}
	if s.Tune && s.Every == 0 {
		s.Every = defaultEvery
	}
	return s
}

func (s EachToManySpec) routeOptions() route.Options {
	return route.Options{Degree: s.Degree, Omega: s.Omega}
}

// withDefaults returns o with its zero parameters set to their defaults:
// the one place Multicast's are applied (package mcast applies those of
// Degree and Rings, which are its own).
func (o MulticastOptions) withDefaults() MulticastOptions {
	if o.Kind == "" {
		o.Kind = defaultMcastKind
	}
	return o
}

var kinds = []string{"auto", "direct", "each-to-many", "multicast", "streaming"}

// withDefaults returns s with the defaults of its kind applied.
func (s Spec) withDefaults() Spec {
	switch s.Kind {
	case "streaming":
		s.Streaming = s.Streaming.withDefaults()
	case "each-to-many":
		s.EachToMany = s.EachToMany.withDefaults()
	case "multicast":
		s.Multicast = s.Multicast.withDefaults()
	}
	return s
}

// resolve returns s with its defaults applied, checked for a job of pes
// PEs: what New puts in the strategy table.
func (s Spec) resolve(pes int) (Spec, error) {
	s = s.withDefaults()
	if err := s.validate(pes); err != nil {
		return Spec{}, err
	}
	return s, nil
}

// validate checks a spec whose defaults are applied; errors name what is
// wrong and list the valid choices.
func (s Spec) validate(pes int) error {
	switch s.Kind {
	case "direct":
	case "auto":
		if s.Auto == nil {
			return errors.New("comlib: auto: make it with New(ctx, Auto(...))")
		}
		if _, err := s.Auto.prune(); err != nil {
			return fmt.Errorf("comlib: %w", err)
		}
	case "streaming":
		return s.Streaming.validate()
	case "each-to-many":
		return s.EachToMany.validate(pes)
	case "multicast":
		return s.Multicast.validate()
	default:
		return fmt.Errorf("comlib: unknown strategy %q (valid: %s)", s.Kind, strings.Join(kinds, ", "))
	}
	return nil
}

func (s StreamSpec) validate() error {
	if s.MaxMsgs < 1 || s.MaxBytes < 1 || s.Large < 1 || s.Period < 0 {
		return fmt.Errorf("comlib: streaming needs positive caps (MaxMsgs %d, MaxBytes %d, Large %d) and a period ≥ 0 (%v)", s.MaxMsgs, s.MaxBytes, s.Large, s.Period)
	}
	if s.Tune && s.Window < 1 && !s.Scored {
		return fmt.Errorf("comlib: streaming with Tune needs a tuning window of at least 1 message (Window %d)", s.Window)
	}
	if s.Scored && !s.Tune {
		return errors.New("comlib: streaming: Scored says who scores the tuning's evaluations; it needs Tune")
	}
	return nil
}

func (s EachToManySpec) validate(pes int) error {
	if s.Omega != 0 && s.Router != "group" {
		return fmt.Errorf("comlib: each-to-many: Omega=%d is the group router's fan-out; router %q has none", s.Omega, s.Router)
	}
	if s.Tune && s.Router != "group" {
		return fmt.Errorf("comlib: each-to-many: Tune tunes the group router's fan-out ω; router %q has none", s.Router)
	}
	if s.Tune && s.Window < 1 {
		return fmt.Errorf("comlib: each-to-many with Tune needs segments of at least 1 iteration (Window %d)", s.Window)
	}
	if s.Every != 0 && !s.Tune {
		return fmt.Errorf("comlib: each-to-many: Every=%d says how often a tuned ω is re-checked; it needs Tune", s.Every)
	}
	if s.Every < 0 {
		return fmt.Errorf("comlib: each-to-many with Tune: Every=%d, want segments per reported one ≥ 1 (1: report every segment)", s.Every)
	}
	if _, err := route.New(s.Router, max(pes, 1), s.routeOptions()); err != nil {
		return fmt.Errorf("comlib: each-to-many: %w", err)
	}
	if s.Sources == 0 {
		return errors.New("comlib: each-to-many needs Sources: the array or group whose members send")
	}
	return nil
}

func (o MulticastOptions) validate() error {
	if _, err := mcast.ParseKind(o.Kind); err != nil {
		return fmt.Errorf("comlib: multicast: %w", err)
	}
	if o.Chunk < 0 {
		return fmt.Errorf("comlib: multicast chunk size %d: must be > 0 (or 0 for none)", o.Chunk)
	}
	if o.Degree != 0 && o.Degree < 2 {
		return fmt.Errorf("comlib: multicast tree degree %d: must be ≥ 2", o.Degree)
	}
	if o.Rings < 0 {
		return fmt.Errorf("comlib: multicast rings %d: must be ≥ 1", o.Rings)
	}
	return nil
}

// ParseStrategy returns a strategy by name, with default options (left
// zero, for New to apply): "direct", "streaming", "meshstreaming",
// "multicast:KIND", or "each-to-many:ROUTER" (which still needs its
// Sources, so it is returned as a Spec to fill in:
// Spec.EachToMany.Sources). Command-line flags use it.
func ParseStrategy(name string) (Spec, error) {
	kind, arg, _ := strings.Cut(name, ":")
	var s Spec
	switch kind {
	case "direct":
		s = Direct().spec()
	case "streaming":
		s = Streaming(StreamOptions{}).spec()
	case "meshstreaming":
		s = MeshStreaming(StreamOptions{}).spec()
	case "multicast":
		s = Multicast(MulticastOptions{Kind: arg}).spec()
	case "each-to-many":
		s = EachToMany(EachToManyOptions{Router: arg}).spec()
	default:
		return Spec{}, fmt.Errorf("comlib: unknown strategy %q (valid: direct, streaming, meshstreaming, multicast:KIND, each-to-many:ROUTER)", name)
	}
	return s, nil
}

// NewSpec creates an instance from a Spec (as ParseStrategy returns).
func NewSpec(from chare.Context, sp Spec) (*Instance, error) {
	return New(from, specStrategy(sp))
}

type specStrategy Spec

func (s specStrategy) spec() Spec { return Spec(s) }
