//go:build unix

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
// then the end, polling when it runs out, and it lets go of the node's
// spin when it returns; under WaitPassive the reader is the connection.
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
		if !active {
			require.Same(t, b, r, "a passive reader is the connection")
		}
		var want bytes.Buffer
		for i := range 2000 {
			want.Write(bytes.Repeat([]byte{byte(i)}, 1+i%97))
		}
		p, _ := r.(*pollReader)
		if active {
			require.True(t, p.pace.long, "the reader starts with the spins on")
		}
		go func() {
			defer a.Close()
			w := want.Bytes()
			for first := true; len(w) > 0; first = false {
				n := min(len(w), 1+len(w)%501)
				if _, err := a.Write(w[:n]); err != nil {
					return
				}
				w = w[n:]
				for first && active && p.spun.Load() == 0 {
					runtime.Gosched() // until the reader, out of data, polls
				}
				runtime.Gosched()
			}
		}()
		got, err := io.ReadAll(r)
		require.NoError(t, err, "active: %v", active)
		require.Equal(t, want.Bytes(), got, "active: %v", active)
		require.False(t, spinning.Load(), "active: %v: the spin is let go", active)
		if active {
			require.Positive(t, p.spun.Load(), "the reader polled")
		}
	}
}

// Under WaitActive a reader whose socket stays silent polls it for a
// while (it holds the node's spin) and then waits in the poller (it lets
// go of the spin); a frame written then is still read. A reader whose
// spins are off waits in the poller at once, and with every P taken by an
// awake PE there is no room for a spin.
func TestPollReaderSpinEnds(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("a reader polls only with two Ps or more")
	}
	a, b := unixPair(t)
	var spinning atomic.Bool
	var awake atomic.Int32
	r, err := newPollReader(b, &spinning, &awake, true)
	require.NoError(t, err)
	got := readOnce(r)
	p := r.(*pollReader)
	require.Eventually(t, func() bool { return p.spun.Load() == 1 && !spinning.Load() }, 10*time.Second, time.Millisecond,
		"the reader polls its silent socket once, and then waits in the poller")
	writeRead(t, a, got, "frame", "a frame written while the reader waits in the poller")
	require.Equal(t, int64(1), p.spun.Load(), "one spin")

	// A reader whose last spin found nothing (long false) waits in the
	// poller without a spin.
	a2, b2 := unixPair(t)
	r2, err := newPollReader(b2, &spinning, &awake, true)
	require.NoError(t, err)
	p2 := r2.(*pollReader)
	p2.pace.long = false
	got = readOnce(r2)
	writeRead(t, a2, got, "next", "a frame to a reader that does not spin")
	require.Zero(t, p2.spun.Load(), "no spin while the spins are off")
	awake.Store(p.procs)
	require.False(t, p.room(), "no P is left for a spin when every P runs a PE")
}

// readOnce reads once from r on a goroutine of its own and sends what it
// read (nil on an error).
func readOnce(r io.Reader) <-chan []byte {
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
	return got
}

// writeRead writes frame to w and requires that got delivers it.
func writeRead(t *testing.T, w net.Conn, got <-chan []byte, frame, what string) {
	t.Helper()
	_, err := w.Write([]byte(frame))
	require.NoError(t, err)
	select {
	case m := <-got:
		require.Equal(t, []byte(frame), m, what)
	case <-time.After(10 * time.Second):
		t.Fatalf("%s was not read", what)
	}
}
