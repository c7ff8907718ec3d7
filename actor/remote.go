package actor

import (
	"bytes"
	"fmt"
	"reflect"
	"sync"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/charmgo/charm/actor/wire"
	"github.com/charmgo/charm/internal/bigbuf"
	"github.com/charmgo/charm/internal/mpcheck"
	"github.com/charmgo/charm/internal/wirekind"
)

// Messages between processes. A message that may reach a PE of another
// node implements WireMessage and its kind is registered with a decoder.
// Sends to such PEs are buffered like local ones; when the buffer is
// flushed, each message is msgpack-encoded into an item, and the items for
// one node are coalesced into frames (wire.Frame), so one remote send
// carries many messages. The receiving node's link actor hands the items
// to their PEs, which decode them, so decoding runs in parallel.

// WireMessage is a message that can cross processes and encodes itself.
// A message that is a plain msgpack struct need not be one: registering
// its type with RegisterStruct is enough (see structKinds).
type WireMessage interface {
	Message
	// WireKind is the kind the message was registered under.
	WireKind() uint16
	// EncodeWire writes the message.
	EncodeWire(enc *msgpack.Encoder) error
}

// WireDecoder reads a message of one kind on the destination PE.
type WireDecoder func(pe *PE, dec *msgpack.Decoder) (Message, error)

// WireRunner is a WireMessage whose encoding splits in two: a head that
// consecutive messages of its kind for one PE have in common (for a chare
// envelope: collection, entry method, route), and a tail of its own.
// Such messages travel as runs (wire.Item with Tails): the head once, then
// the tails, so a burst of sends to one entry method on one PE does not
// repeat its header per message. The kind must be registered with
// RegisterWireRun.
type WireRunner interface {
	WireMessage
	AppendWireHead(b []byte) []byte
	AppendWireTail(b []byte) ([]byte, error)
}

// RunDecoder reads a run's head once, on the destination PE, and returns
// the function that decodes each of the run's tails into a message. The
// tail is only valid during the call. n is the number of tails the run
// says it holds (the function is called at most n times), so that the
// decoder can size what it allocates for them: it comes from the wire,
// so a decoder must not allocate in proportion to it unchecked.
type RunDecoder func(pe *PE, head []byte, n int) (func(tail []byte) (Message, error), error)

// WireMulti is a Multi whose messages can cross processes as one run:
// the head once, then a tail per message (see WireRunner).
type WireMulti interface {
	Multi
	WireKind() uint16
	AppendWireHead(b []byte) []byte
	// AppendWireTailAt appends the tail of message i (0 <= i < Count).
	AppendWireTailAt(b []byte, i int) ([]byte, error)
}

// RunAllDecoder reads a whole run into one message, a Multi, on the
// destination PE, so that a run of n messages is not n allocations. It
// returns nil, nil for a run it cannot read whole (then the kind's
// RunDecoder reads it tail by tail).
type RunAllDecoder func(pe *PE, it wire.Item) (Message, error)

type wireKind struct {
	name   string
	decode WireDecoder
	run    RunDecoder
	all    RunAllDecoder
}

var (
	wireMu sync.Mutex
	// wireKinds is indexed by kind and read without a lock on every message
	// from another node: kinds are registered in init functions, before
	// any job runs. It is as long as the highest kind registered needs,
	// not one entry per possible kind: a table of 0x8000 kinds was 1.3 MB
	// of pointers in the binary's data, which every collection scans.
	wireKinds []wireKind
	// structKinds maps the Go type of a message registered with
	// RegisterStruct to its kind; it is written in init functions only,
	// and read without a lock when such a message leaves for another node.
	structKinds = map[reflect.Type]uint16{}
)

// controlBit marks an item that carries a control (uncounted) message.
const controlBit = 0x8000

