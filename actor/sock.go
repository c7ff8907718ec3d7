package actor

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/charmgo/charm/actor/internal/procid"
	"github.com/charmgo/charm/actor/wire"
)

// The same-host data path. Nodes of one job that run on one host (one
// kernel, one network namespace) send each other their data frames — the
// messages between PEs, and the credit frames of their back-pressure —
// over Unix-domain sockets instead of through protoactor-go remote: one
// write of the encoded frame from the sending PE's goroutine, one read on
// the receiver's socket goroutine, which hands the messages to their PEs
// (link.go); under WaitActive that goroutine polls its socket for a while
// when it runs out of frames (pollReader). protoactor-go still carries the
// join, the heartbeats and the exit frames. See docs/design/transport.md for the measurements.
//
// Each node listens on a socket in a directory of its own that only its
// user can enter (0700), named for its process (sockDirPrefix), and says
// where in its hello; a node starting removes the directories that
// processes now gone left behind (sweepSockDirs); node 0's table
// passes the paths on. A node connects to every other node of its host
// while it joins, before any data frame leaves, so a node's frames to
// another always take one path for the whole job (their order holds). A
// connection opens with a frame carrying the job's token and the
// connecting node's number, as every frame over gRPC carries the token;
// a connection without it is refused, and so is a frame with another
// token. A frame that does not decode, or a length over the limit, ends
// the job with an error naming the node. A connection that closes without the node's goodbye
// frame ends the job only if the job has not ended otherwise within
// FailAfter: a node that ends because the job ended (told over gRPC, in
// no order with this socket) may close its end before this node hears
// of the end, and its goodbye is given up on after a short wait.

// EnvLocalSocket, set to "off" in a node's environment, keeps that node
// off the same-host data path (NodeConfig.NoLocalSocket does the same; a
// local launch passes it on to the nodes it starts).
const EnvLocalSocket = "CHARMGO_LOCAL_SOCKET"

// sockAuthTimeout bounds the wait for a connection's first frame.
const sockAuthTimeout = 10 * time.Second

// sockState is a node's side of the same-host data path.
type sockState struct {
	host string // this host's identity (hostID)
	dir  string // the private directory of the socket
	path string
	ln   *net.UnixListener

	mu     sync.Mutex
	conns  []net.Conn // every connection, for closing at the end
	closed bool

	out []*sockOut // by node: the connection this node sends data frames on, or nil

	written atomic.Int64 // frames written (for tests)

	spinning atomic.Bool // a reader polls its socket (pollReader)

	after func(time.Duration, func()) // time.AfterFunc; a test's fake (under mu)
}

// afterFunc calls f after d, on a goroutine of its own.
func (s *sockState) afterFunc(d time.Duration, f func()) {
	s.mu.Lock()
	after := s.after
	s.mu.Unlock()
	if after == nil {
		time.AfterFunc(d, f)
		return
	}
	after(d, f)
}

// sockOut is the connection a node writes its data frames to another on.
type sockOut struct {
	mu   sync.Mutex
	conn net.Conn
	err  error // the write that failed: no more are tried
}

// useLocalSocket says whether a node with configuration nc takes part in
// the same-host data path.
func useLocalSocket(nc NodeConfig) bool {
	return nc.Nodes > 1 && !nc.NoLocalSocket && nc.TLS == nil && !strings.EqualFold(os.Getenv(EnvLocalSocket), "off")
}

// hostID names the kernel and network namespace this process runs in:
// nodes with the same one can reach each other's Unix sockets, and are on
// one host as the job's addresses see it.
func hostID() string {
	boot, _ := os.ReadFile("/proc/sys/kernel/random/boot_id")
	netns, _ := os.Readlink("/proc/self/ns/net")
	name, _ := os.Hostname()
	if len(boot) == 0 || netns == "" {
		return "" // not Linux (or no /proc): no same-host path
	}
	return strings.TrimSpace(string(boot)) + "/" + netns + "/" + name
}

// startSock opens this node's socket. Any failure leaves the node on
// protoactor-go alone, with a warning: the socket is a shortcut.
func (rt *Runtime) startSock() {
	ns := rt.node
	host := hostID()
	if host == "" {
		return
	}
	tmp := os.TempDir()
	sweepSockDirs(tmp)
	pid := os.Getpid()
	dir, err := os.MkdirTemp(tmp, sockDirPrefix+strconv.Itoa(pid)+"-"+procid.StartTime(pid)+"-") // 0700
	if err != nil {
		rt.log.Warn("no same-host socket", "node", ns.cfg.Node, "err", err)
		return
	}
	path := filepath.Join(dir, "node"+strconv.Itoa(ns.cfg.Node))
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		_ = os.RemoveAll(dir)
		rt.log.Warn("no same-host socket", "node", ns.cfg.Node, "err", err)
		return
	}
	s := &sockState{host: host, dir: dir, path: path, ln: ln, out: make([]*sockOut, ns.cfg.Nodes)}
	ns.sock = s
	go rt.acceptSock(s)
}

