// Pingpong is the counterpart of Charm++'s benchmarks/charm++/pingpong:
// the round-trip time of a message between two PEs, for a 1-D chare array
// and for a group.
//
//	pingpong [payload] [iterations]
//
// takes Charm++'s positional arguments (defaults 100 bytes and 1000) and
// the runtime's flags (-p 2, -nodes 2); like Charm++'s it runs on one or
// two PEs only. Each test runs twice, as Charm++ runs each of its phases:
// an untimed warm-up and the timed run. A test is what Charm++'s is:
//
//   - array: elements 0 and 1 of a 1-D array (element i on PE i) pass one
//     message, a payload of that many bytes allocated once, back and
//     forth; element 0 counts the round trips and, after the last, reports
//     the time since its first send divided by iterations;
//   - group: the same between the branches of a group on PE 0 and PE 1.
//
// With one PE both ends live on PE 0, and as in Charm++ the array figure
// is a round trip between two elements there while the group's is one
// hop there and back to itself, counted as half a round trip.
//
// The last line is
//
//	pingpong: ok payload=100 iterations=1000 roundtrip_us_1D_array=... roundtrip_us_group=...
//
// or "pingpong: FAILED ..." with a non-zero exit code.
//
// What still differs from Charm++: its program runs eleven tests (2-D,
// 3-D and user-indexed arrays, threaded entry methods, singleton chares,
// zero-copy sends, pipelined fragments, node groups) and this one runs
// the two that the benchmarks compare; the message is handed over as the
// same Go value in one process, as Charm++ hands the same message pointer
// over, but between processes it is msgpack-encoded in our frames where
// Charm++ copies its bytes; Charm++ starts each test when quiescence is
// detected after the previous one, this one when the previous test's
// future is set.
package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/charmgo/charm/array"
	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/group"
	"github.com/charmgo/charm/internal/exutil"
)

// out is where the program prints; the test replaces it.
var out io.Writer = os.Stdout

// Main is the main chare.
type Main struct {
	chare.Chare[Main]
	payload, iterations int
	array, group        float64 // round-trip µs of the timed runs
}

// PingMsg is the message passed back and forth: Charm++'s PingMsg, a
// payload of bytes.
type PingMsg struct{ X []byte }

// StartMsg starts a run on the first end.
type StartMsg struct {
	Iterations, Payload int
	Done                chare.Callback // gets the round-trip time, a time.Duration per round trip summed
}

// ends is the state both kinds of player keep: the test's run on the
// first end.
type ends struct {
	niter, iterations int
	began             time.Time
	done              chare.Callback
}

// start begins a run: it allocates the message once.
func (e *ends) start(s StartMsg) PingMsg {
	e.niter, e.iterations, e.done = 0, s.Iterations, s.Done
	e.began = time.Now()
	return PingMsg{X: make([]byte, s.Payload)}
}

// back counts a message that came back to the first end and says whether
// the run is over; if so it reports the time.
func (e *ends) back(ctx chare.Context) (over bool, err error) {
	e.niter++
	if e.niter < e.iterations {
		return false, nil
	}
	return true, e.done.Send(ctx, time.Since(e.began))
}

// Ping1 is an element of the 1-D array (Charm++'s Ping1).
type Ping1 struct {
	array.Element[Ping1, int]
	ends
}

// Start begins a run on element 0.
func (p *Ping1) Start(s StartMsg) { p.send(1, p.ends.start(s)) }

// Recv takes the message: element 1 returns it, element 0 counts a round
// trip and sends it again until the run is over.
func (p *Ping1) Recv(m PingMsg) {
	if p.ThisIndex() == 1 {
		p.send(0, m)
		return
	}
	if over, err := p.back(p); err != nil {
		p.Abort(err)
	} else if !over {
		p.send(1, m)
	}
}

func (p *Ping1) send(to int, m PingMsg) {
	if err := chare.Send(p, p.ThisProxy().At(to), (*Ping1).Recv, m); err != nil {
		p.Abort(err)
	}
}

// PingG is a branch of the group (Charm++'s PingG).
type PingG struct {
	group.Branch[PingG]
	ends
}

// Start begins a run on PE 0.
func (p *PingG) Start(s StartMsg) { p.send(p.ends.start(s)) }

// Recv takes the message: PE 0 counts, every other branch returns it.
func (p *PingG) Recv(m PingMsg) {
	if p.PE() != 0 {
		p.send(m)
		return
	}
	if over, err := p.back(p); err != nil {
		p.Abort(err)
	} else if !over {
		p.send(m)
	}
}

func (p *PingG) send(m PingMsg) {
	if err := chare.Send(p, p.ThisProxy().At((p.PE()+1)%p.NumPEs()), (*PingG).Recv, m); err != nil {
		p.Abort(err)
	}
}

func init() {
	chare.Register[Main]()
	// The elements never migrate: their run's state is not packed.
	chare.Register[Ping1](chare.Transient("niter", "iterations", "began", "done"))
	chare.Register[PingG]()
}

func main() { os.Exit(chare.Main((*Main).Start)) }

// Start runs the array test and then the group test, each warmed up once.
func (m *Main) Start(args []string) {
	fs := exutil.NewFlagSet("pingpong")
	if !exutil.Parse(out, m, fs, args) {
		return
	}
	v, err := exutil.Positional(fs.Args(), []string{"payload", "iterations"}, []int{100, 1000}, 1)
	if err != nil {
		m.fail(2, "bad arguments: %v", err)
		return
	}
	m.payload, m.iterations = v[0], v[1]
	if m.NumPEs() > 2 {
		m.fail(2, "bad arguments: %d PEs: run on 1 or 2 PEs (-p 2), as Charm++'s pingpong", m.NumPEs())
		return
	}
	players, err := array.New[Ping1](m, array.Dims(2))
	if err != nil {
		m.fail(1, "creating the array: %v", err)
		return
	}
	peers, err := group.New[PingG](m)
	if err != nil {
		m.fail(1, "creating the group: %v", err)
		return
	}
	if m.array, err = timedRun(m, players.At(0), (*Ping1).Start); err != nil {
		m.fail(1, "array test: %v", err)
		return
	}
	if m.group, err = timedRun(m, peers.At(0), (*PingG).Start); err != nil {
		m.fail(1, "group test: %v", err)
		return
	}
	if m.NumPEs() == 1 { // one hop to itself and back, as Charm++ counts it
		m.group *= 2
	}
	fmt.Fprintf(out, "pingpong: ok payload=%d iterations=%d roundtrip_us_1D_array=%.4f roundtrip_us_group=%.4f\n",
		m.payload, m.iterations, m.array, m.group)
	m.Exit(0)
}

// timedRun runs a test twice, a warm-up and a timed run, and returns the
// timed run's round-trip µs.
func timedRun[T any](m *Main, to chare.Proxy[T], start func(*T, StartMsg)) (float64, error) {
	var d time.Duration
	for range 2 {
		f := chare.NewFuture[time.Duration](m)
		if err := chare.Send(m, to, start, StartMsg{Iterations: m.iterations, Payload: m.payload, Done: f.Callback()}); err != nil {
			return 0, err
		}
		var err error
		if d, err = f.Get(m); err != nil {
			return 0, err
		}
	}
	return d.Seconds() * 1e6 / float64(m.iterations), nil
}

func (m *Main) fail(code int, format string, args ...any) {
	exutil.Fail(out, m, "pingpong", code, format, args...)
}
