package actor

import (
	"encoding/binary"
	"sync"
	"sync/atomic"
	"time"

	"github.com/charmgo/charm/actor/wire"
)

// Back-pressure between the nodes of a job.
//
// A PE that sends to another process faster than that process runs would
// otherwise fill the connection's queues and the receiving PEs' mailboxes
// until one of the processes runs out of memory. Each node counts, per
// destination node, the bytes of the data frames its PEs sent there that
// the destination has not yet processed (in flight). The destination's
// PEs acknowledge a frame once all of its messages have been delivered;
// the acknowledgements for one sender are gathered and sent back in
// credit frames (wire.KindCredit) every time a quarter of the bound has
// been processed (less than the half at which a sender resumes, so that a
// receiver that has processed everything has always said so). A PE about to send a data frame to a node whose bytes in
// flight have reached Config.MaxRemoteInFlight parks — its goroutine
// waits, so the PE processes nothing meanwhile — until they fall below
// half the bound. Nothing is dropped.
//
// Waiting must not deadlock: PEs of two nodes that send to each other
// could each wait for the other's acknowledgements. As between the PEs of
// one process (credit.go), a PE does not wait for a node that has PEs
// waiting for credit themselves: a node tells the others, in a credit
// frame, when its first PE starts waiting and when its last one stops,
// and a parked PE looks again when told (or every few milliseconds). The
// bound can then be exceeded by what such PEs send meanwhile.

// DefaultMaxRemoteInFlight is the bytes in flight from one node to
// another at which a sending PE waits when Config.MaxRemoteInFlight is 0.
const DefaultMaxRemoteInFlight = 32 << 20

// remoteCredit is a node's side of the back-pressure between nodes.
type remoteCredit struct {
	bound    int64
	inFlight []atomic.Int64 // per destination node: bytes sent, not acknowledged
	peerWait []atomic.Bool  // per node: it said PEs of its wait for credit
	toAck    []atomic.Int64 // per source node: bytes processed here, not yet acknowledged
	waiting  atomic.Int64   // this node's PEs parked in awaitRemote
	statusMu sync.Mutex     // orders the changes of waiting and the frames that tell them

	mu   sync.Mutex
	wake chan struct{} // closed when a credit frame arrives

	waits   atomic.Int64 // times a PE parked (for tests and benchmarks)
	overrun atomic.Int64 // frames sent over the bound because their node's PEs were waiting
	peak    atomic.Int64 // the most bytes in flight to one node seen when sending
	biggest atomic.Int64 // the largest data frame sent
}

func newRemoteCredit(nodes int, bound int) *remoteCredit {
	rc := &remoteCredit{
		inFlight: make([]atomic.Int64, nodes),
		peerWait: make([]atomic.Bool, nodes),
		toAck:    make([]atomic.Int64, nodes),
	}
	switch {
	case bound < 0:
	case bound == 0:
		rc.bound = DefaultMaxRemoteInFlight
	default:
		rc.bound = int64(bound)
	}
	return rc
}

// noNews is the Code of a credit frame that only acknowledges bytes: the
// sender's word on its waiting PEs is in the frames of tellWaiting (0 or
// 1), which leave in order.
const noNews = 2

// frameDone counts down the PEs that still have to process their part of
// one data frame; the last one acknowledges the frame's bytes.
type frameDone struct {
	from  int
	bytes int64
	left  atomic.Int32
}

// sendData sends a data frame to node n, after waiting for credit if the
// bytes in flight there are at the bound. It runs on pe.
func (pe *PE) sendData(n int, f *wire.Frame) {
	rt := pe.rt
	rc := rt.node.credit
	if rc.bound > 0 && rc.inFlight[n].Load() >= rc.bound {
		pe.awaitRemote(n)
	}
	if size := rt.sendFrame(n, f); size > 0 && rc.bound > 0 {
		storeMax(&rc.peak, rc.inFlight[n].Add(int64(size)))
		storeMax(&rc.biggest, int64(size))
	}
}

func storeMax(a *atomic.Int64, v int64) {
	for p := a.Load(); v > p && !a.CompareAndSwap(p, v); p = a.Load() {
	}
}

