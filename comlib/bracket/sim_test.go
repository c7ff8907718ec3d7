package bracket

import (
	"fmt"
	"math/rand"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/comlib/agree"
)

// Routers for the tests (package route has the real ones): everything in
// one stage, and a ring that moves each message one participant on per
// stage (n−1 stages: many interleavings of partial exchanges).
type directRouter int

func (r directRouter) Stages() int { return 1 }
func (r directRouter) SendTo(self, _ int) []int {
	var out []int
	for i := 0; i < int(r); i++ {
		if i != self {
			out = append(out, i)
		}
	}
	return out
}
func (r directRouter) RecvFrom(self, s int) []int  { return r.SendTo(self, s) }
func (r directRouter) NextHop(at, dest, _ int) int { return dest }

type ringRouter int

func (r ringRouter) Stages() int { return max(1, int(r)-1) }
func (r ringRouter) SendTo(self, _ int) []int {
	if r < 2 {
		return nil
	}
	return []int{(self + 1) % int(r)}
}
func (r ringRouter) RecvFrom(self, _ int) []int {
	if r < 2 {
		return nil
	}
	return []int{(self - 1 + int(r)) % int(r)}
}
func (r ringRouter) NextHop(at, dest, _ int) int {
	if at == dest {
		return at
	}
	return (at + 1) % int(r)
}

// payload identifies one message of the simulated all-to-all.
type payload struct{ src, dst, iter int }

// wire is a message between PEs in the simulation.
type wire struct {
	packet  *Packet[payload]
	direct  *Msg[payload]
	note    *Note
	report  *Report
	enter   *Enter
	list    *List
	ack     int
	release int
	// The agreement on router variants (variant_test.go).
	announce *agree.Range
	ask      *int
	measure  []agree.Report // one PE's reports, batched (agree.Batcher)
}

type simSource struct {
	pe      int
	iter    int // the last iteration begun
	got     map[int]int
	stopped bool
}

type sim struct {
	t        require.TestingT
	rng      *rand.Rand
	p, n     int
	iters    int
	pes      []*PE[payload]
	root     *Root
	chans    map[[2]int][]wire // FIFO per pair
	srcs     []*simSource
	received map[payload]int
	migr     float64 // chance of a migration between iterations
	swapP    float64
	exch     map[int]int // exchanges started per iteration
	lastMove int         // the last iteration before which a source moved
	errs     []error
	vary     *varSim // nil: no variants
	// Options.Straight (straight_test.go): sources ask PE.Straight before
	// each send; what goes straight is counted, and so are the packets.
	straight  bool
	straightN map[int]int // by iteration
	packets   int
	// order, if not nil, holds per (source, destination) the last
	// iteration received: each must be later (a run without migrations).
	order map[[2]int]int
}

func key(i int) Key { return Key(fmt.Sprintf("s%d", i)) }
func keyIndex(k Key) int {
	var i int
	fmt.Sscanf(string(k), "s%d", &i)
	return i
}

func newSim(t require.TestingT, seed int64, p, n, iters int, mk func(int, int) (Router, error), opt Options) *sim {
	s := &sim{t: t, rng: rand.New(rand.NewSource(seed)), p: p, n: n, iters: iters, root: NewRoot(p),
		chans: map[[2]int][]wire{}, received: map[payload]int{}, exch: map[int]int{}, lastMove: -1, straightN: map[int]int{}}
	for i := 0; i < p; i++ {
		s.pes = append(s.pes, NewPE[payload](i, opt, mk))
	}
	for i := 0; i < n; i++ {
		s.srcs = append(s.srcs, &simSource{pe: s.rng.Intn(p), iter: -1, got: map[int]int{}})
	}
	return s
}

func (s *sim) send(from, to int, w wire) {
	s.chans[[2]int{from, to}] = append(s.chans[[2]int{from, to}], w)
}

