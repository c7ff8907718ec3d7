package multi

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/actor"
	"github.com/charmgo/charm/array"
	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/chare/reducer"
	"github.com/charmgo/charm/internal/jobtest"
)

type sumMain struct{ chare.Chare[sumMain] }

type summer struct{ array.Element[summer, int] }

func (s *summer) Add(cb chare.Callback) { _ = s.Contribute(s.ThisIndex(), reducer.SumInt, cb) }

func init() {
	chare.Register[sumMain]()
	chare.Register[summer]()
}

// sumJob sums the indices of an array spread over the nodes and returns
// the job's code (0 when the sum is right).
func sumJob(t *testing.T, cfg chare.Config, n int) (int, error) {
	cfg.Launch, cfg.Timeout = jobtest.Launch(t), 60*time.Second
	code, err := chare.Run(cfg, func(m *sumMain, _ []string) {
		sum, err := sumIndices(m, n)
		if err != nil || sum != n*(n-1)/2 {
			m.Exit(3)
			return
		}
		m.Exit(0)
	})
	jobtest.ExitNode(code)
	return code, err
}

// sumIndices makes an array of n elements and sums their indices by a
// reduction.
func sumIndices(m *sumMain, n int) (int, error) {
	a, err := array.New[summer](m, array.Dims(n))
	if err != nil {
		return 0, err
	}
	f := chare.NewFuture[int](m)
	if err := chare.Send(m, a, (*summer).Add, f.Callback()); err != nil {
		return 0, err
	}
	return f.Get(m)
}

func TestSumAcrossThreeProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("launches processes")
	}
	code, err := sumJob(t, chare.Config{PEs: 6, Nodes: 3}, 100)
	require.NoError(t, err)
	require.Equal(t, 0, code)
}

// TestTLSBetweenProcesses runs a job of two processes whose connections
// use mutual TLS with a self-signed certificate the test makes.
func TestTLSBetweenProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("launches processes")
	}
	// A process has one endpoint, with one TLS setting (actor/shared.go):
	// this job gets a process of its own.
	if !alone(t) {
		return
	}
	dir := os.Getenv("CHARM_TEST_TLS_DIR") // set for the launched node
	if dir == "" {
		dir = t.TempDir()
		writeSelfSigned(t, dir)
		t.Setenv("CHARM_TEST_TLS_DIR", dir)
	}
	files := &actor.TLSFiles{Cert: filepath.Join(dir, "cert.pem"), Key: filepath.Join(dir, "key.pem")}
	code, err := sumJob(t, chare.Config{PEs: 4, Nodes: 2, TLS: files}, 40)
	require.NoError(t, err)
	require.Equal(t, 0, code)
}

// writeSelfSigned writes a self-signed certificate for 127.0.0.1 and its
// key into dir.
func writeSelfSigned(t *testing.T, dir string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "charm test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"},
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		IsCA:        true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	kb, err := x509.MarshalECPrivateKey(key)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "cert.pem"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "key.pem"), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600))
}