// RegisterWire registers the decoder of a message kind (1..0x7fff). The
// module's own kinds are listed in one table, package internal/wirekind,
// and must be registered under the name it gives them. Register in init
// functions only: lookups take no lock.
func RegisterWire(kind uint16, name string, decode WireDecoder) {
	registerKind(kind, name, "decoder", func(k *wireKind) bool { dup := k.decode != nil; k.decode = decode; return dup })
}

// RegisterWireChecked is RegisterWire for a kind whose decoder decodes
// the body by msgpack/v5's reflection: each body is checked first
// (internal/mpcheck), since msgpack/v5 makes a slice for as many elements
// as a header claims (four billion from five bytes) and recurses once per
// level of nesting, and so a corrupt body could take the process down.
// The check costs a pass over the bytes, small beside reflection.
func RegisterWireChecked(kind uint16, name string, decode WireDecoder) {
	registerChecked(kind, name, nil, decode)
}

// registerChecked is RegisterWireChecked; with a type t, the body is
// checked as bytes msgpack/v5 decodes into a t (mpcheck.SeqAs: also what
// the decoding would allocate).
func registerChecked(kind uint16, name string, t reflect.Type, decode WireDecoder) {
	RegisterWire(kind, name, func(pe *PE, dec *msgpack.Decoder) (Message, error) {
		// The body is the item decodeItem is decoding (pe.decBody), checked
		// here rather than in decodeItem, so that the kinds that need no
		// check (chare envelopes) pay nothing, and checked in place: a
		// copy would cost an allocation the size of the body, one
		// unpreemptible memmove for a long one.
		if pe == nil || pe.decBuf == nil {
			return nil, fmt.Errorf("actor: a %s decoded outside a PE's reader", name)
		}
		if err := mpcheck.SeqAs(pe.decBody, t); err != nil {
			return nil, err
		}
		return decode(pe, dec)
	})
}

// RegisterWireRun registers the run decoder of a kind whose messages are
// WireRunners (see RegisterWire for the rules). A kind may have both
// decoders: runs use this one.
func RegisterWireRun(kind uint16, name string, decode RunDecoder) {
	registerKind(kind, name, "run decoder", func(k *wireKind) bool { dup := k.run != nil; k.run = decode; return dup })
}

// RegisterWireRunAll registers the decoder of whole runs of a kind that has
// a RunDecoder (see RegisterWire for the rules).
func RegisterWireRunAll(kind uint16, name string, decode RunAllDecoder) {
	registerKind(kind, name, "whole-run decoder", func(k *wireKind) bool { dup := k.all != nil; k.all = decode; return dup })
}

// registerKind gives kind another decoder (set, which reports whether the
// kind had that decoder already), checking the kind's range, that it is not
// registered under another name, and that no decoder is given twice (two
// types registered as one kind: the second would decode the first's
// messages).
func registerKind(kind uint16, name, what string, set func(*wireKind) bool) {
	if kind == 0 || kind >= controlBit {
		panic(fmt.Sprintf("actor: wire kind %d of %s out of range", kind, name))
	}
	if tn := wirekind.Name(kind); tn != "" && tn != name {
		panic(fmt.Sprintf("actor: wire kind %d registered for %s, but package wirekind lists it as %s", kind, name, tn))
	}
	wireMu.Lock()
	defer wireMu.Unlock()
	if int(kind) >= len(wireKinds) {
		wireKinds = append(wireKinds, make([]wireKind, int(kind)+1-len(wireKinds))...)
	}
	if old := wireKinds[kind]; old.name != "" && old.name != name {
		panic(fmt.Sprintf("actor: wire kind %d registered for %s and %s", kind, old.name, name))
	}
	wireKinds[kind].name = name
	if set(&wireKinds[kind]) {
		panic(fmt.Sprintf("actor: wire kind %d (%s) given a %s twice", kind, name, what))
	}
}

