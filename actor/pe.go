package actor

import (
	"bytes"
	"fmt"
	"runtime/debug"
	"sync"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/charmgo/charm/actor/wire"
)

// Message is what travels between PEs: the destination PE calls Deliver on
// itself. Messages sent with [PE.Send] count for quiescence detection.
type Message interface {
	Deliver(pe *PE)
}

// control marks the runtime's own messages, which quiescence does not count.
type control interface {
	Message
	system()
}

// Describer is implemented by messages that can name themselves in an error
// report (for example "Worker.Step on element 3").
type Describer interface {
	Describe() string
}

// PE is one processing element. Its fields are touched only by code running
// on it (its message handlers and the thread that holds it).
type PE struct {
	// Read by the PEs that send here: on a cache line of their own, away
	// from the fields this PE writes at each message (see lineCap).
	rt *Runtime
	id int
	mb *mailbox // see mailbox.run
	_  [40]byte

	// woke: a send posted since the handling of the current message began
	// woke an idle PE (handle reports it to mailbox.run).
	woke bool

	created, processed int64 // quiescence counts
	cur                *Thread
	received           uint64 // messages delivered (batches count each), for naps
	naps               []*nap // threads napping until the next message (thread.go)
	qd                 qdState
	cds                map[uint64]*cdCounters
	cdLocal            map[uint64]*cdLocal
	cdRoots            map[uint64]*cdRoot
	cdPending          map[uint64]int

	// idleWorkers are goroutines of finished threads, waiting to run the
	// PE's next threads (Spawn); workersStarted counts the goroutines
	// Spawn started.
	idleWorkers    []*threadWorker
	workersStarted int

	out     [][]Message    // buffered sends, per destination PE
	outN    []int          // the messages in them (a Multi counts for several)
	dirty   []int          // destinations with buffered sends
	rout    [][]wire.Item  // encoded sends for other nodes, per node
	routEnc []*itemEncoder // the buffers of their bodies, per node
	rnodes  []int          // nodes with encoded sends

	credit creditState // the back-pressure of local sends (credit.go)

	measureBusy bool
	busy        time.Duration // time spent handling messages, while measured

	dec     *msgpack.Decoder // for messages from other nodes
	decBuf  *bytes.Reader
	decBody []byte // the body decodeItem is decoding (RegisterWireChecked checks it)
	scratch []byte

	// Ext holds the state that upper layers keep per PE.
	Ext any
}

func newPE(rt *Runtime, id int) *PE {
	return &PE{rt: rt, id: id, qd: qdState{acc: map[waveKey]*waveAcc{}}, cds: map[uint64]*cdCounters{}}
}

// SetMeasureBusy turns on or off the measurement of the time the PE
// spends handling messages (load balancing reads it with Busy).
func (pe *PE) SetMeasureBusy(on bool) { pe.measureBusy = on }

// Busy returns the time spent handling messages while measured, and
// resets it.
func (pe *PE) Busy() time.Duration {
	b := pe.busy
	pe.busy = 0
	return b
}

// ID returns the PE's number.
func (pe *PE) ID() int { return pe.id }

// NumPEs returns the number of PEs in the job.
func (pe *PE) NumPEs() int { return len(pe.rt.pes) }

// Runtime returns the runtime the PE belongs to.
func (pe *PE) Runtime() *Runtime { return pe.rt }

// Send sends m to PE dest and counts it for quiescence detection. It must be
// called by code running on pe. Sends are buffered per destination and
// posted when the message being processed ends (or the buffer is full):
// one mailbox operation then carries many messages, and the order per
// destination is kept.
func (pe *PE) Send(dest int, m Message) {
	pe.created++
	pe.enqueue(dest, m)
}

// Multi is a message that stands for several: a run of sends of one entry
// method to one PE, carried as one slice of messages instead of one
// envelope each. Its Deliver runs all of them; it counts as Count messages
// for quiescence and for the bound on a batch, and for back-pressure too
// unless it is Sized. A Multi sent with Send must have Count 1 then; it
// grows with Grow.
type Multi interface {
	Message
	Count() int
}

// Open returns the message sent last to dest if it is still buffered on
// pe, or nil: a caller may add to it (a Multi) and then call Grow, which
// keeps the order of sends since nothing was sent to dest after it. It must
// be called by code running on pe.
func (pe *PE) Open(dest int) Message {
	if pe.out == nil || dest < 0 || dest >= len(pe.out) {
		return nil
	}
	if q := pe.out[dest]; len(q) > 0 {
		return q[len(q)-1]
	}
	return nil
}

