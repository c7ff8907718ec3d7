package actor

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/remote"
	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/charmgo/charm/actor/wire"
)

// These tests run two nodes of one job inside the test process: two
// runtimes, each with its own protoactor-go system and remote endpoint on
// loopback, talking over real gRPC connections.

// hop is a message that crosses nodes: it counts itself on arrival and
// goes on to the next PE until its budget is spent.
type hop struct {
	Left int
	Sum  int64
}

var hopsSeen atomic.Int64

func (h hop) WireKind() uint16                      { return 90 }
func (h hop) EncodeWire(enc *msgpack.Encoder) error { return enc.Encode(h) }
func (h hop) Deliver(pe *PE) {
	hopsSeen.Add(1)
	if h.Left == 0 {
		if h.Sum < 1<<40 { // chains marked with a large sum end quietly
			pe.Runtime().Exit(int(h.Sum % 100))
		}
		return
	}
	pe.Send((pe.ID()+1)%pe.NumPEs(), hop{Left: h.Left - 1, Sum: h.Sum + int64(pe.ID())})
}

func init() { registerStruct[hop](90, "test hop") }

// endpointAddr returns the address of this process's shared endpoint,
// which both nodes of an in-process job use (see shared.go).
func endpointAddr(t *testing.T) string {
	t.Helper()
	ep, err := sharedEndpoint(NodeConfig{Listen: "127.0.0.1:0"}, nil)
	require.NoError(t, err)
	return ep.sys.Address()
}

type twoNodes struct {
	rt0, rt1 *Runtime
}

// startTwo starts a job of two nodes with pes PEs in this process; boot
// runs on PE 0 once both have joined.
func startTwo(t *testing.T, pes int, token string, tls *TLSFiles, boot func(*PE)) twoNodes {
	t.Helper()
	return startTwoConfig(t, Config{PEs: pes}, token, tls, boot)
}

// startTwoConfig is startTwo with the rest of the configuration (bounds)
// given in base; adjust, if given, changes both nodes' NodeConfig.
func startTwoConfig(t *testing.T, base Config, token string, tls *TLSFiles, boot func(*PE), adjust ...func(*NodeConfig)) twoNodes {
	t.Helper()
	addr0 := endpointAddr(t)
	var two twoNodes
	errs := make(chan error, 2)
	go func() {
		cfg := base
		cfg.Node = &NodeConfig{Node: 0, Nodes: 2, Token: token, TLS: tls}
		for _, a := range adjust {
			a(cfg.Node)
		}
		rt, err := Start(cfg, boot)
		two.rt0 = rt
		errs <- err
	}()
	go func() {
		cfg := base
		cfg.Node = &NodeConfig{Node: 1, Nodes: 2, Join: addr0, Token: token, TLS: tls}
		for _, a := range adjust {
			a(cfg.Node)
		}
		rt, err := Start(cfg, boot)
		two.rt1 = rt
		errs <- err
	}()
	for i := 0; i < 2; i++ {
		select {
		case err := <-errs:
			require.NoError(t, err)
		case <-time.After(20 * time.Second):
			t.Fatal("the two nodes did not assemble within 20 s")
		}
	}
	return two
}

// wait returns both nodes' exit codes and errors, failing after a deadline.
func (two twoNodes) wait(t *testing.T) (codes [2]int, errs [2]error) {
	t.Helper()
	type res struct {
		i    int
		code int
		err  error
	}
	ch := make(chan res, 2)
	for i, rt := range []*Runtime{two.rt0, two.rt1} {
		go func(i int, rt *Runtime) {
			code, err := rt.Wait()
			ch <- res{i, code, err}
		}(i, rt)
	}
	for k := 0; k < 2; k++ {
		select {
		case r := <-ch:
			codes[r.i], errs[r.i] = r.code, r.err
		case <-time.After(20 * time.Second):
			t.Fatal("the job did not end on both nodes within 20 s")
		}
	}
	return
}