// itemEncoder writes the messages for one node into one buffer; the items
// point into it until their frames are built, then it is reused. Structs
// are written as arrays (no field names): smaller and faster, and msgpack
// decodes either form. It is the msgpack encoder's writer, so that
// WireRunners and msgpack-encoded messages append to the same bytes.
type itemEncoder struct {
	b   []byte
	enc *msgpack.Encoder
	// The open run: the item it is (-1 for none), and where its head and
	// tails are in b.
	run                   int
	headStart, tailsStart int
}

func newItemEncoder() *itemEncoder {
	ie := &itemEncoder{run: -1}
	ie.enc = msgpack.NewEncoder(ie)
	ie.enc.UseArrayEncodedStructs(true)
	return ie
}

func (ie *itemEncoder) Write(p []byte) (int, error) {
	ie.b = bigbuf.Append(ie.b, p)
	return len(p), nil
}
func (ie *itemEncoder) WriteByte(c byte) error { ie.b = bigbuf.AppendByte(ie.b, c); return nil }
func (ie *itemEncoder) WriteString(s string) (int, error) {
	ie.b = bigbuf.AppendString(ie.b, s)
	return len(s), nil
}

func (ie *itemEncoder) reset() {
	ie.b, ie.run = ie.b[:0], -1
	if cap(ie.b) > keptItemBuf {
		ie.b = nil // a long message's buffer is not kept for the rest of the job
	}
}

// keptItemBuf is the largest buffer an itemEncoder keeps between frames.
const keptItemBuf = wire.MaxFrame

// maxRun caps the tails of one run, so that frames can be cut between runs
// well under their size limit.
const maxRun = 32 << 10

// add encodes one message for PE dest and appends it to items: to the open
// run if it continues it, else as a new item. The items' bodies point into
// ie's buffer.
func (ie *itemEncoder) add(items []wire.Item, dest int, m Message) ([]wire.Item, error) {
	var flag uint16
	if c, ok := m.(controlMsg); ok {
		m, flag = c.Message, controlBit
	}
	if mm, ok := m.(WireMulti); ok && flag == 0 {
		var err error
		for i := range mm.Count() {
			tail := func(b []byte) ([]byte, error) { return mm.AppendWireTailAt(b, i) }
			// After the first, a message of mm has the open run's head.
			if items, err = ie.addToRun(items, dest, mm.WireKind(), mm, tail, i > 0); err != nil {
				return items, err
			}
		}
		return items, nil
	}
	wm, ok := m.(WireMessage)
	if !ok {
		return ie.addStruct(items, dest, m, flag)
	}
	if _, sys := m.(control); sys {
		flag = controlBit
	}
	kind := wm.WireKind() | flag
	if r, ok := wm.(WireRunner); ok {
		return ie.addToRun(items, dest, kind, r, r.AppendWireTail, false)
	}
	start := len(ie.b)
	if err := wm.EncodeWire(ie.enc); err != nil {
		ie.b = ie.b[:start]
		return items, fmt.Errorf("actor: encoding %s for PE %d: %w", describe(m), dest, err)
	}
	return append(items, wire.Item{PE: int32(dest), Kind: kind, Body: ie.b[start:len(ie.b):len(ie.b)]}), nil
}

// addStruct encodes a message whose type was registered with
// RegisterStruct, as a msgpack struct.
func (ie *itemEncoder) addStruct(items []wire.Item, dest int, m Message, flag uint16) ([]wire.Item, error) {
	kind, ok := structKinds[reflect.TypeOf(m)]
	if !ok {
		return items, fmt.Errorf("actor: %s cannot be sent to PE %d in another process", describe(m), dest)
	}
	if _, sys := m.(control); sys {
		flag = controlBit
	}
	if p, ok := m.(wirePreparer); ok {
		if err := p.PrepareWire(); err != nil {
			return items, fmt.Errorf("actor: encoding %s for PE %d: %w", describe(m), dest, err)
		}
	}
	start := len(ie.b)
	if err := ie.enc.Encode(m); err != nil {
		ie.b = ie.b[:start]
		return items, fmt.Errorf("actor: encoding %s for PE %d: %w", describe(m), dest, err)
	}
	return append(items, wire.Item{PE: int32(dest), Kind: kind | flag, Body: ie.b[start:len(ie.b):len(ie.b)]}), nil
}

