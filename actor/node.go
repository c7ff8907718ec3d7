package actor

import (
	"bytes"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	pa "github.com/asynkron/protoactor-go/actor"
	"github.com/asynkron/protoactor-go/eventstream"
	"github.com/asynkron/protoactor-go/remote"
	"github.com/vmihailenco/msgpack/v5"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/charmgo/charm/actor/wire"
	"github.com/charmgo/charm/internal/mpcheck"
)

// NodeConfig places this process in a job of several processes (nodes).
// Every node runs the same program; PEs are split between the nodes in
// contiguous ranges, node i holding PEs i·P/M up to (i+1)·P/M − 1.
type NodeConfig struct {
	Node  int // this process's number, 0..Nodes-1
	Nodes int
	// Listen is the address to listen on; "" means 127.0.0.1 on a free
	// port. Nodes listen on loopback unless told otherwise.
	Listen string
	// Join is node 0's address; nodes other than 0 need it.
	Join string
	// Token is the job's secret: a node must present it to join, and every
	// frame and gRPC call carries it.
	Token string
	// Fingerprint identifies the program (its registered chare types and
	// entry methods): a node running another program is refused.
	Fingerprint string
	// TLS, if set, makes every connection use TLS with this certificate
	// (each node presents it and trusts it).
	TLS *TLSFiles
	// Launch, on node 0, starts nodes 1..Nodes-1 on this machine by running
	// this command line (normally the program itself) with the job in its
	// environment. Nil means the other nodes are started by hand.
	Launch []string
	// NoLocalSocket keeps this node's messages to the other nodes of its
	// host on protoactor-go: without it, nodes on one host (one kernel
	// and network namespace) send each other their messages over
	// Unix-domain sockets in a private directory, and protoactor-go
	// carries the join, heartbeats and exit. Jobs with TLS never use the
	// sockets. The environment variable CHARMGO_LOCAL_SOCKET=off
	// (EnvLocalSocket) does the same as this field; a local launch
	// passes either on to the nodes it starts.
	NoLocalSocket bool
	// JoinTimeout bounds the wait for all nodes; 0 means 30 s.
	JoinTimeout time.Duration
	// Beat is the heartbeat period; a node silent for FailAfter is lost.
	// 0 means 300 ms and 3 s. FailAfter must be longer than Beat.
	Beat, FailAfter time.Duration
}

// TLSFiles names a PEM certificate and key.
type TLSFiles struct {
	Cert, Key string
}

// PERange returns the PEs of node n among m nodes and p PEs: [lo, hi).
func PERange(n, m, p int) (lo, hi int) { return n * p / m, (n + 1) * p / m }

// nodeState is the transport of a multi-process runtime.
type nodeState struct {
	cfg       NodeConfig
	rem       *remote.Remote
	link      *pa.PID   // this node's link actor, under a private name
	linkAlias *pa.PID   // the same actor under the name other nodes address
	links     []*pa.PID // every node's link actor, by node
	addrs     []string
	nodeOf    []int // node of each PE

	// The same-host data path (sock.go): this node's socket, nil if it
	// has none; node 0 gathers every node's socket path and host from
	// the hellos (under mu).
	sock         *sockState
	socks, hosts []string

	joined     chan error    // node 0: all ready; others: table received
	joinedDone chan struct{} // closed with the first send on joined
	joinOnce   sync.Once
	mu         sync.Mutex
	hellos     map[int]helloInfo
	readies    map[int]bool
	seen       []atomic.Int64 // unix nanos of the last frame from each node
	lost       []atomic.Bool  // nodes found lost (silent, disconnected, exited)
	exiting    atomic.Bool
	exitTo     []int         // nodes this one sent an exit frame (it ended the job); under mu
	gone       map[int]bool  // nodes that know the job ended (they acknowledged our exit frame or sent theirs, or their connection closed); under mu
	goneSig    chan struct{} // signalled when gone or lost changes
	sub        *eventstream.Subscription

	Rejected atomic.Int64 // frames rejected (corrupt, wrong token)

	// Frames longer than wire.MaxFrame travel in fragments: partID
	// numbers those this node sends, parts joins those each node sends
	// (under partsMu).
	partID  atomic.Uint64
	partsMu sync.Mutex
	parts   []*wire.Reassembler

	credit *remoteCredit // back-pressure towards the other nodes (rcredit.go)
}

