// Kneighbor is the counterpart of Charm++'s benchmarks/charm++/kNeighbor:
// the time of one round of a neighbour exchange, the pattern of a stencil
// code.
//
//	kneighbor elements iterations msgbytes
//
// takes Charm++'s positional arguments and the runtime's flags (-p N,
// -nodes M). A 1-D array of elements chares (at least one per PE; Charm++
// raises a smaller count to the PEs as well) is placed by Charm++'s block
// map, element e on PE (e / ⌊elements/P⌋) mod P. Each element's neighbours
// are the K = 3 indices on each side, wrapping around, so that with few
// elements an element counts itself and the others more than once, as in
// Charm++. An iteration is what Charm++'s is:
//
//   - the main chare sends each element the start of the iteration;
//   - an element runs 100 rounds on its own: in a round it sends each of
//     its 2K neighbours a message of msgbytes bytes; a neighbour returns
//     the same message; when all 2K came back the next round starts;
//   - after its 100th round an element tells the main chare, which ends
//     the iteration when every element has, and starts the next.
//
// An iteration's time is the main chare's, from the first start to the
// last report, divided by 100. As in Charm++, the figure is the mean of
// the fastest 100 iterations (of iterations − 1 when there are at most
// 100), us_per_iteration_avg; the lowest, the median and the highest are
// printed too. The last line is
//
//	kneighbor: ok elements=2 iterations=50 msgbytes=64 us_per_iteration_avg=... lowest=... median=... highest=...
//
// or "kneighbor: FAILED ..." with a non-zero exit code.
//
// The message: Charm++ allocates each message with new, which does not
// zero it, and frees it when it came back; -alloc reuse (the default)
// does the same work, each element keeping the buffers that came back for
// its next sends, and -alloc new allocates a zeroed slice for every
// message and leaves it to the garbage collector. Nobody reads the
// payload in either program.
//
// What still differs from Charm++: in one process the message is handed
// over as the same Go value, as Charm++ hands the pointer over, but
// between processes it is msgpack-encoded in our frames where Charm++
// copies its bytes; the payload is a []byte of msgbytes bytes where
// Charm++'s is msgbytes/4 ints (the same bytes when msgbytes is a multiple
// of 4).
package main

import (
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"github.com/charmgo/charm/array"
	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/internal/exutil"
)

// out is where the program prints; the test replaces it.
var out io.Writer = os.Stdout

// K is the neighbours on each side, and Rounds the rounds an element runs
// in an iteration (Charm++'s STRIDEK and CALCPERSTEP).
const (
	K      = 3
	Rounds = 100
)

// Main is the main chare.
type Main struct {
	chare.Chare[Main]
	elements, iterations, msgBytes int
	blocks                         array.Proxy[Block, int]
	fresh                          bool // -alloc new

	step     int       // the iteration running
	reported int       // elements done with it
	began    time.Time // of the iteration
	times    []float64 // µs of a round, per iteration
}

// Block is an element of the array (Charm++'s Block).
type Block struct {
	array.Element[Block, int]
	neighbours []int
	main       chare.Proxy[Main]

	msgBytes int
	fresh    bool     // -alloc new
	free     [][]byte // buffers that came back, for the next sends
	round    int      // rounds done in this iteration
	back     int      // replies in this round
}

// Setup is what every element is created with.
type Setup struct {
	Elements int
	Main     chare.Proxy[Main]
}

// CommMsg starts an iteration on an element.
type CommMsg struct {
	MsgBytes int
	Fresh    bool
}

// NeighborMsg is Charm++'s toNeighborMsg: the payload, the sender's
// index and which of its neighbours the message went to.
type NeighborMsg struct {
	Data  []byte
	FromX int
	NID   int
}

// DoneMsg tells the main chare that an element ran its rounds.
type DoneMsg struct{ Index int }

func init() {
	chare.Register[Main]()
	// The elements never migrate: their state is not packed.
	chare.Register[Block](chare.Transient("neighbours", "main", "msgBytes", "fresh", "free", "round", "back"))
}

func main() { os.Exit(chare.Main((*Main).Start)) }

// Neighbours returns the neighbours of element x of n: K on each side,
// wrapping around (Charm++'s WRAPROUND), so that with n ≤ 2K some appear
// more than once and x may be among them.
func Neighbours(x, n int) []int {
	nb := make([]int, 0, 2*K)
	for i := x - K; i < x; i++ {
		nb = append(nb, ((i%n)+n)%n)
	}
	for i := x + 1; i <= x+K; i++ {
		nb = append(nb, i%n)
	}
	return nb
}

// Place is Charm++'s block map of kNeighbor: element e of n on
// (e / ⌊n/P⌋) mod P.
func Place(e, n, npes int) int { return (e / (n / npes)) % npes }

// blockMap places the elements with Place.
type blockMap struct{}

func (blockMap) Place(_ any, pos, n, npes int) int { return Place(pos, n, npes) }

// place is blockMap under a name, which every process registers.
var place = array.NamedMap("kneighbor-block", blockMap{})

