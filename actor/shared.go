package actor

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"

	pa "github.com/asynkron/protoactor-go/actor"
	"github.com/asynkron/protoactor-go/remote"
)

// One remote endpoint per process. protoactor-go's remote.Start sets gRPC's
// global logger, which the gRPC goroutines of any other endpoint in the
// process read without synchronization: two endpoints in one process race
// by construction (the race detector says so). So every job of several
// processes that runs in this process shares one actor system and one
// remote endpoint, started by the first such job; each job names its
// actors with a prefix derived from its token, and the endpoint accepts the
// tokens of the jobs currently running here. In a real deployment a
// process runs one job and nothing is shared.

type procEndpoint struct {
	sys    *pa.ActorSystem
	rem    *remote.Remote
	listen string
	tls    TLSFiles
}

var (
	procMu  sync.Mutex
	proc    *procEndpoint
	tokens  sync.Map // job token → struct{}: the jobs running in this process
	tokenMu sync.Mutex
)

// sharedEndpoint returns the process's endpoint, starting it on first use.
func sharedEndpoint(nc NodeConfig, log *slog.Logger) (*procEndpoint, error) {
	procMu.Lock()
	defer procMu.Unlock()
	guard.setLogger(log)
	var tlsf TLSFiles
	if nc.TLS != nil {
		tlsf = *nc.TLS
	}
	if proc != nil {
		if nc.Listen != "127.0.0.1:0" && nc.Listen != proc.listen && nc.Listen != proc.sys.Address() {
			return nil, fmt.Errorf("actor: this process already listens on %s (for an earlier job); it cannot also listen on %s", proc.sys.Address(), nc.Listen)
		}
		if tlsf != proc.tls {
			return nil, fmt.Errorf("actor: this process's endpoint was started with other TLS settings by an earlier job")
		}
		return proc, nil
	}
	quiet := func(*pa.ActorSystem) *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
	if log != nil {
		quiet = func(*pa.ActorSystem) *slog.Logger { return log.With("lib", "protoactor") }
	}
	sys := pa.NewActorSystem(pa.WithLoggerFactory(quiet))
	opts, err := grpcOptions(nc)
	if err != nil {
		return nil, err
	}
	host, port, err := splitHostPort(nc.Listen)
	if err != nil {
		return nil, err
	}
	rem := remote.NewRemote(sys, remote.Configure(host, port, opts...))
	if err := startRemote(rem); err != nil {
		return nil, fmt.Errorf("actor: cannot listen on %s: %w", nc.Listen, err)
	}
	proc = &procEndpoint{sys: sys, rem: rem, listen: nc.Listen, tls: tlsf}
	return proc, nil
}

// jobPrefix names a job's actors; every node derives the same one from the
// job's token.
func jobPrefix(token string) string {
	h := sha256.Sum256([]byte(token))
	return "j" + hex.EncodeToString(h[:6])
}

func addToken(t string)    { tokens.Store(t, struct{}{}) }
func removeToken(t string) { tokens.Delete(t) }

func tokenKnown(t string) bool {
	_, ok := tokens.Load(t)
	return ok
}

// activeTokens lists the tokens of the jobs running in this process, for
// the metadata of outgoing calls.
func activeTokens() string {
	tokenMu.Lock()
	defer tokenMu.Unlock()
	var ts []string
	tokens.Range(func(k, _ any) bool {
		ts = append(ts, k.(string))
		return true
	})
	return strings.Join(ts, ",")
}