func TestTwoNodesCarryMessagesAndExit(t *testing.T) {
	hopsSeen.Store(0)
	const hops = 1000
	two := startTwo(t, 4, NewToken(), nil, func(pe *PE) { pe.Send(1, hop{Left: hops}) })
	require.Equal(t, 2, two.rt0.NumNodes())
	require.Equal(t, []bool{true, true, false, false}, []bool{two.rt0.IsLocal(0), two.rt0.IsLocal(1), two.rt0.IsLocal(2), two.rt0.IsLocal(3)})
	codes, errs := two.wait(t)
	require.NoError(t, errs[0])
	require.NoError(t, errs[1])
	// The hop visits PEs 1,2,3,0,1,... adding each PE's number: the sum
	// decides the exit code, which both nodes must report.
	var sum int64
	for i := 0; i < hops; i++ {
		sum += int64((1 + i) % 4)
	}
	require.Equal(t, [2]int{int(sum % 100), int(sum % 100)}, codes)
	require.EqualValues(t, hops+1, hopsSeen.Load())
}

func TestTwoNodesQuiescence(t *testing.T) {
	hopsSeen.Store(0)
	var seenAtQD atomic.Int64
	two := startTwo(t, 4, NewToken(), nil, func(pe *PE) {
		// Chains that never exit: quiescence must wait for all of them.
		for i := 0; i < 4; i++ {
			pe.Send(i, hop{Left: 200 + i, Sum: 1 << 40})
		}
		pe.DetectQuiescence(func(pe *PE) {
			seenAtQD.Store(hopsSeen.Load())
			pe.Runtime().Exit(0)
		})
	})
	codes, errs := two.wait(t)
	require.NoError(t, errs[0])
	require.NoError(t, errs[1])
	require.Equal(t, [2]int{0, 0}, codes)
	// Every hop of every chain happened before quiescence was declared.
	want := int64(0)
	for i := 0; i < 4; i++ {
		want += int64(200 + i + 1)
	}
	require.Equal(t, want, seenAtQD.Load())
}

func TestLinkRejectsCorruptAndForeignFrames(t *testing.T) {
	token := NewToken()
	gate := make(chan struct{})
	two := startTwo(t, 2, token, nil, func(pe *PE) {
		go func() {
			<-gate
			pe.Runtime().PE(0).PostControl(funcMsg(func(pe *PE) { pe.Runtime().Exit(0) }))
		}()
	})
	ns0, ns1 := two.rt0.node, two.rt1.node
	send := func(b []byte) { two.rt0.sys.Root.Send(ns0.links[1], &wrapperspb.BytesValue{Value: b}) }
	_ = ns0
	good, err := wire.AppendFrame(nil, &wire.Frame{Kind: wire.KindBeat, Token: token})
	require.NoError(t, err)
	foreign, err := wire.AppendFrame(nil, &wire.Frame{Kind: wire.KindBeat, Token: "not the job's", From: 0})
	require.NoError(t, err)
	send([]byte{0x93, 0x01})             // truncated
	send([]byte("garbage, not msgpack")) // garbage
	send(append([]byte{0x98, 0x07}, good[2:]...))
	send(foreign)
	require.Eventually(t, func() bool { return ns1.Rejected.Load() >= 4 }, 10*time.Second, 5*time.Millisecond,
		"node 1 rejected %d frames", ns1.Rejected.Load())
	require.False(t, two.rt1.Stopped(), "a bad frame must not stop the job")
	close(gate)
	_, errs := two.wait(t)
	require.NoError(t, errs[0])
	require.NoError(t, errs[1])
}

