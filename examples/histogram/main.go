// Histogram is TRAM's classic example: every PE sends many tiny updates to
// a table distributed over the PEs, and a tram.Streamer combines them
// into few, large messages.
//
// The table is a group: key k belongs to PE k % P, in slot k / P % size of
// that PE's counts. Each PE feeds M random uint64 keys (seeded by its PE
// number) into the streamer in one completion step — there are P
// producers, and each PE's feeder calls Done once — and the streamer
// delivers each key to the branch that owns it, which counts it. Periodic
// flushing sends the buffers of an idle PE.
//
// At the end every branch recomputes, from the same seeds, what all the
// feeders sent it and compares that with its counts; the main chare checks
// that the counts add up to P·M and that no branch found an error.
//
// Run it with
//
//	go run ./examples/histogram -p 4
//	go run ./examples/histogram -p 4 -dims 4 -buffer 1024 -m 1000000
//	go run ./examples/histogram -p 4 -nodes 2
//
// The runtime takes its flags (-p N, -nodes M) anywhere on the line, the
// program its own: -m (keys per PE), -dims (the grid, such as "2,2" or "2x2"; by
// default nodes × PEs per node), -buffer (items per peer), -size (slots
// per PE), -flush (the flush period) and -seed. The last line is
//
//	histogram: ok pes=4 items=400000 errors=0 topology=2×2 rate=... items/s
//
// or "histogram: FAILED ..." with a non-zero exit code.
package main

