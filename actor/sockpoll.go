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
// after a read that found data, and while the socket's frames come less
// than spinLong apart (as a PE's pace, spinPace), it polls the socket
// without blocking for up to spinLong before it waits in Go's network
// poller, yielding its P between polls (so that the PEs it handed frames
// to run there): the next frame is read as it arrives instead of after
// the poller's wake-up, which on a machine whose idle cores halt costs
// tens of microseconds, as Charm++'s PEs poll their sockets. One reader of
// a process polls at a time (spinning), and only while fewer of the
// process's PEs are awake than there are Ps (the PEs' work comes first,
// and another P runs the network poller for the other connections); the
// other readers wait in the poller.
type pollReader struct {
	rc       syscall.RawConn
	spinning *atomic.Bool  // the process's: held by the reader that polls
	awake    *atomic.Int32 // the process's PEs whose goroutine runs
	procs    int32         // GOMAXPROCS
	active   bool          // WaitActive
	long     bool          // the frames come less than spinLong apart
	waitedAt time.Duration
	spun     atomic.Int64 // spins begun (for tests)
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
// at the clock.
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
	defer func() {
		if held {
			p.spinning.Store(false)
		}
	}()
	err := p.rc.Read(func(fd uintptr) bool {
		if p.waitedAt != 0 {
			// Back from the poller: a wait that a spin would have covered
			// starts the spins again.
			p.long = p.active && clock()-p.waitedAt < spinLong
			p.waitedAt = 0
		}
		for i := 1; ; i++ {
			n, rerr = syscall.Read(int(fd), b)
			switch {
			case rerr == syscall.EINTR:
				continue
			case rerr != syscall.EAGAIN:
				return true
			}
			if !held {
				if !p.long || !p.room() || !p.spinning.CompareAndSwap(false, true) {
					p.waitedAt = clock()
					return false
				}
				held, end = true, clock()+spinLong
				p.spun.Add(1)
			}
			if i%pollSpinYield == 0 {
				if i%(pollSpinYield*pollClock) == 0 && (clock() > end || !p.room()) {
					// Nothing came within spinLong (then no spin until a
					// wait is short again), or the PEs need the Ps: wait
					// in the poller.
					p.long = p.long && clock() <= end
					p.spinning.Store(false)
					held = false
					p.waitedAt = clock()
					return false
				}
				goyield()
			}
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
