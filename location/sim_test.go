package location

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A deterministic simulation of a whole job: one Table per PE, FIFO
// channels between every ordered pair of PEs, elements that migrate (and,
// in the deletion variant, are deleted and inserted again), and user
// messages routed by the tables.

type simKind uint8

const (
	kUser    simKind = iota // a message for an element
	kMigrate                // the element itself, arriving at epoch
	kUpdate                 // elem is on pe at epoch
	kGone                   // elem was deleted at epoch (to its home)
	kCreate                 // the home inserts elem here at epoch
)

type simMsg struct {
	kind   simKind
	elem   int
	epoch  uint32
	pe     int   // kUpdate: where elem is
	id     int   // kUser: unique
	origin int   // kUser: the sending PE
	hops   int   // kUser: forwards so far
	path   []int // kUser: the PEs that routed it
}

type elemState uint8

const (
	resident elemState = iota // local on where[i]
	moving                    // a migrate or create message is in flight
	deleted
)

type simConfig struct {
	pes, elems, maxHops int
	steps               int
	deletions           bool
}

func (c simConfig) String() string {
	return fmt.Sprintf("P%d_N%d_max%d", c.pes, c.elems, c.maxHops)
}

// stormHopBound is the generous bound on any delivered message's hops
// while elements keep moving.
const stormHopBound = 40

// simStats is what a run observed.
type simStats struct {
	stormHops   map[int]int // hops → deliveries, while elements moved
	finalHops   map[int]int // hops → deliveries, in the final quiet phase
	holds       int         // Route said Hold
	absents     int         // Route said Absent (deletion variant)
	homeByHops  int         // forwards to the home because of MaxHops
	migrations  int
	deletions   int
	insertions  int
	userSent    int
	maxStormHop int
}

func newStats() *simStats { return &simStats{stormHops: map[int]int{}, finalHops: map[int]int{}} }

func (s *simStats) add(o *simStats) {
	for h, n := range o.stormHops {
		s.stormHops[h] += n
	}
	for h, n := range o.finalHops {
		s.finalHops[h] += n
	}
	s.holds += o.holds
	s.absents += o.absents
	s.homeByHops += o.homeByHops
	s.migrations += o.migrations
	s.deletions += o.deletions
	s.insertions += o.insertions
	s.userSent += o.userSent
	s.maxStormHop = max(s.maxStormHop, o.maxStormHop)
}

func histogram(h map[int]int) string {
	keys := make([]int, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, " %d:%d", k, h[k])
	}
	return strings.TrimSpace(b.String())
}

type sim struct {
	t         *testing.T
	cfg       simConfig
	rng       *rand.Rand
	tables    []*Table[int, simMsg]
	chans     [][][]simMsg // chans[src][dst], FIFO
	state     []elemState
	where     []int    // resident: the element's PE
	maxEpoch  []uint32 // the largest epoch the element ever had
	delivered map[int]int
	quiet     bool // final phase: no migrations, hop bound applies
	stats     *simStats
}

func newSim(t *testing.T, cfg simConfig, seed uint64) *sim {
	s := &sim{
		t: t, cfg: cfg, rng: rand.New(rand.NewPCG(seed, 0x10ca7e)),
		state: make([]elemState, cfg.elems), where: make([]int, cfg.elems),
		maxEpoch: make([]uint32, cfg.elems), delivered: map[int]int{}, stats: newStats(),
	}
	for pe := range cfg.pes {
		s.tables = append(s.tables, New[int, simMsg](pe, modHome(cfg.pes), cfg.maxHops))
		s.chans = append(s.chans, make([][]simMsg, cfg.pes))
	}
	// Initial placement at epoch 0: half at home, half anywhere.
	for i := range cfg.elems {
		pe := s.home(i)
		if s.rng.IntN(2) == 0 {
			pe = s.rng.IntN(cfg.pes)
		}
		s.tables[pe].Arrive(i, 0)
		if pe != s.home(i) {
			s.tables[s.home(i)].Learn(i, pe, 0)
		}
		s.where[i] = pe
	}
	return s
}

