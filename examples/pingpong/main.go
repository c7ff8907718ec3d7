// Pingpong measures the two basic costs of message-driven code: the
// latency of an entry-method round trip, and the rate at which one chare
// can stream messages to another.
//
// Two players, the elements 0 and 1 of a chare array placed by a map on
// PE 0 and PE 1, take part in two phases, each started by the main chare,
// which waits for the phase's result on a future:
//
//   - latency: player 0 sends a small Ping to player 1, which answers
//     with a Pong; after -warmup untimed round trips, -n timed ones give
//     the mean round-trip time.
//   - throughput: player 0 sends -m Data messages to player 1 without
//     waiting; player 1 checks that they arrive in order (messages between
//     one sender and one receiver are FIFO) and replies once, when the
//     last one has arrived. The time from the first send to the reply
//     gives the rate.
//
// With -p 1 there is no second PE: both players live on PE 0, which
// measures the runtime's local path instead, and the output says so
// (between=PE0,PE0 note=same-PE). With more than two PEs the others stay
// idle.
//
// Run it with
//
//	go run ./examples/pingpong -p 2
//	go run ./examples/pingpong -p 2 -n 100000 -m 1000000
//
// The runtime takes its flags (-p N) anywhere on the line. The last line is
// "pingpong: ok roundtrips=... latency_us=... msgs=... throughput_msgs_per_s=... between=PE0,PE1",
// or "pingpong: FAILED ..." with a non-zero exit code.
package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/charmgo/charm/array"
	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/internal/exutil"
)

// out is where the program prints; the test replaces it.
var out io.Writer = os.Stdout

// Main is the main chare.
type Main struct {
	chare.Chare[Main]
	lat LatencyResult
	thr ThroughputResult
}

// Player is one end of the game: element 0 serves, element 1 returns.
type Player struct {
	array.Element[Player, int]

	// Latency phase, on player 0.
	rounds, warmup int
	pongs          int
	start          time.Time
	latDone        chare.Callback

	// Throughput phase.
	thrDone  chare.Callback // on player 0
	received int            // on player 1
	disorder int            // on player 1: messages out of sequence
}

// ServeMsg starts the latency phase on player 0.
type ServeMsg struct {
	Rounds, Warmup int
	Done           chare.Callback // gets a LatencyResult
}

// Ball is the small message of the latency phase.
type Ball struct{ Seq int }

// LatencyResult is the outcome of the latency phase.
type LatencyResult struct {
	Rounds  int
	Elapsed time.Duration
}

// BlastMsg starts the throughput phase on player 0.
type BlastMsg struct {
	Count int
	Done  chare.Callback // gets a ThroughputResult
}

// DataMsg is one message of the throughput phase.
type DataMsg struct{ Seq, Total int }

// AckMsg is player 1's reply once every DataMsg has arrived.
type AckMsg struct{ Received, OutOfOrder, PE int }

// ThroughputResult is the outcome of the throughput phase.
type ThroughputResult struct {
	Msgs, OutOfOrder int
	Elapsed          time.Duration
	From, To         int // the PEs of player 0 and player 1
}

func init() {
	chare.Register[Main]()
	// The players keep their counters in unexported fields: they never
	// migrate (a load balancer leaves them where they are).
	chare.Register[Player]()
}

// onePEEach places player i on PE i; with one PE, both on PE 0. It is a
// named map so that a job of several processes (-nodes) can place them.
var onePEEach = array.NamedMap("pingpong.onePEEach", array.MapFunc(func(i int, npes int) int { return i % npes }))

func main() { os.Exit(chare.Main((*Main).Start)) }

