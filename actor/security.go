package actor

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
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

func (t tokenAuth) checkStream(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	if !t.ok(ss.Context()) {
		return errNotInJob
	}
	return h(srv, ss)
}

func (t tokenAuth) checkUnary(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	if !t.ok(ctx) {
		return nil, errNotInJob
	}
	return h(ctx, req)
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