// helloInfo is what a joining node tells node 0.
type helloInfo struct {
	Node        int
	Addr        string
	PEs         int
	Nodes       int
	Fingerprint string
	// The node's same-host socket and host (sock.go), "" for none.
	Sock, Host string `msgpack:",omitempty"`
}

// tableInfo is node 0's node table: every node's address, and its
// same-host socket and host ("" for none).
type tableInfo struct {
	Addrs, Socks, Hosts []string
}

// exitInfo is the body of an exit frame.
type exitInfo struct {
	Reason string
	Origin int
	// Panic is set for a job that a panic aborted, so that every node
	// returns a *PanicError (with the panic's value as text).
	Panic *wirePanic `msgpack:",omitempty"`
	// Lost lists the nodes the origin found lost: the receivers do not
	// wait for them either (and node 0 kills those it launched at once).
	Lost []int `msgpack:",omitempty"`
}

type wirePanic struct {
	PE          int
	What, Value string
	Stack       []byte
}

// RejectedFrames returns how many frames from the network this node
// rejected (undecodable, wrong version, wrong token).
func (rt *Runtime) RejectedFrames() int64 {
	if rt.node == nil {
		return 0
	}
	return rt.node.Rejected.Load()
}

// Node returns this process's node number (0 in a single-process job).
func (rt *Runtime) Node() int {
	if rt.node == nil {
		return 0
	}
	return rt.node.cfg.Node
}

// Address returns the address this node listens on ("" for one process).
func (rt *Runtime) Address() string {
	if rt.node == nil {
		return ""
	}
	return rt.sys.Address()
}

// linkName names the job's link actor of node n.
func (rt *Runtime) linkName(n int) string { return fmt.Sprintf("%s-link-%d", rt.prefix, n) }

// spawnLink starts the link actor and only then publishes it under name.
// protoactor-go adds a named actor to its registry before it gives the
// mailbox its dispatcher, so a frame arriving in between (a peer's hello,
// retried while this node starts) would race the spawn and could call a nil
// dispatcher. The actor is spawned under a private name, and the finished
// process is registered again under the name the other nodes address.
func (rt *Runtime) spawnLink(ns *nodeState, name string) error {
	pid, err := rt.sys.Root.SpawnNamed(pa.PropsFromFunc(rt.linkReceive), name+"-starting")
	if err != nil {
		return err
	}
	proc, ok := rt.sys.ProcessRegistry.GetLocal(pid.Id)
	if !ok {
		rt.sys.Root.Stop(pid)
		return fmt.Errorf("actor: the link actor %s stopped while it started", name)
	}
	// Under the public name, the process that handles data frames at once
	// (link.go) and passes the rest to the actor.
	alias, absent := rt.sys.ProcessRegistry.Add(&linkProcess{rt: rt, actor: proc, pid: pid}, name)
	if !absent {
		rt.sys.Root.Stop(pid)
		return fmt.Errorf("actor: the link actor %s exists already (%w)", name, pa.ErrNameExists)
	}
	ns.link, ns.linkAlias = pid, alias
	return nil
}

