// Indexgather is TRAM's index-gather pattern: every PE reads many random
// elements of a distributed array, each read a request to the element's
// owner and a reply back, both tiny, and both carried by a tram.Streamer.
//
// The array has -size values; value i belongs to PE i % P, in slot i / P
// of that PE's branch of the Node group, and is Value(i) = 3i + 1. Each PE
// draws -m random indices (seeded by its PE number) and inserts a Request
// for each into the request streamer, for the owner. The owner's Request
// method — the request streamer's process method — looks the value up and
// inserts a Reply into the reply streamer, for the requester, whose Reply
// method checks the value against Value(index), counts it and adds the
// index to a checksum. At the end the main chare sums, over the PEs, the
// replies, the wrong values and the PEs whose sum of the indices they got
// differs from the sum of those they asked for: the replies must be P·M
// and the rest 0.
//
// Every branch learns both streamers (Use, followed by a barrier) before
// any PE sends a request: a request may reach its owner before the
// broadcast that starts the requests does, since nothing orders a
// broadcast against direct sends, and the owner needs the reply streamer
// to answer it.
//
// Both streamers run a quiescence step (tram.Quiescence) and the main
// chare ends the exchange with one DetectQuiescence. The replies cannot
// use a completion step as they stand: their producers are the request
// deliveries, and no PE knows when it has served its last request until
// every request has arrived everywhere, which is exactly what the request
// step's completion would have to report first (two chained detections
// where one suffices). Quiescence covers both streamers at once, because
// items waiting in either streamer's buffers count as work, so it is not
// declared while a request or a reply is on its way. Because replies are
// inserted during deliveries, buffers that never fill would hold them
// forever: Options.FlushPeriod (-flush) sends the buffers of an idle PE
// periodically.
//
// Run it with
//
//	go run ./examples/indexgather -p 4
//	go run ./examples/indexgather -p 4 -m 200000 -dims 2,2 -flush 500us
//
// The runtime takes its flags (-p N) anywhere on the line, the program its
// own: -m (reads per PE), -size (the array's values), -dims (TRAM's grid,
// such as "2,2" or "2x2"; by default nodes × PEs per node), -buffer (items per
// peer) and -flush (the flush period). The last line is
//
//	indexgather: ok pes=4 verified=200000 errors=0 topology=1×4 rate=... reads/s
//
// or "indexgather: FAILED ..." with a non-zero exit code.
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

// Value is the array's value at index i.
func Value(i int64) int64 { return 3*i + 1 }

// Main is the main chare: it lives on PE 0 and drives the program.
type Main struct {
	chare.Chare[Main]
	m, size int
	buffer  int // items per peer; 0: the streamer's default
	flush   time.Duration
	dims    []int // nil: the streamer's default

	totals  []int64 // replies, wrong values, checksum differences
	elapsed time.Duration
}

// Node is one PE's part of the array and one PE's reader.
type Node struct {
	group.Branch[Node]
	values []int64 // the values i with i % P == PE, at slot i / P
	req    tram.Streamer[Node, Request]
	rep    tram.Streamer[Node, Reply]

	asked, got int64 // sums of the indices requested and replied
	replies    int64
	wrong      int64 // replies with a wrong value, or requests for a missing index
}

// Setup is the array's size, for each branch's values.
type Setup struct{ Size int }

// Request asks the owner of Index for its value on behalf of PE From.
type Request struct {
	Index int64
	From  int32
}

// Reply carries a value back to the PE that asked.
type Reply struct {
	Index, Value int64
}

// UseMsg gives every branch the streamers, and a barrier for when all
// have them.
type UseMsg struct {
	Req  tram.Streamer[Node, Request]
	Rep  tram.Streamer[Node, Reply]
	Done chare.Callback
}

// AskMsg makes a branch send its requests.
type AskMsg struct {
	M    int
	Size int
}

func init() {
	// Register in the same order in every process.
	chare.Register[Main]()
	chare.Register[Node]()
	tram.Register((*Node).Request)
	tram.Register((*Node).Reply)
}

func main() { os.Exit(chare.Main((*Main).Start)) }

