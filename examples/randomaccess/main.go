// Randomaccess is the HPCC RandomAccess benchmark (GUPS) over TRAM: a
// table of 64-bit words spread over the PEs receives a stream of random
// XOR updates, each a tiny message to the word's owner, which a
// tram.Streamer combines into few, large messages.
//
// The table has 2^logsize words; word i belongs to PE i % P, in slot i / P
// of that PE's branch of the Table group, and starts as i. The update
// stream is HPCC's: the powers of x in GF(2)[x] modulo x^64 + x^2 + x + 1
// (the LFSR with POLY = 7), 4 × 2^logsize values in all. PE p takes a
// contiguous share of it and jumps to its first value with Starts, as
// HPCC_starts does, so the PEs together apply exactly the stream a single
// process would. Each value ran becomes the update
//
//	table[ran & (2^logsize − 1)] ^= ran
//
// inserted into the streamer for the word's owner, whose Update method
// applies it. The updates run in one staged-completion step (tram.Staged,
// one producer per PE: the branch that generates), which ends dimension by
// dimension without a completion detector or periodic flushing.
//
// Verification is HPCC's: XOR is its own inverse, so a second step sends
// the same stream again, after which every word must hold its initial
// value i. Each branch counts the words that do not, and the main chare
// sums the counts; unlike HPCC, which tolerates 1% lost updates from
// unsynchronized writes, TRAM delivers every update exactly once, so the
// count must be 0. GUP/s is the updates of the first step divided by its
// time (from Start to the Finished callback), over 1e9.
//
// With -client array the table is a chare array of -blocks elements
// instead (array.go), served by a tram.ArrayStreamer, as in Charm++'s
// chare-array RandomAccess.
//
// Run it with
//
//	go run ./examples/randomaccess -p 4
//	go run ./examples/randomaccess -p 4 -logsize 22 -dims 2,2
//
// The runtime takes its flags (-p N) anywhere on the line, the program its
// own: -logsize (log2 of the table's words), -dims (TRAM's grid, such as
// "2,2"; by default nodes × PEs per node), -buffer (items per peer),
// -client (group or array) and -blocks (array elements).
// The last line is
//
//	randomaccess: ok pes=4 logsize=20 updates=4194304 errors=0 topology=1×4 gups=... seconds=...
//
// or "randomaccess: FAILED ..." with a non-zero exit code.
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

// Main is the main chare: it lives on PE 0 and drives the program.
type Main struct {
	chare.Chare[Main]
	logSize int
	client  string // "group" or "array"
	blocks  int    // array elements, for -client array
	buffer  int    // items per peer; 0: the streamer's default
	dims    []int  // nil: the streamer's default

	updates int64
	errors  int64
	elapsed time.Duration
}

// Table is one PE's part of the table: the words i with i % P == PE, at
// slot i / P.
type Table struct {
	group.Branch[Table]
	words     []uint64
	mask      uint64 // table size − 1
	misrouted int64  // updates that arrived at the wrong PE
}

// Setup describes the table and the stream to every branch.
type Setup struct {
	LogSize int
}

// GenerateMsg makes a branch send its share of the update stream.
type GenerateMsg struct {
	S       tram.Streamer[Table, uint64]
	LogSize int
}

func init() {
	// Register in the same order in every process.
	chare.Register[Main]()
	chare.Register[Table]()
	tram.Register((*Table).Update)
}

func main() { os.Exit(chare.Main((*Main).Start)) }

// Start parses the flags, runs the update step and the verification step,
// and prints the result.
func (m *Main) Start(args []string) {
	fs := exutil.NewFlagSet("randomaccess")
	fs.IntVar(&m.logSize, "logsize", 20, "log2 of the table's words (all PEs together)")
	fs.IntVar(&m.buffer, "buffer", 0, "TRAM buffer items per peer (default: the streamer's)")
	fs.StringVar(&m.client, "client", "group", "the table: a group (one part per PE) or an array of -blocks elements")
	fs.IntVar(&m.blocks, "blocks", 0, "array elements for -client array (default: 4 per PE)")
	dims := exutil.DimsFlag(fs)
	if !exutil.ParseNoArgs(out, m, fs, args) {
		return
	}
	switch {
	case m.logSize < 1 || m.logSize > 40:
		m.fail(2, "bad arguments: -logsize %d: want 1 to 40", m.logSize)
		return
	case m.buffer < 0:
		m.fail(2, "bad arguments: -buffer %d: want 0 (default) or more", m.buffer)
		return
	case m.client != "group" && m.client != "array":
		m.fail(2, "bad arguments: -client %q: want group or array", m.client)
		return
	case m.blocks < 0 || m.blocks > 1<<m.logSize:
		m.fail(2, "bad arguments: -blocks %d: want 1 to the table size", m.blocks)
		return
	}
	if m.blocks == 0 {
		m.blocks = min(4*m.NumPEs(), 1<<m.logSize)
	}
	var err error
	if m.dims, err = exutil.ParseDims(*dims); err != nil {
		m.fail(2, "bad arguments: %v", err)
		return
	}
	if err := m.run(); err != nil {
		m.fail(1, "%v", err)
		return
	}
	if m.errors != 0 {
		m.fail(1, "pes=%d updates=%d errors=%d: the table does not hold its initial values after the verification pass", m.NumPEs(), m.updates, m.errors)
		return
	}
	gups := float64(m.updates) / m.elapsed.Seconds() / 1e9
	fmt.Fprintf(out, "randomaccess: ok pes=%d logsize=%d updates=%d errors=%d topology=%s gups=%.4g seconds=%.3f client=%s\n",
		m.NumPEs(), m.logSize, m.updates, m.errors, m.topology(), gups, m.elapsed.Seconds(), m.client)
	m.Exit(0)
}

