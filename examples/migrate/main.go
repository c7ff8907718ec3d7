// Migrate exercises element migration: the elements of a chare array
// wander between PEs while they exchange messages, and every message must
// still reach its element exactly once.
//
// The main chare creates -n elements (Walker) and runs -rounds rounds. A
// round is a broadcast of Round: every element sends -msgs messages, each
// carrying (from, seq, value), to elements chosen at random (itself
// included); seq numbers the messages from one element to another. It
// sends them one by one, each from an entry method of its own (Send, which
// the element sends to itself), so that they leave while it moves and
// handles other messages, from whatever PE it is on at the time. An
// element that handles a message records it, and then, with probability
// -migrate, asks to migrate to another PE chosen at random (Migrate takes
// effect after the entry method; an element asks once per stay). Messages
// for an element that has left are forwarded, or held until it arrives,
// by the location manager.
//
// The main chare ends a round by quiescence detection: once no message is
// in flight and no entry method runs anywhere, every message of the round
// has been handled and every migration has completed. It then starts the
// next round; nothing sleeps, and the program ends after the last round.
//
// Every element keeps, in exported fields (they are what migrates: the
// element is packed with msgpack), its random generators, what it sent
// (count, the next seq to each receiver, checksum), what it received
// (count, the set of (from, seq) ids it has seen, duplicates, checksum of
// the distinct messages) and how often it left a PE (AboutToMigrate) and
// arrived at one (JustMigrated). Messages from one element to another are
// not FIFO when they migrate (an earlier one may follow a stale location
// through forwards while a later one, sent from another PE or after a
// location update, goes straight to the receiver), so the ids seen are a
// set: per sender, a low-water mark (Next) and the seqs seen above it
// (Ahead), which the gaps empty again. The state does not grow with the
// rounds, so migrating does not get slower.
//
// A few times, and after the last round, the elements' figures are
// gathered by a reduction; at the end a group also sums the location
// managers' own counts (array.LocalStats) on every PE. The run succeeds
// when nothing was lost or duplicated, the checksums of what was sent and
// what was received agree, the elements' migration counts agree with the
// location managers', and no message is left held.
//
// Run it with
//
//	go run ./examples/migrate -p 4
//	go run ./examples/migrate -p 4 -nodes 2
//	go run ./examples/migrate -p 8 -n 256 -rounds 50 -msgs 16 -migrate 0.5 -seed 7
//
// The runtime takes its flags (-p N, -nodes M) anywhere on the line. The
// last line is
// "migrate: ok sent=N received=N lost=0 duplicated=0 migrations=M pes=P",
// or "migrate: FAILED ..." with a non-zero exit code. With -p 1 there is
// no other PE to go to, and migrations=0.
package main

import (
	"fmt"
	"io"
	"math/bits"
	"os"
	"slices"
	"time"

	"github.com/charmgo/charm/array"
	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/chare/reducer"
	"github.com/charmgo/charm/group"
	"github.com/charmgo/charm/internal/exutil"
)

// out is where the program prints; the test replaces it.
var out io.Writer = os.Stdout

// Params are the program's parameters.
type Params struct {
	N       int     // elements
	Rounds  int     // rounds
	Msgs    int     // messages per element per round
	Migrate float64 // probability of migrating after a message
	Seed    uint64
}

// Main is the main chare.
type Main struct {
	chare.Chare[Main]
	res Result
}

// Result is what the program found, for the test.
type Result struct {
	Totals  Totals
	Runtime RuntimeStats
}

// Walker is an element of the array. Its exported fields are its state,
// and migrate with it.
type Walker struct {
	array.Element[Walker, int]

	P Params
	// The states of two splitmix64 generators: one for what the element
	// sends, so that a seed fixes the messages whatever the timing, and
	// one for its moves.
	SendRng, MoveRng uint64

	Sent    int      // messages sent
	SentTo  []uint32 // messages sent to each element: the next seq to it
	SentSum uint64   // checksum of the messages sent

	Received   int              // messages handled, duplicates included
	Distinct   int              // distinct messages handled
	Duplicates int              // messages handled a second time
	RecvSum    uint64           // checksum of the distinct messages
	Next       []uint32         // per sender, every seq below it was seen
	Ahead      map[int][]uint32 `msgpack:",omitempty"` // per sender, the seqs seen above Next, sorted
	Reordered  int              // messages that overtook one from the same sender
	Foreign    int              // messages with a sender or seq out of range
	Departures int              // AboutToMigrate calls
	Arrivals   int              // JustMigrated calls
	HomePE     int              // the PE the element was created on
	Visited    []uint64         // a bitmap of the PEs the element has lived on
	LastRound  int              // the last round started here

	// leaving is set once the element has asked to migrate; it is not
	// exported, so the copy that arrives starts without it.
	leaving bool
}