// Grow records that one message was added to the Multi that Open returned
// for dest: it counts like a Send.
func (pe *PE) Grow(dest int) {
	pe.created++
	pe.outN[dest]++
	if pe.outN[dest] >= batchMax {
		pe.flushTo(dest)
	}
}

// Sized is implemented by a Multi that knows the bytes it holds: the bound
// on messages in flight (Config.MaxInFlight) counts it by its bytes, in
// units of an envelope's size (EnvelopeBytes), instead of by its messages,
// so that a run of small messages may hold as many as the same memory of
// envelopes would.
type Sized interface {
	Multi
	Bytes() int
}

// EnvelopeBytes is the size of a single message as the bound on messages in
// flight counts it: about that of an envelope with its header.
const EnvelopeBytes = 128

// weight is how much of the bound on messages in flight m takes.
func weight(m Message) int {
	switch x := m.(type) {
	case Sized:
		return max(1, (x.Bytes()+EnvelopeBytes-1)/EnvelopeBytes)
	case Multi:
		return x.Count()
	}
	return 1
}

// PostControl puts a control message in pe's mailbox from any goroutine
// (a timer, say).
func (pe *PE) PostControl(m Message) { pe.post(extMsg{m}) }

// SendControl sends m to PE dest without counting it for quiescence. It
// must be called by code running on pe.
func (pe *PE) SendControl(dest int, m Message) { pe.sendSys(dest, m) }

func (pe *PE) sendSys(dest int, m Message) { pe.enqueue(dest, controlMsg{m}) }

// batchMax bounds how many messages wait in one destination's buffer.
const batchMax = 256

// batch carries several messages in one mailbox operation; w is their
// weight for the bound on messages in flight.
type batch struct {
	msgs []Message
	w    int
}

func (pe *PE) enqueue(dest int, m Message) {
	if pe.out == nil {
		n := len(pe.rt.pes)
		pe.out = make([][]Message, n, lineCap(n, 24))
		pe.outN = make([]int, n, lineCap(n, 8))
		pe.dirty = make([]int, 0, lineCap(n, 8))
	}
	q := pe.out[dest]
	if len(q) == 0 {
		pe.dirty = append(pe.dirty, dest)
		if cap(q) == 0 {
			q = make([]Message, 0, lineCap(1, 16))
		}
	}
	q = append(q, m)
	pe.out[dest] = q
	pe.outN[dest]++
	if pe.outN[dest] >= batchMax {
		pe.flushTo(dest)
	}
}

// lineCap returns the capacity, at least n, of a slice of elements of
// size bytes that this PE writes as it sends: a whole number of cache
// lines, so that the allocator, whose size classes of whole lines start
// on a line (or, above 512 bytes with pointers, 8 bytes past one, in a
// class of more than the size), gives it no line that it shares with
// another object. A small slice would otherwise share its line with
// another PE's, and the line would move between their cores at each send.
func lineCap(n, size int) int {
	per := 64
	for per%2 == 0 && size%2 == 0 {
		per, size = per/2, size/2
	}
	return (n + per - 1) / per * per
}

// Flush posts the sends buffered so far instead of waiting for the end of
// the current message: a broadcast passes itself down the tree this way
// before running on the local members.
// Sends to other nodes wait for the end of the current batch of messages
// (or 64 KiB), so that many share a frame.
func (pe *PE) Flush() { pe.flushLocal() }

// flush posts every buffered send.
func (pe *PE) flush() {
	pe.flushLocal()
	if len(pe.rnodes) > 0 {
		pe.sendFrames()
	}
}

// flushLocal posts the buffered sends to local PEs and encodes those for
// other nodes.
func (pe *PE) flushLocal() {
	for _, d := range pe.dirty {
		pe.flushTo(d)
	}
	pe.dirty = pe.dirty[:0]
}

func (pe *PE) flushTo(dest int) {
	q, n := pe.out[dest], pe.outN[dest]
	pe.outN[dest] = 0
	if pe.rt.pes[dest] == nil && len(q) > 0 { // a PE of another node
		pe.flushRemote(dest, q)
		clear(q)
		pe.out[dest] = q[:0]
		return
	}
	if len(q) == 0 {
		return
	}
	// The weight for the bound on messages in flight: a batch carries the
	// sender's (the receiver gives back what the batch says), a lone
	// message is weighed by the receiver as weight does, so both weigh
	// it so.
	w := n
	switch {
	case len(q) == 1:
		w = weight(q[0])
	case len(q) < n: // Multis: weighed by their bytes
		w = 0
		for _, m := range q {
			w += weight(m)
		}
	}
	d := pe.rt.pes[dest]
	pe.awaitCredit(d)
	d.credit.backlog.Add(int64(w))
	if len(q) == 1 {
		if d.mb.post(q[0]) {
			pe.woke = true
		}
		q[0] = nil
		pe.out[dest] = q[:0] // the slice stays here: reuse it
		return
	}
	// The receiver owns q now; this PE's buffer becomes the slice of a
	// batch delivered earlier, if there is one.
	b, _ := batches.Get().(*batch)
	if b == nil {
		b = &batch{}
	}
	spare := b.msgs
	b.msgs, b.w = q, w
	if d.mb.post(b) {
		pe.woke = true
	}
	if cap(spare) == 0 {
		spare = make([]Message, 0, lineCap(len(q), 16))
	}
	pe.out[dest] = spare
}

