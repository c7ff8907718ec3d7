package actor

import "sync/atomic"

// peDispatcher runs one PE's mailbox on one goroutine that lives as long as
// the PE. protoactor-go's default dispatcher starts a goroutine each time an
// idle mailbox gets a message; with a PE's deep call paths (a bracket
// advancing, a delivery routing on) each such goroutine grew its stack
// again, and runtime.copystack/newstack took 38–43 % of the CPU of
// comlib/alltoall (pprof). A goroutine that stays keeps its grown stack.
//
// A mailbox schedules itself at most once until that run starts (protoactor
// moves it from idle to running with a compare-and-swap, and back only at
// the end of a run), so at most one run waits while the previous one
// finishes: a buffer of one never blocks a sender.
type peDispatcher struct {
	work       chan func()
	throughput int
	stopped    atomic.Bool
}

func newPEDispatcher(throughput int) *peDispatcher {
	d := &peDispatcher{work: make(chan func(), 1), throughput: throughput}
	go d.loop()
	return d
}

func (d *peDispatcher) Schedule(fn func()) { d.work <- fn }
func (d *peDispatcher) Throughput() int    { return d.throughput }

func (d *peDispatcher) loop() {
	for fn := range d.work {
		fn()
		if d.stopped.Load() {
			// The actor has stopped: a run scheduled by a late message
			// stays in the buffer, unrun, as protoactor-go would leave it
			// on a dead actor's mailbox.
			return
		}
	}
}

// stop ends the goroutine after the run under way (the one that delivered
// the actor's Stopped).
func (d *peDispatcher) stop() { d.stopped.Store(true) }
