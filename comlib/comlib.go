package comlib

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/comlib/route"
)

// Strategy describes a communication strategy; Direct, Streaming,
// MeshStreaming, EachToMany and Multicast make them. A strategy is a
// description: New turns it into an Instance that proxies are delegated to.
type Strategy interface {
	spec() Spec
}

// Direct sends every message directly, as an undelegated proxy would: the
// baseline every other strategy is measured against.
func Direct() Strategy { return directSpec{} }

type directSpec struct{}

func (directSpec) spec() Spec { return Spec{Kind: "direct"} }

// StreamOptions configure Streaming.
type StreamOptions struct {
	// Period flushes every buffer this often (0: no periodic flush).
	Period time.Duration
	// MaxMsgs and MaxBytes cap a destination's buffer (defaults 64 and
	// 32 KiB); it leaves when it reaches either.
	MaxMsgs, MaxBytes int
	// Large: messages of this many bytes or more go directly (default
	// 8 KiB). A message's size is its Size() (Sizer), else the estimate
	// Auto's msg_size uses: fixed-size fields and the contents of
	// top-level slices and strings.
	Large int
	// NoIdleFlush keeps buffers when the PE runs out of work (by default
	// they are flushed then).
	NoIdleFlush bool
	// Tune makes each PE tune its cap of messages per buffer (starting
	// from MaxMsgs) and, if Period is set, its flush period, while the
	// program runs, with package tune: each evaluation is a window
	// of Window messages sent through the instance on that PE (default
	// 256), scored by the wall time per message. Instance.Tuning reports
	// the trajectories; -tunedebug DIR writes them as CSV and SVG.
	Tune bool
	// Window is the number of messages per tuning evaluation.
	Window int
	// Scored makes the program score the evaluations instead (with Tune):
	// each call of Instance.Score on a PE ends an evaluation there with
	// the cost given — the time of the program's own iteration, say —
	// and Window is not used. The sender's wall time per message, the
	// default score, does not see what buffering costs the receivers
	// (data that wait in a buffer while a receiver has nothing to do);
	// a cost measured over the whole program does.
	Scored bool
}

// Sizer lets a message type tell Streaming its size in bytes.
type Sizer interface{ Size() int }

// Streaming buffers short messages per destination PE and sends each
// buffer as one message when it reaches its cap, on the flush period, or
// when the PE runs out of work (Converse's streaming strategy). Large
// messages go directly; so do messages sent with Urgent (PrioStreaming).
func Streaming(o StreamOptions) Strategy { return streamSpec{o, false} }

// MeshStreaming is Streaming over a √P×√P mesh of PEs: a buffer goes to
// the PE in the sender's row and the destination's column, which combines
// what it gets for each PE of its column: two hops, and each PE sends to
// about 2√P others instead of P.
func MeshStreaming(o StreamOptions) Strategy { return streamSpec{o, true} }

type streamSpec struct {
	o    StreamOptions
	mesh bool
}

func (s streamSpec) spec() Spec {
	return Spec{Kind: "streaming", Streaming: StreamSpec{StreamOptions: s.o, Mesh: s.mesh}}
}