// Start runs both phases one after the other.
func (m *Main) Start(args []string) {
	fs := exutil.NewFlagSet("pingpong")
	rounds := fs.Int("n", 10000, "timed round trips")
	warmup := fs.Int("warmup", 100, "untimed round trips before the timed ones")
	msgs := fs.Int("m", 100000, "messages of the throughput phase")
	if !exutil.ParseNoArgs(out, m, fs, args) {
		return
	}
	switch {
	case *rounds < 1 || *warmup < 0 || *msgs < 1:
		m.fail(2, "bad arguments: want -n ≥ 1, -warmup ≥ 0 and -m ≥ 1")
		return
	}

	players, err := array.New[Player](m, array.Dims(2), array.WithMap(onePEEach))
	if err != nil {
		m.fail(1, "creating the players: %v", err)
		return
	}

	// Start runs as a threaded entry method: it can wait on futures while
	// PE 0 goes on running player 0.
	lat := chare.NewFuture[LatencyResult](m)
	if err := chare.Send(m, players.At(0), (*Player).Serve, ServeMsg{Rounds: *rounds, Warmup: *warmup, Done: lat.Callback()}); err != nil {
		m.fail(1, "starting the latency phase: %v", err)
		return
	}
	if m.lat, err = lat.Get(m); err != nil {
		m.fail(1, "latency phase: %v", err)
		return
	}

	thr := chare.NewFuture[ThroughputResult](m)
	if err := chare.Send(m, players.At(0), (*Player).Blast, BlastMsg{Count: *msgs, Done: thr.Callback()}); err != nil {
		m.fail(1, "starting the throughput phase: %v", err)
		return
	}
	if m.thr, err = thr.Get(m); err != nil {
		m.fail(1, "throughput phase: %v", err)
		return
	}

	switch {
	case m.lat.Rounds != *rounds:
		m.fail(1, "%d round trips were timed, want %d", m.lat.Rounds, *rounds)
		return
	case m.thr.Msgs != *msgs:
		m.fail(1, "player 1 received %d messages, want %d", m.thr.Msgs, *msgs)
		return
	case m.thr.OutOfOrder != 0:
		m.fail(1, "%d of %d messages arrived out of order", m.thr.OutOfOrder, m.thr.Msgs)
		return
	}
	between := fmt.Sprintf("PE%d,PE%d", m.thr.From, m.thr.To)
	if m.thr.From == m.thr.To {
		between += " note=same-PE"
	}
	latency := m.lat.Elapsed.Seconds() / float64(m.lat.Rounds) * 1e6
	rate := float64(m.thr.Msgs) / m.thr.Elapsed.Seconds()
	fmt.Fprintf(out, "pingpong: ok roundtrips=%d latency_us=%.2f msgs=%d throughput_msgs_per_s=%.0f between=%s\n",
		m.lat.Rounds, latency, m.thr.Msgs, rate, between)
	m.Exit(0)
}

// Serve starts the latency phase (player 0).
func (p *Player) Serve(s ServeMsg) {
	p.rounds, p.warmup, p.pongs, p.latDone = s.Rounds, s.Warmup, 0, s.Done
	p.start = time.Now()
	toPeer(p, (*Player).Ping, Ball{Seq: 0})
}

// Ping returns the ball (player 1).
func (p *Player) Ping(b Ball) { toPeer(p, (*Player).Pong, b) }

// Pong counts a round trip and serves again, or reports (player 0).
func (p *Player) Pong(b Ball) {
	if b.Seq != p.pongs {
		p.Abort(fmt.Errorf("pingpong: ball %d came back when %d was expected", b.Seq, p.pongs))
		return
	}
	p.pongs++
	if p.pongs == p.warmup {
		p.start = time.Now()
	}
	if p.pongs == p.warmup+p.rounds {
		res := LatencyResult{Rounds: p.rounds, Elapsed: time.Since(p.start)}
		if err := p.latDone.Send(p, res); err != nil {
			p.Abort(err)
		}
		return
	}
	toPeer(p, (*Player).Ping, Ball{Seq: p.pongs})
}

// Blast streams the throughput phase's messages (player 0).
func (p *Player) Blast(b BlastMsg) {
	p.thrDone = b.Done
	p.start = time.Now()
	peer := p.ThisProxy().At(1)
	for i := range b.Count {
		if err := chare.Send(p, peer, (*Player).Data, DataMsg{Seq: i, Total: b.Count}); err != nil {
			p.Abort(err)
			return
		}
	}
}

// Data receives one message and replies after the last one (player 1).
func (p *Player) Data(d DataMsg) {
	if d.Seq != p.received {
		p.disorder++
	}
	p.received++
	if p.received == d.Total {
		toPeer(p, (*Player).Ack, AckMsg{Received: p.received, OutOfOrder: p.disorder, PE: p.PE()})
	}
}

// Ack ends the throughput phase (player 0).
func (p *Player) Ack(a AckMsg) {
	res := ThroughputResult{Msgs: a.Received, OutOfOrder: a.OutOfOrder, Elapsed: time.Since(p.start), From: p.PE(), To: a.PE}
	if err := p.thrDone.Send(p, res); err != nil {
		p.Abort(err)
	}
}

// toPeer sends msg to the other player's entry method.
func toPeer[M any](p *Player, method func(*Player, M), msg M) {
	if err := chare.Send(p, p.ThisProxy().At(1-p.ThisIndex()), method, msg); err != nil {
		p.Abort(err)
	}
}

// fail prints the final FAILED line and ends the job with code.
func (m *Main) fail(code int, format string, args ...any) {
	exutil.Fail(out, m, "pingpong", code, format, args...)
}
