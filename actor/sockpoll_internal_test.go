package actor

import (
	"bytes"
	"io"
	"net"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// unixPair returns the two ends of a Unix-domain stream connection.
func unixPair(t *testing.T) (*net.UnixConn, *net.UnixConn) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s")
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	require.NoError(t, err)
	defer ln.Close()
	accepted := make(chan *net.UnixConn, 1)
	go func() {
		c, err := ln.AcceptUnix()
		if err != nil {
			accepted <- nil
			return
		}
		accepted <- c
	}()
	a, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: path, Net: "unix"})
	require.NoError(t, err)
	b := <-accepted
	require.NotNil(t, b)
	t.Cleanup(func() { a.Close(); b.Close() })
	return a, b
}

// A pollReader reads every byte written to its socket, in order, and
// then the end, whether it polls (WaitActive) or waits in the poller;
// it lets go of the process's spin when it returns.
func TestPollReaderReadsWhatIsWritten(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("a reader polls only with two Ps or more")
	}
	for _, active := range []bool{true, false} {
		a, b := unixPair(t)
		var spinning atomic.Bool
		var awake atomic.Int32
		r, err := newPollReader(b, &spinning, &awake, active)
		require.NoError(t, err)
		require.Equal(t, active, r.(*pollReader).long, "active: %v", active)
		var want bytes.Buffer
		for i := range 2000 {
			want.Write(bytes.Repeat([]byte{byte(i)}, 1+i%97))
		}
		go func() {
			w := want.Bytes()
			for len(w) > 0 {
				n := min(len(w), 1+len(w)%501)
				if _, err := a.Write(w[:n]); err != nil {
					return
				}
				w = w[n:]
				runtime.Gosched()
			}
			a.Close()
		}()
		got, err := io.ReadAll(r)
		require.NoError(t, err, "active: %v", active)
		require.Equal(t, want.Bytes(), got, "active: %v", active)
		require.False(t, spinning.Load(), "active: %v: the spin is let go", active)
	}
}

// Under WaitActive a reader whose socket stays silent polls it for a
// while (it holds the process's spin) and then waits in the poller (it
// lets go of the spin, and spins no more until a wait is short); a frame
// written then is still read. With every P taken by an awake PE it does
// not poll at all.
func TestPollReaderSpinEnds(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("a reader polls only with two Ps or more")
	}
	a, b := unixPair(t)
	var spinning atomic.Bool
	var awake atomic.Int32
	r, err := newPollReader(b, &spinning, &awake, true)
	require.NoError(t, err)
	got := make(chan []byte, 1)
	go func() {
		buf := make([]byte, 16)
		n, err := r.Read(buf)
		if err != nil {
			got <- nil
			return
		}
		got <- buf[:n]
	}()
	p := r.(*pollReader)
	require.Eventually(t, func() bool { return p.spun.Load() == 1 && !spinning.Load() }, 10*time.Second, time.Millisecond,
		"the reader polls its silent socket once, and then waits in the poller")
	_, err = a.Write([]byte("frame"))
	require.NoError(t, err)
	select {
	case m := <-got:
		require.Equal(t, []byte("frame"), m)
	case <-time.After(10 * time.Second):
		t.Fatal("a frame written while the reader waits in the poller was not read")
	}
	require.Equal(t, int64(1), p.spun.Load(), "one spin")
	awake.Store(p.procs)
	require.False(t, p.room(), "no P is left for a spin when every P runs a PE")
}