// sockDirPrefix begins the name of a node's socket directory in the
// temporary directory; the name goes on with the pid and start time of
// the process that made it (procid.StartTime), then a random part:
// charmgo-sock-PID-START-RANDOM.
const sockDirPrefix = "charmgo-sock-"

// sweepSockDirs removes from tmp the socket directories of processes that
// are gone (killed, or crashed, before they could remove their own): only
// directories of this user with the name sockDirPrefix, a pid, a start
// time and a random part, whose process no longer runs. Its work is
// bounded: it looks at the first few thousand names and removes a few
// dozen directories at most; a later start removes more.
func sweepSockDirs(tmp string) (removed []string) {
	d, err := os.Open(tmp)
	if err != nil {
		return nil
	}
	defer d.Close()
	const mostNames, mostRemoved = 8192, 64
	uid := os.Geteuid()
	for looked := 0; looked < mostNames && len(removed) < mostRemoved; {
		names, err := d.Readdirnames(512)
		looked += len(names)
		for _, name := range names {
			pid, start, ok := parseSockDir(name)
			if !ok || len(removed) == mostRemoved {
				continue
			}
			p := filepath.Join(tmp, name)
			fi, err := os.Lstat(p)
			if err != nil || !fi.IsDir() {
				continue
			}
			if !procid.OwnedBy(fi, uid) {
				continue
			}
			if procid.Alive(pid, start) == "" {
				continue
			}
			if os.RemoveAll(p) == nil {
				removed = append(removed, p)
			}
		}
		if err != nil {
			break // io.EOF: all read
		}
	}
	return removed
}

// parseSockDir returns the pid and start time in a socket directory's
// name (sockDirPrefix), or false if name is not one.
func parseSockDir(name string) (pid, start string, ok bool) {
	rest, ok := strings.CutPrefix(name, sockDirPrefix)
	if !ok {
		return "", "", false
	}
	f := strings.SplitN(rest, "-", 3)
	if len(f) != 3 || !allDigits(f[0]) || !allDigits(f[1]) || f[2] == "" {
		return "", "", false
	}
	return f[0], f[1], true
}

// allDigits reports whether s is a (possibly empty) run of decimal digits.
func allDigits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// track records c for closing at the end; it reports false (and closes
// c) if the end came already.
func (s *sockState) track(c net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		_ = c.Close()
		return false
	}
	s.conns = append(s.conns, c)
	return true
}

// close ends the same-host path: the listener, every connection, the
// directory.
func (s *sockState) close() {
	s.mu.Lock()
	s.closed = true
	conns := s.conns
	s.conns = nil
	s.mu.Unlock()
	_ = s.ln.Close()
	for _, c := range conns {
		_ = c.Close()
	}
	_ = os.RemoveAll(s.dir)
}

func (rt *Runtime) acceptSock(s *sockState) {
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return // closed at the end of the job
		}
		go rt.readSock(s, c)
	}
}

// readSock authenticates a connection from another node, then hands its
// frames to receiveFrame until it closes.
func (rt *Runtime) readSock(s *sockState, c net.Conn) {
	ns := rt.node
	_ = c.SetReadDeadline(time.Now().Add(sockAuthTimeout))
	from, err := rt.sockAuth(c)
	if err != nil {
		ns.Rejected.Add(1)
		rt.log.Warn("refused a connection on the same-host socket", "node", ns.cfg.Node, "err", err)
		_ = c.Close()
		return
	}
	// Kept for closing at the end only once authenticated: a refused
	// connection leaves nothing behind.
	if !s.track(c) {
		return
	}
	_ = c.SetReadDeadline(time.Time{})
	pr, err := newPollReader(c, &s.spinning, &rt.awake, rt.cfg.Wait == WaitActive)
	if err != nil {
		rt.lostNode(from, fmt.Sprintf("reading its same-host socket: %v", err))
		_ = c.Close()
		return
	}
	r := bufio.NewReaderSize(pr, 64<<10)
	bye := false // the node closes its end: it is done with the job
	for {
		b, err := wire.ReadStream(r, wire.MaxFrame)
		if err != nil {
			_ = c.Close()
			switch {
			case rt.Stopped() || bye && errors.Is(err, io.EOF):
			case errors.Is(err, io.EOF):
				// No goodbye: the node may have ended because the job
				// ended, which this node may not have heard yet.
				fail := ns.cfg.FailAfter
				s.afterFunc(fail, func() {
					rt.lostNode(from, fmt.Sprintf("its same-host socket closed without a goodbye, and the job did not end within %v", fail))
				})
			default:
				rt.lostNode(from, fmt.Sprintf("reading its same-host socket: %v", err))
			}
			return
		}
		// The node is authenticated: a frame from it that does not decode
		// means its stream is broken, and its messages with it.
		f, err := wire.DecodeFrame(b)
		switch {
		case err != nil:
		case f.Token != ns.cfg.Token || f.From != from:
			err = fmt.Errorf("a frame from node %d with another token (%t) on node %d's connection", f.From, f.Token != ns.cfg.Token, from)
		case f.Kind == wire.KindExit:
			bye = true
			continue
		}
		if err != nil {
			ns.Rejected.Add(1)
			_ = c.Close()
			if !rt.Stopped() {
				rt.lostNode(from, fmt.Sprintf("reading its same-host socket: %v", err))
			}
			return
		}
		if f, size := rt.handleFrame(f, len(b)); f != nil {
			rt.sys.Root.Send(ns.link, linkFrame{f, size})
		}
	}
}