// startNode starts the remote layer and the link actor, then joins the job.
func (rt *Runtime) startNode(nc NodeConfig) error {
	if nc.Nodes < 1 || nc.Node < 0 || nc.Node >= nc.Nodes {
		return fmt.Errorf("actor: node %d of %d does not exist", nc.Node, nc.Nodes)
	}
	if nc.Nodes > rt.cfg.PEs {
		return fmt.Errorf("actor: %d nodes need at least %d PEs, not %d", nc.Nodes, nc.Nodes, rt.cfg.PEs)
	}
	if nc.Node > 0 && nc.Join == "" {
		return fmt.Errorf("actor: node %d needs the address of node 0 to join", nc.Node)
	}
	if nc.Listen == "" {
		nc.Listen = "127.0.0.1:0"
	}
	if nc.JoinTimeout == 0 {
		nc.JoinTimeout = 30 * time.Second
	}
	if nc.Beat == 0 {
		nc.Beat = 300 * time.Millisecond
	}
	if nc.FailAfter == 0 {
		nc.FailAfter = 3 * time.Second
	}
	if nc.Beat < 0 || nc.FailAfter <= nc.Beat {
		return fmt.Errorf("actor: heartbeats every %v and a node lost after %v of silence: want a positive beat shorter than the silence", nc.Beat, nc.FailAfter)
	}
	ns := &nodeState{cfg: nc, joined: make(chan error, 1), joinedDone: make(chan struct{}), hellos: map[int]helloInfo{}, readies: map[int]bool{},
		seen: make([]atomic.Int64, nc.Nodes), lost: make([]atomic.Bool, nc.Nodes), gone: map[int]bool{}, goneSig: make(chan struct{}, 1),
		links: make([]*pa.PID, nc.Nodes), addrs: make([]string, nc.Nodes), socks: make([]string, nc.Nodes), hosts: make([]string, nc.Nodes)}
	ns.credit = newRemoteCredit(nc.Nodes, rt.cfg.MaxRemoteInFlight)
	ns.nodeOf = make([]int, rt.cfg.PEs)
	ns.parts = make([]*wire.Reassembler, nc.Nodes)
	for n := 0; n < nc.Nodes; n++ {
		lo, hi := PERange(n, nc.Nodes, rt.cfg.PEs)
		for p := lo; p < hi; p++ {
			ns.nodeOf[p] = n
		}
		// One goroutine sends all the fragments of a frame: a PE's (data
		// frames) or one of the few that send the node's control frames.
		ns.parts[n] = &wire.Reassembler{MaxSize: rt.cfg.MaxRemoteMessage, MaxOpen: hi - lo + partSenders}
	}
	rt.node = ns
	ep, err := sharedEndpoint(nc, rt.cfg.Logger)
	if err != nil {
		return fmt.Errorf("actor: node %d: %w", nc.Node, err)
	}
	ns.rem = ep.rem
	if useLocalSocket(nc) {
		rt.startSock()
		if ns.sock != nil {
			ns.socks[nc.Node], ns.hosts[nc.Node] = ns.sock.path, ns.sock.host
		}
	}
	ns.addrs[nc.Node] = rt.sys.Address()
	ns.links[nc.Node] = pa.NewPID(rt.sys.Address(), rt.linkName(nc.Node))
	if err := rt.spawnLink(ns, rt.linkName(nc.Node)); err != nil {
		return err
	}
	ns.sub = rt.sys.EventStream.Subscribe(func(ev any) {
		t, ok := ev.(*remote.EndpointTerminatedEvent)
		switch {
		case !ok:
		case !rt.Stopped():
			// Through the link's mailbox: frames that arrived before the
			// connection closed (an exit frame, say) are handled first.
			rt.sys.Root.Send(ns.link, lostEndpoint{t.Address})
		default:
			// After the job, a peer that went away has our exit frame or
			// never will: either way, stop waiting for its acknowledgement.
			if n := ns.nodeAt(t.Address); n >= 0 {
				ns.knowsEnd(n)
			}
		}
	})
	if nc.Node == 0 {
		if nc.Nodes == 1 {
			return nil
		}
		if nc.Launch != nil {
			if err := rt.launch(nc.Launch, nc, ns.addrs[0]); err != nil {
				return err
			}
		}
	} else {
		ns.mu.Lock()
		ns.links[0] = pa.NewPID(nc.Join, rt.linkName(0))
		ns.mu.Unlock()
		body, _ := msgpack.Marshal(helloInfo{Node: nc.Node, Addr: ns.addrs[nc.Node], PEs: rt.cfg.PEs, Nodes: nc.Nodes, Fingerprint: nc.Fingerprint,
			Sock: ns.socks[nc.Node], Host: ns.hosts[nc.Node]})
		// Node 0 may not be up yet (nodes started by hand), and a message
		// to an endpoint that is not there is lost: say hello until the
		// node table arrives.
		go func() {
			tick := time.NewTicker(250 * time.Millisecond)
			defer tick.Stop()
			for {
				rt.sendFrame(0, &wire.Frame{Kind: wire.KindHello, Body: body})
				select {
				case <-ns.joinedDone:
					return
				case <-rt.done:
					return
				case <-tick.C:
				}
			}
		}()
	}
	select {
	case err := <-ns.joined:
		if err != nil {
			return err
		}
	case <-rt.done:
		return rt.exitErr
	case <-time.After(nc.JoinTimeout):
		return fmt.Errorf("actor: node %d: the job did not assemble within %v (%s)", nc.Node, nc.JoinTimeout, ns.missing())
	}
	now := time.Now().UnixNano()
	for i := range ns.seen {
		ns.seen[i].Store(now)
	}
	go rt.heartbeat()
	return nil
}