// Setup is the constructor's message.
type Setup struct{ P Params }

// RoundMsg starts a round.
type RoundMsg struct{ Round int }

// SendMsg asks an element to send the next of its messages.
type SendMsg struct{ Left int }

// Msg is a message between elements. Seq counts the messages from From
// to the receiver: 0, 1, 2, ... for each pair of elements.
type Msg struct {
	From, Seq int
	Value     uint64
}

// Report is an element's contribution to a gather of the figures.
type Report struct {
	Sent, SentSum                            uint64
	Received, Distinct, Duplicates, Sum      uint64
	Reordered, Foreign, Departures, Arrivals uint64
	Pending                                  uint64 // seqs seen above a gap
	PE, HomePE, Visited                      int
}

// Totals add up the elements' reports.
type Totals struct {
	Elements                                                int
	Sent, Received, Distinct, Duplicates                    uint64
	Reordered, Foreign, Departures, Arrivals, Away, Pending uint64
	SentSum, RecvSum                                        uint64
	MaxVisited                                              int
	Lost                                                    int64
}

// Probe is a group: its branch on each PE reads the array's location
// manager there.
type Probe struct {
	group.Branch[Probe]
}

// StatsMsg asks every branch for the location manager's counts.
type StatsMsg struct {
	Walkers array.Proxy[Walker, int]
	Done    chare.Callback
}

// RuntimeStats are the location managers' counts summed over the PEs.
type RuntimeStats = array.Stats

func init() {
	// Register chare types in the same order in every process. Fast
	// lets a process decode an entry method's messages from another
	// process without reflection before it has sent one itself; the
	// constructor and the broadcasts only ever come from PE 0.
	chare.Register[Main]()
	chare.Register[Walker](chare.Transient("leaving"),
		chare.Fast((*Walker).Init),
		chare.Fast((*Walker).Round),
		chare.Fast((*Walker).Send),
		chare.Fast((*Walker).Tally),
		chare.Fast((*Walker).Deliver),
	)
	chare.Register[Probe](chare.Fast((*Probe).Stats))
}

func main() { os.Exit(chare.Main((*Main).Start)) }

func parseFlags(args []string) (Params, error) {
	var p Params
	fs := exutil.NewFlagSet("migrate")
	fs.IntVar(&p.N, "n", 64, "number of array elements")
	fs.IntVar(&p.Rounds, "rounds", 20, "rounds of messages")
	fs.IntVar(&p.Msgs, "msgs", 8, "messages each element sends per round")
	fs.Float64Var(&p.Migrate, "migrate", 0.2, "probability that an element migrates after handling a message")
	fs.Uint64Var(&p.Seed, "seed", 1, "seed of the random choices")
	if err := fs.Parse(args); err != nil {
		return p, err
	}
	switch {
	case fs.NArg() > 0:
		return p, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	case p.N < 1:
		return p, fmt.Errorf("-n %d: want at least 1 element", p.N)
	case p.Rounds < 1:
		return p, fmt.Errorf("-rounds %d: want at least 1", p.Rounds)
	case p.Msgs < 0:
		return p, fmt.Errorf("-msgs %d: want at least 0", p.Msgs)
	case !(p.Migrate >= 0 && p.Migrate <= 1):
		return p, fmt.Errorf("-migrate %v: want a probability, 0 to 1", p.Migrate)
	}
	return p, nil
}

