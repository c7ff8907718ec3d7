package actor

import (
	"bytes"
	"fmt"
	"sync"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/charmgo/charm/actor/wire"
)

// Messages between processes. A message that may reach a PE of another
// node implements WireMessage and its kind is registered with a decoder.
// Sends to such PEs are buffered like local ones; when the buffer is
// flushed, each message is msgpack-encoded into an item, and the items for
// one node are coalesced into frames (wire.Frame), so one remote send
// carries many messages. The receiving node's link actor hands the items
// to their PEs, which decode them, so decoding runs in parallel.

// WireMessage is a message that can cross processes.
type WireMessage interface {
	Message
	// WireKind is the kind the message was registered under.
	WireKind() uint16
	// EncodeWire writes the message.
	EncodeWire(enc *msgpack.Encoder) error
}

// WireDecoder reads a message of one kind on the destination PE.
type WireDecoder func(pe *PE, dec *msgpack.Decoder) (Message, error)

type wireKind struct {
	name   string
	decode WireDecoder
}

var (
	wireMu sync.Mutex
	// wireKinds is indexed by kind and read without a lock on every message
	// from another node: kinds are registered in init functions, before
	// any job runs.
	wireKinds [controlBit]wireKind
)

// controlBit marks an item that carries a control (uncounted) message.
const controlBit = 0x8000

// RegisterWire registers the decoder of a message kind (1..0x7fff). The
// runtime uses kinds below 100; package chare 100 to 199. Register in init
// functions only: lookups take no lock.
func RegisterWire(kind uint16, name string, decode WireDecoder) {
	if kind == 0 || kind >= controlBit {
		panic(fmt.Sprintf("actor: wire kind %d of %s out of range", kind, name))
	}
	wireMu.Lock()
	defer wireMu.Unlock()
	if old := wireKinds[kind]; old.decode != nil && old.name != name {
		panic(fmt.Sprintf("actor: wire kind %d registered for %s and %s", kind, old.name, name))
	}
	wireKinds[kind] = wireKind{name, decode}
}

// itemEncoder writes the messages for one node into one buffer; the items
// point into it until their frames are built, then it is reused. Structs
// are written as arrays (no field names): smaller and faster, and msgpack
// decodes either form.
type itemEncoder struct {
	buf bytes.Buffer
	enc *msgpack.Encoder
}

func newItemEncoder() *itemEncoder {
	ie := &itemEncoder{}
	ie.enc = msgpack.NewEncoder(&ie.buf)
	ie.enc.UseArrayEncodedStructs(true)
	return ie
}

// encodeItem turns one message for PE dest into a wire item whose body
// points into ie's buffer.
func (ie *itemEncoder) encodeItem(dest int, m Message) (wire.Item, error) {
	var flag uint16
	if c, ok := m.(controlMsg); ok {
		m, flag = c.Message, controlBit
	}
	wm, ok := m.(WireMessage)
	if !ok {
		return wire.Item{}, fmt.Errorf("actor: a %T cannot be sent to PE %d in another process", m, dest)
	}
	if _, sys := m.(control); sys {
		flag = controlBit
	}
	start := ie.buf.Len()
	if err := wm.EncodeWire(ie.enc); err != nil {
		ie.buf.Truncate(start)
		return wire.Item{}, fmt.Errorf("actor: encoding a %T for PE %d: %w", m, dest, err)
	}
	b := ie.buf.Bytes()
	return wire.Item{PE: int32(dest), Kind: wm.WireKind() | flag, Body: b[start:len(b):len(b)]}, nil
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
	for _, m := range q {
		it, err := ie.encodeItem(dest, m)
		if err != nil {
			pe.rt.Abort(err)
			return
		}
		if len(pe.rout[n]) == 0 {
			pe.rnodes = append(pe.rnodes, n)
		}
		pe.rout[n] = append(pe.rout[n], it)
	}
	// A long burst (a loop of sends in one entry method) leaves in frames
	// as it goes, so that the other node starts working at once.
	if ie.buf.Len() >= eagerFrame {
		pe.sendFramesTo(n)
	}
}

// eagerFrame is how many bytes of messages for one node make a frame leave
// before the current message ends.
const eagerFrame = 64 << 10

func (pe *PE) sendFramesTo(n int) {
	items := pe.rout[n]
	for _, chunk := range wire.Split(items, wire.MaxFrame-1024) {
		pe.rt.sendFrame(n, &wire.Frame{Kind: wire.KindData, Items: chunk})
	}
	clear(items)
	pe.rout[n] = items[:0]
	pe.routEnc[n].buf.Reset() // the frames hold copies of the bodies
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
type remoteBatch struct{ items []wire.Item }

// deliverRemote hands a data frame's items to their PEs.
func (rt *Runtime) deliverRemote(f *wire.Frame) {
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
	for _, p := range order {
		rt.pes[p].post(&remoteBatch{items: byPE[p]})
	}
}

// receiveRemote decodes and delivers the items of a remote batch.
func (pe *PE) receiveRemote(b *remoteBatch) {
	for _, it := range b.items {
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

func (pe *PE) decodeItem(it wire.Item) (m Message, err error) {
	kind := it.Kind &^ controlBit
	k := wireKinds[kind]
	if k.decode == nil {
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
	pe.dec.Reset(pe.decBuf)
	m, err = k.decode(pe, pe.dec)
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
	if ns.sub != nil {
		rt.sys.EventStream.Unsubscribe(ns.sub)
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
