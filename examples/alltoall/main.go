// Alltoall compares TRAM with plain entry-method sends on the pattern TRAM
// is made for: every PE sends many small items to every other PE.
//
// Each PE sends -n items of 16 bytes (an Item: source PE, sequence number
// and a payload computed from source, destination and sequence number) to
// each of the other P−1 PEs, round-robin over the destinations, twice:
//
//   - tram: through a tram.Streamer in one completion step (tram.Completion
//     with P producers, each PE's sender calling Done once), which combines
//     the items into messages of up to -buffer items per peer;
//   - direct: each item in its own message, chare.Send to the Direct entry
//     method of the destination's branch.
//
// Every branch checks what it received in each phase: the count must be
// n·(P−1), every payload must match its source, destination and sequence
// number, and a checksum of the items must equal the one the branch
// computes for what the others were to send it. The main chare sums the
// errors over the PEs. A phase's rate is the items of all PEs, n·P·(P−1),
// divided by the time from the main chare's start broadcast to the end of
// the phase (the Finished callback of the TRAM step; a reduction that each
// branch joins once it has sent and received everything, for the direct
// sends); the ratio is tram_rate / direct_rate. With one PE nothing is
// sent and the rates are 0.
//
// Within one process messages are handed over, not copied, so the
// per-message cost that TRAM saves is small and the ratio stays near 1;
// TRAM pays off where a message costs more than an item, between
// processes and on busy networks.
//
// Run it with
//
//	go run ./examples/alltoall -p 4
//	go run ./examples/alltoall -p 4 -n 100000 -dims 2,2 -buffer 1024
//
// The runtime takes its flags (-p N) anywhere on the line, the program its
// own: -n (items per pair of PEs), -dims (TRAM's grid, such as "2,2" or "2x2"; by
// default nodes × PEs per node), -buffer (items per peer) and -flush (the
// flush period; 0 only on a grid with one dimension of more than one PE,
// where Done's flush sends every item straight to its destination). The
// last line is
//
//	alltoall: ok pes=4 items=240000 tram_rate=... direct_rate=... ratio=... errors=0 topology=1×4
//
// with rates in items per second, or "alltoall: FAILED ..." with a
// non-zero exit code.
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
	"github.com/charmgo/charm/tram"
)

// out is where the program prints; the test replaces it.
var out io.Writer = os.Stdout

// Item is the 16-byte unit of the exchange.
type Item struct {
	Src, Seq uint32
	Payload  uint64
}

// Payload is the payload of item seq from src to dst: a 64-bit mix, so
// that a misdelivered or corrupted item is noticed.
func Payload(src, dst, seq int) uint64 {
	x := uint64(src)<<42 ^ uint64(dst)<<21 ^ uint64(seq)
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	return x
}

// checksum is an item's contribution to a PE's checksum, which is the
// wrapping sum over the items and so does not depend on their order.
func checksum(it Item) uint64 {
	return it.Payload*0x9e3779b97f4a7c15 + uint64(it.Src)<<32 + uint64(it.Seq)
}

// The phases, indexing a Node's tallies.
const (
	phaseTRAM = iota
	phaseDirect
)

// Main is the main chare: it lives on PE 0 and drives the program.
type Main struct {
	chare.Chare[Main]
	n      int
	buffer int // items per peer; 0: the streamer's default
	flush  time.Duration
	dims   []int // nil: the streamer's default

	elapsed [2]time.Duration
	errs    [2]int64
}

// Node is one PE's sender and receiver.
type Node struct {
	group.Branch[Node]
	tally [2]tally

	// The direct phase ends on this PE when it has sent all its items and
	// received all it expects.
	sent bool
	n    int
	done chare.Callback
}

// tally is what a PE received in one phase.
type tally struct {
	count, bad int64
	sum        uint64
	joined     bool // contributed to the phase's reduction
}

// TRAMMsg starts the TRAM phase on a branch.
type TRAMMsg struct {
	S tram.Streamer[Node, Item]
	N int
}

// DirectMsg starts the direct phase on a branch.
type DirectMsg struct {
	N    int
	Done chare.Callback // joined by every branch when its part is over
}

func init() {
	// Register in the same order in every process.
	chare.Register[Main]()
	chare.Register[Node]()
	tram.Register((*Node).Take)
}

func main() { os.Exit(chare.Main((*Main).Start)) }