import (
	"fmt"
	"io"
	"math/rand"
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

// Main is the main chare: it lives on PE 0 and drives the program.
type Main struct {
	chare.Chare[Main]
	m      int // keys per PE
	size   int // slots per PE
	buffer int // items per peer; 0: the streamer's default
	flush  time.Duration
	seed   int64
	dims   []int // nil: the streamer's default

	// The results, once the job has ended.
	items, errors int64
	rate          float64
}

// Table is the distributed table: one branch per PE, holding the counts
// of the keys k with k % P == PE.
type Table struct {
	group.Branch[Table]
	counts []uint64
}

// Fill tells every branch what to feed and how large its table is.
type Fill struct {
	S    tram.Streamer[Table, uint64]
	M    int
	Size int
	Seed int64
}

func init() {
	// Register in the same order in every process.
	chare.Register[Main]()
	chare.Register[Table]()
	tram.Register((*Table).Add)
}

func main() { os.Exit(chare.Main((*Main).Start)) }

// keys returns the generator of PE pe's keys: every branch can replay any
// feeder's keys.
func keys(seed int64, pe int) *rand.Rand { return rand.New(rand.NewSource(seed + int64(pe)*7919)) }

// Start is the program's main function. It runs on PE 0 with the
// arguments the runtime did not take.
func (m *Main) Start(args []string) {
	fs := exutil.NewFlagSet("histogram")
	fs.IntVar(&m.m, "m", 100000, "random keys sent by each PE")
	dims := exutil.DimsFlag(fs)
	fs.IntVar(&m.buffer, "buffer", 0, "items buffered per peer (default: the streamer's, 256)")
	fs.IntVar(&m.size, "size", 4096, "table slots per PE")
	fs.DurationVar(&m.flush, "flush", 2*time.Millisecond, "periodic flushing of an idle PE's buffers")
	fs.Int64Var(&m.seed, "seed", 1, "seed of the random keys")
	if !exutil.Parse(out, m, fs, args) {
		return
	}
	switch {
	case m.m < 0:
		m.fail(2, "bad arguments: -m %d: want at least 0 keys", m.m)
		return
	case m.size < 1:
		m.fail(2, "bad arguments: -size %d: want at least 1 slot", m.size)
		return
	case m.buffer < 0:
		m.fail(2, "bad arguments: -buffer %d: want at least 1 item, or 0 for the default", m.buffer)
		return
	case m.flush <= 0:
		m.fail(2, "bad arguments: -flush %v: want a positive period", m.flush)
		return
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
	if want := int64(m.NumPEs()) * int64(m.m); m.items != want || m.errors != 0 {
		m.fail(1, "pes=%d items=%d (want %d) errors=%d", m.NumPEs(), m.items, want, m.errors)
		return
	}
	fmt.Fprintf(out, "histogram: ok pes=%d items=%d errors=%d topology=%s rate=%.4g items/s\n",
		m.NumPEs(), m.items, m.errors, m.topology(), m.rate)
	m.Exit(0)
}

// topology names the grid the streamer uses.
func (m *Main) topology() string { return exutil.Topology(m, m.dims) }

// run creates the table and the streamer, runs the step and checks the
// table. Main's Start is a threaded entry method, so it can wait on
// futures.
func (m *Main) run() error {
	p := m.NumPEs()
	table, err := group.New[Table](m)
	if err != nil {
		return fmt.Errorf("creating the table: %w", err)
	}
	o := exutil.Options(m.dims, m.buffer, m.flush)
	s, err := tram.New(m, table, (*Table).Add, o)
	if err != nil {
		return fmt.Errorf("creating the streamer: %w", err)
	}
	// The branches allocate their tables before the step starts.
	ready := chare.NewFuture[any](m)
	fill := Fill{S: s, M: m.m, Size: m.size, Seed: m.seed}
	if err := chare.Send(m, table, (*Table).Prepare, prepareMsg{Fill: fill, Done: ready.Callback()}); err != nil {
		return err
	}
	if _, err := ready.Get(m); err != nil {
		return err
	}
	finished, err := exutil.StartStep(m, s, tram.Completion, p, "starting the step")
	if err != nil {
		return err
	}
	t0 := time.Now()
	if err := chare.Send(m, table, (*Table).Feed, fill); err != nil {
		return err
	}
	if _, err := finished.Get(m); err != nil {
		return err
	}
	m.rate = float64(p) * float64(m.m) / time.Since(t0).Seconds()
	res := chare.NewFuture[[]int64](m)
	if err := chare.Send(m, table, (*Table).Check, checkMsg{Fill: fill, Done: res.Callback()}); err != nil {
		return err
	}
	r, err := res.Get(m)
	if err != nil {
		return err
	}
	m.items, m.errors = r[0], r[1]
	return nil
}

type prepareMsg struct {
	Fill Fill
	Done chare.Callback
}

// Prepare allocates the branch's table.
func (t *Table) Prepare(m prepareMsg) {
	t.counts = make([]uint64, m.Fill.Size)
	_ = t.Contribute(nil, reducer.Nop, m.Done)
}

// Feed sends this PE's keys through the streamer, then ends its producer.
func (t *Table) Feed(f Fill) {
	p := uint64(t.NumPEs())
	r := keys(f.Seed, t.PE())
	in, err := f.S.Local(t) // this PE's branch, found once for the loop
	if err != nil {
		t.Abort(err)
		return
	}
	for i := 0; i < f.M; i++ {
		k := r.Uint64()
		if err := in.Insert(k, int(k%p)); err != nil {
			t.Abort(err)
			return
		}
	}
	if err := f.S.Done(t, 1); err != nil {
		t.Abort(err)
	}
}

// Add counts one key: the streamer's process method.
func (t *Table) Add(k uint64) {
	p := uint64(t.NumPEs())
	t.counts[k/p%uint64(len(t.counts))]++
}

type checkMsg struct {
	Fill Fill
	Done chare.Callback
}

// Check replays every feeder, recounts the keys that belong to this PE and
// compares them with the table; it contributes [keys counted, slots that
// differ] to a sum.
func (t *Table) Check(m checkMsg) {
	p, me := uint64(t.NumPEs()), uint64(t.PE())
	want := make([]uint64, len(t.counts))
	for pe := 0; pe < t.NumPEs(); pe++ {
		r := keys(m.Fill.Seed, pe)
		for i := 0; i < m.Fill.M; i++ {
			if k := r.Uint64(); k%p == me {
				want[k/p%uint64(len(want))]++
			}
		}
	}
	var n, bad int64
	for i, c := range t.counts {
		n += int64(c)
		if c != want[i] {
			bad++
		}
	}
	_ = t.Contribute([]int64{n, bad}, reducer.SumInt64, m.Done)
}

// fail prints the final FAILED line and ends the job with code.
func (m *Main) fail(code int, format string, args ...any) {
	exutil.Fail(out, m, "histogram", code, format, args...)
}