// sockAuth reads a connection's first frame, which must be a hello from a
// node of this job, and returns that node.
func (rt *Runtime) sockAuth(r io.Reader) (int, error) {
	ns := rt.node
	b, err := wire.ReadStream(r, 4<<10)
	if err != nil {
		return -1, err
	}
	f, err := wire.DecodeFrame(b)
	switch {
	case err != nil:
		return -1, err
	case f.Kind != wire.KindHello || f.Token != ns.cfg.Token:
		return -1, fmt.Errorf("actor: the first frame is a %v frame, not a hello with the job's token", f.Kind)
	case !ns.otherNode(f.From):
		return -1, fmt.Errorf("actor: a hello from node %d, which is not another node of the job", f.From)
	}
	return f.From, nil
}

// dialSocks connects to the socket of every other node on this host whose
// path is known (socks and hosts, by node). It runs while this node
// joins, before it sends any data frame. A node it cannot reach gets this
// node's frames through protoactor-go, with a warning.
func (rt *Runtime) dialSocks(socks, hosts []string) {
	ns := rt.node
	s := ns.sock
	if s == nil {
		return
	}
	select {
	case <-ns.joinedDone:
		// A hello or table repeated after the join: the paths are
		// decided, and PEs read them.
		return
	default:
	}
	for n := range ns.cfg.Nodes {
		if n == ns.cfg.Node || n >= len(socks) || n >= len(hosts) || socks[n] == "" || hosts[n] != s.host || s.out[n] != nil {
			continue
		}
		c, err := rt.dialSock(socks[n])
		if err != nil {
			rt.log.Warn("no same-host socket to a node: its frames go through gRPC", "node", ns.cfg.Node, "to", n, "err", err)
			continue
		}
		if !s.track(c) {
			return
		}
		s.out[n] = &sockOut{conn: c}
	}
}

func (rt *Runtime) dialSock(path string) (net.Conn, error) {
	ns := rt.node
	c, err := net.DialTimeout("unix", path, 5*time.Second)
	if err != nil {
		return nil, err
	}
	b, err := wire.AppendStreamFrame(nil, &wire.Frame{Kind: wire.KindHello, Token: ns.cfg.Token, From: ns.cfg.Node})
	if err == nil {
		_ = c.SetWriteDeadline(time.Now().Add(sockAuthTimeout))
		_, err = c.Write(b)
		_ = c.SetWriteDeadline(time.Time{})
	}
	if err != nil {
		_ = c.Close()
		return nil, err
	}
	return c, nil
}

// sockTo returns the connection that frames of kind k for node n take, or
// nil for protoactor-go: data frames (and their fragments) and credit
// frames go over the socket where there is one.
func (ns *nodeState) sockTo(n int, k wire.FrameKind) *sockOut {
	if ns.sock == nil || (k != wire.KindData && k != wire.KindCredit) {
		return nil
	}
	return ns.sock.out[n]
}

// writeSock sends bufs (whole frames with their headers) to node n. A
// failed write means that n closed its end: because it ended its part of
// the job (the end reaches this node through protoactor-go), or because
// it died (its socket to this node closes too, and readSock finds it
// lost). The frame is lost with the node; if the job has not ended
// within FailAfter, the node is declared lost here.
func (rt *Runtime) writeSock(n int, o *sockOut, bufs net.Buffers) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.err != nil {
		return
	}
	s := rt.node.sock
	s.written.Add(1)
	if _, err := bufs.WriteTo(o.conn); err != nil {
		o.err = err
		if rt.Stopped() {
			return
		}
		s.afterFunc(rt.node.cfg.FailAfter, func() {
			rt.lostNode(n, fmt.Sprintf("writing to its same-host socket: %v", err))
		})
	}
}

// bye tells every node this one writes to that it closes its end, and
// does not wait for a node that does not read.
func (s *sockState) bye(ns *nodeState) {
	b, err := wire.AppendStreamFrame(nil, &wire.Frame{Kind: wire.KindExit, Token: ns.cfg.Token, From: ns.cfg.Node})
	if err != nil {
		return
	}
	// The deadline first: it also ends a write under way (a PE's, to a
	// node that stopped reading), which holds the lock. A write cut
	// short leaves err set, and no bye follows a partial frame.
	deadline := time.Now().Add(200 * time.Millisecond)
	for _, o := range s.out {
		if o != nil {
			_ = o.conn.SetWriteDeadline(deadline)
		}
	}
	for _, o := range s.out {
		if o == nil {
			continue
		}
		o.mu.Lock()
		if o.err == nil {
			_, o.err = o.conn.Write(b)
		}
		o.mu.Unlock()
	}
}