func (s *sim) home(i int) int { return i % s.cfg.pes }

func (s *sim) send(src, dst int, m simMsg) { s.chans[src][dst] = append(s.chans[src][dst], m) }

// --- actions ---

// sendUser sends a new message from PE from to element i.
func (s *sim) sendUser(from, i int) {
	pe, epoch := s.tables[from].Lookup(i)
	m := simMsg{kind: kUser, id: s.stats.userSent, elem: i, epoch: epoch, origin: from}
	s.stats.userSent++
	s.send(from, pe, m)
}

// migrate moves resident element i to PE to.
func (s *sim) migrate(i, to int) {
	from := s.where[i]
	e, ok := s.tables[from].IsLocal(i)
	require.True(s.t, ok, "element %d should be on PE %d", i, from)
	s.tables[from].Depart(i, to, e+1)
	s.state[i], s.maxEpoch[i] = moving, e+1
	s.stats.migrations++
	s.send(from, to, simMsg{kind: kMigrate, elem: i, epoch: e + 1})
}

// remove deletes resident element i where it is, and tells its home.
func (s *sim) remove(i int) {
	pe := s.where[i]
	e := s.tables[pe].Delete(i)
	require.Equal(s.t, s.maxEpoch[i], e)
	s.state[i] = deleted
	s.stats.deletions++
	if pe != s.home(i) {
		s.send(pe, s.home(i), simMsg{kind: kGone, elem: i, epoch: e})
	}
}

// insertable reports whether deleted element i's home knows it is gone.
func (s *sim) insertable(i int) bool {
	exists, _ := s.tables[s.home(i)].Exists(i)
	return s.state[i] == deleted && !exists
}

// insert has the home of deleted element i insert it again on PE pe.
func (s *sim) insert(i, pe int) {
	h := s.home(i)
	exists, next := s.tables[h].Exists(i)
	require.False(s.t, exists)
	require.Greater(s.t, next, s.maxEpoch[i], "a new incarnation must be newer")
	s.maxEpoch[i] = next
	s.stats.insertions++
	if pe == h {
		s.arrive(h, i, next)
		return
	}
	s.state[i] = moving
	s.learn(h, i, pe, next)
	s.send(h, pe, simMsg{kind: kCreate, elem: i, epoch: next})
}

// --- handlers ---

func (s *sim) receive(pe int, m simMsg) {
	switch m.kind {
	case kUser:
		s.route(pe, m)
	case kMigrate:
		s.arrive(pe, m.elem, m.epoch)
		if h := s.home(m.elem); pe != h {
			s.send(pe, h, simMsg{kind: kUpdate, elem: m.elem, pe: pe, epoch: m.epoch})
		}
	case kCreate:
		s.arrive(pe, m.elem, m.epoch)
	case kUpdate:
		s.learn(pe, m.elem, m.pe, m.epoch)
	case kGone:
		require.Equal(s.t, s.home(m.elem), pe, "gone goes to the home")
		if s.tables[pe].LearnGone(m.elem, m.epoch) {
			s.reroute(pe, m.elem)
		}
	}
}

func (s *sim) arrive(pe, i int, epoch uint32) {
	require.NotEqual(s.t, resident, s.state[i], "element %d arrives twice", i)
	s.tables[pe].Arrive(i, epoch)
	s.state[i], s.where[i] = resident, pe
	s.reroute(pe, i)
}

func (s *sim) learn(pe, i, at int, epoch uint32) {
	if s.tables[pe].Learn(i, at, epoch) {
		s.reroute(pe, i)
	}
}

// reroute routes again, in order, the messages PE pe held for element i.
func (s *sim) reroute(pe, i int) {
	for _, m := range s.tables[pe].Release(i) {
		s.route(pe, m)
	}
}

