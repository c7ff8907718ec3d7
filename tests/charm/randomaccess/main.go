// Randomaccess is the counterpart of three Charm++ programs of HPCC
// RandomAccess (GUP/s) on a group, from examples/charm++/TRAM:
//
//	randomaccess [-mode aggregate|staged|direct] N
//
// takes Charm++'s positional argument, N = log2 of the table's words per
// PE, and the runtime's flags (-p P, -nodes M); P must be a power of two.
// As in Charm++, PE p holds the words p·2^N to (p+1)·2^N − 1, each
// starting as its index, and generates 4·2^N updates of HPCC's stream
// from its value 4·p·2^N on (hpcc.Starts); an update key goes to PE
// (key >> N) & (P − 1), which applies table[key & (2^N − 1)] ^= key. The
// modes are the three programs:
//
//   - aggregate (aggregateRandomAccessGroup): each update is an entry
//     method send to the owner's branch, and the entry method is tagged for
//     aggregation, as Charm++'s [aggregate] entry is: a tram.Delegate
//     (1000 items a buffer, flushed every 10 µs) carries the sends, and
//     the pass ends at quiescence;
//   - staged (randomAccessGroup, as ported to Charm++ 8.0): the updates
//     go through a tram.Streamer whose buffers hold 4·1024 / peers items,
//     in one staged-completion step with one producer per PE; an update
//     for the PE itself is applied where it is generated, as in the port;
//   - direct (aggregateRandomAccessGroup without [aggregate]): one
//     message per update, and the pass ends at quiescence.
//
// The passes begin once the groups exist on every PE (the main chare
// waits for quiescence after making them), as Charm++ creates the groups
// of its main chare's constructor on every PE before any other message.
// The time runs from the start of the update pass (for staged, the start
// of the streamer's step, as Charm++ times its init) to its end; GUP/s is
// the updates of all PEs, 4·P·2^N, over it, over 1e9. A second pass
// applies the same stream again, after which every word must hold its
// initial value (XOR is its own inverse); the errors are counted, and
// must be 0 (Charm++ tolerates 1%). The last line is
//
//	randomaccess: ok mode=aggregate pes=2 log2_words_per_pe=15 updates=262144 gups=... update_seconds=... errors=0
//
// or "randomaccess: FAILED ..." with a non-zero exit code.
//
// What still differs from Charm++: the main chare makes one
// tram.Delegate for the job and tags the entry method in every process
// (Charm++'s [aggregate] is declared in the interface file); the TRAM parts are ours
// (their routing on a grid of nodes × PEs per node is Charm++'s, their
// buffering and flushing our own); updates between processes travel in
// msgpack-encoded frames.
package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/chare/reducer"
	"github.com/charmgo/charm/group"
	"github.com/charmgo/charm/internal/exutil"
	"github.com/charmgo/charm/internal/hpcc"
	"github.com/charmgo/charm/tram"
)

// out is where the program prints; the test replaces it.
var out io.Writer = os.Stdout

// The buffering of the two TRAM modes: Charm++'s [aggregate] defaults,
// and randomAccessGroup's numMsgsBuffered.
const (
	aggregateItems = 1000
	aggregateFlush = 10 * time.Microsecond
	msgsBuffered   = 1024
)

// Main is the main chare.
type Main struct {
	chare.Chare[Main]
	mode    string
	n       int
	updates int64
	elapsed time.Duration
	errors  int64
}

// Updater is one PE's part of the table (Charm++'s Updater).
type Updater struct {
	group.Branch[Updater]
	n     int
	table []uint64
}

// Setup is what every branch is created with.
type Setup struct{ N int }

// GenerateMsg makes a branch send its share of the updates; S is set in
// staged mode.
type GenerateMsg struct {
	Staged bool
	S      tram.Streamer[Updater, uint64]
}

func init() {
	chare.ProgramFlags("mode")
	chare.Register[Main]()
	chare.Register[Updater]()
	tram.Register((*Updater).Process)
}

func main() { os.Exit(chare.Main((*Main).Start)) }

// Owner is the PE of key in a table of 2^n words a PE on npes PEs
// (Charm++'s rule; npes is a power of two).
func Owner(key uint64, n, npes int) int { return int(key>>n) & (npes - 1) }

// Start runs the update pass and the verification pass, and checks the
// table.
func (m *Main) Start(args []string) {
	fs := exutil.NewFlagSet("randomaccess")
	fs.StringVar(&m.mode, "mode", "aggregate", "aggregate ([aggregate] entry method), staged (TRAM streamer) or direct (a message an update)")
	if !exutil.Parse(out, m, fs, args) {
		return
	}
	p := m.NumPEs()
	v, err := exutil.Positional(fs.Args(), []string{"N"}, []int{-1}, 1)
	switch {
	case err != nil:
		m.fail(2, "bad arguments: %v", err)
		return
	case v[0] < 0:
		m.fail(2, "bad arguments: want N, log2 of the table's words per PE")
		return
	case v[0] > 30:
		m.fail(2, "bad arguments: N %d: want at most 30", v[0])
		return
	case m.mode != "aggregate" && m.mode != "staged" && m.mode != "direct":
		m.fail(2, "bad arguments: -mode %q: want aggregate, staged or direct", m.mode)
		return
	case p&(p-1) != 0:
		m.fail(2, "bad arguments: %d PEs: want a power of two, as Charm++'s owner rule needs", p)
		return
	}
	m.n = v[0]
	m.updates = 4 * int64(p) << m.n
	if err := m.run(); err != nil {
		m.fail(1, "%v", err)
		return
	}
	if m.errors != 0 {
		m.fail(1, "mode=%s pes=%d updates=%d errors=%d: the table does not hold its initial values after the verification pass", m.mode, p, m.updates, m.errors)
		return
	}
	fmt.Fprintf(out, "randomaccess: ok mode=%s pes=%d log2_words_per_pe=%d updates=%d gups=%.6g update_seconds=%.6f errors=0\n",
		m.mode, p, m.n, m.updates, float64(m.updates)/m.elapsed.Seconds()/1e9, m.elapsed.Seconds())
	m.Exit(0)
}