func (s *sim) apply(pe int, fx Effects[payload]) {
	s.packets += len(fx.Packets)
	for i := range fx.Packets {
		pk := fx.Packets[i]
		require.Equal(s.t, pe, pk.From)
		require.NotEqual(s.t, pe, pk.To, "a packet to itself")
		s.send(pe, pk.To, wire{packet: &pk})
	}
	for i := range fx.Direct {
		m := fx.Direct[i]
		s.send(pe, m.Dest, wire{direct: &m})
	}
	for _, m := range fx.Deliver {
		require.Equal(s.t, pe, m.Dest)
		s.arrive(pe, m)
	}
	for _, ms := range fx.Runs {
		for _, m := range ms {
			require.Equal(s.t, pe, m.Dest)
			s.arrive(pe, m)
		}
	}
	for i := range fx.Notes {
		s.send(pe, 0, wire{note: &fx.Notes[i]})
	}
	for i := range fx.Reports {
		s.send(pe, 0, wire{report: &fx.Reports[i]})
	}
	if fx.Ack != 0 {
		s.send(pe, 0, wire{ack: fx.Ack})
	}
	for _, n := range fx.Exchanges {
		s.exch[n]++
	}
	s.errs = append(s.errs, fx.Errors...)
	if s.vary != nil {
		s.vary.effects(pe, fx)
	}
}

// arrive is the location manager: a message for a source that is not
// here is forwarded to where it is.
func (s *sim) arrive(pe int, m Msg[payload]) {
	d := s.srcs[m.Payload.dst]
	if d.pe != pe {
		s.send(pe, d.pe, wire{direct: &m})
		return
	}
	s.received[m.Payload]++
	d.got[m.Payload.iter]++
	if s.order != nil {
		pair := [2]int{m.Payload.src, m.Payload.dst}
		if last, ok := s.order[pair]; ok {
			require.Greater(s.t, m.Payload.iter, last, "source %d's messages to %d out of order", pair[0], pair[1])
		}
		s.order[pair] = m.Payload.iter
	}
}

func (s *sim) deliverWire(from, to int, w wire) {
	switch {
	case w.packet != nil:
		s.apply(to, s.pes[to].Packet(*w.packet))
	case w.direct != nil:
		s.arrive(to, *w.direct)
	case w.note != nil:
		require.Equal(s.t, 0, to)
		if e := s.root.Note(*w.note, s.n); e != nil {
			for pe := range s.pes {
				s.send(0, pe, wire{enter: e})
			}
		}
		s.checkReady()
	case w.report != nil:
		l, err := s.root.Report(*w.report)
		require.NoError(s.t, err)
		s.broadcastList(l)
	case w.enter != nil:
		s.apply(to, s.pes[to].Enter(*w.enter))
	case w.list != nil:
		fx, err := s.pes[to].NewList(w.list)
		require.NoError(s.t, err)
		s.apply(to, fx)
	case w.ack != 0:
		if step, ok := s.root.Ack(w.ack); ok {
			for pe := range s.pes {
				s.send(0, pe, wire{release: step})
			}
		}
	case w.release != 0:
		s.apply(to, s.pes[to].Release(w.release))
	default:
		s.vary.deliver(to, w)
	}
}

func (s *sim) checkReady() { s.broadcastList(s.root.Ready()) }

func (s *sim) broadcastList(l *List) {
	if l == nil {
		return
	}
	for pe := range s.pes {
		s.send(0, pe, wire{list: l})
	}
}

// step runs one source's iteration: it may migrate first (between
// brackets), then begins, sends to every other source, and ends.
func (s *sim) step(i int) {
	src := s.srcs[i]
	n := src.iter + 1
	if n > 0 && s.rng.Float64() < s.migr {
		if s.rng.Float64() < s.swapP {
			// Swap with another source that is also between brackets.
			for j, o := range s.srcs {
				if j != i && o.pe != src.pe && o.iter == src.iter && !o.stopped {
					src.pe, o.pe = o.pe, src.pe
					s.lastMove = max(s.lastMove, n)
					break
				}
			}
		} else {
			src.pe = s.rng.Intn(s.p)
			s.lastMove = max(s.lastMove, n)
		}
	}
	pe := s.pes[src.pe]
	fx, err := pe.Begin(key(i), n)
	require.NoError(s.t, err)
	s.apply(src.pe, fx)
	src.iter = n
	for j, d := range s.srcs {
		if j == i {
			continue
		}
		if s.straight && pe.Straight(key(i)) {
			m := Msg[payload]{Dest: d.pe, Src: key(i), DestKey: key(j), Iter: n, Payload: payload{i, j, n}}
			s.send(src.pe, d.pe, wire{direct: &m})
			s.straightN[n]++
			continue
		}
		fx, err := pe.Send(key(i), d.pe, key(j), payload{i, j, n})
		require.NoError(s.t, err)
		s.apply(src.pe, fx)
	}
	fx, err = pe.End(key(i))
	require.NoError(s.t, err)
	s.apply(src.pe, fx)
	if n == s.iters-1 {
		src.stopped = true
	}
}