func (s *sim) route(pe int, m simMsg) {
	m.path = append(m.path, pe)
	tb := s.tables[pe]
	d := tb.Route(m.elem, m.epoch, m.hops)
	switch d.Action {
	case Deliver:
		s.deliver(pe, m, d)
	case Forward:
		require.NotEqual(s.t, pe, d.PE, "forward to self: %+v", m)
		known, _ := tb.Known(m.elem)
		// Epochs only grow along a chain of forwards (see
		// TestRouteGoneBeforeNewerIncarnation).
		require.GreaterOrEqual(s.t, d.Epoch, m.epoch, "epoch fell at PE %d", pe)
		if pe != s.home(m.elem) && d.PE == s.home(m.elem) && !known.Gone && m.hops >= tb.MaxHops() {
			s.stats.homeByHops++
		}
		m.epoch, m.hops = d.Epoch, m.hops+1
		s.send(pe, d.PE, m)
	case Hold:
		s.stats.holds++
		tb.Hold(m.elem, m)
	case Absent:
		require.True(s.t, s.cfg.deletions, "Absent without deletions: %+v at PE %d", m, pe)
		require.Equal(s.t, s.home(m.elem), pe, "Absent away from the home")
		require.Equal(s.t, deleted, s.state[m.elem], "Absent for an element that exists")
		s.stats.absents++
		tb.Hold(m.elem, m)
	default:
		s.t.Fatalf("bad action %v", d.Action)
	}
}

func (s *sim) deliver(pe int, m simMsg, d Decision) {
	i := m.elem
	require.Equal(s.t, resident, s.state[i], "delivered %+v to a non-resident element", m)
	require.Equal(s.t, s.where[i], pe, "delivered %+v on the wrong PE", m)
	require.Equal(s.t, s.maxEpoch[i], d.Epoch)
	s.delivered[m.id]++
	require.Equal(s.t, 1, s.delivered[m.id], "message %d delivered twice", m.id)
	if s.quiet {
		s.stats.finalHops[m.hops]++
		s.requireShortPath(m)
	} else {
		s.stats.stormHops[m.hops]++
		s.stats.maxStormHop = max(s.stats.maxStormHop, m.hops)
		require.LessOrEqual(s.t, m.hops, stormHopBound, "path %v", m.path)
	}
	if m.hops > 0 && m.origin != pe {
		s.send(pe, m.origin, simMsg{kind: kUpdate, elem: i, pe: pe, epoch: d.Epoch})
	}
}

// requireShortPath checks a message routed while nothing moves and the
// home is up to date: it never visits a PE twice (so hops ≤ P-2: neither
// the sender nor any PE is visited again), and it is forwarded at most
// MaxHops times along caches, then to the home, then to the element:
// hops ≤ MaxHops+2. MaxHops+1 is not a bound: the P5_N12_max1 and
// P8_N12_max2 runs reach MaxHops+2 (see TestHopBoundIsMaxHopsPlusTwo);
// with P=5 and MaxHops=3, P-2 = MaxHops is the tighter bound.
func (s *sim) requireShortPath(m simMsg) {
	seen := map[int]bool{}
	for _, pe := range m.path {
		require.False(s.t, seen[pe], "path %v visits PE %d twice", m.path, pe)
		seen[pe] = true
	}
	require.LessOrEqual(s.t, m.hops, s.cfg.maxHops+2, "path %v", m.path)
	require.LessOrEqual(s.t, m.hops, s.cfg.pes-2, "path %v", m.path)
}

// --- scheduling ---

func (s *sim) busyChannels() [][2]int {
	var busy [][2]int
	for src := range s.chans {
		for dst, q := range s.chans[src] {
			if len(q) > 0 {
				busy = append(busy, [2]int{src, dst})
			}
		}
	}
	return busy
}

// deliverOne delivers the head of a random non-empty channel; it reports
// false if every channel is empty.
func (s *sim) deliverOne() bool {
	busy := s.busyChannels()
	if len(busy) == 0 {
		return false
	}
	c := busy[s.rng.IntN(len(busy))]
	q := s.chans[c[0]][c[1]]
	m := q[0]
	s.chans[c[0]][c[1]] = q[1:]
	s.receive(c[1], m)
	return true
}

func (s *sim) drain() {
	for s.deliverOne() {
	}
}