func (m *Main) run() error {
	table, err := group.NewWith(m, (*Updater).Init, Setup{N: m.n})
	if err != nil {
		return fmt.Errorf("creating the table: %w", err)
	}
	var s tram.Streamer[Updater, uint64]
	switch m.mode {
	case "aggregate":
		d, err := tram.NewDelegate(m, tram.Options{Sizing: tram.Sizing{BufferItems: aggregateItems}, FlushPeriod: aggregateFlush})
		if err != nil {
			return fmt.Errorf("creating the delegate: %w", err)
		}
		if err := m.mark(d.Aggregate); err != nil {
			return fmt.Errorf("tagging the entry method: %w", err)
		}
		defer m.mark(d.Unaggregate)
	case "staged":
		nodes := m.Here().Job().Runtime().NumNodes()
		peers := max(1, nodes-1+m.NumPEs()/nodes-1)
		s, err = tram.New(m, table, (*Updater).Process, tram.Options{Sizing: tram.Sizing{BufferItems: 4 * msgsBuffered / peers}})
		if err != nil {
			return fmt.Errorf("creating the streamer: %w", err)
		}
	}
	// Charm++ creates the groups of its main chare's constructor on every
	// PE before any other message: the passes start once ours exist.
	created := chare.NewFuture[any](m)
	m.DetectQuiescence(created.Callback())
	if _, err := created.Get(m); err != nil {
		return fmt.Errorf("waiting for the groups: %w", err)
	}
	if m.elapsed, err = hpcc.TwoPasses(func() error { return m.pass(table, s) }); err != nil {
		return err
	}
	bad := chare.NewFuture[int64](m)
	if err := chare.Send(m, table, (*Updater).Check, bad.Callback()); err != nil {
		return fmt.Errorf("checking the table: %w", err)
	}
	m.errors, err = bad.Get(m)
	return err
}

// pass sends the whole update stream once.
func (m *Main) pass(table group.Proxy[Updater], s tram.Streamer[Updater, uint64]) error {
	if m.mode == "staged" {
		finished, err := exutil.StartStep(m, s, tram.Staged, 1, "")
		if err != nil {
			return err
		}
		if err := chare.Send(m, table, (*Updater).Generate, GenerateMsg{Staged: true, S: s}); err != nil {
			return err
		}
		_, err = finished.Get(m)
		return err
	}
	quiet := chare.NewFuture[any](m)
	if err := chare.Send(m, table, (*Updater).Generate, GenerateMsg{}); err != nil {
		return err
	}
	m.DetectQuiescence(quiet.Callback())
	_, err := quiet.Get(m)
	return err
}

// mark tags (or untags) Insert for aggregation in every process of the
// job, and waits until every PE has the tag.
func (m *Main) mark(tag func(chare.Context, any, chare.Callback) error) error {
	f := chare.NewFuture[any](m)
	if err := tag(m, (*Updater).Insert, f.Callback()); err != nil {
		return err
	}
	_, err := f.Get(m)
	return err
}

func (m *Main) fail(code int, format string, args ...any) {
	exutil.Fail(out, m, "randomaccess", code, format, args...)
}

// Init fills this PE's words with their global indices.
func (u *Updater) Init(s Setup) {
	u.n = s.N
	u.table = hpcc.Words(uint64(u.PE())<<s.N, 1, 1<<s.N)
}

// Generate sends this PE's share of the updates (Charm++'s
// generateUpdates).
func (u *Updater) Generate(g GenerateMsg) {
	p, me := u.NumPEs(), u.PE()
	key := hpcc.Starts(4 * int64(me) << u.n)
	count := 4 << u.n
	if !g.Staged {
		to := u.ThisProxy()
		for range count {
			key = hpcc.Next(key)
			if err := chare.Send(u, to.At(Owner(key, u.n, p)), (*Updater).Insert, key); err != nil {
				u.Abort(err)
				return
			}
		}
		return
	}
	in, err := g.S.Local(u)
	if err != nil {
		u.Abort(err)
		return
	}
	for range count {
		key = hpcc.Next(key)
		if dest := Owner(key, u.n, p); dest == me {
			u.Process(key)
		} else if err := in.Insert(key, dest); err != nil {
			u.Abort(err)
			return
		}
	}
	if err := g.S.Done(u, 1); err != nil {
		u.Abort(err)
	}
}

// Insert applies an update sent as a message (aggregate and direct).
func (u *Updater) Insert(key uint64) { u.table[key&(1<<u.n-1)] ^= key }

// Process applies an update that the streamer delivers (staged).
func (u *Updater) Process(key uint64) { u.table[key&(1<<u.n-1)] ^= key }

// Check counts the words that differ from their initial value, summed
// over the PEs.
func (u *Updater) Check(cb chare.Callback) {
	bad := hpcc.Changed(u.table, uint64(u.PE())<<u.n, 1)
	if err := u.Contribute(bad, reducer.SumInt64, cb); err != nil {
		u.Abort(err)
	}
}