// batches holds delivered batches with their emptied slices, for the
// senders to reuse.
var batches sync.Pool

// post puts m (a Message, a *batch or a *remoteBatch) in pe's mailbox; any
// goroutine may call it.
func (pe *PE) post(m any) { pe.mb.post(m) }

type controlMsg struct{ Message }

func (controlMsg) system() {}

// extMsg is a control message posted from outside the PEs' sends (a timer,
// the boot): it is not in its receiver's backlog.
type extMsg struct{ Message }

func (extMsg) system() {}

// handleWoke is handle for mailbox.run: it reports whether the message's
// sends woke an idle PE.
func (pe *PE) handleWoke(msg any) bool {
	pe.woke = false
	pe.handle(msg)
	return pe.woke
}

// handle runs one message taken from pe's mailbox, then posts the sends it
// buffered.
func (pe *PE) handle(msg any) {
	if pe.rt.stopped.Load() {
		return
	}
	defer func() {
		// deliver recovers a message's panic; this is for the runtime's own
		// code around it, which would otherwise end the process.
		if r := recover(); r != nil {
			pe.rt.Abort(panicError(pe, msg, r))
		}
	}()
	if pe.measureBusy {
		t0 := time.Now()
		defer func() { pe.busy += time.Since(t0) }()
	}
	switch m := msg.(type) {
	case *remoteBatch:
		pe.receiveRemote(m)
	case *batch:
		for i, x := range m.msgs {
			pe.deliver(x)
			m.msgs[i] = nil
			if pe.rt.stopped.Load() {
				return
			}
		}
		pe.consumed(m.w)
		if cap(m.msgs) <= 2*batchMax {
			m.msgs, m.w = m.msgs[:0], 0
			batches.Put(m)
		}
	case extMsg:
		pe.deliver(m)
	case Message:
		w := weight(m) // before delivery: a Releaser is not to be read after
		pe.deliver(m)
		pe.consumed(w)
	default:
		pe.rt.Abort(fmt.Errorf("actor: PE %d got %T, which is not a message", pe.id, msg))
		return
	}
	if len(pe.naps) > 0 {
		pe.wakeNaps() // the message was handled: the nappers look at what it brought
	}
	pe.flush()
}

func (pe *PE) deliver(m Message) {
	// Counted per message, not per mailbox receive: a batch holds many,
	// and a thread that naps after the first of them must be woken by
	// the others (Thread.Nap).
	pe.received++
	defer func() {
		if r := recover(); r != nil {
			pe.rt.Abort(panicError(pe, m, r))
		}
	}()
	m.Deliver(pe)
	switch x := m.(type) {
	case control:
	case Multi:
		pe.processed += int64(x.Count())
		if r, ok := x.(Releaser); ok {
			r.Release()
		}
	default:
		pe.processed++
	}
}

// Releaser is implemented by a Multi whose memory its maker reuses: the
// receiving PE calls Release once it has delivered and counted it, and
// holds it no longer. It is not called for a message whose delivery
// panicked, nor for one dropped when the job ended.
type Releaser interface {
	Release()
}

// PanicError reports a panic in code run on a PE. Every node of a job
// returns it; on the nodes other than the one that panicked, Value is the
// panic's value as text.
type PanicError struct {
	PE    int
	What  string // what was running, as the message describes itself
	Value any
	Stack []byte
}

func (e *PanicError) Error() string {
	return fmt.Sprintf("panic on PE %d in %s: %v", e.PE, e.What, e.Value)
}

func panicError(pe *PE, m any, r any) error {
	if pe2, ok := r.(*PanicError); ok {
		return pe2
	}
	return &PanicError{PE: pe.id, What: describe(m), Value: r, Stack: debug.Stack()}
}

// describe names m for an error report: its Describe, or its Go type.
func describe(m any) string {
	if d, ok := m.(Describer); ok {
		return d.Describe()
	}
	return fmt.Sprintf("%T", m)
}