// run interleaves source steps and deliveries at random until nothing is
// left to do.
func (s *sim) run() {
	for guard := 0; ; guard++ {
		require.Less(s.t, guard, 10_000_000, "the simulation does not end")
		var ready []int
		for i, src := range s.srcs {
			// C07: begin n only after every message of n−1 arrived.
			if !src.stopped && (src.iter < 0 || src.got[src.iter] == s.n-1) {
				ready = append(ready, i)
			}
		}
		var chans [][2]int
		for k, q := range s.chans {
			if len(q) > 0 {
				chans = append(chans, k)
			}
		}
		if len(ready) == 0 && len(chans) == 0 {
			return
		}
		sort.Slice(chans, func(a, b int) bool {
			return chans[a][0] < chans[b][0] || chans[a][0] == chans[b][0] && chans[a][1] < chans[b][1]
		})
		if len(chans) == 0 || len(ready) > 0 && s.rng.Intn(3) == 0 {
			s.step(ready[s.rng.Intn(len(ready))])
			continue
		}
		c := chans[s.rng.Intn(len(chans))]
		w := s.chans[c][0]
		s.chans[c] = s.chans[c][1:]
		s.deliverWire(c[0], c[1], w)
	}
}

func (s *sim) check() {
	require.Empty(s.t, s.errs)
	for i := 0; i < s.n; i++ {
		for j := 0; j < s.n; j++ {
			if i == j {
				continue
			}
			for it := 0; it < s.iters; it++ {
				require.Equal(s.t, 1, s.received[payload{i, j, it}], "message %d→%d of iteration %d", i, j, it)
			}
		}
	}
	for i, pe := range s.pes {
		require.Zero(s.t, pe.Iterations(), "PE %d has iterations left", i)
		require.False(s.t, pe.InError(), "PE %d is left in error mode", i)
	}
	_, rec := s.root.Recovering()
	require.False(s.t, rec)
}

func routers() map[string]func(int, int) (Router, error) {
	return map[string]func(int, int) (Router, error){
		"direct": func(n, _ int) (Router, error) { return directRouter(n), nil },
		"ring":   func(n, _ int) (Router, error) { return ringRouter(n), nil },
	}
}

// TestC12_SimulatedRecoveries: many seeded runs of an all-to-all with
// migrations, swaps and PEs left empty; every message arrives exactly
// once, no PE is left in error mode or holding an iteration, and once the
// sources stop moving the iterations are optimized again.
func TestC12_SimulatedRecoveries(t *testing.T) {
	for name, mk := range routers() {
		for _, c := range []struct{ p, n int }{{1, 3}, {2, 2}, {3, 7}, {4, 4}, {5, 12}, {8, 6}} {
			for seed := int64(1); seed <= 25; seed++ {
				t.Run(fmt.Sprintf("%s/p%d/n%d/seed%d", name, c.p, c.n, seed), func(t *testing.T) {
					s := newSim(t, seed, c.p, c.n, 12, mk, Options{})
					s.migr, s.swapP = 0.08, 0.4
					s.run()
					s.check()
					require.GreaterOrEqual(t, s.root.Recoveries, 1, "the first iteration teaches the list")
				})
			}
		}
	}
}

// TestC12_NextIterationOptimized: after the last migration (before
// iteration m), iteration m is recovered and every later one is exchanged
// by every participant: one iteration from a migration to the optimized
// path.
func TestC12_NextIterationOptimized(t *testing.T) {
	for seed := int64(1); seed <= 40; seed++ {
		s := newSim(t, seed, 4, 8, 10, routers()["ring"], Options{})
		s.run1Until(5)
		src := s.srcs[s.rng.Intn(s.n)]
		src.pe = (src.pe + 1) % s.p // between iterations 4 and 5
		s.lastMove = 5
		s.run()
		s.check()
		parts := map[int]bool{}
		for _, src := range s.srcs {
			parts[src.pe] = true
		}
		for it := s.lastMove + 1; it < s.iters; it++ {
			require.Equal(t, len(parts), s.exch[it], "seed %d: iteration %d exchanged by every participant", seed, it)
		}
		require.Equal(t, 2, s.root.Recoveries, "seed %d: the first iteration and the migration", seed)
	}
}

