package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"time"

	pa "github.com/asynkron/protoactor-go/actor"
	"github.com/asynkron/protoactor-go/remote"
	"github.com/vmihailenco/msgpack/v5"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/charmgo/charm/actor"
	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/group"
)

// The remote benchmarks run jobs of two processes (this program launches a
// copy of itself as node 1). Their baselines are raw protoactor-go remote
// sends between this process and a copy of it started as a plain peer
// (rawPeer): one msgpack-encoded message per BytesValue (the plain way to
// send non-protobuf data through protoactor-go's remote layer, see
// docs/design/overview.md), and request/response for the round trip.

func init() {
	chare.Register[sink](chare.Fast((*sink).Take))
	registerPaired("remote/oneway", benchRemoteOneway)
	registerPaired("remote/pingpong", benchRemotePingpong)
	registerPaired("remote/pingpong/sock", benchRemoteSock)

	register("remote/broadcast", benchRemoteBroadcast)
	register("remote/reduction", benchRemoteReduction)
}

// sink is a group: the branch on PE 1 (node 1) counts the messages from PE
// 0 and answers pings.
type sink struct {
	group.Branch[sink]
	got, want int
	done      chare.Callback
}

type sinkStart struct {
	N    int
	Done chare.Callback
}

func (s *sink) Expect(m sinkStart) { s.got, s.want, s.done = 0, m.N, m.Done }

func (s *sink) Take(m m2mMsg) {
	s.got++
	if s.got == s.want {
		_ = s.done.Send(s, s.got)
	}
}

// Ping returns its argument: a sync entry method, for round trips.
func (s *sink) Ping(n int64) int64 { return n }

// rallyStart starts a rally of N round trips between the branches on PE 0
// and PE 1, played by entry methods alone (no thread, no future).
type rallyStart struct {
	N    int64
	Done chare.Callback
}

// Rally, on PE 0, serves the first ball.
func (s *sink) Rally(m rallyStart) {
	s.want, s.done = int(m.N), m.Done
	_ = chare.Send(s, s.ThisProxy().At(1), (*sink).Ball, int64(0))
}

// Ball is the rally's message: PE 1 returns it, PE 0 serves the next one
// until the N-th comes back.
func (s *sink) Ball(n int64) {
	if s.PE() != 0 {
		_ = chare.Send(s, s.ThisProxy().At(0), (*sink).Ball, n)
		return
	}
	if n+1 < int64(s.want) {
		_ = chare.Send(s, s.ThisProxy().At(1), (*sink).Ball, n+1)
		return
	}
	_ = s.done.Send(s, n+1)
}

// benchRemoteOneway streams messages from PE 0 to PE 1 (node 1) and, in
// the same run, the same number through raw protoactor-go remote to a peer
// process, alternating: A B A B ...
func benchRemoteOneway(cfg config) ([]figure, error) {
	n := int(500_000 * cfg.scale)
	return pairedOneway(cfg, "remote/oneway", n, func(m *benchMain) (func() (float64, error), error) {
		g, err := group.New[sink](m)
		if err != nil {
			return nil, err
		}
		return func() (float64, error) { return onewayRun(m, g, n) }, nil
	})
}