func (ns *nodeState) missing() string {
	ns.mu.Lock()
	defer ns.mu.Unlock()
	if ns.cfg.Node != 0 {
		return "no node table from node 0 at " + ns.cfg.Join
	}
	var miss []int
	for n := 1; n < ns.cfg.Nodes; n++ {
		if _, ok := ns.hellos[n]; !ok {
			miss = append(miss, n)
		}
	}
	return fmt.Sprintf("nodes %v never joined", miss)
}

// remoteStart serializes remote.Start, which sets gRPC's global logger.
var remoteStart sync.Mutex

func startRemote(r *remote.Remote) (err error) {
	remoteStart.Lock()
	defer remoteStart.Unlock()
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%v", p)
		}
	}()
	r.Start()
	return nil
}

// maxMsg is the gRPC message limit on both sides: protoactor-go batches
// up to EndpointWriterBatchSize frames (each at most wire.MaxFrame) into
// one gRPC message.
const (
	writerBatch = 16
	maxMsg      = writerBatch*wire.MaxFrame + 1<<20
)

// writerQueue is the first room of the queue of frames that protoactor-go
// keeps for each node it writes to; the queue doubles as frames wait.
// protoactor-go's default, 1 000 000, is a slice of 16 MB of interfaces
// that the garbage collector scans in every cycle: in a job of two
// processes exchanging 16 KiB messages it was 15.3 MiB of the 36–41 MiB
// each process had in use (16 MiB of it the collector's headroom, which
// is never scanned), and most of the collector's work.
const writerQueue = 64

func grpcOptions(nc NodeConfig) ([]remote.ConfigOption, error) {
	creds := insecure.NewCredentials()
	srvCreds := insecure.NewCredentials()
	var srv []grpc.ServerOption
	if nc.TLS != nil {
		cert, err := tls.LoadX509KeyPair(nc.TLS.Cert, nc.TLS.Key)
		if err != nil {
			return nil, fmt.Errorf("actor: TLS certificate %s / key %s: %w", nc.TLS.Cert, nc.TLS.Key, err)
		}
		cfg, err := tlsConfig(cert)
		if err != nil {
			return nil, err
		}
		creds = credentials.NewTLS(cfg)
		srvCreds = credentials.NewTLS(cfg)
	}
	srv = append(srv, grpc.Creds(guardCreds{srvCreds}))
	tok := tokenAuth{secure: nc.TLS != nil}
	srv = append(srv, grpc.MaxRecvMsgSize(maxMsg), grpc.StreamInterceptor(tok.checkStream), grpc.UnaryInterceptor(tok.checkUnary))
	return []remote.ConfigOption{
		remote.WithServerOptions(srv...),
		remote.WithDialOptions(grpc.WithTransportCredentials(creds), grpc.WithPerRPCCredentials(tok),
			grpc.WithDefaultCallOptions(grpc.MaxCallSendMsgSize(maxMsg), grpc.MaxCallRecvMsgSize(maxMsg))),
		remote.WithEndpointWriterBatchSize(writerBatch),
		remote.WithEndpointWriterQueueSize(writerQueue),
	}, nil
}

func splitHostPort(addr string) (string, int, error) {
	var host string
	var port int
	i := bytes.LastIndexByte([]byte(addr), ':')
	if i < 0 {
		return "", 0, fmt.Errorf("actor: address %q has no port", addr)
	}
	host = addr[:i]
	if _, err := fmt.Sscanf(addr[i+1:], "%d", &port); err != nil || port < 0 || port > 65535 {
		return "", 0, fmt.Errorf("actor: address %q has a bad port", addr)
	}
	return host, port, nil
}

// DefaultMaxRemoteMessage is the longest frame between processes when
// Config.MaxRemoteMessage is 0.
const DefaultMaxRemoteMessage = 1 << 30

// partSize is the length of the fragments of a long frame. The remote
// layer sends up to writerBatch queued frames in one gRPC message, and a
// heartbeat queued behind a long frame's fragments arrives only after
// them: the other node hears nothing from this one while such a batch is
// marshalled, sent and unmarshalled. Fragments of 1 MiB keep
// a batch of fragments at 16 MiB. Frames up to wire.MaxFrame (3 MiB) are
// not cut, so a batch of ordinary frames full of small messages can
// still reach 48 MiB; those come from many sends, each a message of its
// own, and a heartbeat behind them waits as it would behind as many
// messages from any sender.
const partSize = 1 << 20

