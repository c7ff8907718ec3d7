package actor

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
)

// Security of the transport. Every gRPC call between nodes carries the
// job's token in its metadata, and the server refuses calls without it,
// so nothing outside the job can even open a stream; frames carry the
// token too, and the link drops frames with another one. With TLS, the
// nodes present one certificate and trust only it (mutual TLS).

const tokenKey = "charm-job-token"

type tokenAuth struct {
	secure bool
}

// GetRequestMetadata implements credentials.PerRPCCredentials: it presents
// the tokens of the jobs running in this process (one, in a deployment).
func (t tokenAuth) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{tokenKey: activeTokens()}, nil
}

// RequireTransportSecurity implements credentials.PerRPCCredentials.
func (t tokenAuth) RequireTransportSecurity() bool { return t.secure }

func (t tokenAuth) ok(ctx context.Context) bool {
	md, _ := metadata.FromIncomingContext(ctx)
	for _, v := range md.Get(tokenKey) {
		for _, tok := range strings.Split(v, ",") {
			if tok != "" && tokenKnown(tok) {
				return true
			}
		}
	}
	return false
}

var errNotInJob = status.Error(codes.Unauthenticated, "charm: this connection does not belong to the job (missing or wrong job token)")

func (t tokenAuth) checkStream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	if !t.ok(ss.Context()) {
		guard.refusedCall(ss.Context(), info.FullMethod)
		return errNotInJob
	}
	return h(srv, ss)
}

func (t tokenAuth) checkUnary(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	if !t.ok(ctx) {
		guard.refusedCall(ctx, info.FullMethod)
		return nil, errNotInJob
	}
	return h(ctx, req)
}

// Refusals counts what this process's endpoint refused since it started
// (the endpoint is shared by the jobs of a process: see sharedEndpoint).
type Refusals struct {
	// Calls are gRPC calls without a token of a job running here.
	Calls int64
	// Connections are connections that failed the TLS handshake or did
	// not speak gRPC (their first bytes were not HTTP/2's preface).
	Connections int64
}

// Refusals returns what this process's endpoint refused. With -v (a
// Logger), each refusal is also logged, with the peer's address, at most
// once a second for each kind (the line says how many were not logged).
func (rt *Runtime) Refusals() Refusals {
	return Refusals{Calls: guard.calls.Load(), Connections: guard.conns.Load()}
}

// connGuard counts and logs refused calls and foreign connections.
type connGuard struct {
	calls, conns atomic.Int64
	log          atomic.Pointer[slog.Logger]
	callLimit    logLimit
	connLimit    logLimit
}

var guard connGuard

func (g *connGuard) setLogger(l *slog.Logger) {
	if l != nil {
		g.log.Store(l)
	}
}

func (g *connGuard) refusedCall(ctx context.Context, method string) {
	g.calls.Add(1)
	addr := "unknown"
	if p, ok := peer.FromContext(ctx); ok && p.Addr != nil {
		addr = p.Addr.String()
	}
	if l := g.log.Load(); l != nil {
		if ok, skipped := g.callLimit.allow(time.Now()); ok {
			l.Warn("refused a gRPC call without the job's token", "peer", addr, "method", method, "refused_calls", g.calls.Load(), "not_logged", skipped)
		}
	}
}

func (g *connGuard) foreignConn(addr net.Addr, why string) {
	g.conns.Add(1)
	a := "unknown"
	if addr != nil {
		a = addr.String()
	}
	if l := g.log.Load(); l != nil {
		if ok, skipped := g.connLimit.allow(time.Now()); ok {
			l.Warn("refused a connection from outside the job", "peer", a, "why", why, "foreign_connections", g.conns.Load(), "not_logged", skipped)
		}
	}
}

// logLimit lets one log line through per logEvery; it counts the lines
// it held back, which the next line reports.
type logLimit struct {
	mu      sync.Mutex
	last    time.Time
	skipped int
}

const logEvery = time.Second

// allow reports whether a line may be logged at now, and how many were
// held back since the last one.
func (l *logLimit) allow(now time.Time) (bool, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.last.IsZero() && now.Sub(l.last) < logEvery {
		l.skipped++
		return false, 0
	}
	n := l.skipped
	l.last, l.skipped = now, 0
	return true, n
}

// guardCreds wraps the server's transport credentials: a failed handshake
// (TLS) is a foreign connection, and so is one whose first bytes are not
// the HTTP/2 preface that every gRPC client sends.
type guardCreds struct {
	credentials.TransportCredentials
}

func (c guardCreds) ServerHandshake(raw net.Conn) (net.Conn, credentials.AuthInfo, error) {
	conn, info, err := c.TransportCredentials.ServerHandshake(raw)
	if err != nil {
		guard.foreignConn(raw.RemoteAddr(), "handshake: "+err.Error())
		return conn, info, err
	}
	return &prefaceConn{Conn: conn}, info, nil
}

func (c guardCreds) Clone() credentials.TransportCredentials {
	return guardCreds{c.TransportCredentials.Clone()}
}

// http2Preface is what an HTTP/2 (gRPC) client sends first.
const http2Preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

// prefaceConn watches the first bytes read from a connection; after them,
// reads go straight through.
type prefaceConn struct {
	net.Conn
	seen int // bytes of the preface checked so far
	done bool
}

func (c *prefaceConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if !c.done && n > 0 {
		k := min(n, len(http2Preface)-c.seen)
		if !bytes.Equal(b[:k], []byte(http2Preface[c.seen:c.seen+k])) {
			c.done = true
			guard.foreignConn(c.RemoteAddr(), fmt.Sprintf("not gRPC: it began with %q", b[:min(n, 16)]))
			return n, err
		}
		c.seen += k
		c.done = c.seen == len(http2Preface)
	}
	return n, err
}

// tlsConfig makes a mutual-TLS configuration that presents cert and trusts
// only the certificates it contains.
func tlsConfig(cert tls.Certificate) (*tls.Config, error) {
	pool := x509.NewCertPool()
	for _, der := range cert.Certificate {
		c, err := x509.ParseCertificate(der)
		if err != nil {
			return nil, fmt.Errorf("actor: parsing the TLS certificate: %w", err)
		}
		pool.AddCert(c)
	}
	return &tls.Config{
		Certificates: []tls.Certificate{cert},
		RootCAs:      pool,
		ClientCAs:    pool,
		ClientAuth:   tls.RequireAndVerifyClientCert,
		MinVersion:   tls.VersionTLS12,
	}, nil
}