// EachToManyOptions configure EachToMany.
type EachToManyOptions struct {
	// Router combines the messages: "direct", "mesh" (2-D), "grid" (3-D),
	// "hypercube", "tree" or "prefix" (see package comlib/route), or runs a
	// complete-exchange schedule that sends every message directly:
	// "shift", "pairwise", "xor", "sync" or "group" (package
	// comlib/schedule).
	Router string
	// Degree is the tree router's arity (default 4).
	Degree int
	// Omega is the group schedule's fan-out ω: each stage exchanges with at
	// most ω PEs (0: ⌈√(P−1)⌉). Only the "group" router takes it.
	Omega int
	// Sources is the array or group whose members call BeginIteration and
	// EndIteration and send; any proxy of it will do.
	Sources interface{ Route() chare.Route }
	// CountOnly detects migrations by count alone, as the original did
	// (C10); by default the callers' identities are checked too (C13).
	CountOnly bool
	// Tune makes the instance tune the group router's ω while the program
	// runs, starting from Omega: PE 0 scores each value by the exchange
	// time of its slowest participant over a segment's iterations, and
	// chooses among one ω per number of rounds (schedule.GroupOmegas; for
	// 16 PEs 1, 2, 3, 4, 5, 8, 15), leaving Omega only for a neighbour
	// measured faster by more than the noise and settling when neither
	// neighbour is (tune.Picker). It gives every segment of Window
	// iterations its ω before any PE needs it; a PE that gets there first
	// waits for it, so every PE exchanges every iteration with the same ω,
	// across migrations and recoveries too (package comlib/agree). Once
	// the search has settled, PEs report only every 16th segment's times
	// to PE 0 (Every), which re-check the ω and reopen the search if its cost
	// moves by more than 1.5× (Stats.Reported counts the reports). Each
	// PE sends its reports of a segment in one message (agree.Batcher).
	// Instance.Tuning reports the trajectory, Instance.FanOuts the ω each PE
	// used, and -tunedebug DIR writes it as CSV and SVG. Only the "group"
	// router takes it; in a selection tree, router=group with tune=true.
	Tune bool
	// Window is the number of iterations per segment with Tune (default
	// 8): one ω per segment, scored by the mean of its first Window −
	// ⌈Window/4⌉ iterations, after which the next segment's ω is
	// announced; the last ⌈Window/4⌉ leave it time to reach every PE.
	Window int
	// Every is how often PEs report with Tune once the search has
	// settled: only every Every-th segment's times go to PE 0 (default
	// 16; 1: every segment, as while searching). A larger Every costs
	// fewer reports and sees a change of conditions later (at most Every
	// segments late). Negative values, and Every without Tune, are errors.
	Every int
}

// EachToMany is the all-to-all and many-to-many strategy: bracketed (each
// source calls chare.BeginIteration and chare.EndIteration around its
// sends), it combines the messages of an iteration through a router, and
// re-learns where the sources are when they migrate (see package
// comlib/bracket). On a one-stage router (direct, sync) in a job of one
// process there is nothing to combine: an
// optimized iteration sends each message straight to its destination as
// Direct would, as it is sent (Stats.Straight), and keeps the brackets'
// checks and re-learning; a message that arrives after its destination
// began the next iteration (C07) is then not reported.
func EachToMany(o EachToManyOptions) Strategy { return e2mSpec(o) }

type e2mSpec EachToManyOptions

func (s e2mSpec) spec() Spec {
	sp := EachToManySpec{Router: s.Router, Degree: s.Degree, Omega: s.Omega, CountOnly: s.CountOnly, Tune: s.Tune, Window: s.Window, Every: s.Every}
	if s.Sources != nil {
		sp.Sources = s.Sources.Route().Coll
	}
	return Spec{Kind: "each-to-many", EachToMany: sp}
}

// MulticastOptions configure Multicast.
type MulticastOptions struct {
	// Kind is the spanning structure: "direct", "ring", "multiring",
	// "tree", "dim" or "node" (see package comlib/mcast).
	Kind string
	// Degree of the tree (default 4), Rings of multiring (default 2).
	Degree, Rings int
	// Chunk, if set, cuts messages larger than this many bytes into
	// fragments of this size, pipelined along the tree and reassembled
	// before delivery.
	Chunk int
}

// Multicast carries section multicasts and broadcasts along a spanning
// structure of PEs: one copy per PE that has members, forwarded by PEs.
func Multicast(o MulticastOptions) Strategy { return mcastSpec(o) }

type mcastSpec MulticastOptions

func (s mcastSpec) spec() Spec { return Spec{Kind: "multicast", Multicast: MulticastOptions(s)} }

// Instance is a strategy at work: New returns it on PE 0, and proxies are
// delegated to it (proxy.Delegate(inst)). It travels with the proxies it
// delegates to other processes. Its methods implement chare.Delegate and
// chare.Bracketed; programs call them through proxies.
type Instance struct {
	id  uint32
	job *chare.Job
	st  *Stats // shared by the PEs of this process
}

// ID returns the instance's number in the strategy table.
func (in *Instance) ID() int { return int(in.id) }

func (in *Instance) String() string { return fmt.Sprintf("comlib instance %d", in.id) }

// DelegateRef implements chare.PortableDelegate.
func (in *Instance) DelegateRef() (string, uint64) { return delegateKind, uint64(in.id) }

const delegateKind = "comlib"

func init() {
	chare.RegisterDelegateKind(delegateKind, resolveInstance)
}

// resolveInstance finds the instance a delegated proxy from another
// process names; its number came from the wire.
func resolveInstance(pe *chare.PE, id uint64) (chare.Delegate, error) {
	if id > math.MaxUint32 {
		return nil, fmt.Errorf("comlib: a proxy came delegated to comlib instance %d; instance numbers are below 2^32", id)
	}
	return stateOf(pe).instance(uint32(id)), nil
}