// Start parses the flags, runs both phases and prints the comparison.
func (m *Main) Start(args []string) {
	fs := exutil.NewFlagSet("alltoall")
	fs.IntVar(&m.n, "n", 20000, "items each PE sends to each other PE")
	fs.IntVar(&m.buffer, "buffer", 0, "TRAM buffer items per peer (default: the streamer's)")
	fs.DurationVar(&m.flush, "flush", time.Millisecond, "TRAM's flush period for idle PEs (0: none)")
	dims := exutil.DimsFlag(fs)
	if !exutil.ParseNoArgs(out, m, fs, args) {
		return
	}
	switch {
	case m.n < 0 || m.n > 1<<31:
		m.fail(2, "bad arguments: -n %d: want 0 to 2^31 items", m.n)
		return
	case m.buffer < 0:
		m.fail(2, "bad arguments: -buffer %d: want 0 (default) or more", m.buffer)
		return
	case m.flush < 0:
		m.fail(2, "bad arguments: -flush %v: want 0 or a positive period", m.flush)
		return
	}
	var err error
	if m.dims, err = exutil.ParseDims(*dims); err != nil {
		m.fail(2, "bad arguments: %v", err)
		return
	}
	if m.flush == 0 && m.hops() > 1 {
		// Done flushes a PE's buffers once; items that reach an
		// intermediate PE afterwards would wait there for ever (claim T25).
		m.fail(2, "bad arguments: -flush 0 on the %s grid: items take up to %d hops and need periodic flushing", m.topology(), m.hops())
		return
	}
	if err := m.run(); err != nil {
		m.fail(1, "%v", err)
		return
	}
	p := m.NumPEs()
	items := int64(m.n) * int64(p) * int64(p-1)
	if m.errs != [2]int64{} {
		m.fail(1, "pes=%d items=%d tram_errors=%d direct_errors=%d", p, items, m.errs[phaseTRAM], m.errs[phaseDirect])
		return
	}
	var rate [2]float64
	ratio := 0.0
	if items > 0 {
		for i := range rate {
			rate[i] = float64(items) / m.elapsed[i].Seconds()
		}
		ratio = rate[phaseTRAM] / rate[phaseDirect]
	}
	fmt.Fprintf(out, "alltoall: ok pes=%d items=%d tram_rate=%.4g direct_rate=%.4g ratio=%.3g errors=0 topology=%s\n",
		p, items, rate[phaseTRAM], rate[phaseDirect], ratio, m.topology())
	m.Exit(0)
}

// run creates the group and the streamer and times both phases.
func (m *Main) run() error {
	nodes, err := group.New[Node](m)
	if err != nil {
		return fmt.Errorf("creating the group: %w", err)
	}
	o := exutil.Options(m.dims, m.buffer, m.flush)
	s, err := tram.New(m, nodes, (*Node).Take, o)
	if err != nil {
		return fmt.Errorf("creating the streamer: %w", err)
	}

	// TRAM: the step starts untimed; the time runs from the broadcast
	// that makes every PE send until the last item was delivered.
	finished, err := exutil.StartStep(m, s, tram.Completion, m.NumPEs(), "starting the TRAM step")
	if err != nil {
		return err
	}
	began := time.Now()
	if err := chare.Send(m, nodes, (*Node).SendTRAM, TRAMMsg{S: s, N: m.n}); err != nil {
		return fmt.Errorf("starting the TRAM phase: %w", err)
	}
	if _, err := finished.Get(m); err != nil {
		return fmt.Errorf("the TRAM phase: %w", err)
	}
	m.elapsed[phaseTRAM] = time.Since(began)
	if m.errs[phaseTRAM], err = m.check(nodes, phaseTRAM); err != nil {
		return err
	}

	// Direct: every branch joins the reduction once its part is over.
	done := chare.NewFuture[[]int64](m)
	began = time.Now()
	if err := chare.Send(m, nodes, (*Node).SendDirect, DirectMsg{N: m.n, Done: done.Callback()}); err != nil {
		return fmt.Errorf("starting the direct phase: %w", err)
	}
	if _, err := done.Get(m); err != nil {
		return fmt.Errorf("the direct phase: %w", err)
	}
	m.elapsed[phaseDirect] = time.Since(began)
	m.errs[phaseDirect], err = m.check(nodes, phaseDirect)
	return err
}

// check returns the errors of a phase summed over the PEs.
func (m *Main) check(nodes group.Proxy[Node], phase int) (int64, error) {
	f := chare.NewFuture[int64](m)
	if err := chare.Send(m, nodes, (*Node).Check, CheckMsg{Phase: phase, N: m.n, Result: f.Callback()}); err != nil {
		return 0, err
	}
	return f.Get(m)
}

