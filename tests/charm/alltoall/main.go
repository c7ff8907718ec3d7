// Alltoall is the counterpart of Charm++'s examples/charm++/allToAll: the
// time of an all-to-all exchange of messages, the pattern of an FFT's
// transpose.
//
//	alltoall [msgbytes] [msgcount] [iterations]
//
// takes Charm++'s positional arguments (defaults 1024 bytes, 1 message and
// 300 iterations) and the runtime's flags (-p N, -nodes M). A 1-D array of
// P chares, one per PE, is created; each allocates msgcount·P messages of
// msgbytes bytes once, and every iteration is what Charm++'s is:
//
//   - the main chare broadcasts the start of the iteration;
//   - each chare sends msgcount messages to every chare, itself included,
//     starting with itself and going round (its messages for chare t are
//     the slots j·P + t);
//   - it keeps the messages it receives, in the slots it sends from in
//     the next iteration, and when msgcount·P have come it joins a
//     reduction (a barrier) whose result starts the next iteration at the
//     main chare.
//
// The time runs from the first broadcast to the end of the last
// iteration's reduction, and the figure is its mean per iteration in ms:
//
//	alltoall: ok pes=2 msgbytes=1024 msgcount=1 iterations=300 ms_per_iteration=...
//
// or "alltoall: FAILED ..." with a non-zero exit code.
//
// Messages of the next iteration can arrive before its broadcast does;
// Charm++'s SDAG `when getAllToAll[iter]` holds them back until the
// chare's own sends of that iteration, and so does this program, so that
// a slot is refilled only after its message left.
//
// What still differs from Charm++: in one process the message is handed
// over as the same Go value, as Charm++ hands the pointer over, but
// between processes it is msgpack-encoded in our frames where Charm++
// copies its bytes; Charm++ tags each message with the iteration in its
// envelope (CkSetRefNum), this program in a field of the message.
package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/charmgo/charm/array"
	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/chare/reducer"
	"github.com/charmgo/charm/internal/exutil"
)

// out is where the program prints; the test replaces it.
var out io.Writer = os.Stdout

// Main is the main chare.
type Main struct {
	chare.Chare[Main]
	msgBytes, msgCount, iterations int
	chares                         array.Proxy[Chare, int]
	iter                           int
	began                          time.Time
}

// Chare is an element of the array (Charm++'s allToAll chare).
type Chare struct {
	array.Element[Chare, int]
	msgs  [][]byte // msgcount·P slots: what this chare sends
	count int      // messages to send and to receive in an iteration
	iter  int      // the iteration running, or next to run
	sent  bool     // this iteration's messages left
	recv  int      // messages of this iteration received
	early []Msg    // messages of the next iteration, before its start
	next  chare.Callback
}

// Setup is what every chare is created with.
type Setup struct {
	MsgBytes, MsgCount int
	Next               chare.Callback // each iteration's barrier
}

// GoMsg starts an iteration (Charm++'s doAllToAll).
type GoMsg struct{ Iter int }

// Msg is one message of the exchange (Charm++'s allToAllMsg with its
// reference number).
type Msg struct {
	Data []byte
	Iter int
}

func init() {
	chare.Register[Main]()
	// The chares never migrate: their state is not packed.
	chare.Register[Chare](chare.Transient("msgs", "count", "iter", "sent", "recv", "early", "next"))
}

func main() { os.Exit(chare.Main((*Main).Start)) }