// partSenders is how many goroutines other than its PEs a node may send
// fragments from at once (the join, the heartbeat, an exit): their frames
// are small, so this is slack.
const partSenders = 4

// sockFrames holds the buffers that frames for same-host sockets are
// encoded into: a write to a socket is done when writeSock returns, so its
// buffer can take the next frame. A fresh buffer of a frame of a few
// 16 KiB messages is a large allocation that the runtime clears first:
// 2.5 % of the samples of a job of two processes exchanging them.
var sockFrames = sync.Pool{New: func() any { return new([]byte) }}

// maxPooledFrame is the longest buffer sockFrames keeps: frames up to
// wire.MaxFrame (3 MiB) are rare, and a pool would keep one a sender for
// as long as the collector lets it.
const maxPooledFrame = 1 << 20

// sockFrameBuf returns a buffer of sockFrames with room for n bytes.
func sockFrameBuf(n int) *[]byte {
	bp := sockFrames.Get().(*[]byte)
	if cap(*bp) < n {
		*bp = make([]byte, 0, n)
	}
	return bp
}

// putSockFrameBuf gives a buffer back to sockFrames, unless it is long.
func putSockFrameBuf(bp *[]byte) {
	if cap(*bp) <= maxPooledFrame {
		sockFrames.Put(bp)
	}
}

// sendFrame encodes f and sends it to node n's link actor, and returns its
// size in bytes (0 if it was not sent). Any goroutine may call it.
//
// A frame longer than wire.MaxFrame leaves as fragments, all from this
// goroutine, one after another: the remote layer keeps them in order on
// the connection (frames of other goroutines may come in between), and
// the receiver joins them before it decodes the frame (receiveFrame).
// The frames under the limit, nearly all, take the path they always did.
func (rt *Runtime) sendFrame(n int, f *wire.Frame) int {
	ns := rt.node
	f.Token, f.From = ns.cfg.Token, ns.cfg.Node
	fail := func(err error) {
		if rt.Stopped() { // ending already (an exit frame): say so, no more
			rt.log.Error("sending a frame", "node", n, "err", err)
			return
		}
		rt.Abort(err)
	}
	size := wire.Size(f)
	if size > rt.cfg.MaxRemoteMessage {
		fail(fmt.Errorf("actor: a frame of %d bytes for node %d exceeds the %d-byte limit on what crosses processes (Config.MaxRemoteMessage)%s",
			size, n, rt.cfg.MaxRemoteMessage, largestItem(f)))
		return 0
	}
	ns.mu.Lock()
	pid := ns.links[n]
	ns.mu.Unlock()
	if pid == nil {
		fail(fmt.Errorf("actor: no address for node %d", n))
		return 0
	}
	sock := ns.sockTo(n, f.Kind)
	if size <= wire.MaxFrame {
		if sock != nil {
			bp := sockFrameBuf(wire.StreamHeader + size)
			defer putSockFrameBuf(bp)
			b, err := wire.AppendStreamFrame((*bp)[:0], f)
			if err != nil {
				fail(fmt.Errorf("actor: encoding a frame for node %d: %w", n, err))
				return 0
			}
			*bp = b[:0]
			rt.writeSock(n, sock, net.Buffers{b}) // written when it returns
			return len(b) - wire.StreamHeader
		}
		b, err := wire.AppendFrame(make([]byte, 0, size), f)
		if err != nil {
			fail(fmt.Errorf("actor: encoding a frame for node %d: %w", n, err))
			return 0
		}
		rt.sys.Root.Send(pid, &wrapperspb.BytesValue{Value: b})
		return len(b)
	}
	// The long frame is never encoded whole: its fragments are cut from
	// the messages' own bytes (a message of hundreds of megabytes is
	// copied once here, in pieces the scheduler can preempt between).
	parts, size, err := wire.FrameFragments(f, ns.partID.Add(1), partSize)
	if err != nil {
		fail(fmt.Errorf("actor: cutting a frame of %d bytes for node %d into fragments: %w", wire.Size(f), n, err))
		return 0
	}
	if sock != nil {
		bufs := make(net.Buffers, 0, 2*len(parts))
		hdrs := make([][wire.StreamHeader]byte, len(parts))
		for i, p := range parts {
			hdrs[i] = wire.StreamHeaderOf(len(p))
			bufs = append(bufs, hdrs[i][:], p)
		}
		rt.writeSock(n, sock, bufs)
		return size
	}
	for _, p := range parts {
		rt.sys.Root.Send(pid, &wrapperspb.BytesValue{Value: p})
	}
	return size
}