// run1Until runs until every source has ended iteration n−1 and received
// its messages, and no message is in flight.
func (s *sim) run1Until(n int) {
	for _, src := range s.srcs {
		src.stopped = false
	}
	saved := s.iters
	s.iters = n
	s.run()
	s.iters = saved
	for _, src := range s.srcs {
		src.stopped = false
	}
}

// TestC10_CountDetectsGain and TestC13_IdentityDetectsSwap: a source that
// arrives on a PE makes the count too high (C10); two sources that swap
// PEs leave every count unchanged, and only the identity check sees it
// (C13).
func TestC10_CountDetectsGain(t *testing.T) {
	p := NewPE[payload](1, Options{CountOnly: true}, routers()["direct"])
	_, err := p.NewList(&List{Step: 1, Iter: 0, Where: map[Key]int{"a": 1, "b": 0}})
	require.NoError(t, err)
	fx, err := p.Begin("a", 1)
	require.NoError(t, err)
	require.Empty(t, fx.Notes)
	fx, err = p.Begin("b", 1) // b came from PE 0
	require.NoError(t, err)
	require.Len(t, fx.Notes, 1)
	require.Contains(t, fx.Notes[0].Reason, "C10")
	require.True(t, p.InError())
}

func TestC13_IdentityDetectsSwap(t *testing.T) {
	list := &List{Step: 1, Iter: 0, Where: map[Key]int{"a": 1, "b": 0}}
	for _, countOnly := range []bool{true, false} {
		p := NewPE[payload](1, Options{CountOnly: countOnly}, routers()["direct"])
		_, err := p.NewList(list)
		require.NoError(t, err)
		fx, err := p.Begin("b", 1) // a and b swapped
		require.NoError(t, err)
		if countOnly {
			require.Empty(t, fx.Notes, "the original's count test misses a swap")
			continue
		}
		require.Len(t, fx.Notes, 1)
		require.Contains(t, fx.Notes[0].Reason, "C13")
	}
	// And in the simulation: swaps only, every message still arrives once.
	for seed := int64(1); seed <= 20; seed++ {
		s := newSim(t, seed, 4, 8, 10, routers()["ring"], Options{})
		s.migr, s.swapP = 0.1, 1
		s.run()
		s.check()
	}
}

// TestC09_LocalList: each PE's machine keeps its local sources and the
// iterations under way.
func TestC09_LocalList(t *testing.T) {
	p := NewPE[payload](2, Options{}, routers()["direct"])
	n, ok := p.Known()
	require.False(t, ok)
	require.Zero(t, n)
	_, err := p.NewList(&List{Step: 1, Iter: 0, Where: map[Key]int{"a": 2, "b": 0, "c": 2}})
	require.NoError(t, err)
	require.Equal(t, []Key{"a", "c"}, p.Local())
	_, err = p.Begin("a", 1)
	require.NoError(t, err)
	require.Equal(t, 1, p.Iterations())
}