// Start runs the rounds and checks the outcome. It is the main function,
// a threaded entry method: it waits on futures while PE 0 goes on working.
func (m *Main) Start(args []string) {
	p, err := parseFlags(args)
	if err != nil {
		exutil.FlagError(out, m, "migrate", err)
		return
	}
	walkers, err := array.NewWith(m, array.Dims(p.N), (*Walker).Init, Setup{P: p})
	if err != nil {
		m.fail(1, "creating the array: %v", err)
		return
	}
	probes, err := group.New[Probe](m)
	if err != nil {
		m.fail(1, "creating the probes: %v", err)
		return
	}
	began := time.Now()
	every := max(1, p.Rounds/4)
	for r := range p.Rounds {
		if err := chare.Send(m, walkers, (*Walker).Round, RoundMsg{Round: r}); err != nil {
			m.fail(1, "starting round %d: %v", r, err)
			return
		}
		qd := chare.NewFuture[any](m)
		m.DetectQuiescence(qd.Callback())
		if _, err := qd.Get(m); err != nil {
			m.fail(1, "waiting for the end of round %d: %v", r, err)
			return
		}
		if (r+1)%every != 0 || r+1 == p.Rounds {
			continue
		}
		t, err := m.tally(walkers, p)
		if err != nil {
			m.fail(1, "after round %d: %v", r, err)
			return
		}
		fmt.Fprintf(out, "migrate: round %d/%d sent=%d received=%d migrations=%d away=%d/%d elapsed=%v\n",
			r+1, p.Rounds, t.Sent, t.Received, t.Departures, t.Away, t.Elements, time.Since(began).Round(time.Millisecond))
	}
	t, err := m.tally(walkers, p)
	if err != nil {
		m.fail(1, "after the last round: %v", err)
		return
	}
	m.res.Totals = t
	stats := chare.NewFuture[array.Stats](m)
	if err := chare.Send(m, probes, (*Probe).Stats, StatsMsg{Walkers: walkers, Done: stats.Callback()}); err != nil {
		m.fail(1, "asking for the location managers' counts: %v", err)
		return
	}
	rs, err := stats.Get(m)
	if err != nil {
		m.fail(1, "gathering the location managers' counts: %v", err)
		return
	}
	m.res.Runtime = rs
	fmt.Fprintf(out, "migrate: location managers: migrated_in=%d migrated_out=%d forwarded=%d delivered=%d held=%d cache_updates=%d hops=%v; elements: reordered=%d max_pes_visited=%d; elapsed=%v\n",
		rs.MigratedIn, rs.MigratedOut, rs.Forwarded, rs.Delivered, rs.Held, rs.CacheUpdates, rs.Hops, t.Reordered, t.MaxVisited,
		time.Since(began).Round(time.Millisecond))
	m.finish(p, t, rs)
}

// reportGather gathers the elements' reports. It is made (and registered)
// when the package is initialized, so that every process can decode its
// partial results.
var reportGather = reducer.GatherOf[int, Report]()

// tally gathers the elements' reports and adds them up.
func (m *Main) tally(walkers array.Proxy[Walker, int], p Params) (Totals, error) {
	f := chare.NewFutureFor(m, reportGather)
	if err := chare.Send(m, walkers, (*Walker).Tally, f.Callback()); err != nil {
		return Totals{}, fmt.Errorf("asking for the figures: %w", err)
	}
	items, err := f.Get(m)
	if err != nil {
		return Totals{}, fmt.Errorf("gathering the figures: %w", err)
	}
	var t Totals
	for _, it := range items {
		r := it.Value
		t.Elements++
		t.Sent += r.Sent
		t.SentSum += r.SentSum
		t.Received += r.Received
		t.Distinct += r.Distinct
		t.Duplicates += r.Duplicates
		t.RecvSum += r.Sum
		t.Reordered += r.Reordered
		t.Foreign += r.Foreign
		t.Pending += r.Pending
		t.Departures += r.Departures
		t.Arrivals += r.Arrivals
		if r.PE != r.HomePE {
			t.Away++
		}
		t.MaxVisited = max(t.MaxVisited, r.Visited)
	}
	if t.Elements != p.N {
		return t, fmt.Errorf("gathered the figures of %d elements, want %d", t.Elements, p.N)
	}
	t.Lost = int64(t.Sent) - int64(t.Distinct)
	return t, nil
}