// largestItem names the longest message of a data frame, for an error.
func largestItem(f *wire.Frame) string {
	best := -1
	for i := range f.Items {
		if best < 0 || f.Items[i].Size() > f.Items[best].Size() {
			best = i
		}
	}
	if best < 0 {
		return ""
	}
	it := f.Items[best]
	what := "a message"
	if it.Tails > 1 {
		what = fmt.Sprintf("a run of %d messages", it.Tails)
	}
	return fmt.Sprintf(": its longest item is %s of kind %d for PE %d, %d bytes", what, it.Kind&^controlBit, it.PE, it.Size())
}

// lostEndpoint reports, to the link actor, that a connection closed.
type lostEndpoint struct{ addr string }

// linkReceive handles the frames from other nodes that receiveFrame passes
// on (the join, exit frames) and lost connections, one at a time.
func (rt *Runtime) linkReceive(c pa.Context) {
	if l, ok := c.Message().(lostEndpoint); ok {
		if !rt.Stopped() {
			rt.lostAddress(l.addr)
		}
		return
	}
	lf, ok := c.Message().(linkFrame)
	if !ok {
		return
	}
	ns := rt.node
	f := lf.f
	switch f.Kind {
	case wire.KindHello:
		rt.onHello(f)
	case wire.KindTable:
		rt.onTable(f)
	case wire.KindReady:
		if rt.Stopped() { // after the job: an acknowledgement of our exit frame
			ns.knowsEnd(f.From)
			return
		}
		rt.onReady(f.From)
	case wire.KindExit:
		var e exitInfo
		if err := mpcheck.Unmarshal(f.Body, &e); err != nil {
			ns.Rejected.Add(1)
			return
		}
		var reason error
		if e.Reason != "" {
			reason = errors.New(e.Reason)
		}
		if p := e.Panic; p != nil {
			reason = &PanicError{PE: p.PE, What: p.What, Value: p.Value, Stack: p.Stack}
		}
		for _, n := range e.Lost {
			if n >= 0 && n < ns.cfg.Nodes && n != ns.cfg.Node {
				ns.markLost(n)
			}
		}
		ns.exiting.Store(true) // the origin told everyone: do not repeat it
		rt.finish(f.Code, reason)
		// If this node ended the job too, its own exit frame to f.From
		// needs no acknowledgement now: f.From knows the job ended.
		ns.knowsEnd(f.From)
		rt.sendFrame(f.From, &wire.Frame{Kind: wire.KindReady}) // acknowledge
	default:
		ns.Rejected.Add(1)
	}
}

// joinFrame takes a fragment and returns the frame it completes and its
// length, or nil. A fragment that does not fit (out of order, repeated,
// over the size limits) or a joined frame that does not decode means a
// lost message from a node of the job: the job aborts, saying why.
func (rt *Runtime) joinFrame(part *wire.Frame) (*wire.Frame, int) {
	ns := rt.node
	fail := func(err error) (*wire.Frame, int) {
		ns.Rejected.Add(1)
		if rt.Stopped() {
			rt.log.Warn("rejected a fragment", "node", ns.cfg.Node, "err", err)
		} else {
			rt.Abort(fmt.Errorf("actor: node %d: %w", ns.cfg.Node, err))
		}
		return nil, 0
	}
	b, err := ns.parts[part.From].Add(part)
	if err != nil {
		return fail(err)
	}
	if b == nil {
		return nil, 0
	}
	f, err := wire.DecodeFrame(b)
	switch {
	case err != nil:
		return fail(fmt.Errorf("a frame of %d bytes from node %d, joined from fragments: %w", len(b), part.From, err))
	case f.Token != part.Token || f.From != part.From || f.Kind == wire.KindPart:
		return fail(fmt.Errorf("a frame of %d bytes joined from node %d's fragments is a %v frame from node %d (wrong token: %t)",
			len(b), part.From, f.Kind, f.From, f.Token != part.Token))
	}
	return f, len(b)
}