// New creates a strategy instance. Call it on PE 0 (in the main chare,
// C02); the strategy table reaches the other PEs asynchronously (C03,
// C04), and sends made through the instance meanwhile wait (C05).
func New(from chare.Context, s Strategy) (*Instance, error) {
	pe := chare.PEOf(from)
	if pe == nil {
		return nil, chare.ErrNoContext
	}
	if pe.ID() != 0 {
		return nil, fmt.Errorf("comlib: strategies are created on PE 0, in the main chare (C02); this is PE %d", pe.ID())
	}
	if s == nil {
		return nil, errors.New("comlib: New needs a strategy (Direct, Streaming, EachToMany, Multicast...)")
	}
	if a, ok := s.(autoStrategy); ok {
		return newAuto(from, pe, a.o)
	}
	sp, err := s.spec().resolve(pe.NumPEs())
	if err != nil {
		return nil, err
	}
	return stateOf(pe).create(from, sp)
}

// Stats counts what an instance did in this process. Every field is
// updated atomically; read them with Snapshot.
type Stats struct {
	mu        sync.Mutex
	exchanges map[int][]int       // iteration → the PEs that exchanged it through the router
	exchOrder []int               // exchanges' iterations, first seen first (to bound it)
	recovered []int               // iterations recovered, in order (PE 0's process)
	tunings   map[int]*Tuning     // Streaming with Tune, by PE
	fanOuts   map[int]map[int]int // EachToMany with Tune: iteration → PE → ω
	fanOrder  []int               // fanOuts' iterations, first seen first
	auto      *autoStats          // an Auto instance's choices
	// e2ms holds, by PE, the EachToMany strategies of this instance on the
	// PEs of this process (each set once, by its PE, when made): a stage
	// packet to one of them is handed to it without a look-up there.
	e2ms atomic.Pointer[[]atomic.Pointer[e2m]]

	messages, packets, direct, held atomic.Int64
	straight                        atomic.Int64
	bytes                           atomic.Int64
	iterations, optimized           atomic.Int64
	recoveries, errorNanos          atomic.Int64
	dests                           atomic.Int64
	waited, reported, reportMsgs    atomic.Int64
}

// StatsSnapshot is a copy of an instance's counters.
type StatsSnapshot struct {
	Messages   int64         // sent through the instance
	Bytes      int64         // their sizes, as MessageSize measures them
	Packets    int64         // combined messages between PEs
	Direct     int64         // messages sent directly (error mode, large, no route)
	Straight   int64         // messages of optimized iterations sent straight, not in packets (EachToMany: one-hop router, one process), counted as each is sent
	Held       int64         // messages held (start-up, error mode)
	Iterations int64         // bracketed iterations ended by PEs
	Optimized  int64         // PE iterations that took the router
	Recoveries int64         // recoveries finished (PE 0's process)
	ErrorTime  time.Duration // time PEs spent in error mode
	Dests      int64         // distinct destination PEs of the exchanges
	Waited     int64         // PE iterations that waited for their ω (EachToManyOptions.Tune)
	Reported   int64         // PE iterations reported to the ω decider (Tune; the others were quiet)
	ReportMsgs int64         // messages that carried them (one per PE per reported segment, agree.Batcher)
}

// Stats returns what the instance did in this process so far. For an
// Auto instance, Messages, Packets, Direct, Straight and Held are summed over its
// parts (Messages: those it passed on; Held also counts what waited for
// the Auto instance itself), and the bracket's counters (Iterations to
// Dests) are its first each-to-many part's, since every such part sees
// the same brackets.
func (in *Instance) Stats() StatsSnapshot {
	s := in.st
	if s == nil {
		return StatsSnapshot{}
	}
	if a := in.autoStats(); a != nil {
		var out StatsSnapshot
		if b := in.firstBracketed(); b != nil {
			out = b.Stats()
			out.Messages, out.Bytes, out.Packets, out.Direct, out.Straight, out.Held = 0, 0, 0, 0, 0, 0
		}
		for _, p := range a.parts {
			ps := p.Stats()
			out.Messages += ps.Messages
			out.Bytes += ps.Bytes
			out.Packets += ps.Packets
			out.Direct += ps.Direct
			out.Straight += ps.Straight
			out.Held += ps.Held
		}
		out.Held += s.held.Load()
		return out
	}
	return StatsSnapshot{Messages: s.messages.Load(), Bytes: s.bytes.Load(), Packets: s.packets.Load(), Direct: s.direct.Load(), Straight: s.straight.Load(), Held: s.held.Load(),
		Iterations: s.iterations.Load(), Optimized: s.optimized.Load(), Recoveries: s.recoveries.Load(),
		ErrorTime: time.Duration(s.errorNanos.Load()), Dests: s.dests.Load(), Waited: s.waited.Load(), Reported: s.reported.Load(),
		ReportMsgs: s.reportMsgs.Load()}
}