// grid returns the sizes of the grid the streamer uses.
func (m *Main) grid() []int { return exutil.Grid(m, m.dims) }

// topology names the grid the streamer uses.
func (m *Main) topology() string { return exutil.Topology(m, m.dims) }

// hops returns the most hops an item takes: the dimensions with more than
// one PE.
func (m *Main) hops() int {
	n := 0
	for _, d := range m.grid() {
		if d > 1 {
			n++
		}
	}
	return n
}

// fail prints the final FAILED line and ends the job with code.
func (m *Main) fail(code int, format string, args ...any) {
	exutil.Fail(out, m, "alltoall", code, format, args...)
}

// SendTRAM inserts this PE's items into the streamer, round-robin over
// the other PEs, and ends the PE's one producer.
func (b *Node) SendTRAM(m TRAMMsg) {
	p, me := b.NumPEs(), b.PE()
	for seq := 0; seq < m.N; seq++ {
		for d := 1; d < p; d++ {
			dst := (me + d) % p
			it := Item{Src: uint32(me), Seq: uint32(seq), Payload: Payload(me, dst, seq)}
			if err := m.S.Insert(b, it, dst); err != nil {
				b.Abort(fmt.Errorf("alltoall: PE %d, item %d for PE %d: %w", me, seq, dst, err))
				return
			}
		}
	}
	if err := m.S.Done(b, 1); err != nil {
		b.Abort(err)
	}
}

// Take receives an item of the TRAM phase: the streamer's process method.
func (b *Node) Take(it Item) { b.record(phaseTRAM, it) }

// SendDirect sends this PE's items one message each, in the same order as
// SendTRAM.
func (b *Node) SendDirect(m DirectMsg) {
	b.n, b.done = m.N, m.Done
	p, me := b.NumPEs(), b.PE()
	g := b.ThisProxy()
	for seq := 0; seq < m.N; seq++ {
		for d := 1; d < p; d++ {
			dst := (me + d) % p
			it := Item{Src: uint32(me), Seq: uint32(seq), Payload: Payload(me, dst, seq)}
			if err := chare.Send(b, g.At(dst), (*Node).Direct, it); err != nil {
				b.Abort(fmt.Errorf("alltoall: PE %d, item %d for PE %d: %w", me, seq, dst, err))
				return
			}
		}
	}
	b.sent = true
	b.joinDirect()
}

// Direct receives an item of the direct phase.
func (b *Node) Direct(it Item) {
	b.record(phaseDirect, it)
	b.joinDirect()
}

// joinDirect ends the direct phase on this PE once it has sent its items
// and received all it expects. Items may arrive before SendDirect runs
// here, since nothing orders the broadcast against other PEs' sends.
func (b *Node) joinDirect() {
	t := &b.tally[phaseDirect]
	if !b.sent || t.joined || t.count < int64(b.n)*int64(b.NumPEs()-1) {
		return
	}
	t.joined = true
	if err := b.Contribute([]int64{t.count}, reducer.SumInt64, b.done); err != nil {
		b.Abort(err)
	}
}

func (b *Node) record(phase int, it Item) {
	t := &b.tally[phase]
	t.count++
	t.sum += checksum(it)
	if int(it.Src) >= b.NumPEs() || it.Payload != Payload(int(it.Src), b.PE(), int(it.Seq)) {
		t.bad++
	}
}

// CheckMsg asks every branch for its errors in a phase.
type CheckMsg struct {
	Phase, N int
	Result   chare.Callback // gets the sum, an int64
}

// Check counts this PE's errors in a phase: wrong payloads, a wrong count
// and a wrong checksum (one each), and sums them over the PEs.
func (b *Node) Check(m CheckMsg) {
	t := b.tally[m.Phase]
	var want uint64
	for src := 0; src < b.NumPEs(); src++ {
		if src == b.PE() {
			continue
		}
		for seq := 0; seq < m.N; seq++ {
			want += checksum(Item{Src: uint32(src), Seq: uint32(seq), Payload: Payload(src, b.PE(), seq)})
		}
	}
	errs := t.bad
	if t.count != int64(m.N)*int64(b.NumPEs()-1) {
		errs++
	}
	if t.sum != want {
		errs++
	}
	if err := b.Contribute(errs, reducer.SumInt64, m.Result); err != nil {
		b.Abort(err)
	}
}
