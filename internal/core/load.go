package core

import (
	"fmt"
	"math"
	"runtime"
	"time"
)

// Load measurement for load balancing (package lb reads it). When a PE
// measures, every entry method that runs on an object there is timed: its
// wall time, and, when this process has more PEs than Go may run at once
// (GOMAXPROCS), its CPU time too (on Linux: the goroutine is locked to its
// OS thread for the call and the thread's CPU clock is read before and
// after), so that the figure stays right when a PE waits for a core in the
// middle of a method. With a core per PE, wall time is right already, and
// costs two clock reads instead of two system calls. A threaded entry
// method is timed up to its first suspension only.

// ObjLoad is an object's load since its last reset.
type ObjLoad struct {
	Wall, CPU time.Duration
	// User, if set (HasUser), is the load the object gave itself with
	// SetLoad, in seconds; it replaces the measured one.
	User    float64
	HasUser bool
}

// Seconds is the load a strategy uses: the user's, else the CPU time if
// measured, else the wall time.
func (l ObjLoad) Seconds() float64 {
	switch {
	case l.HasUser:
		return l.User
	case l.CPU > 0:
		return l.CPU.Seconds()
	}
	return l.Wall.Seconds()
}

// SetLoad sets the object's load for the current load-balancing period,
// in seconds, instead of the measured one (Charm++'s setObjTime). A load
// that is negative, NaN or infinite is refused with an error naming the
// object, and the load stays as it was: one such value would make every
// PE load and imbalance figure of the step NaN.
func (b *Base) SetLoad(seconds float64) error {
	if math.IsNaN(seconds) || math.IsInf(seconds, 0) || seconds < 0 {
		return fmt.Errorf("chare: SetLoad(%g) on %s: a load is a finite number of seconds, at least 0", seconds, b.describe())
	}
	b.load.User, b.load.HasUser = seconds, true
	return nil
}

// describe names the object for an error message.
func (b *Base) describe() string {
	if b.coll == nil {
		return "an object that is not bound to a collection"
	}
	typ := "a chare type"
	if b.coll.Type != nil {
		typ = b.coll.Type.Name
	}
	switch b.coll.Kind {
	case KindElement:
		return fmt.Sprintf("element %v of %s (collection %d)", b.index, typ, b.coll.ID)
	case KindBranch:
		return fmt.Sprintf("branch %v of %s (collection %d)", b.index, typ, b.coll.ID)
	}
	return fmt.Sprintf("chare %s (collection %d)", typ, b.coll.ID)
}

// Load returns the object's load since the last reset.
func (b *Base) Load() ObjLoad { return b.load }

// ResetLoad starts a new measurement period for the object.
func (b *Base) ResetLoad() { b.load = ObjLoad{} }

// SetMeasure turns the timing of entry methods on this PE on or off.
func (pe *PE) SetMeasure(on bool) {
	pe.measure = on
	pe.ap.SetMeasureBusy(on)
	rt, local := pe.job.rt, 0
	for p := range pe.NumPEs() {
		if rt.NodeOf(p) == rt.NodeOf(pe.ID()) { // (the PEs may not all exist yet)
			local++
		}
	}
	pe.measureCPU = on && local > runtime.GOMAXPROCS(0)
}

// Measuring reports whether entry methods are timed on this PE.
func Measuring(pe *PE) bool { return pe.measure }

// invokeMeasured runs an entry method and adds its time to the object's
// load.
func (pe *PE) invokeMeasured(obj any, e Envelope) { pe.measured(obj, func() { e.invoke(pe, obj) }) }

// Timed runs fn, code of obj that is not an entry method (ResumeFromSync,
// say), and counts its time in obj's load when the PE measures.
func Timed(pe *PE, obj any, fn func()) {
	if !pe.measure {
		fn()
		return
	}
	pe.measured(obj, fn)
}

// measured times fn. The wall time covers the measurement itself (locking
// the thread, reading its clock), so that it does not show as the PE's
// background load; the CPU time is fn's alone.
func (pe *PE) measured(obj any, fn func()) {
	b := obj.(Context).base()
	t0 := time.Now()
	if !pe.measureCPU {
		fn()
		b.load.Wall += time.Since(t0)
		return
	}
	runtime.LockOSThread()
	c0, cpuOK := threadCPU()
	defer func() {
		if c1, ok := threadCPU(); ok && cpuOK {
			b.load.CPU += c1 - c0
		}
		runtime.UnlockOSThread()
		b.load.Wall += time.Since(t0)
	}()
	fn()
}

// CommEdge counts the messages one array element sent another since the
// last TakeComm, as seen on the sending PE.
type CommEdge struct {
	FromColl CollID
	From     any
	ToColl   CollID
	To       any
	Msgs     int
}

type commKey struct {
	fromColl, toColl CollID
	from, to         any
}

// SetCommGraph turns on or off the counting of messages between array
// elements sent from this PE (the load balancer's communication graph).
func SetCommGraph(pe *PE, on bool) {
	pe.commOn = on
	if on && pe.comm == nil {
		pe.comm = map[commKey]int{}
	}
}

// TakeComm returns the messages counted since the last call, and starts
// counting again.
func TakeComm(pe *PE) []CommEdge {
	out := make([]CommEdge, 0, len(pe.comm))
	for k, n := range pe.comm {
		out = append(out, CommEdge{FromColl: k.fromColl, From: k.from, ToColl: k.toColl, To: k.to, Msgs: n})
	}
	clear(pe.comm)
	return out
}

// countComm records a message from the sending object to an element.
func (pe *PE) countComm(from Context, r Route) {
	b := from.base()
	if b.coll == nil || b.coll.Kind != KindElement {
		return
	}
	to := r.Index
	if raw, ok := rawOf(to); ok { // a proxy that came from another process
		c, err := pe.collection(r.Coll)
		if err != nil {
			return
		}
		if to, err = pe.resolve(c, raw); err != nil {
			return
		}
	}
	pe.comm[commKey{fromColl: b.coll.ID, from: b.index, toColl: r.Coll, to: to}]++
}

// runClock times the messages of an element run one after another: each
// message's time runs from the end of the one before, so that a message
// costs one clock read instead of two (and, when CPU time is measured, one
// system call instead of two, with the thread locked once for the run
// rather than per message). The time between messages (looking the next
// element up) is charged to the next; a message routed elsewhere restarts
// the clock, so its routing is not.
type runClock struct {
	cpu, cpuOK bool
	t          time.Time
	c          time.Duration
}

func (k *runClock) start(pe *PE) {
	if k.cpu = pe.measureCPU; k.cpu {
		runtime.LockOSThread()
	}
	k.restart()
}

func (k *runClock) restart() {
	if k.cpu {
		k.c, k.cpuOK = threadCPU()
	}
	k.t = time.Now()
}

// charge adds the time since the last read to obj's load.
func (k *runClock) charge(obj any) {
	b := obj.(Context).base()
	if k.cpu {
		c, ok := threadCPU()
		if ok && k.cpuOK {
			b.load.CPU += c - k.c
		}
		k.c, k.cpuOK = c, ok
	}
	now := time.Now()
	b.load.Wall += now.Sub(k.t)
	k.t = now
}

func (k *runClock) stop() {
	if k.cpu {
		runtime.UnlockOSThread()
	}
}