// Start parses the flags, runs the exchange and prints the result.
func (m *Main) Start(args []string) {
	fs := exutil.NewFlagSet("indexgather")
	fs.IntVar(&m.m, "m", 50000, "random reads per PE")
	fs.IntVar(&m.size, "size", 1<<20, "values in the distributed array")
	fs.IntVar(&m.buffer, "buffer", 0, "TRAM buffer items per peer (default: the streamer's)")
	fs.DurationVar(&m.flush, "flush", time.Millisecond, "TRAM's flush period for idle PEs")
	dims := exutil.DimsFlag(fs)
	if !exutil.ParseNoArgs(out, m, fs, args) {
		return
	}
	switch {
	case m.m < 0:
		m.fail(2, "bad arguments: -m %d: want 0 or more reads", m.m)
		return
	case m.size < 1:
		m.fail(2, "bad arguments: -size %d: want at least 1 value", m.size)
		return
	case m.buffer < 0:
		m.fail(2, "bad arguments: -buffer %d: want 0 (default) or more", m.buffer)
		return
	case m.flush <= 0:
		// Replies are inserted during deliveries: without flushing they wait forever.
		m.fail(2, "bad arguments: -flush %v: replies need a positive flush period", m.flush)
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
	want := int64(m.NumPEs()) * int64(m.m)
	replies, wrong, missing := m.totals[0], m.totals[1], m.totals[2]
	if replies != want || wrong != 0 || missing != 0 {
		m.fail(1, "pes=%d verified=%d want=%d errors=%d checksum_mismatches=%d", m.NumPEs(), replies, want, wrong, missing)
		return
	}
	fmt.Fprintf(out, "indexgather: ok pes=%d verified=%d errors=%d topology=%s rate=%.4g reads/s\n",
		m.NumPEs(), replies, wrong, m.topology(), float64(replies)/m.elapsed.Seconds())
	m.Exit(0)
}

// run creates the array and both streamers, starts a quiescence step on
// each, sends the requests and waits for quiescence.
func (m *Main) run() error {
	nodes, err := group.NewWith(m, (*Node).Init, Setup{Size: m.size})
	if err != nil {
		return fmt.Errorf("creating the array: %w", err)
	}
	o := exutil.Options(m.dims, m.buffer, m.flush)
	req, err := tram.New(m, nodes, (*Node).Request, o)
	if err != nil {
		return fmt.Errorf("creating the request streamer: %w", err)
	}
	rep, err := tram.New(m, nodes, (*Node).Reply, o)
	if err != nil {
		return fmt.Errorf("creating the reply streamer: %w", err)
	}
	ready := chare.NewFuture[any](m)
	if err := chare.Send(m, nodes, (*Node).Use, UseMsg{Req: req, Rep: rep, Done: ready.Callback()}); err != nil {
		return fmt.Errorf("handing out the streamers: %w", err)
	}
	reqStarted, repStarted := chare.NewFuture[any](m), chare.NewFuture[any](m)
	if err := req.Start(m, tram.Step{Mode: tram.Quiescence, Started: reqStarted.Callback()}); err != nil {
		return fmt.Errorf("starting the requests: %w", err)
	}
	if err := rep.Start(m, tram.Step{Mode: tram.Quiescence, Started: repStarted.Callback()}); err != nil {
		return fmt.Errorf("starting the replies: %w", err)
	}
	// Every PE must know the streamers and accept replies before any
	// request is delivered.
	if err := chare.WaitAll(m, ready, reqStarted, repStarted); err != nil {
		return err
	}
	began := time.Now()
	if err := chare.Send(m, nodes, (*Node).Ask, AskMsg{M: m.m, Size: m.size}); err != nil {
		return fmt.Errorf("sending the requests: %w", err)
	}
	qd := chare.NewFuture[any](m)
	m.DetectQuiescence(qd.Callback())
	if _, err := qd.Get(m); err != nil {
		return err
	}
	m.elapsed = time.Since(began)
	totals := chare.NewFuture[[]int64](m)
	if err := chare.Send(m, nodes, (*Node).Totals, totals.Callback()); err != nil {
		return err
	}
	m.totals, err = totals.Get(m)
	return err
}

// topology names the grid the streamers use.
func (m *Main) topology() string { return exutil.Topology(m, m.dims) }

// fail prints the final FAILED line and ends the job with code.
func (m *Main) fail(code int, format string, args ...any) {
	exutil.Fail(out, m, "indexgather", code, format, args...)
}

// Init fills this PE's slots.
func (n *Node) Init(s Setup) {
	p := n.NumPEs()
	for i := n.PE(); i < s.Size; i += p {
		n.values = append(n.values, Value(int64(i)))
	}
}

// Use keeps the streamers and joins the barrier.
func (n *Node) Use(m UseMsg) {
	n.req, n.rep = m.Req, m.Rep
	if err := n.Contribute(nil, reducer.Nop, m.Done); err != nil {
		n.Abort(err)
	}
}

// Ask inserts this PE's requests.
func (n *Node) Ask(m AskMsg) {
	r := rand.New(rand.NewSource(int64(n.PE()) + 1))
	p := int64(n.NumPEs())
	for k := 0; k < m.M; k++ {
		i := r.Int63n(int64(m.Size))
		n.asked += i
		if err := n.req.Insert(n, Request{Index: i, From: int32(n.PE())}, int(i%p)); err != nil {
			n.Abort(fmt.Errorf("indexgather: PE %d, request %d: %w", n.PE(), k, err))
			return
		}
	}
}

// Request serves a request for a value of this PE: the request streamer's
// process method, which inserts the reply. A request for an index this PE
// does not hold is counted as wrong and not answered.
func (n *Node) Request(q Request) {
	p := int64(n.NumPEs())
	slot := q.Index / p
	if q.Index < 0 || q.Index%p != int64(n.PE()) || slot >= int64(len(n.values)) || q.From < 0 || int(q.From) >= n.NumPEs() {
		n.wrong++
		return
	}
	if err := n.rep.Insert(n, Reply{Index: q.Index, Value: n.values[slot]}, int(q.From)); err != nil {
		n.Abort(fmt.Errorf("indexgather: PE %d, reply to PE %d: %w", n.PE(), q.From, err))
	}
}

// Reply checks a value this PE asked for: the reply streamer's process
// method.
func (n *Node) Reply(r Reply) {
	n.replies++
	n.got += r.Index
	if r.Value != Value(r.Index) {
		n.wrong++
	}
}

// Totals sums, over the PEs, the replies, the wrong values and the PEs
// whose replies do not add up to their requests.
func (n *Node) Totals(cb chare.Callback) {
	var mismatch int64
	if n.asked != n.got {
		mismatch = 1
	}
	if err := n.Contribute([]int64{n.replies, n.wrong, mismatch}, reducer.SumInt64, cb); err != nil {
		n.Abort(err)
	}
}