func (s *sim) elemsIn(st elemState) []int {
	var out []int
	for i, x := range s.state {
		if x == st {
			out = append(out, i)
		}
	}
	return out
}

func (s *sim) pick(xs []int) int { return xs[s.rng.IntN(len(xs))] }

func (s *sim) otherPE(pe int) int { return (pe + 1 + s.rng.IntN(s.cfg.pes-1)) % s.cfg.pes }

// step does one random thing; it reports whether it did anything.
func (s *sim) step() bool {
	r := s.rng.IntN(100)
	switch {
	case r < 25:
		s.sendUser(s.rng.IntN(s.cfg.pes), s.rng.IntN(s.cfg.elems))
		return true
	case r < 37:
		if rs := s.elemsIn(resident); len(rs) > 0 {
			i := s.pick(rs)
			s.migrate(i, s.otherPE(s.where[i]))
			return true
		}
	case r < 40 && s.cfg.deletions:
		if rs := s.elemsIn(resident); len(rs) > 0 {
			s.remove(s.pick(rs))
			return true
		}
	case r < 43 && s.cfg.deletions:
		var ds []int
		for _, i := range s.elemsIn(deleted) {
			if s.insertable(i) {
				ds = append(ds, i)
			}
		}
		if len(ds) > 0 {
			s.insert(s.pick(ds), s.rng.IntN(s.cfg.pes))
			return true
		}
	}
	return s.deliverOne()
}

// --- checks ---

func (s *sim) numHeld() int {
	n := 0
	for _, tb := range s.tables {
		n += tb.NumHeld()
	}
	return n
}

func (s *sim) requireAllDelivered() {
	s.t.Helper()
	require.Len(s.t, s.delivered, s.stats.userSent, "messages lost")
	for id, n := range s.delivered {
		require.Equal(s.t, 1, n, "message %d", id)
	}
	for pe, tb := range s.tables {
		require.Zero(s.t, tb.NumHeld(), "PE %d still holds messages", pe)
	}
}

// requireConsistent checks, with no message in flight, that every element
// is local exactly where it is, and that its home knows where that is.
func (s *sim) requireConsistent() {
	s.t.Helper()
	for i := range s.cfg.elems {
		h := s.tables[s.home(i)]
		exists, next := h.Exists(i)
		require.Equal(s.t, s.state[i] != deleted, exists, "element %d", i)
		require.Equal(s.t, s.maxEpoch[i]+1, next, "element %d", i)
		for pe, tb := range s.tables {
			e, local := tb.IsLocal(i)
			require.Equal(s.t, s.state[i] == resident && s.where[i] == pe, local, "element %d on PE %d", i, pe)
			if local {
				require.Equal(s.t, s.maxEpoch[i], e)
			}
		}
		if s.state[i] == resident {
			pe, e := h.Lookup(i)
			require.Equal(s.t, s.where[i], pe, "the home of %d is up to date", i)
			require.Equal(s.t, s.maxEpoch[i], e)
		}
	}
}

// requireHeldAtHomes checks that every message not delivered is held on
// the home of its element, which is deleted, and nowhere else.
func (s *sim) requireHeldAtHomes() {
	s.t.Helper()
	held := map[int]bool{}
	for pe, tb := range s.tables {
		var elems []int
		tb.EachHeld(func(i, _ int) { elems = append(elems, i) })
		for _, i := range elems {
			require.Equal(s.t, s.home(i), pe, "message for %d held away from its home", i)
			require.Equal(s.t, deleted, s.state[i], "message held for existing element %d", i)
			ms := tb.Release(i)
			for _, m := range ms {
				require.False(s.t, held[m.id], "message %d held twice", m.id)
				held[m.id] = true
				tb.Hold(i, m) // put back, in order
			}
		}
	}
	for id := range s.stats.userSent {
		require.NotEqual(s.t, s.delivered[id] == 1, held[id], "message %d: delivered xor held", id)
	}
}

