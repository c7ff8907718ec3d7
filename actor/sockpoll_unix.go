//go:build unix

package actor

import (
	"io"
	"net"
	"os"
	"runtime"
	"sync/atomic"
	"syscall"
	"time"
)

// pollReader reads a same-host socket for readSock. Under WaitActive,
// when the socket has nothing to read, it polls it without blocking for
// up to spinLong before it waits in Go's network poller, yielding its P
// between polls (so that the PEs it handed frames to run there): the next
// frame is read as it arrives instead of after the poller's wake-up,
// which on a machine whose idle cores halt costs tens of microseconds, as
// Charm++'s PEs poll their sockets. As a PE's pace (spinPace): a spin
// that found nothing ends the spins, and a wait in the poller that a
// frame ended within spinLong starts them again, so a socket whose frames
// come up to about twice spinLong apart keeps its reader polling, and an
// idle one sleeps after one spin. One reader of a node polls at a time
// (spinning), and only while fewer of the node's PEs are awake than there
// are Ps (the PEs' work comes first). The node's other connections are
// read when a P has nothing to run, as always, or by the Go runtime's
// monitor within 10 ms when every P is busy, as with PEs that compute: a
// spinning reader is busy work of its P. A Close of the connection waits
// for a spin under way (at most spinLong and a round).
type pollReader struct {
	rc       syscall.RawConn
	spinning *atomic.Bool  // the node's: held by the reader that polls
	awake    *atomic.Int32 // the node's PEs whose goroutine runs
	procs    int32         // GOMAXPROCS
	// pace: whether the next spin may run (long); parkedAt is set only by
	// a wait in the poller that a spin did not precede or ended empty.
	pace spinPace
	spun atomic.Int64 // spins begun (for tests)
}

// newPollReader returns c's reader for readSock: c itself under
// WaitPassive or with one P, else a pollReader.
func newPollReader(c net.Conn, spinning *atomic.Bool, awake *atomic.Int32, active bool) (io.Reader, error) {
	sc, ok := c.(syscall.Conn)
	procs := int32(runtime.GOMAXPROCS(0))
	if !ok || !active || procs < 2 {
		return c, nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil, err
	}
	return &pollReader{rc: rc, spinning: spinning, awake: awake, procs: procs, pace: spinPace{long: true}}, nil
}

// room reports whether a P is left for a reader's spin: fewer PEs awake
// than Ps.
func (p *pollReader) room() bool { return p.awake.Load() < p.procs }

func (p *pollReader) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	var n int
	var rerr error
	var end time.Duration
	held := false
	release := func() {
		if held {
			p.spinning.Store(false)
			held = false
		}
	}
	defer release()
	// toPoller ends the callback so that the goroutine waits in the poller;
	// a wait with the spins off is timed (see pace).
	toPoller := func(now time.Duration) bool {
		release()
		if !p.pace.long {
			p.pace.parked(now)
		}
		return false
	}
	err := p.rc.Read(func(fd uintptr) bool {
		for i := 1; ; i++ {
			n, rerr = syscall.Read(int(fd), b)
			switch {
			case rerr == syscall.EINTR:
				continue
			case rerr != syscall.EAGAIN:
				if p.pace.parkedAt != 0 {
					// Back from a timed wait: one that a spin would
					// have covered starts the spins again.
					p.pace.wokenAt = clock()
					p.pace.woke()
				}
				return true
			}
			if !held {
				now := clock()
				if !p.pace.long || !p.room() || !p.spinning.CompareAndSwap(false, true) {
					return toPoller(now)
				}
				held, end = true, now+spinLong
				p.spun.Add(1)
			}
			if i%spinLongYield != 0 {
				continue
			}
			if i%(spinLongYield*spinClock) != 0 {
				goyield()
				continue
			}
			now := clock()
			if now > end {
				p.pace.expired() // nothing came within spinLong
				return toPoller(now)
			}
			if !p.room() {
				return toPoller(now)
			}
			runtime.Gosched()
		}
	})
	switch {
	case err != nil:
		return 0, err
	case rerr != nil:
		return 0, os.NewSyscallError("read", rerr)
	case n <= 0:
		return 0, io.EOF
	}
	return n, nil
}