// finish checks the figures and prints the summary line.
func (m *Main) finish(p Params, t Totals, rs RuntimeStats) {
	var problems []string
	if t.Lost != 0 {
		problems = append(problems, fmt.Sprintf("%d messages lost", t.Lost))
	}
	if t.Duplicates != 0 {
		problems = append(problems, fmt.Sprintf("%d messages duplicated", t.Duplicates))
	}
	if t.Pending != 0 {
		problems = append(problems, fmt.Sprintf("%d messages arrived after a gap that never filled", t.Pending))
	}
	if t.Foreign != 0 {
		problems = append(problems, fmt.Sprintf("%d messages that nobody sent", t.Foreign))
	}
	if t.SentSum != t.RecvSum {
		problems = append(problems, fmt.Sprintf("checksums differ: sent %#x, received %#x", t.SentSum, t.RecvSum))
	}
	if want := uint64(p.N) * uint64(p.Rounds) * uint64(p.Msgs); t.Sent != want {
		problems = append(problems, fmt.Sprintf("%d messages sent, want %d", t.Sent, want))
	}
	if t.Departures != t.Arrivals {
		problems = append(problems, fmt.Sprintf("%d departures (AboutToMigrate) but %d arrivals (JustMigrated)", t.Departures, t.Arrivals))
	}
	if uint64(rs.MigratedOut) != t.Departures || uint64(rs.MigratedIn) != t.Departures {
		problems = append(problems, fmt.Sprintf("the location managers count %d migrations out and %d in, the elements %d",
			rs.MigratedOut, rs.MigratedIn, t.Departures))
	}
	if rs.Held != 0 {
		problems = append(problems, fmt.Sprintf("%d messages still held at the end", rs.Held))
	}
	if rs.Local != p.N {
		problems = append(problems, fmt.Sprintf("the PEs hold %d elements, want %d", rs.Local, p.N))
	}
	if p.Migrate > 0 && m.NumPEs() > 1 && t.Received > 0 && t.Departures == 0 {
		problems = append(problems, "no element migrated")
	}
	if len(problems) > 0 {
		m.fail(1, "sent=%d received=%d lost=%d duplicated=%d migrations=%d pes=%d: %s",
			t.Sent, t.Received, t.Lost, t.Duplicates, t.Departures, m.NumPEs(), joinProblems(problems))
		return
	}
	fmt.Fprintf(out, "migrate: ok sent=%d received=%d lost=%d duplicated=%d migrations=%d pes=%d\n",
		t.Sent, t.Received, t.Lost, t.Duplicates, t.Departures, m.NumPEs())
	m.Exit(0)
}

func joinProblems(ps []string) string {
	s := ps[0]
	for _, p := range ps[1:] {
		s += "; " + p
	}
	return s
}

// fail prints the final FAILED line and ends the job with code.
func (m *Main) fail(code int, format string, args ...any) {
	exutil.Fail(out, m, "migrate", code, format, args...)
}

// ---- the elements ----

// digest is a message's contribution to the checksums: both its
// sender and its receiver add it, so a message that reaches the wrong
// element changes them too.
func digest(msg Msg, to int) uint64 {
	return exutil.Mix(exutil.Mix(exutil.Mix(uint64(msg.From)<<32|uint64(uint32(to)))^uint64(msg.Seq)) ^ msg.Value)
}

// intn returns a random number in [0, n) from the generator state.
func intn(state *uint64, n int) int {
	hi, _ := bits.Mul64(exutil.SplitMix64(state), uint64(n))
	return int(hi)
}

// chance returns true with probability p, from the generator state.
func chance(state *uint64, p float64) bool {
	return float64(exutil.SplitMix64(state)>>11)/(1<<53) < p
}

// Init is the constructor: it runs on the element's first PE.
func (w *Walker) Init(s Setup) {
	w.P = s.P
	w.SendRng = exutil.Mix(s.P.Seed ^ exutil.Mix(2*uint64(w.ThisIndex())+1))
	w.MoveRng = exutil.Mix(s.P.Seed ^ exutil.Mix(2*uint64(w.ThisIndex())+2))
	w.SentTo = make([]uint32, s.P.N)
	w.Next = make([]uint32, s.P.N)
	w.HomePE = w.PE()
	w.Visited = make([]uint64, (w.NumPEs()+63)/64)
	w.visit()
	w.LastRound = -1
}

// visit records the PE the element is on.
func (w *Walker) visit() { w.Visited[w.PE()/64] |= 1 << (w.PE() % 64) }