// pairedOneway runs the pairs of a remote/oneway line in a job of 2 PEs on
// 2 nodes: the stream that setup prepares (in node 0's main), then the
// same n messages through raw protoactor-go remote to a peer process,
// alternating.
func pairedOneway(cfg config, name string, n int, setup func(m *benchMain) (func() (float64, error), error)) ([]figure, error) {
	fig := figure{name: name, unit: "msgs/s"}
	var p *peer
	defer func() {
		if p != nil {
			p.stop()
		}
	}()
	err := runNodes(2, 2, name, func(m *benchMain) error {
		run, err := setup(m)
		if err != nil {
			return err
		}
		if p, err = startPeer(); err != nil { // only node 0 runs this
			return err
		}
		for range pairsOf(cfg) {
			v, err := run()
			if err != nil {
				return err
			}
			b, err := p.oneway(n)
			if err != nil {
				return err
			}
			fig.value, fig.baseline = append(fig.value, v), append(fig.baseline, b)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return []figure{fig}, nil
}

// onewayRun sends n messages from PE 0 to the sink on PE 1 and returns the
// rate at which node 1 counted them.
func onewayRun(m *benchMain, g group.Proxy[sink], n int) (float64, error) {
	f := chare.NewFuture[int](m)
	if err := chare.Send(m, g.At(1), (*sink).Expect, sinkStart{N: n, Done: f.Callback()}); err != nil {
		return 0, err
	}
	// A round trip first, so that Expect has run before the stream.
	ping, err := chare.Call(m, g.At(1), (*sink).Ping, int64(0))
	if err == nil {
		_, err = ping.Get(m)
	}
	if err != nil {
		return 0, err
	}
	t0 := time.Now()
	for i := 0; i < n; i++ {
		if err := chare.Send(m, g.At(1), (*sink).Take, m2mMsg{From: 0, Seq: int64(i)}); err != nil {
			return 0, err
		}
	}
	got, err := f.Get(m)
	if err != nil {
		return 0, err
	}
	if got != n {
		return 0, fmt.Errorf("node 1 counted %d of %d messages", got, n)
	}
	return float64(n) / time.Since(t0).Seconds(), nil
}

// againstPeer measures a raw protoactor-go baseline against a fresh peer
// process and completes r with it.
func againstPeer(cfg config, r result, higherIsBetter bool, raw func(*peer) (float64, error)) ([]result, error) {
	p, err := startPeer()
	if err != nil {
		return nil, err
	}
	defer p.stop()
	if r.baseline, err = best(cfg.reps, higherIsBetter, func() (float64, error) { return raw(p) }); err != nil {
		return nil, err
	}
	return []result{r}, nil
}

// benchRemotePingpong measures round trips between PE 0 and PE 1 (node 1)
// against raw protoactor-go request/response round trips to a peer
// process, in interleaved pairs. Two lines: remote/pingpong, a sync call
// from the main chare's thread and a wait on its future (the raw baseline
// waits on a future too), and remote/pingpong/entry, a rally of entry
// methods between two group branches (as examples/pingpong plays it).
func benchRemotePingpong(cfg config) ([]figure, error) {
	n := int(5_000 * cfg.scale)
	call := figure{name: "remote/pingpong", unit: "us"}
	entry := figure{name: "remote/pingpong/entry", unit: "us"}
	var p *peer
	defer func() {
		if p != nil {
			p.stop()
		}
	}()
	err := runNodes(2, 2, "remote/pingpong", func(m *benchMain) error {
		g, err := group.New[sink](m)
		if err != nil {
			return err
		}
		if p, err = startPeer(); err != nil {
			return err
		}
		if _, err := p.pingpong(100); err != nil { // connect and warm up
			return err
		}
		for range pairsOf(cfg) {
			v, err := callPingpong(m, g, n)
			if err != nil {
				return err
			}
			b, err := p.pingpong(n)
			if err != nil {
				return err
			}
			call.value, call.baseline = append(call.value, v), append(call.baseline, b)
			if v, err = rallyPingpong(m, g, n); err != nil {
				return err
			}
			if b, err = p.pingpong(n); err != nil {
				return err
			}
			entry.value, entry.baseline = append(entry.value, v), append(entry.baseline, b)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return []figure{call, entry}, nil
}

// benchRemoteSock measures the same-host data path (Unix sockets between
// the nodes, actor/sock.go) against protoactor-go's gRPC path, each a job
// of its own, in interleaved pairs: remote/pingpong/sock, the rally of
// entry methods; remote/pingpong/sock/call, the sync calls; and
// remote/oneway/sock, the stream of one-way messages (msgs/s). The
// environment decides the path of both nodes of a job (the launched node
// inherits it).
func benchRemoteSock(cfg config) ([]figure, error) {
	n := int(5_000 * cfg.scale)
	m1 := int(300_000 * cfg.scale)
	entry := figure{name: "remote/pingpong/sock", unit: "us"}
	call := figure{name: "remote/pingpong/sock/call", unit: "us"}
	oneway := figure{name: "remote/oneway/sock", unit: "msgs/s"}
	measure := func(sock bool) (e, c, o float64, err error) {
		v := "off"
		if sock {
			v = "on"
		}
		if !chare.IsLaunchedNode() { // a launched node has node 0's setting
			if err := os.Setenv(actor.EnvLocalSocket, v); err != nil {
				return 0, 0, 0, err
			}
		}
		err = runNodes(2, 2, "remote/pingpong/sock", func(m *benchMain) error {
			g, err := group.New[sink](m)
			if err != nil {
				return err
			}
			if _, err := rallyPingpong(m, g, 100); err != nil { // warm up
				return err
			}
			if e, err = rallyPingpong(m, g, n); err != nil {
				return err
			}
			if c, err = callPingpong(m, g, n); err != nil {
				return err
			}
			o, err = onewayRun(m, g, m1)
			return err
		})
		return e, c, o, err
	}
	if old, ok := os.LookupEnv(actor.EnvLocalSocket); ok {
		defer os.Setenv(actor.EnvLocalSocket, old)
	} else {
		defer os.Unsetenv(actor.EnvLocalSocket)
	}
	for range pairsOf(cfg) {
		e1, c1, o1, err := measure(true)
		if err != nil {
			return nil, err
		}
		e0, c0, o0, err := measure(false)
		if err != nil {
			return nil, err
		}
		entry.value, entry.baseline = append(entry.value, e1), append(entry.baseline, e0)
		call.value, call.baseline = append(call.value, c1), append(call.baseline, c0)
		oneway.value, oneway.baseline = append(oneway.value, o1), append(oneway.baseline, o0)
	}
	return []figure{entry, call, oneway}, nil
}

// callPingpong makes n sync calls from the main chare to PE 1 and returns
// the mean round trip in µs.
func callPingpong(m *benchMain, g group.Proxy[sink], n int) (float64, error) {
	t0 := time.Now()
	for i := 0; i < n; i++ {
		f, err := chare.Call(m, g.At(1), (*sink).Ping, int64(i))
		if err != nil {
			return 0, err
		}
		v, err := f.Get(m)
		if err != nil {
			return 0, err
		}
		if v != int64(i) {
			return 0, fmt.Errorf("ping %d came back as %d", i, v)
		}
	}
	return time.Since(t0).Seconds() * 1e6 / float64(n), nil
}

// rallyPingpong plays a rally of n round trips between the branches on PE
// 0 and PE 1 and returns the mean round trip in µs.
func rallyPingpong(m *benchMain, g group.Proxy[sink], n int) (float64, error) {
	f := chare.NewFuture[int64](m)
	t0 := time.Now()
	if err := chare.Send(m, g.At(0), (*sink).Rally, rallyStart{N: int64(n), Done: f.Callback()}); err != nil {
		return 0, err
	}
	got, err := f.Get(m)
	if err != nil {
		return 0, err
	}
	if got != int64(n) {
		return 0, fmt.Errorf("the rally ended after %d of %d round trips", got, n)
	}
	return time.Since(t0).Seconds() * 1e6 / float64(n), nil
}

// remote/broadcast and remote/reduction: the runtime benchmarks on 2 × 2
// PEs, against the same job on 1 × 4 PEs in the same run.
func benchRemoteBroadcast(cfg config) ([]result, error) {
	two, err := measureBroadcast(cfg, 4, 2, "remote/broadcast")
	if err != nil {
		return nil, err
	}
	one, err := measureBroadcast(cfg, 4, 1, "")
	if err != nil {
		return nil, err
	}
	return []result{{"remote/broadcast", two, "bcasts/s", one}}, nil
}

func benchRemoteReduction(cfg config) ([]result, error) {
	two, err := measureReduction(cfg, 4, 2, "remote/reduction")
	if err != nil {
		return nil, err
	}
	one, err := measureReduction(cfg, 4, 1, "")
	if err != nil {
		return nil, err
	}
	return []result{{"remote/reduction", two, "us", one}}, nil
}

// ---- the raw protoactor-go peer ----

const peerEnv = "CHARM_BENCH_RAW_PEER"

// rawPeer is the whole of a peer process: a protoactor-go system with a
// remote endpoint and one actor, "sink", that counts one-way messages and
// answers requests. It prints its address on the first line of its output.
func rawPeer() {
	sys := pa.NewActorSystem(pa.WithLoggerFactory(func(*pa.ActorSystem) *slog.Logger {
		return slog.New(slog.NewTextHandler(io.Discard, nil))
	}))
	r := remote.NewRemote(sys, remote.Configure("127.0.0.1", 0))
	r.Start()
	var back *pa.PID
	var want, got int64
	_, err := sys.Root.SpawnNamed(pa.PropsFromFunc(func(c pa.Context) {
		switch m := c.Message().(type) {
		case *wrapperspb.StringValue: // where to report: "address name"
			addr, name, _ := strings.Cut(m.Value, " ")
			back = pa.NewPID(addr, name)
		case *wrapperspb.Int64Value:
			if c.Sender() != nil {
				c.Respond(m) // a ping
				return
			}
			want, got = m.Value, 0 // a new stream
		case *wrapperspb.BytesValue:
			var msg m2mMsg
			if msgpack.Unmarshal(m.Value, &msg) == nil {
				got++
			}
			if got == want {
				c.Send(back, &wrapperspb.Int64Value{Value: got})
			}
		}
	}), "sink")
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	fmt.Println(sys.Address())
	_, _ = io.Copy(io.Discard, os.Stdin) // until the parent closes it
	os.Exit(0)
}

type peer struct {
	cmd   *exec.Cmd
	stdin io.Closer
	sys   *pa.ActorSystem
	sink  *pa.PID
	done  chan int64
}

var peerSys struct {
	sys  *pa.ActorSystem
	done chan int64
}

func startPeer() (*peer, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), peerEnv+"=1")
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		return nil, fmt.Errorf("raw peer: %w", err)
	}
	addr := strings.TrimSpace(line)
	if peerSys.sys == nil { // one endpoint for this process's baselines
		peerSys.sys = pa.NewActorSystem(pa.WithLoggerFactory(func(*pa.ActorSystem) *slog.Logger {
			return slog.New(slog.NewTextHandler(io.Discard, nil))
		}))
		r := remote.NewRemote(peerSys.sys, remote.Configure("127.0.0.1", 0))
		r.Start()
		peerSys.done = make(chan int64, 1)
		if _, err := peerSys.sys.Root.SpawnNamed(pa.PropsFromFunc(func(c pa.Context) {
			if m, ok := c.Message().(*wrapperspb.Int64Value); ok {
				peerSys.done <- m.Value
			}
		}), "done"); err != nil {
			return nil, err
		}
	}
	p := &peer{cmd: cmd, stdin: in, sys: peerSys.sys, sink: pa.NewPID(addr, "sink"), done: peerSys.done}
	p.sys.Root.Send(p.sink, &wrapperspb.StringValue{Value: p.sys.Address() + " done"})
	return p, nil
}

func (p *peer) stop() {
	_ = p.stdin.Close()
	_ = p.cmd.Wait()
}

// oneway streams n msgpack-encoded messages, one per BytesValue, and waits
// for the peer's count.
func (p *peer) oneway(n int) (float64, error) {
	p.sys.Root.Send(p.sink, &wrapperspb.Int64Value{Value: int64(n)})
	// the stream's count must be set before the stream: a round trip
	if _, err := p.sys.Root.RequestFuture(p.sink, &wrapperspb.Int64Value{Value: -1}, 10*time.Second).Result(); err != nil {
		return 0, err
	}
	t0 := time.Now()
	for i := 0; i < n; i++ {
		b, err := msgpack.Marshal(m2mMsg{From: 0, Seq: int64(i)})
		if err != nil {
			return 0, err
		}
		p.sys.Root.Send(p.sink, &wrapperspb.BytesValue{Value: b})
	}
	select {
	case got := <-p.done:
		if got != int64(n) {
			return 0, fmt.Errorf("the raw peer counted %d of %d", got, n)
		}
	case <-time.After(2 * time.Minute):
		return 0, errors.New("the raw peer did not count every message within 2 minutes (protoactor-go remote delivery is at-most-once)")
	}
	return float64(n) / time.Since(t0).Seconds(), nil
}

// pingpong makes n request/response round trips.
func (p *peer) pingpong(n int) (float64, error) {
	t0 := time.Now()
	for i := 0; i < n; i++ {
		r, err := p.sys.Root.RequestFuture(p.sink, &wrapperspb.Int64Value{Value: int64(i)}, 10*time.Second).Result()
		if err != nil {
			return 0, err
		}
		if v, ok := r.(*wrapperspb.Int64Value); !ok || v.Value != int64(i) {
			return 0, fmt.Errorf("raw ping %d came back as %v", i, r)
		}
	}
	return time.Since(t0).Seconds() * 1e6 / float64(n), nil
}