func TestRawGRPCClientIsRefused(t *testing.T) {
	gate := make(chan struct{})
	two := startTwo(t, 2, NewToken(), nil, func(pe *PE) {
		go func() {
			<-gate
			pe.Runtime().PE(0).PostControl(funcMsg(func(pe *PE) { pe.Runtime().Exit(0) }))
		}()
	})
	conn, err := grpc.Dial(two.rt1.Address(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	stream, err := remote.NewRemotingClient(conn).Receive(ctx)
	if err == nil {
		// Send may already fail with io.EOF once the server refused the
		// stream; the refusal's status comes with Recv.
		_ = stream.Send(&remote.RemoteMessage{MessageType: &remote.RemoteMessage_ConnectRequest{ConnectRequest: &remote.ConnectRequest{
			ConnectionType: &remote.ConnectRequest_ServerConnection{ServerConnection: &remote.ServerConnection{SystemId: "intruder", Address: "127.0.0.1:1"}}}}})
		_, err = stream.Recv()
	}
	require.Error(t, err)
	require.Equal(t, codes.Unauthenticated, status.Code(err), "%v", err)
	close(gate)
	_, errs := two.wait(t)
	require.NoError(t, errs[0])
}

func TestNodeWithAnotherProgramIsRefused(t *testing.T) {
	addr0 := endpointAddr(t)
	tok := NewToken()
	errs := make(chan error, 2)
	go func() {
		_, err := Start(Config{PEs: 2, Node: &NodeConfig{Node: 0, Nodes: 2, Token: tok, Fingerprint: "a", JoinTimeout: 5 * time.Second}}, func(*PE) {})
		errs <- err
	}()
	go func() {
		_, err := Start(Config{PEs: 2, Node: &NodeConfig{Node: 1, Nodes: 2, Join: addr0, Token: tok, Fingerprint: "b", JoinTimeout: 5 * time.Second}}, func(*PE) {})
		errs <- err
	}()
	var got []error
	for i := 0; i < 2; i++ {
		select {
		case err := <-errs:
			got = append(got, err)
		case <-time.After(20 * time.Second):
			t.Fatal("Start did not return")
		}
	}
	require.Error(t, got[0])
	require.Error(t, got[1])
	require.ErrorContains(t, errorsJoined(got), "runs another program")
}

func errorsJoined(es []error) error {
	var s string
	for _, e := range es {
		if e != nil {
			s += e.Error() + "; "
		}
	}
	return &joinedErr{s}
}

type joinedErr struct{ s string }

func (e *joinedErr) Error() string { return e.s }

func TestLostNodeAbortsTheOthers(t *testing.T) {
	addr0 := endpointAddr(t)
	tok := NewToken()
	var rt0, rt1 *Runtime
	errs := make(chan error, 2)
	fast := func(n int, join string) *NodeConfig {
		return &NodeConfig{Node: n, Nodes: 2, Join: join, Token: tok,
			Beat: 50 * time.Millisecond, FailAfter: 500 * time.Millisecond}
	}
	go func() {
		var err error
		rt0, err = Start(Config{PEs: 4, Node: fast(0, "")}, func(*PE) {})
		errs <- err
	}()
	go func() {
		var err error
		rt1, err = Start(Config{PEs: 4, Node: fast(1, addr0)}, func(*PE) {})
		errs <- err
	}()
	for i := 0; i < 2; i++ {
		require.NoError(t, <-errs)
	}
	// Node 1 falls silent without a word: its heartbeats stop (the
	// endpoint, shared in this process, stays; tests/multi kills a real
	// process).
	lost := time.Now()
	rt1.node.exiting.Store(true)
	rt1.finish(1, nil)
	select {
	case <-rt0.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("node 0 did not notice the loss of node 1 within 10 s")
	}
	code, err := rt0.Wait()
	require.Equal(t, 1, code)
	require.ErrorContains(t, err, "lost node 1 (PEs 2..3")
	require.Less(t, time.Since(lost), 10*time.Second)
	_, _ = rt1.Wait()
}

// syncBuf is a log destination that gRPC's goroutines may share.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestRefusedCallsAndForeignConnectionsAreCountedAndLogged: a gRPC call
// without the job's token and a connection that does not speak gRPC are
// counted, and logged (with a logger, as -v gives) with the peer's
// address, at most once a second for each kind.
func TestRefusedCallsAndForeignConnectionsAreCountedAndLogged(t *testing.T) {
	var logs syncBuf
	prev := guard.log.Load()
	t.Cleanup(func() { guard.log.Store(prev) })
	// What Start does with Config.Logger (the endpoint is shared).
	_, err := sharedEndpoint(NodeConfig{Listen: "127.0.0.1:0"}, slog.New(slog.NewTextHandler(&logs, nil)))
	require.NoError(t, err)
	gate := make(chan struct{})
	two := startTwo(t, 2, NewToken(), nil, func(pe *PE) {
		go func() {
			<-gate
			pe.Runtime().PE(0).PostControl(funcMsg(func(pe *PE) { pe.Runtime().Exit(0) }))
		}()
	})
	before := two.rt1.Refusals()
	began := time.Now()

	var local string
	conn, err := grpc.Dial(two.rt1.Address(), grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) {
			c, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
			if err == nil {
				local = c.LocalAddr().String()
			}
			return c, err
		}))
	require.NoError(t, err)
	defer conn.Close()
	const calls = 5
	for i := 0; i < calls; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		stream, err := remote.NewRemotingClient(conn).Receive(ctx)
		if err == nil {
			_, err = stream.Recv()
		}
		cancel()
		require.Equal(t, codes.Unauthenticated, status.Code(err), "%v", err)
	}

	raw, err := net.Dial("tcp", two.rt1.Address())
	require.NoError(t, err)
	rawLocal := raw.LocalAddr().String()
	require.NoError(t, raw.SetDeadline(time.Now().Add(10*time.Second)))
	_, err = raw.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
	require.NoError(t, err)
	_, err = io.Copy(io.Discard, raw) // until the server hangs up (EOF or a reset)
	var ne net.Error
	require.False(t, errors.As(err, &ne) && ne.Timeout(), "the server must close a connection that does not speak gRPC: %v", err)
	raw.Close()
	elapsed := time.Since(began)

	after := two.rt1.Refusals()
	require.Equal(t, int64(calls), after.Calls-before.Calls)
	require.Equal(t, int64(1), after.Connections-before.Connections)
	out := logs.String()
	require.Contains(t, out, "refused a gRPC call without the job's token")
	require.Contains(t, out, "peer="+local)
	require.Contains(t, out, "refused a connection from outside the job")
	require.Contains(t, out, "peer="+rawLocal)
	require.Contains(t, out, "not gRPC")
	lines := strings.Count(out, "refused a gRPC call")
	require.LessOrEqual(t, lines, 1+int(elapsed/logEvery), "rate limit: %d lines in %v:\n%s", lines, elapsed, out)

	close(gate)
	_, errs := two.wait(t)
	require.NoError(t, errs[0])
}