// wirePreparer is a message registered with RegisterStruct that fills
// fields of its wire form before it is encoded (see RegisterStruct).
type wirePreparer interface{ PrepareWire() error }

// WireKindName returns the name kind was registered under, or "" for a
// kind not registered.
func WireKindName(kind uint16) string {
	return kindOf(kind).name
}

// kindOf returns what was registered for kind: nothing (the zero
// wireKind) for a kind beyond the table.
func kindOf(kind uint16) wireKind {
	if int(kind) < len(wireKinds) {
		return wireKinds[kind]
	}
	return wireKind{}
}

// addToRun appends a message that travels in runs: r's head, and the tail
// that tail appends. sameHead says the message continues the open run if
// that is still open (the next message of a Multi): its head is not
// written again to be compared.
func (ie *itemEncoder) addToRun(items []wire.Item, dest int, kind uint16, r interface{ AppendWireHead([]byte) []byte },
	tail func([]byte) ([]byte, error), sameHead bool) ([]wire.Item, error) {
	hs := len(ie.b)
	open := ie.run >= 0 && ie.run == len(items)-1 && hs-ie.tailsStart < maxRun
	continues := open && sameHead
	if open && !sameHead {
		ie.b = r.AppendWireHead(ie.b)
		run := &items[ie.run]
		continues = run.PE == int32(dest) && run.Kind == kind && bytes.Equal(ie.b[ie.headStart:ie.tailsStart], ie.b[hs:])
		if continues {
			ie.b = ie.b[:hs] // the run has this head already
		}
	}
	if !continues {
		if len(ie.b) == hs {
			ie.b = r.AppendWireHead(ie.b)
		}
		items = append(items, wire.Item{PE: int32(dest), Kind: kind})
		ie.run, ie.headStart, ie.tailsStart = len(items)-1, hs, len(ie.b)
	}
	before := len(ie.b)
	b, mark := wire.BeginTail(ie.b)
	b, err := tail(b)
	if err != nil {
		if continues {
			ie.b = ie.b[:before]
		} else {
			ie.b, items, ie.run = ie.b[:hs], items[:len(items)-1], -1
		}
		return items, fmt.Errorf("actor: encoding %s for PE %d: %w", describe(r), dest, err)
	}
	ie.b = wire.EndTail(b, mark)
	// The buffer may have moved: point the run at where it is now.
	it := &items[ie.run]
	it.Tails++
	it.Head = ie.b[ie.headStart:ie.tailsStart:ie.tailsStart]
	it.Body = ie.b[ie.tailsStart:len(ie.b):len(ie.b)]
	return items, nil
}

// flushRemote encodes the messages buffered for a PE of another node into
// this PE's pending items for that node.
func (pe *PE) flushRemote(dest int, q []Message) {
	n := pe.rt.node.nodeOf[dest]
	if pe.rout == nil {
		pe.rout = make([][]wire.Item, pe.rt.node.cfg.Nodes)
		pe.routEnc = make([]*itemEncoder, pe.rt.node.cfg.Nodes)
	}
	ie := pe.routEnc[n]
	if ie == nil {
		ie = newItemEncoder()
		pe.routEnc[n] = ie
	}
	if len(pe.rout[n]) == 0 && len(q) > 0 {
		pe.rnodes = append(pe.rnodes, n)
	}
	items := pe.rout[n]
	for _, m := range q {
		var err error
		if items, err = ie.add(items, dest, m); err != nil {
			pe.rout[n] = items
			pe.rt.Abort(err)
			return
		}
	}
	pe.rout[n] = items
	// A long burst (a loop of sends in one entry method) leaves in frames
	// as it goes, so that the other node starts working at once.
	if len(ie.b) >= eagerFrame {
		pe.sendFramesTo(n)
	}
}