// run creates the table and the streamer and runs both steps.
func (m *Main) run() error {
	table, err := group.NewWith(m, (*Table).Init, Setup{LogSize: m.logSize})
	if err != nil {
		return fmt.Errorf("creating the table: %w", err)
	}
	if m.client == "array" {
		return m.runArray(table) // the group generates; the blocks hold the table
	}
	o := exutil.Options(m.dims, m.buffer, 0)
	s, err := tram.New(m, table, (*Table).Update, o)
	if err != nil {
		return fmt.Errorf("creating the streamer: %w", err)
	}
	m.updates = 4 << m.logSize
	if m.elapsed, err = hpcc.TwoPasses(func() error { return m.step(table, s) }); err != nil {
		return err
	}
	bad := chare.NewFuture[int64](m)
	if err := chare.Send(m, table, (*Table).Check, bad.Callback()); err != nil {
		return fmt.Errorf("checking the table: %w", err)
	}
	m.errors, err = bad.Get(m)
	return err
}

// step runs the whole update stream through the streamer once.
func (m *Main) step(table group.Proxy[Table], s tram.Streamer[Table, uint64]) error {
	finished, err := exutil.StartStep(m, s, tram.Staged, 1, "")
	if err != nil {
		return err
	}
	if err := chare.Send(m, table, (*Table).Generate, GenerateMsg{S: s, LogSize: m.logSize}); err != nil {
		return err
	}
	_, err = finished.Get(m)
	return err
}

// topology names the grid the streamer uses.
func (m *Main) topology() string { return exutil.Topology(m, m.dims) }

// fail prints the final FAILED line and ends the job with code.
func (m *Main) fail(code int, format string, args ...any) {
	exutil.Fail(out, m, "randomaccess", code, format, args...)
}

// Init fills this PE's words with their global indices.
func (t *Table) Init(s Setup) {
	size := int64(1) << s.LogSize
	t.mask = uint64(size - 1)
	p, pe := int64(t.NumPEs()), int64(t.PE())
	t.words = hpcc.Words(uint64(pe), uint64(p), hpcc.Strided(size, p, pe))
}

// Generate inserts this PE's share of the update stream, then ends the
// PE's one producer.
func (t *Table) Generate(m GenerateMsg) {
	mask := uint64(1)<<m.LogSize - 1
	p := uint64(t.NumPEs())
	first, n := hpcc.Share(4<<m.LogSize, t.NumPEs(), t.PE())
	ran := hpcc.Starts(first)
	in, err := m.S.Local(t) // this PE's branch, found once for the loop
	if err != nil {
		t.Abort(err)
		return
	}
	for i := int64(0); i < n; i++ {
		ran = hpcc.Next(ran)
		if err := in.Insert(ran, int((ran&mask)%p)); err != nil {
			t.Abort(fmt.Errorf("randomaccess: PE %d, update %d: %w", t.PE(), first+i, err))
			return
		}
	}
	if err := m.S.Done(t, 1); err != nil {
		t.Abort(err)
	}
}

// Update applies one update to a word of this PE: TRAM's process method.
// An update for a word of another PE (misrouted) is counted as an error
// instead of being applied.
func (t *Table) Update(ran uint64) {
	i, p := ran&t.mask, uint64(t.NumPEs())
	if i%p != uint64(t.PE()) {
		t.misrouted++
		return
	}
	t.words[i/p] ^= ran
}

// Check counts the words that differ from their initial value, and the
// misrouted updates, and sums
// the counts of all PEs.
func (t *Table) Check(cb chare.Callback) {
	bad := t.misrouted + hpcc.Changed(t.words, uint64(t.PE()), uint64(t.NumPEs()))
	if err := t.Contribute(bad, reducer.SumInt64, cb); err != nil {
		t.Abort(err)
	}
}