// Start creates the array, waits until every chare has its messages, and
// starts the first iteration.
func (m *Main) Start(args []string) {
	fs := exutil.NewFlagSet("alltoall")
	if !exutil.Parse(out, m, fs, args) {
		return
	}
	v, err := exutil.Positional(fs.Args(), []string{"msgbytes", "msgcount", "iterations"}, []int{1024, 1, 300}, 1)
	if err != nil {
		m.fail(2, "bad arguments: %v", err)
		return
	}
	m.msgBytes, m.msgCount, m.iterations = v[0], v[1], v[2]
	next := chare.EntryCallback0(m.ThisProxy(), (*Main).Next)
	m.chares, err = array.NewWith(m, array.Dims(m.NumPEs()), (*Chare).Init, Setup{MsgBytes: m.msgBytes, MsgCount: m.msgCount, Next: next})
	if err != nil {
		m.fail(1, "creating the array: %v", err)
		return
	}
	// Charm++ contributes from the constructor to start; a barrier here.
	ready := chare.NewFuture[any](m)
	if err := chare.Send(m, m.chares, (*Chare).Ready, ready.Callback()); err != nil {
		m.fail(1, "%v", err)
		return
	}
	if _, err := ready.Get(m); err != nil {
		m.fail(1, "waiting for the chares: %v", err)
		return
	}
	m.began = time.Now()
	m.start()
}

func (m *Main) start() {
	if err := chare.Send(m, m.chares, (*Chare).Go, GoMsg{Iter: m.iter}); err != nil {
		m.fail(1, "starting iteration %d: %v", m.iter, err)
	}
}

// Next ends an iteration (Charm++'s nextallToAll).
func (m *Main) Next() {
	m.iter++
	if m.iter < m.iterations {
		m.start()
		return
	}
	ms := time.Since(m.began).Seconds() * 1e3 / float64(m.iterations)
	fmt.Fprintf(out, "alltoall: ok pes=%d msgbytes=%d msgcount=%d iterations=%d ms_per_iteration=%.6f\n",
		m.NumPEs(), m.msgBytes, m.msgCount, m.iterations, ms)
	m.Exit(0)
}

func (m *Main) fail(code int, format string, args ...any) {
	exutil.Fail(out, m, "alltoall", code, format, args...)
}

// Init allocates the chare's messages, once.
func (c *Chare) Init(s Setup) {
	c.count = s.MsgCount * c.NumPEs()
	c.msgs = make([][]byte, c.count)
	for i := range c.msgs {
		c.msgs[i] = make([]byte, s.MsgBytes)
	}
	c.next = s.Next
}

// Ready joins the barrier before the first iteration.
func (c *Chare) Ready(cb chare.Callback) {
	if err := c.Contribute(nil, reducer.Nop, cb); err != nil {
		c.Abort(err)
	}
}

// Go sends this chare's messages of an iteration, then takes those of it
// that came early.
func (c *Chare) Go(g GoMsg) {
	if g.Iter != c.iter {
		c.Abort(fmt.Errorf("alltoall: chare %d told to start iteration %d in iteration %d", c.ThisIndex(), g.Iter, c.iter))
		return
	}
	p, me := c.NumPEs(), c.ThisIndex()
	to := c.ThisProxy()
	for j := range c.count / p {
		for i := me; i < me+p; i++ {
			t := i % p
			if err := chare.Send(c, to.At(t), (*Chare).Get, Msg{Data: c.msgs[j*p+t], Iter: c.iter}); err != nil {
				c.Abort(err)
				return
			}
		}
	}
	c.sent = true
	early := c.early
	c.early = nil
	for _, m := range early {
		c.Get(m)
	}
}

// Get takes a message (Charm++'s getAllToAll and processAllToAll).
func (c *Chare) Get(m Msg) {
	switch {
	case m.Iter == c.iter && c.sent:
		c.msgs[c.recv] = m.Data
		c.recv++
		if c.recv == c.count {
			c.finish()
		}
	case m.Iter == c.iter || m.Iter == c.iter+1:
		c.early = append(c.early, m)
	default:
		c.Abort(fmt.Errorf("alltoall: chare %d got a message of iteration %d in iteration %d", c.ThisIndex(), m.Iter, c.iter))
	}
}

// finish ends the chare's iteration: it joins the barrier.
func (c *Chare) finish() {
	c.iter++
	c.sent, c.recv = false, 0
	if err := c.Contribute(nil, reducer.Nop, c.next); err != nil {
		c.Abort(err)
	}
}