// eagerFrame is how many bytes of messages for one node make a frame leave
// before the current message ends.
const eagerFrame = 64 << 10

// frameBudget is the bytes of items one data frame carries at most (with
// the experiment knob framePerItem, 0: wire.Split then cuts a chunk per
// item).
func frameBudget() int {
	if framePerItem {
		return 0
	}
	return wire.MaxFrame - 1024
}

func (pe *PE) sendFramesTo(n int) {
	items := pe.rout[n]
	for _, chunk := range wire.Split(items, frameBudget()) {
		pe.sendData(n, &wire.Frame{Kind: wire.KindData, Items: chunk})
	}
	clear(items)
	pe.rout[n] = items[:0]
	pe.routEnc[n].reset() // the frames hold copies of the bodies
}

// sendFrames sends the pending items of every node, split into frames
// under the size limit.
func (pe *PE) sendFrames() {
	for _, n := range pe.rnodes {
		if len(pe.rout[n]) > 0 {
			pe.sendFramesTo(n)
		}
	}
	pe.rnodes = pe.rnodes[:0]
}

// remoteBatch carries the items of one frame that are for one PE.
type remoteBatch struct {
	items []wire.Item
	done  *frameDone // acknowledges the frame once every PE's batch is done
}

// deliverRemote hands a data frame of size bytes's items to their PEs.
func (rt *Runtime) deliverRemote(f *wire.Frame, size int) {
	byPE := map[int32][]wire.Item{}
	var order []int32
	for _, it := range f.Items {
		if int(it.PE) >= len(rt.pes) || rt.pes[it.PE] == nil {
			rt.node.Rejected.Add(1)
			rt.Abort(fmt.Errorf("actor: node %d sent a message for PE %d, which is not on node %d", f.From, it.PE, rt.node.cfg.Node))
			return
		}
		if byPE[it.PE] == nil {
			order = append(order, it.PE)
		}
		byPE[it.PE] = append(byPE[it.PE], it)
	}
	d := &frameDone{from: f.From, bytes: int64(size)}
	d.left.Store(int32(len(order)))
	if len(order) == 0 { // nothing to deliver: acknowledged all the same
		d.left.Store(1)
		rt.frameProcessed(d)
	}
	for _, p := range order {
		rt.pes[p].post(&remoteBatch{items: byPE[p], done: d})
	}
}

// receiveRemote decodes and delivers the items of a remote batch.
func (pe *PE) receiveRemote(b *remoteBatch) {
	defer pe.rt.frameProcessed(b.done)
	for _, it := range b.items {
		if it.Tails > 0 {
			if err := pe.receiveRun(it); err != nil {
				pe.rt.Abort(err)
				return
			}
			if pe.rt.stopped.Load() {
				return
			}
			continue
		}
		m, err := pe.decodeItem(it)
		if err != nil {
			pe.rt.Abort(err)
			return
		}
		pe.deliver(m)
		if pe.rt.stopped.Load() {
			return
		}
	}
}