// awaitRemote parks pe while node n's bytes in flight are at or over the
// bound, as described above.
func (pe *PE) awaitRemote(n int) {
	rt := pe.rt
	rc := rt.node.credit
	rt.tellWaiting(true)
	defer rt.tellWaiting(false)
	pe.startWaiting() // local senders do not wait for this PE either
	defer pe.credit.waiting.Store(false)
	low := rc.bound / 2
	var t *time.Timer
	defer stopTimer(&t)
	for {
		if rc.peerWait[n].Load() {
			rc.overrun.Add(1)
			return
		}
		if rc.inFlight[n].Load() < low || rt.stopped.Load() {
			return
		}
		rc.mu.Lock()
		if rc.wake == nil {
			rc.wake = make(chan struct{})
		}
		ch := rc.wake
		rc.mu.Unlock()
		// Looked at again after taking the channel: a credit frame that
		// came between the first look and the wait closes ch.
		if rc.inFlight[n].Load() < low || rc.peerWait[n].Load() {
			continue
		}
		rc.waits.Add(1)
		if !rt.park(ch, &t) {
			return
		}
	}
}

// tellWaiting counts a PE of this node starting (on) or ending its wait
// and, when the first starts or the last ends, tells every other node.
// The count and the frames change under one lock, so that the frames
// leave in the order of the changes and a node never keeps a stale word.
func (rt *Runtime) tellWaiting(on bool) {
	ns := rt.node
	rc := ns.credit
	rc.statusMu.Lock()
	defer rc.statusMu.Unlock()
	code := 0
	if on {
		if rc.waiting.Add(1) != 1 {
			return
		}
		code = 1
	} else if rc.waiting.Add(-1) != 0 {
		return
	}
	for n := range ns.cfg.Nodes {
		if n != ns.cfg.Node && !ns.lost[n].Load() {
			rt.sendFrame(n, &wire.Frame{Kind: wire.KindCredit, Code: code, Body: binary.AppendUvarint(nil, 0)})
		}
	}
}

// frameProcessed records that a PE has delivered its part of frame d, and
// acknowledges the frame's sender once enough of its bytes are done.
func (rt *Runtime) frameProcessed(d *frameDone) {
	if d == nil || d.left.Add(-1) > 0 {
		return
	}
	rc := rt.node.credit
	if rc.bound == 0 {
		return
	}
	if rc.toAck[d.from].Add(d.bytes) < rc.bound/4 {
		return
	}
	if b := rc.toAck[d.from].Swap(0); b > 0 {
		rt.sendFrame(d.from, &wire.Frame{Kind: wire.KindCredit, Code: noNews, Body: binary.AppendUvarint(nil, uint64(b))})
	}
}

// onCredit handles a credit frame from node from: acknowledged bytes, and
// whether that node's PEs wait. It reports false for a malformed frame.
func (rt *Runtime) onCredit(f *wire.Frame) bool {
	rc := rt.node.credit
	b, k := binary.Uvarint(f.Body)
	if k <= 0 || k != len(f.Body) || b > 1<<62 || f.Code < 0 || f.Code > noNews {
		return false
	}
	rc.inFlight[f.From].Add(-int64(b))
	if f.Code != noNews {
		rc.peerWait[f.From].Store(f.Code == 1)
	}
	rc.mu.Lock()
	if rc.wake != nil {
		close(rc.wake)
		rc.wake = nil
	}
	rc.mu.Unlock()
	return true
}

// RemoteCredit is a node's back-pressure towards the other nodes.
type RemoteCredit struct {
	Parked   int64 // times a PE waited
	Overruns int64 // frames sent over the bound because the destination's PEs were waiting
	Peak     int64 // the most bytes in flight to one node, seen when sending
	Biggest  int64 // the largest data frame sent: a sender looks before each frame, so Peak may exceed the bound by this
}

// RemoteCreditStats reports this node's back-pressure towards other nodes
// (zero in a job of one process).
func (rt *Runtime) RemoteCreditStats() RemoteCredit {
	if rt.node == nil || rt.node.credit == nil {
		return RemoteCredit{}
	}
	rc := rt.node.credit
	return RemoteCredit{rc.waits.Load(), rc.overrun.Load(), rc.peak.Load(), rc.biggest.Load()}
}