// shuffle migrates elements n times with no user message, so that the
// caches fall behind, and then lets everything land.
func (s *sim) shuffle(n int) {
	for n > 0 {
		if rs := s.elemsIn(resident); len(rs) > 0 && s.rng.IntN(2) == 0 {
			i := s.pick(rs)
			s.migrate(i, s.otherPE(s.where[i]))
			n--
		} else {
			s.deliverOne()
		}
	}
	s.drain()
}

// quietPhase sends a message from every PE to every element, with nothing
// moving, and delivers them all.
func (s *sim) quietPhase() {
	s.t.Helper()
	s.quiet = true
	for pe := range s.cfg.pes {
		for i := range s.cfg.elems {
			s.sendUser(pe, i)
		}
	}
	s.drain()
	s.requireAllDelivered()
}

// --- the runs ---

func runMigrations(t *testing.T, cfg simConfig, seed uint64) *simStats {
	s := newSim(t, cfg, seed)
	for range cfg.steps {
		s.step()
	}
	s.drain()
	s.requireAllDelivered()
	s.requireConsistent()
	s.shuffle(shuffleMigrations)
	s.requireConsistent()
	s.quietPhase()
	return s.stats
}

func runDeletions(t *testing.T, cfg simConfig, seed uint64) *simStats {
	s := newSim(t, cfg, seed)
	for range cfg.steps {
		s.step()
	}
	// Make sure some elements are deleted, and messages wait for them.
	s.drain()
	for _, i := range s.elemsIn(resident)[:2] {
		s.remove(i)
	}
	s.drain()
	for _, i := range s.elemsIn(deleted) {
		for pe := range cfg.pes {
			s.sendUser(pe, i)
		}
	}
	s.drain()
	s.requireConsistent()
	s.requireHeldAtHomes()
	require.NotZero(t, s.numHeld(), "nothing waits")

	for _, i := range s.elemsIn(deleted) {
		require.True(t, s.insertable(i))
		s.insert(i, s.rng.IntN(cfg.pes))
	}
	s.drain()
	s.requireAllDelivered()
	s.requireConsistent()
	s.shuffle(shuffleMigrations)
	s.requireConsistent()
	s.quietPhase()
	return s.stats
}

const (
	simSeeds          = 20
	shuffleMigrations = 60 // before the quiet phase
)

func runSeeds(t *testing.T, cfg simConfig, run func(*testing.T, simConfig, uint64) *simStats) *simStats {
	total := newStats()
	for seed := range uint64(simSeeds) {
		t.Run(fmt.Sprintf("seed%d", seed), func(t *testing.T) {
			total.add(run(t, cfg, seed))
		})
	}
	return total
}

func logStats(t *testing.T, st *simStats) {
	t.Logf("user messages %d, migrations %d, deletions %d, insertions %d",
		st.userSent, st.migrations, st.deletions, st.insertions)
	t.Logf("holds %d, absents %d, home-by-MaxHops %d", st.holds, st.absents, st.homeByHops)
	t.Logf("storm hops (max %d): %s", st.maxStormHop, histogram(st.stormHops))
	t.Logf("final hops: %s", histogram(st.finalHops))
}

var simConfigs = []simConfig{
	{pes: 5, elems: 12, maxHops: DefaultMaxHops, steps: 4000},
	{pes: 5, elems: 12, maxHops: 1, steps: 4000},
	{pes: 8, elems: 12, maxHops: 2, steps: 4000},
}

func TestSimMigrations(t *testing.T) {
	for _, cfg := range simConfigs {
		t.Run(cfg.String(), func(t *testing.T) {
			st := runSeeds(t, cfg, runMigrations)
			logStats(t, st)
			require.NotZero(t, st.holds)
			require.NotZero(t, st.homeByHops)
		})
	}
}

func TestSimDeletions(t *testing.T) {
	for _, cfg := range simConfigs {
		cfg.deletions = true
		t.Run(cfg.String(), func(t *testing.T) {
			st := runSeeds(t, cfg, runDeletions)
			logStats(t, st)
			require.NotZero(t, st.absents)
			require.NotZero(t, st.insertions)
		})
	}
}