func (s StatsSnapshot) String() string {
	return fmt.Sprintf("messages=%d bytes=%d packets=%d direct=%d straight=%d held=%d iterations=%d optimized=%d recoveries=%d errortime=%v",
		s.Messages, s.Bytes, s.Packets, s.Direct, s.Straight, s.Held, s.Iterations, s.Optimized, s.Recoveries, s.ErrorTime.Round(time.Microsecond))
}

// Exchanges returns how many PEs of this process exchanged the given
// iteration through the router (the optimized path); for an Auto
// instance, through its first each-to-many part. It remembers the latest
// 4096 iterations; older ones give 0.
func (in *Instance) Exchanges(iteration int) int {
	if b := in.firstBracketed(); b != nil {
		return b.Exchanges(iteration)
	}
	in.st.mu.Lock()
	defer in.st.mu.Unlock()
	return len(in.st.exchanges[iteration])
}

// ExchangedOn returns the PEs of this process that exchanged the given
// iteration through the router, in increasing order (Exchanges counts
// them); the others sent it directly, in error mode. For an Auto
// instance, through its first each-to-many part. It remembers the latest
// 4096 iterations.
func (in *Instance) ExchangedOn(iteration int) []int {
	if b := in.firstBracketed(); b != nil {
		return b.ExchangedOn(iteration)
	}
	in.st.mu.Lock()
	defer in.st.mu.Unlock()
	pes := append([]int(nil), in.st.exchanges[iteration]...)
	sort.Ints(pes)
	return pes
}

// Recovered returns the iterations recovered so far, in order (in PE 0's
// process; the first is the iteration that taught the strategy its list).
// For an Auto instance they are its first each-to-many part's.
func (in *Instance) Recovered() []int {
	if b := in.firstBracketed(); b != nil {
		return b.Recovered()
	}
	in.st.mu.Lock()
	defer in.st.mu.Unlock()
	return append([]int(nil), in.st.recovered...)
}

// maxIterStats bounds the iterations an instance's per-iteration
// statistics (Exchanges, FanOuts) remember: the latest, as Explain keeps
// maxExplained. A long job must not grow them without end.
const maxIterStats = 4096

// keepLatest notes that iteration it was first seen and drops the oldest
// iteration from m once more than maxIterStats are held.
func keepLatest[V any](m map[int]V, order *[]int, it int) {
	*order = append(*order, it)
	if len(*order) > maxIterStats {
		delete(m, (*order)[0])
		*order = (*order)[1:]
	}
}

func (s *Stats) exchanged(iter, pe int) {
	s.mu.Lock()
	if s.exchanges == nil {
		s.exchanges = map[int][]int{}
	}
	if _, ok := s.exchanges[iter]; !ok {
		keepLatest(s.exchanges, &s.exchOrder, iter)
	}
	s.exchanges[iter] = append(s.exchanges[iter], pe)
	s.mu.Unlock()
}

// setLocalE2M records e, the strategy of PE pe of n.
func (s *Stats) setLocalE2M(pe, n int, e *e2m) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.e2ms.Load()
	if t == nil {
		tt := make([]atomic.Pointer[e2m], n)
		t = &tt
		s.e2ms.Store(t)
	}
	if pe >= 0 && pe < len(*t) {
		(*t)[pe].Store(e)
	}
}

// localE2M returns the strategy of PE pe in this process, or nil.
func (s *Stats) localE2M(pe int) *e2m {
	t := s.e2ms.Load()
	if t == nil || pe < 0 || pe >= len(*t) {
		return nil
	}
	return (*t)[pe].Load()
}

func (s *Stats) recoveredAt(iter int) {
	s.mu.Lock()
	s.recovered = append(s.recovered, iter)
	s.mu.Unlock()
}

// Routers lists the EachToMany routers.
func Routers() []string { r := route.Names(); sort.Strings(r); return r }
