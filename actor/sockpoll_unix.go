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
	active   bool          // WaitActive
	long     bool          // the frames come less than spinLong apart
	waitedAt time.Duration // clock() when the reader last went to the poller
	waited   bool          // the last call of the callback went to the poller
	spun     atomic.Int64  // spins begun (for tests)
}

func newPollReader(c net.Conn, spinning *atomic.Bool, awake *atomic.Int32, active bool) (io.Reader, error) {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return c, nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil, err
	}
	procs := int32(runtime.GOMAXPROCS(0))
	active = active && procs > 1
	return &pollReader{rc: rc, spinning: spinning, awake: awake, procs: procs, active: active, long: active}, nil
}

// room reports whether a P is left for a reader's spin: fewer PEs awake
// than Ps.
func (p *pollReader) room() bool { return p.awake.Load() < p.procs }

// pollSpinYield is how many polls of the socket a spinning reader makes
// between yields of its P, and pollClock how many yields between looks
// at the clock (and yields to the process's run queue, runtime.Gosched).
const (
	pollSpinYield = 4
	pollClock     = 8
)

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
	toPoller := func(now time.Duration) bool {
		release()
		p.waited, p.waitedAt = true, now
		return false
	}
	err := p.rc.Read(func(fd uintptr) bool {
		for i := 1; ; i++ {
			n, rerr = syscall.Read(int(fd), b)
			switch {
			case rerr == syscall.EINTR:
				continue
			case rerr != syscall.EAGAIN:
				if p.waited && !p.long {
					// Back from the poller with the spins off: a wait that
					// a spin would have covered starts them again. (A wait
					// for another reason, no room or another reader's
					// spin, leaves them on.)
					p.long = p.active && clock()-p.waitedAt < spinLong
				}
				p.waited = false
				return true
			}
			if !held {
				now := clock()
				if !p.long || !p.room() || !p.spinning.CompareAndSwap(false, true) {
					return toPoller(now)
				}
				held, end = true, now+spinLong
				p.spun.Add(1)
			}
			if i%pollSpinYield != 0 {
				continue
			}
			if i%(pollSpinYield*pollClock) != 0 {
				goyield()
				continue
			}
			now := clock()
			if now > end {
				p.long = false // nothing came within spinLong
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