// TestC11_ErrorModeQueuedDirectNewHeld: in error mode, what was queued
// goes directly and new messages are held until the new list.
func TestC11_ErrorModeQueuedDirectNewHeld(t *testing.T) {
	p := NewPE[payload](1, Options{}, routers()["direct"])
	_, err := p.NewList(&List{Step: 1, Iter: 0, Where: map[Key]int{"a": 1, "b": 0}})
	require.NoError(t, err)
	_, err = p.Begin("a", 1)
	require.NoError(t, err)
	fx, err := p.Send("a", 0, "b", payload{0, 1, 1})
	require.NoError(t, err)
	require.Empty(t, fx.Direct, "queued for the exchange")
	fx, err = p.Begin("x", 1) // a newcomer
	require.NoError(t, err)
	require.Len(t, fx.Notes, 1)
	require.Len(t, fx.Direct, 1, "the queued message goes directly")
	fx, err = p.Send("x", 0, "b", payload{2, 1, 1})
	require.NoError(t, err)
	require.Empty(t, fx.Direct, "a new message is held")
	fx = p.Enter(Enter{Iter: 1, Step: 2})
	require.Empty(t, fx.Direct)
	_, err = p.End("a")
	require.NoError(t, err)
	fx, err = p.End("x")
	require.NoError(t, err)
	require.Len(t, fx.Reports, 1)
	fx, err = p.NewList(&List{Step: 2, Iter: 1, Where: map[Key]int{"a": 1, "b": 0, "x": 1}})
	require.NoError(t, err)
	require.Equal(t, 2, fx.Ack)
	require.Empty(t, fx.Direct, "held until every PE has the list")
	fx = p.Release(2)
	require.Len(t, fx.Direct, 1, "the held message is released")
	require.False(t, p.InError())
}

// TestC07_C08_Violations: misuse gets errors naming the source and the
// iteration.
func TestC07_C08_Violations(t *testing.T) {
	p := NewPE[payload](0, Options{}, routers()["direct"])
	_, err := p.NewList(&List{Step: 1, Iter: 0, Where: map[Key]int{"a": 0, "b": 0}})
	require.NoError(t, err)
	_, err = p.End("a")
	require.ErrorContains(t, err, "source a ended an iteration on PE 0 without beginning it here")
	_, err = p.Send("a", 0, "b", payload{})
	require.ErrorContains(t, err, "outside BeginIteration/EndIteration")
	_, err = p.Begin("a", 3)
	require.NoError(t, err)
	_, err = p.Begin("a", 4)
	require.ErrorContains(t, err, "source a began iteration 4 on PE 0 while its iteration 3 is not ended")
	_, err = p.End("a")
	require.NoError(t, err)
	_, err = p.Begin("a", 2)
	require.ErrorContains(t, err, "iterations must grow")

	// C07: b begins iteration 4 while a message of iteration 3 for it is
	// still on its way.
	q := NewPE[payload](0, Options{}, routers()["direct"])
	_, err = q.NewList(&List{Step: 1, Iter: 0, Where: map[Key]int{"a": 1, "b": 0}})
	require.NoError(t, err)
	_, err = q.Begin("b", 4)
	require.NoError(t, err)
	q.Enter(Enter{Iter: 3, Step: 2}) // iteration 3 goes directly
	fx := q.Packet(Packet[payload]{From: 1, To: 0, Iter: 3, Step: 1, Msgs: []Msg[payload]{{Dest: 0, Src: "a", DestKey: "b", Iter: 3}}})
	require.Len(t, fx.Errors, 1)
	require.ErrorContains(t, fx.Errors[0], "source b began iteration 4 before a message of iteration 3 from a reached it")
}

// TestRootStaleReports: reports of another step are dropped.
func TestRootStaleReports(t *testing.T) {
	var r *Root
	r = NewRoot(2)
	e := r.Note(Note{PE: 1, Iter: 0}, 2)
	require.NotNil(t, e)
	require.Nil(t, r.Note(Note{PE: 2, Iter: 0}, 2), "one recovery at a time")
	l, err := r.Report(Report{PE: 1, Iter: 0, Step: e.Step + 5, Sources: map[Key]Progress{"a": {0, true}}})
	require.NoError(t, err)
	require.Nil(t, l)
	l, err = r.Report(Report{PE: 1, Iter: 0, Step: e.Step, Sources: map[Key]Progress{"a": {0, true}}})
	require.NoError(t, err)
	require.Nil(t, l)
	l, err = r.Report(Report{PE: 0, Iter: 0, Step: e.Step, Sources: map[Key]Progress{"b": {0, true}}})
	require.NoError(t, err)
	require.Equal(t, map[Key]int{"a": 1, "b": 0}, l.Where)
	_, ok := r.Ack(l.Step)
	require.False(t, ok)
	step, ok := r.Ack(l.Step)
	require.True(t, ok)
	require.Equal(t, l.Step, step)
	require.Nil(t, r.Note(Note{PE: 1, Iter: 0}, 2), "a note of a recovered iteration is stale")
}