// record adds seq from sender from to the ids seen, and reports whether
// it was not there yet.
func (w *Walker) record(from int, seq uint32) bool {
	next, ahead := w.Next[from], w.Ahead[from]
	if seq < next {
		return false
	}
	k, found := slices.BinarySearch(ahead, seq)
	if found {
		return false
	}
	if seq > next { // an earlier message from the sender is still on its way
		w.Reordered++
		if w.Ahead == nil {
			w.Ahead = map[int][]uint32{}
		}
		w.Ahead[from] = slices.Insert(ahead, k, seq)
		return true
	}
	next++
	for len(ahead) > 0 && ahead[0] == next {
		ahead = ahead[1:]
		next++
	}
	w.Next[from] = next
	if len(ahead) == 0 {
		delete(w.Ahead, from)
	} else {
		w.Ahead[from] = ahead
	}
	return true
}

// Round starts a round: the element sends its messages one at a time,
// each from its own entry method (Send), so that they leave from wherever
// the element is at that moment.
func (w *Walker) Round(r RoundMsg) {
	if r.Round != w.LastRound+1 {
		w.Abort(fmt.Errorf("migrate: element %d on PE %d got round %d after round %d", w.ThisIndex(), w.PE(), r.Round, w.LastRound))
		return
	}
	w.LastRound = r.Round
	if w.P.Msgs > 0 {
		w.toSelf(w.P.Msgs)
	}
}

// toSelf asks the element itself to send left more messages.
func (w *Walker) toSelf(left int) {
	if err := chare.Send(w, w.ThisProxy().At(w.ThisIndex()), (*Walker).Send, SendMsg{Left: left}); err != nil {
		w.Abort(err)
	}
}

// Send sends one message to an element chosen at random, and asks for the
// next one.
func (w *Walker) Send(s SendMsg) {
	to := intn(&w.SendRng, w.P.N)
	msg := Msg{From: w.ThisIndex(), Seq: int(w.SentTo[to]), Value: exutil.SplitMix64(&w.SendRng)}
	w.SentTo[to]++
	w.Sent++
	w.SentSum += digest(msg, to)
	if err := chare.Send(w, w.ThisProxy().At(to), (*Walker).Deliver, msg); err != nil {
		w.Abort(err)
		return
	}
	if s.Left > 1 {
		w.toSelf(s.Left - 1)
	}
}

// Deliver records a message, and may send the element elsewhere.
func (w *Walker) Deliver(msg Msg) {
	w.Received++
	if msg.From < 0 || msg.From >= w.P.N || msg.Seq < 0 || msg.Seq >= w.P.Rounds*w.P.Msgs {
		w.Foreign++
	} else {
		if w.record(msg.From, uint32(msg.Seq)) {
			w.Distinct++
			w.RecvSum += digest(msg, w.ThisIndex())
		} else {
			w.Duplicates++
		}
	}
	if w.leaving || w.NumPEs() < 2 || !chance(&w.MoveRng, w.P.Migrate) {
		return
	}
	to := intn(&w.MoveRng, w.NumPEs()-1)
	if to >= w.PE() {
		to++
	}
	if err := w.Migrate(to); err != nil {
		w.Abort(err)
		return
	}
	w.leaving = true
}

// AboutToMigrate runs on the PE the element leaves, before it is packed.
func (w *Walker) AboutToMigrate() { w.Departures++ }

// JustMigrated runs on the PE the element reaches, after it is unpacked.
func (w *Walker) JustMigrated() {
	w.Arrivals++
	w.visit()
}

// Tally contributes the element's figures to a gather.
func (w *Walker) Tally(done chare.Callback) {
	r := Report{
		Sent: uint64(w.Sent), SentSum: w.SentSum,
		Received: uint64(w.Received), Distinct: uint64(w.Distinct), Duplicates: uint64(w.Duplicates), Sum: w.RecvSum,
		Reordered: uint64(w.Reordered), Foreign: uint64(w.Foreign), Departures: uint64(w.Departures), Arrivals: uint64(w.Arrivals),
		PE: w.PE(), HomePE: w.HomePE,
	}
	for _, a := range w.Ahead {
		r.Pending += uint64(len(a))
	}
	for _, v := range w.Visited {
		r.Visited += bits.OnesCount64(v)
	}
	if err := w.Contribute(r, reportGather, done); err != nil {
		w.Abort(err)
	}
}

// Stats contributes this PE's location manager counts to a sum.
func (b *Probe) Stats(s StatsMsg) {
	st, err := array.LocalStats(b, s.Walkers)
	if err != nil {
		b.Abort(err)
		return
	}
	if err := b.Contribute(st, array.SumStats, s.Done); err != nil {
		b.Abort(err)
	}
}