// Mean is Charm++'s statistic: the mean of the fastest 100 of times (of
// len(times) − 1 when there are at most 100). It sorts times.
func Mean(times []float64) float64 {
	slices.Sort(times)
	k := min(100, len(times)-1)
	sum := 0.0
	for _, t := range times[:k] {
		sum += t
	}
	return sum / float64(k)
}

// Start creates the array and starts the first iteration.
func (m *Main) Start(args []string) {
	fs := exutil.NewFlagSet("kneighbor")
	alloc := fs.String("alloc", "reuse", "messages: reuse (buffers that came back, as Charm++'s malloc reuses freed ones) or new (a zeroed slice each)")
	if !exutil.Parse(out, m, fs, args) {
		return
	}
	if fs.NArg() != 3 {
		m.fail(2, "bad arguments: want elements iterations msgbytes, got %d arguments", fs.NArg())
		return
	}
	v, err := exutil.Positional(fs.Args(), []string{"elements", "iterations", "msgbytes"}, []int{0, 0, 0}, 0)
	switch {
	case err != nil:
		m.fail(2, "bad arguments: %v", err)
		return
	case v[1] < 2:
		m.fail(2, "bad arguments: iterations %d: want at least 2", v[1])
		return
	case *alloc != "reuse" && *alloc != "new":
		m.fail(2, "bad arguments: -alloc %q: want reuse or new", *alloc)
		return
	}
	m.elements, m.iterations, m.msgBytes = max(v[0], m.NumPEs()), v[1], v[2]
	n := m.elements
	m.blocks, err = array.NewWith(m, array.Dims(n), (*Block).Init, Setup{Elements: n, Main: m.ThisProxy()}, array.WithMap(place))
	if err != nil {
		m.fail(1, "creating the array: %v", err)
		return
	}
	m.step = -1
	m.fresh = *alloc == "new"
	m.begin()
}

// begin starts the next iteration, or reports after the last.
func (m *Main) begin() {
	m.step++
	if m.step == m.iterations {
		avg := Mean(m.times)
		fmt.Fprintf(out, "kneighbor: ok elements=%d iterations=%d msgbytes=%d us_per_iteration_avg=%.4f lowest=%.4f median=%.4f highest=%.4f\n",
			m.elements, m.iterations, m.msgBytes, avg, m.times[0], m.times[m.iterations/2], m.times[m.iterations-1])
		m.Exit(0)
		return
	}
	m.reported = 0
	m.began = time.Now()
	for i := range m.elements {
		if err := chare.Send(m, m.blocks.At(i), (*Block).Comm, CommMsg{MsgBytes: m.msgBytes, Fresh: m.fresh}); err != nil {
			m.fail(1, "starting iteration %d on element %d: %v", m.step, i, err)
			return
		}
	}
}

// Done counts an element that ran its rounds (Charm++'s nextStep_plain).
func (m *Main) Done(DoneMsg) {
	m.reported++
	if m.reported == m.elements {
		m.times = append(m.times, time.Since(m.began).Seconds()*1e6/Rounds)
		m.begin()
	}
}

func (m *Main) fail(code int, format string, args ...any) {
	exutil.Fail(out, m, "kneighbor", code, format, args...)
}

// Init sets an element up.
func (b *Block) Init(s Setup) {
	b.neighbours = Neighbours(b.ThisIndex(), s.Elements)
	b.main = s.Main
}

// Comm starts an iteration's rounds (Charm++'s commWithNeighbors).
func (b *Block) Comm(c CommMsg) {
	b.msgBytes, b.fresh, b.round = c.MsgBytes, c.Fresh, 0
	b.startRound()
}

func (b *Block) startRound() {
	b.back = 0
	me := b.ThisIndex()
	for i, nb := range b.neighbours {
		var data []byte
		if n := len(b.free); n > 0 && !b.fresh && cap(b.free[n-1]) >= b.msgBytes {
			data, b.free = b.free[n-1][:b.msgBytes], b.free[:n-1]
		} else {
			data = make([]byte, b.msgBytes)
		}
		if err := chare.Send(b, b.ThisProxy().At(nb), (*Block).Recv, NeighborMsg{Data: data, FromX: me, NID: i}); err != nil {
			b.Abort(err)
			return
		}
	}
}

// Recv returns a neighbour's message to it (Charm++'s recvMsgs).
func (b *Block) Recv(m NeighborMsg) {
	if err := chare.Send(b, b.ThisProxy().At(m.FromX), (*Block).Reply, m); err != nil {
		b.Abort(err)
	}
}

// Reply takes a message back (Charm++'s recvReplies): after the last of
// a round, the next round starts, or after the last round the main chare
// hears of it.
func (b *Block) Reply(m NeighborMsg) {
	if !b.fresh {
		b.free = append(b.free, m.Data)
	}
	b.back++
	if b.back < len(b.neighbours) {
		return
	}
	b.round++
	if b.round < Rounds {
		b.startRound()
		return
	}
	if err := chare.Send(b, b.main, (*Main).Done, DoneMsg{Index: b.ThisIndex()}); err != nil {
		b.Abort(err)
	}
}