// TestFailedHandshakeIsAForeignConnection: a TLS server's handshake with
// a client that sends garbage fails, and is counted.
func TestFailedHandshakeIsAForeignConnection(t *testing.T) {
	before := guard.conns.Load()
	client, server := net.Pipe()
	go func() {
		_, _ = client.Write([]byte("this is not a TLS client hello, not at all"))
		_, _ = io.Copy(io.Discard, client)
	}()
	c := guardCreds{credentials.NewTLS(&tls.Config{})}
	_, _, err := c.ServerHandshake(server)
	require.Error(t, err)
	server.Close()
	client.Close()
	require.Equal(t, before+1, guard.conns.Load())
}

// TestLogLimit: one line a second, and the next line says how many were
// held back.
func TestLogLimit(t *testing.T) {
	var l logLimit
	t0 := time.Unix(1000, 0)
	for _, c := range []struct {
		at      time.Duration
		ok      bool
		skipped int
	}{
		{0, true, 0},
		{100 * time.Millisecond, false, 0},
		{900 * time.Millisecond, false, 0},
		{time.Second, true, 2},
		{1500 * time.Millisecond, false, 0},
		{5 * time.Second, true, 1},
		{6 * time.Second, true, 0},
	} {
		ok, skipped := l.allow(t0.Add(c.at))
		require.Equal(t, c.ok, ok, "at %v", c.at)
		require.Equal(t, c.skipped, skipped, "at %v", c.at)
	}
}

// A heartbeat bound that could not work (a negative beat, a silence bound
// no longer than the beat) is refused when the node starts, naming both.
func TestNodeHeartbeatBoundsChecked(t *testing.T) {
	for _, c := range []struct {
		beat, failAfter time.Duration
		want            string
	}{
		{-time.Second, 0, "heartbeats every -1s and a node lost after 3s of silence"},
		{time.Second, 500 * time.Millisecond, "heartbeats every 1s and a node lost after 500ms of silence"},
		{0, 300 * time.Millisecond, "heartbeats every 300ms and a node lost after 300ms of silence"},
		{0, -time.Second, "heartbeats every 300ms and a node lost after -1s of silence"},
	} {
		_, err := Start(Config{PEs: 2, Node: &NodeConfig{Node: 0, Nodes: 2, Token: NewToken(), Beat: c.beat, FailAfter: c.failAfter}}, func(*PE) {})
		require.ErrorContains(t, err, c.want)
	}
}