// receiveRun decodes a run's head once, then each tail, and delivers the
// messages as they come.
func (pe *PE) receiveRun(it wire.Item) (err error) {
	kind := it.Kind &^ controlBit
	k := kindOf(kind)
	if k.run == nil {
		return fmt.Errorf("actor: PE %d received a run of %d messages of kind %d, which has no run decoder", pe.id, it.Tails, kind)
	}
	defer func() { // a decoder must not take the process down
		if r := recover(); r != nil {
			err = fmt.Errorf("actor: decoding a %s on PE %d: %v", k.name, pe.id, r)
		}
	}()
	if k.all != nil && it.Kind&controlBit == 0 {
		m, err := k.all(pe, it)
		if err != nil {
			return fmt.Errorf("actor: decoding a run of %d %s on PE %d: %w", it.Tails, k.name, pe.id, err)
		}
		if m != nil {
			pe.deliver(m)
			return nil
		}
	}
	next, err := k.run(pe, it.Head, it.Tails)
	if err != nil {
		return fmt.Errorf("actor: decoding the head of a run of %s on PE %d: %w", k.name, pe.id, err)
	}
	rest := it.Body
	for i := range it.Tails {
		tail, r, ok := wire.NextTail(rest)
		if !ok {
			return fmt.Errorf("actor: a run of %s on PE %d ends after %d of %d messages", k.name, pe.id, i, it.Tails)
		}
		rest = r
		m, err := next(tail)
		if err != nil {
			return fmt.Errorf("actor: decoding a %s on PE %d: %w", k.name, pe.id, err)
		}
		if it.Kind&controlBit != 0 {
			if _, sys := m.(control); !sys {
				m = controlMsg{m}
			}
		}
		pe.deliver(m)
		if pe.rt.stopped.Load() {
			return nil
		}
	}
	return nil
}

func (pe *PE) decodeItem(it wire.Item) (m Message, err error) {
	kind := it.Kind &^ controlBit
	k := kindOf(kind)
	if k.decode == nil {
		if k.run != nil {
			return nil, fmt.Errorf("actor: PE %d received a %s outside a run", pe.id, k.name)
		}
		return nil, fmt.Errorf("actor: PE %d received a message of unknown kind %d", pe.id, kind)
	}
	defer func() { // a decoder must not take the process down
		if r := recover(); r != nil {
			err = fmt.Errorf("actor: decoding a %s on PE %d: %v", k.name, pe.id, r)
		}
	}()
	if pe.dec == nil {
		pe.decBuf = bytes.NewReader(nil)
		pe.dec = msgpack.NewDecoder(pe.decBuf)
	}
	pe.decBuf.Reset(it.Body)
	pe.decBody = it.Body
	pe.dec.Reset(pe.decBuf)
	m, err = k.decode(pe, pe.dec)
	pe.decBody = nil
	if err != nil {
		return nil, fmt.Errorf("actor: decoding a %s on PE %d: %w", k.name, pe.id, err)
	}
	if it.Kind&controlBit != 0 {
		if _, sys := m.(control); !sys {
			m = controlMsg{m}
		}
	}
	return m, nil
}

// shutdown ends this job's part of the shared endpoint: its link actor,
// its event subscription and its token. The endpoint itself stays for the
// process's next job.
func (rt *Runtime) nodeShutdown() {
	ns := rt.node
	// If this node ended the job, wait until the others have its exit frame
	// (or a grace period): the process may end as soon as Wait returns, and
	// with it the connections. Lost nodes are not waited for: a frozen
	// node would hold this one for the whole grace period.
	deadline := time.NewTimer(exitGrace)
	defer deadline.Stop()
wait:
	for len(ns.awaited()) > 0 {
		select {
		case <-ns.goneSig:
		case <-deadline.C:
			rt.log.Warn("exit frames not acknowledged", "node", ns.cfg.Node, "nodes", ns.awaited(), "after", exitGrace)
			break wait
		}
	}
	if ns.sock != nil {
		ns.sock.bye(ns)
		ns.sock.close()
	}
	if ns.sub != nil {
		rt.sys.EventStream.Unsubscribe(ns.sub)
	}
	if ns.linkAlias != nil {
		rt.sys.ProcessRegistry.Remove(ns.linkAlias)
	}
	if ns.link != nil {
		rt.sys.Root.Stop(ns.link)
	}
	removeToken(ns.cfg.Token)
}

// exitGrace bounds the wait for the other nodes to acknowledge an exit
// frame.
const exitGrace = 2 * time.Second

// Scratch returns a buffer of n bytes that stays valid until the next call
// on this PE: decoders use it for fixed-size fields.
func (pe *PE) Scratch(n int) []byte {
	if cap(pe.scratch) < n {
		pe.scratch = make([]byte, n)
	}
	return pe.scratch[:n]
}