func (rt *Runtime) onHello(f *wire.Frame) {
	ns := rt.node
	var h helloInfo
	if ns.cfg.Node != 0 || mpcheck.Unmarshal(f.Body, &h) != nil || h.Node != f.From {
		ns.Rejected.Add(1)
		return
	}
	var bad error
	switch {
	case h.PEs != rt.cfg.PEs || h.Nodes != ns.cfg.Nodes:
		bad = fmt.Errorf("actor: node %d at %s expects %d PEs on %d nodes, node 0 has %d on %d", h.Node, h.Addr, h.PEs, h.Nodes, rt.cfg.PEs, ns.cfg.Nodes)
	case h.Fingerprint != ns.cfg.Fingerprint:
		bad = fmt.Errorf("actor: node %d at %s runs another program (its chare types and entry methods differ from node 0's)", h.Node, h.Addr)
	}
	ns.mu.Lock()
	if bad == nil {
		ns.hellos[h.Node] = h
		ns.addrs[h.Node] = h.Addr
		ns.socks[h.Node], ns.hosts[h.Node] = h.Sock, h.Host
		ns.links[h.Node] = pa.NewPID(h.Addr, rt.linkName(h.Node))
	}
	all := len(ns.hellos) == ns.cfg.Nodes-1
	ns.mu.Unlock()
	if bad != nil {
		// Tell the refused node why, so that it stops at once too.
		ns.mu.Lock()
		ns.links[h.Node] = pa.NewPID(h.Addr, rt.linkName(h.Node))
		ns.mu.Unlock()
		body, _ := msgpack.Marshal(exitInfo{Reason: bad.Error()})
		rt.sendFrame(h.Node, &wire.Frame{Kind: wire.KindExit, Code: 1, Body: body})
		ns.join(bad)
		return
	}
	if all {
		ns.mu.Lock()
		table := tableInfo{Addrs: slices.Clone(ns.addrs), Socks: slices.Clone(ns.socks), Hosts: slices.Clone(ns.hosts)}
		ns.mu.Unlock()
		body, _ := msgpack.Marshal(table)
		// Before the table: no node sends data frames before it has it.
		rt.dialSocks(table.Socks, table.Hosts)
		for n := 1; n < ns.cfg.Nodes; n++ {
			rt.sendFrame(n, &wire.Frame{Kind: wire.KindTable, Body: body})
		}
	}
}

func (rt *Runtime) onTable(f *wire.Frame) {
	ns := rt.node
	var table tableInfo
	if ns.cfg.Node == 0 || mpcheck.Unmarshal(f.Body, &table) != nil || len(table.Addrs) != ns.cfg.Nodes {
		ns.Rejected.Add(1)
		return
	}
	addrs := table.Addrs
	ns.mu.Lock()
	for n, a := range addrs {
		if n != ns.cfg.Node {
			ns.addrs[n] = a
			ns.links[n] = pa.NewPID(a, rt.linkName(n))
		}
	}
	ns.mu.Unlock()
	// Before the ready: node 0 starts the job once every node is ready.
	rt.dialSocks(table.Socks, table.Hosts)
	rt.sendFrame(0, &wire.Frame{Kind: wire.KindReady})
	ns.join(nil)
}

// join reports the end of the join protocol, once.
func (ns *nodeState) join(err error) {
	ns.joinOnce.Do(func() {
		ns.joined <- err
		close(ns.joinedDone)
	})
}

func (rt *Runtime) onReady(from int) {
	ns := rt.node
	ns.mu.Lock()
	ns.readies[from] = true
	all := len(ns.readies) == ns.cfg.Nodes-1
	ns.mu.Unlock()
	if all {
		ns.join(nil)
	}
}

// heartbeat tells the other nodes this one is alive and watches that they
// are: a node silent for FailAfter is lost, and the job aborts. Silence is
// checked several times per beat, so that a loss is found within a small
// fraction of a beat after FailAfter, not up to a whole beat later.
func (rt *Runtime) heartbeat() {
	ns := rt.node
	const checksPerBeat = 4
	tick := time.NewTicker(max(ns.cfg.Beat/checksPerBeat, time.Millisecond))
	defer tick.Stop()
	// A gap between two checks counts as silence for at most a beat: a
	// longer one means this process itself did not run (see silenceWatch).
	w := silenceWatch{failAfter: ns.cfg.FailAfter, stallAfter: ns.cfg.Beat, last: time.Now()}
	seen := make([]time.Time, ns.cfg.Nodes)
	for i := 0; ; i++ {
		select {
		case <-rt.done:
			return
		case <-tick.C:
		}
		for n := 0; n < ns.cfg.Nodes; n++ {
			if n != ns.cfg.Node && i%checksPerBeat == 0 {
				rt.sendFrame(n, &wire.Frame{Kind: wire.KindBeat})
			}
			seen[n] = time.Unix(0, ns.seen[n].Load())
		}
		if n, why := w.check(time.Now(), ns.cfg.Node, seen); n >= 0 {
			rt.lostNode(n, why)
			return
		}
	}
}

func (rt *Runtime) lostAddress(addr string) {
	if lost := rt.node.nodeAt(addr); lost >= 0 {
		rt.lostNode(lost, "its connection closed")
	}
}

// nodeAt returns the other node listening on addr, or -1.
func (ns *nodeState) nodeAt(addr string) int {
	ns.mu.Lock()
	defer ns.mu.Unlock()
	for n, a := range ns.addrs {
		if a == addr && n != ns.cfg.Node {
			return n
		}
	}
	return -1
}

// knowsEnd records that node n knows the job ended: this node need not
// wait for it to acknowledge an exit frame.
func (ns *nodeState) knowsEnd(n int) {
	ns.mu.Lock()
	ns.gone[n] = true
	ns.mu.Unlock()
	ns.signal()
}

// markLost records that node n is lost: nothing more is awaited from it,
// and a node this process launched is killed when the job ends.
func (ns *nodeState) markLost(n int) {
	ns.lost[n].Store(true)
	ns.signal()
}

func (ns *nodeState) signal() {
	select {
	case ns.goneSig <- struct{}{}:
	default:
	}
}

// awaited returns the nodes that were sent this node's exit frame and
// may not know yet that the job ended.
func (ns *nodeState) awaited() []int {
	ns.mu.Lock()
	defer ns.mu.Unlock()
	var out []int
	for _, n := range ns.exitTo {
		if !ns.gone[n] && !ns.lost[n].Load() {
			out = append(out, n)
		}
	}
	return out
}

// lostNode aborts the job because node n is gone.
func (rt *Runtime) lostNode(n int, why string) {
	rt.node.markLost(n)
	if rt.Stopped() {
		return
	}
	lo, hi := PERange(n, rt.node.cfg.Nodes, rt.cfg.PEs)
	rt.node.mu.Lock()
	addr := rt.node.addrs[n]
	rt.node.mu.Unlock()
	rt.Abort(fmt.Errorf("actor: lost node %d (PEs %d..%d, %s): %s", n, lo, hi-1, addr, why))
}

// broadcastExit tells every other node that the job ended.
func (rt *Runtime) broadcastExit(code int, err error) {
	ns := rt.node
	if ns == nil || ns.exiting.Swap(true) {
		return
	}
	e := exitInfo{Origin: ns.cfg.Node}
	for n := range ns.lost {
		if ns.lost[n].Load() {
			e.Lost = append(e.Lost, n)
		}
	}
	if err != nil {
		e.Reason = err.Error()
	}
	if p, ok := err.(*PanicError); ok {
		const maxStack = 64 << 10 // the frame must stay small
		e.Panic = &wirePanic{PE: p.PE, What: p.What, Value: fmt.Sprint(p.Value), Stack: p.Stack[:min(len(p.Stack), maxStack)]}
	}
	body, _ := msgpack.Marshal(e)
	for n := 0; n < ns.cfg.Nodes; n++ {
		ns.mu.Lock()
		known := ns.links[n] != nil
		ns.mu.Unlock()
		if n != ns.cfg.Node && known {
			// A lost node gets the frame too (a frozen one may wake up
			// and should stop then), but nobody waits for its answer.
			rt.sendFrame(n, &wire.Frame{Kind: wire.KindExit, Code: code, Body: body})
			ns.mu.Lock()
			ns.exitTo = append(ns.exitTo, n)
			ns.mu.Unlock()
		}
	}
}
