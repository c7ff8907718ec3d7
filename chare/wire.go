package chare

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"runtime/debug"
	"sync"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/charmgo/charm/actor"
	"github.com/charmgo/charm/actor/codec"
	"github.com/charmgo/charm/chare/indexcodec"
	"github.com/charmgo/charm/chare/reducer"
	"github.com/charmgo/charm/internal/bigbuf"
	"github.com/charmgo/charm/internal/wirekind"
)

// Messages between processes. Inside one process envelopes are handed
// over; to another process they are msgpack-encoded (wire kinds 100..199)
// and decoded on the destination PE into an envDyn, which calls the entry
// method through its description. Indices travel as bytes (rawIndex, see
// package indexcodec) and are decoded with the collection's own index type when
// they are used, so that a node can carry a proxy for a collection it
// does not know yet.
//
// Collections are described by a Spec that the creating PE announces to
// every other node. A message for a collection not known yet on a node
// waits there (pending) until its announcement arrives; the announcement
// always arrives, because the creator sends it before anything else.

// The kinds of chare's messages between processes are in package
// internal/wirekind.

// rawIndex is an index still in its wire form (package indexcodec).
type rawIndex []byte

// String shows a built-in index as %v shows the index itself.
func (r rawIndex) String() string { return indexcodec.Format(r) }

// wireIndex is the wire form of an index short enough to be held in a
// value of its own: the header of an envelope from another process keeps
// a *wireIndex, which goes in an any without an allocation (a rawIndex
// would take two: its bytes and its boxed slice) and comes from a slab
// when a wire run is read tail by tail. The array that receives the
// envelope reads the index from it without boxing it (RawDeliverer).
type wireIndex struct {
	n uint8
	b [15]byte
}

func (w *wireIndex) raw() rawIndex  { return w.b[:w.n:w.n] }
func (w *wireIndex) String() string { return w.raw().String() }

// rawOf returns an index's wire form if it is still in one.
func rawOf(i any) (rawIndex, bool) {
	switch r := i.(type) {
	case rawIndex:
		return r, true
	case *wireIndex:
		return r.raw(), true
	}
	return nil, false
}

// indexSlab hands out wireIndex values for the envelopes of one wire run.
type indexSlab struct {
	free []wireIndex
	n    int // the size of the next array: 4, doubling up to slabMax
}

// index returns b (which aliases a frame) as a header's index: a copy in
// a wireIndex from s, or a rawIndex if it is too long for one. left is
// how many of the run's envelopes are still to be read, this one
// included: no array is made longer than that.
func (s *indexSlab) index(b []byte, left int) any {
	if len(b) > len(wireIndex{}.b) {
		return rawIndex(append([]byte(nil), b...))
	}
	if len(s.free) == 0 {
		s.n = min(max(2*s.n, 4), slabMax)
		s.free = make([]wireIndex, min(s.n, max(left, 1)))
	}
	w := &s.free[0]
	s.free = s.free[1:]
	w.n = uint8(copy(w.b[:], b))
	return w
}

// withIndex allocates an envelope of type E for a message from another
// process that is not carved from a run's slab (a lone one), and its
// index b (nil for none, aliasing a frame) as a header's index. A short
// index is copied into a wireIndex allocated with the envelope, in one
// allocation; the envelope keeps it alive.
func withIndex[E any](b []byte) (*E, any) {
	switch {
	case b == nil:
		return new(E), nil
	case len(b) > len(wireIndex{}.b):
		return new(E), rawIndex(append([]byte(nil), b...))
	}
	p := new(struct {
		e  E
		ix wireIndex
	})
	p.ix.n = uint8(copy(p.ix.b[:], b))
	return &p.e, &p.ix
}

// runSlabs are what the envelopes of one wire run read tail by tail are
// carved from: the typed decoder's envelope slab (an *envSlab) and the
// indices' slab. left counts the run's envelopes still to be read, so
// that a run of one makes one envelope, not a slab of four.
type runSlabs struct {
	env  any
	ix   indexSlab
	left int
}

// Spec describes a collection so that another process can rebuild it.
type Spec struct {
	ID      CollID
	Kind    Kind
	Type    TypeID
	Tree    []int
	Builder string // the package that rebuilds it: "chare", "group", "array"
	Data    []byte // the builder's own description, msgpack-encoded
	Init    EntryID
	InitMsg []byte
	// Restored: the collection comes from a checkpoint, its objects are
	// restored rather than made.
	Restored bool `msgpack:",omitempty"`
}

// Builder rebuilds a collection from its Spec in another process: it sets
// the collection's NewLocal, DecodeIndex and Ext.
type Builder func(c *Collection, rt *actor.Runtime, init func(obj any)) error

var (
	buildersMu sync.RWMutex
	builders   = map[string]Builder{}
)

// RegisterBuilder registers how collections of a kind are rebuilt.
func RegisterBuilder(name string, b Builder) {
	buildersMu.Lock()
	defer buildersMu.Unlock()
	builders[name] = b
}

// InitOf turns a constructor (an entry method and its message, as
// Charm++ constructors are entry methods) into the function that runs it
// on a new object, and, in a job of several processes, records it in the
// spec so that the other processes can run it too.
func InitOf[T, M any](from Context, s *Spec, init func(*T, M), msg M) (func(obj any), error) {
	pe, err := peFrom(from)
	if err != nil {
		return nil, err
	}
	e, err := lookupEntry(init)
	if err != nil {
		return nil, err
	}
	if pe.job.rt.NumNodes() > 1 {
		b, err := codec.Append(codec.For[M](), nil, &msg)
		if err != nil {
			return nil, fmt.Errorf("chare: encoding the constructor message of %s: %w", e, err)
		}
		s.Init, s.InitMsg = e.ID, b
	}
	return func(obj any) { init(obj.(*T), msg) }, nil
}

// rebuild makes a Collection from a Spec that came from another process.
func rebuild(rt *actor.Runtime, s Spec) (*Collection, error) {
	typ, err := TypeByID(s.Type)
	if err != nil {
		return nil, err
	}
	buildersMu.RLock()
	b := builders[s.Builder]
	buildersMu.RUnlock()
	if b == nil {
		return nil, fmt.Errorf("chare: no builder %q for collection %v", s.Builder, s.ID)
	}
	var init func(any)
	if s.Init != 0 {
		e, err := EntryByID(s.Init)
		if err != nil {
			return nil, err
		}
		msg, err := decodeMsg(e, s.InitMsg)
		if err != nil {
			return nil, err
		}
		init = func(obj any) {
			if _, err := e.Invoke(obj, msg); err != nil {
				panic(err)
			}
		}
	}
	c := &Collection{ID: s.ID, Kind: s.Kind, Type: typ, Tree: s.Tree, Spec: s}
	if err := b(c, rt, init); err != nil {
		return nil, err
	}
	return c, nil
}

func decodeMsg(e *Entry, b []byte) (any, error) {
	if e.Msg == nil {
		return nil, nil
	}
	v := reflect.New(e.Msg)
	if err := codec.Of(e.Msg).DecodeValue(b, v); err != nil {
		return nil, fmt.Errorf("decoding the message of %s: %w", e, err)
	}
	return v.Elem().Interface(), nil
}

// announce tells the other nodes about a new collection.
func (pe *PE) announce(c *Collection) {
	rt := pe.job.rt
	for n := 0; n < rt.NumNodes(); n++ {
		if n != rt.NodeOf(pe.ID()) {
			pe.ap.Send(rt.FirstPE(n), &announceMsg{spec: c.Spec})
		}
	}
}

type announceMsg struct{ spec Spec }

func (m *announceMsg) Describe() string { return fmt.Sprintf("the announcement of %v", m.spec.ID) }
func (m *announceMsg) WireKind() uint16 { return wirekind.Announce }
func (m *announceMsg) EncodeWire(enc *msgpack.Encoder) error {
	return enc.Encode(&m.spec)
}

func (m *announceMsg) Deliver(ap *actor.PE) {
	pe := peOf(ap)
	if _, ok := pe.job.colls.Load(m.spec.ID); !ok {
		c, err := rebuild(pe.job.rt, m.spec)
		if err != nil {
			pe.fail(fmt.Errorf("chare: rebuilding collection %v from node %d: %w", m.spec.ID, pe.job.rt.NodeOf(int(uint64(m.spec.ID)>>32)), err))
			return
		}
		pe.job.colls.Store(c.ID, c)
	}
	// Wake the PEs of this node that hold messages for it.
	rt := pe.job.rt
	for p := rt.FirstPE(rt.NodeOf(pe.ID())); p < rt.NumPEs() && rt.NodeOf(p) == rt.NodeOf(pe.ID()); p++ {
		ap.SendControl(p, knownMsg{m.spec.ID})
	}
}

// knownMsg tells a PE that a collection became known in its process.
type knownMsg struct{ coll CollID }

func (knownMsg) Describe() string { return "a collection announcement" }
func (m knownMsg) Deliver(ap *actor.PE) {
	pe := peOf(ap)
	held := pe.pending[m.coll]
	delete(pe.pending, m.coll)
	for _, w := range held {
		pe.runHeld(w)
	}
}

// heldWork is work that waits on a PE for a collection's announcement.
type heldWork struct {
	what any // the message it handles, to name it if it panics
	run  func()
}

// runHeld runs held work as if its message had just arrived: a panic in it
// names that message, not the announcement that released it.
func (pe *PE) runHeld(w heldWork) {
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(*actor.PanicError); ok {
				panic(r)
			}
			what := fmt.Sprintf("%T", w.what)
			if d, ok := w.what.(actor.Describer); ok {
				what = d.Describe()
			}
			panic(&actor.PanicError{PE: pe.ID(), What: what, Value: r, Stack: debug.Stack()})
		}
	}()
	w.run()
}

// errPending says a collection is not known here yet but will be.
var errPending = errors.New("chare: collection not announced yet")

// pendingLimit bounds the wait for an announcement: a collection that never
// arrives is an error, not a hang.
const pendingLimit = 10 * time.Second

// hold keeps fn, which handles the message what, until the collection
// becomes known here.
func (pe *PE) hold(coll CollID, what any, fn func()) {
	if pe.pending == nil {
		pe.pending = map[CollID][]heldWork{}
	}
	if len(pe.pending[coll]) == 0 {
		pe.ap.After(pendingLimit, knownCheck{coll}.Deliver)
	}
	pe.pending[coll] = append(pe.pending[coll], heldWork{what, fn})
}

type knownCheck struct{ coll CollID }

func (m knownCheck) Deliver(ap *actor.PE) {
	pe := peOf(ap)
	if len(pe.pending[m.coll]) > 0 {
		pe.fail(fmt.Errorf("chare: no collection %v exists: messages for it waited %v on PE %d and its creator (PE %d) never announced it", m.coll, pendingLimit, pe.ID(), uint64(m.coll)>>32))
	}
}

// ---- envelopes ----

// encodeIndex returns an index's bytes for the wire (package
// indexcodec: without reflection for the built-in index types).
func encodeIndex(i any) ([]byte, error) {
	if r, ok := rawOf(i); ok {
		return r, nil
	}
	if i == nil {
		return nil, nil
	}
	return indexcodec.Append(nil, i)
}

// An envelope on the wire is an actor.WireRunner: consecutive envelopes
// for one PE with the same head travel as one run (wire.Item), the head
// once. The head has a fixed layout (little-endian): route kind (1 byte),
// collection (8), route PE, source PE, broadcast root and entry (4 each).
// The tail holds the rest:
//
//	flags (1 byte), then as the flags say:
//	  reply future: PE (zig-zag varint), ID (uvarint)
//	  epoch (uvarint), hops (1 byte)
//	  flow number (uvarint, 1..65535): a traced send's arrow, whose end
//	  the receiving PE records (absent whenever tracing is off)
//	  index: length (uvarint) and its msgpack bytes, or, on a multicast
//	  hop, the number of members (uvarint) and each member so
//	then the message to the end, in its type's codec (actor/codec:
//	generated, the type's MarshalMsg, or msgpack by reflection).
//
// Inside another message (WireEnvelope) an envelope is one msgpack binary
// holding the head and the tail.
const envHeadLen = 1 + 8 + 4*4

const (
	tailReply   = 1 << iota // a reply future follows
	tailEpoch               // epoch and hops follow
	tailIndex               // an index follows
	tailMembers             // a multicast hop's members follow
	tailFlow                // a trace's flow number follows (only set while tracing)
)

func appendEnvHead(b []byte, h *Header) []byte {
	var entry EntryID
	if h.Entry != nil {
		entry = h.Entry.ID
	}
	le := binary.LittleEndian
	b = append(b, uint8(h.Kind))
	b = le.AppendUint64(b, uint64(h.Coll))
	b = le.AppendUint32(b, uint32(int32(h.PE)))
	b = le.AppendUint32(b, uint32(int32(h.Src)))
	b = le.AppendUint32(b, uint32(int32(h.Root)))
	return le.AppendUint32(b, uint32(entry))
}

// appendEnvTail appends the tail up to the message.
func appendEnvTail(b []byte, h *Header, reply futureRef) ([]byte, error) {
	var flags byte
	if reply != (futureRef{}) {
		flags |= tailReply
	}
	if h.Epoch != 0 || h.Hops != 0 {
		flags |= tailEpoch
	}
	if h.Kind == KindSection {
		flags |= tailMembers
	} else if h.Index != nil {
		flags |= tailIndex
	}
	if h.Flow != 0 {
		flags |= tailFlow
	}
	b = append(b, flags)
	if flags&tailReply != 0 {
		b = binary.AppendVarint(b, int64(reply.PE))
		b = binary.AppendUvarint(b, reply.ID)
	}
	if flags&tailEpoch != 0 {
		b = binary.AppendUvarint(b, uint64(h.Epoch))
		b = append(b, h.Hops)
	}
	if flags&tailFlow != 0 {
		b = binary.AppendUvarint(b, uint64(h.Flow))
	}
	var err error
	switch {
	case flags&tailMembers != 0:
		ms := h.Members()
		b = binary.AppendUvarint(b, uint64(len(ms)))
		for _, m := range ms {
			if b, err = appendIndex(b, m); err != nil {
				return b, fmt.Errorf("encoding section member %v: %w", m, err)
			}
		}
	case flags&tailIndex != 0:
		if b, err = appendIndex(b, h.Index); err != nil {
			return b, fmt.Errorf("encoding index %v: %w", h.Index, err)
		}
	}
	return b, nil
}

// appendIndex appends an index's length and bytes. A built-in index
// (under 128 bytes, so its length is one byte) is encoded in place.
func appendIndex(b []byte, i any) ([]byte, error) {
	if indexcodec.Fast(i) {
		at := len(b)
		b, _ = indexcodec.Append(append(b, 0), i)
		if n := len(b) - at - 1; n < 0x80 {
			b[at] = byte(n)
			return b, nil
		}
		b = b[:at]
	}
	r, err := encodeIndex(i)
	if err != nil {
		return b, err
	}
	return append(binary.AppendUvarint(b, uint64(len(r))), r...), nil
}

// tailReader reads a tail strictly: it comes from another process.
type tailReader struct {
	b   []byte
	off int
}

func (r *tailReader) uvarint(what string) (uint64, error) {
	v, n := binary.Uvarint(r.b[r.off:])
	if n <= 0 {
		return 0, fmt.Errorf("an envelope's %s is truncated or overflows (at byte %d of its tail)", what, r.off)
	}
	r.off += n
	return v, nil
}

func (r *tailReader) bytes(what string) ([]byte, error) {
	n, err := r.uvarint(what + "'s length")
	if err != nil {
		return nil, err
	}
	if n > uint64(len(r.b)-r.off) {
		return nil, fmt.Errorf("an envelope's %s of %d bytes, but %d are left", what, n, len(r.b)-r.off)
	}
	// A copy: the tail aliases a whole frame, which an index kept in a
	// cache would pin.
	p := append([]byte(nil), r.b[r.off:r.off+int(n)]...)
	r.off += int(n)
	return p, nil
}

// decodeEnvTail completes h from a tail and returns the reply future, the
// index's bytes if the tail has an index, and the message's bytes (both
// aliasing tail): the envelope that keeps the index copies it (see
// withIndex and indexSlab). A multicast hop's members are set in h.
func decodeEnvTail(h *Header, tail []byte) (reply futureRef, idx, msg []byte, err error) {
	if len(tail) == 0 {
		return reply, nil, nil, errors.New("an envelope without a tail")
	}
	flags := tail[0]
	if flags&^(tailReply|tailEpoch|tailIndex|tailMembers|tailFlow) != 0 || flags&tailIndex != 0 && flags&tailMembers != 0 {
		return reply, nil, nil, fmt.Errorf("an envelope with tail flags %#x", flags)
	}
	if (flags&tailMembers != 0) != (h.Kind == KindSection) {
		return reply, nil, nil, fmt.Errorf("an envelope of route kind %d with tail flags %#x", h.Kind, flags)
	}
	r := tailReader{b: tail, off: 1}
	if flags&tailReply != 0 {
		pe, n := binary.Varint(r.b[r.off:])
		if n <= 0 || pe < math.MinInt32 || pe > math.MaxInt32 {
			return reply, nil, nil, errors.New("an envelope's reply future PE is truncated or out of range")
		}
		r.off += n
		id, err := r.uvarint("reply future")
		if err != nil {
			return reply, nil, nil, err
		}
		reply = futureRef{int(pe), id}
	}
	if flags&tailEpoch != 0 {
		ep, err := r.uvarint("epoch")
		if err != nil {
			return reply, nil, nil, err
		}
		if ep > math.MaxUint32 || r.off >= len(r.b) {
			return reply, nil, nil, errors.New("an envelope's epoch is out of range or its hops are missing")
		}
		h.Epoch, h.Hops = uint32(ep), r.b[r.off]
		r.off++
	}
	if flags&tailFlow != 0 {
		f, err := r.uvarint("flow number")
		if err != nil {
			return reply, nil, nil, err
		}
		if f == 0 || f > math.MaxUint32 {
			return reply, nil, nil, fmt.Errorf("an envelope's flow number %d is out of range", f)
		}
		h.Flow = uint32(f)
	}
	switch {
	case flags&tailIndex != 0:
		n, err := r.uvarint("index's length")
		if err != nil {
			return reply, nil, nil, err
		}
		if n > uint64(len(r.b)-r.off) {
			return reply, nil, nil, fmt.Errorf("an envelope's index of %d bytes, but %d are left", n, len(r.b)-r.off)
		}
		idx = r.b[r.off : r.off+int(n) : r.off+int(n)]
		r.off += int(n)
	case flags&tailMembers != 0:
		m, err := r.uvarint("member count")
		if err != nil {
			return reply, nil, nil, err
		}
		if m > uint64(len(r.b)-r.off) { // each member takes a byte at least
			return reply, nil, nil, fmt.Errorf("a multicast hop of %d members", m)
		}
		ms := make([]any, m)
		for i := range ms {
			b, err := r.bytes("member")
			if err != nil {
				return reply, nil, nil, err
			}
			ms[i] = rawIndex(b)
		}
		h.Index = ms
	}
	return reply, idx, r.b[r.off:], nil
}

// decodeEnvHead reads a run's head and returns the decoder of its n
// tails: the entry and its typed decoder are looked up once per run, and
// the run's envelopes are carved from slabs (as a sender's are), no
// larger than the run, not allocated one by one.
func decodeEnvHead(_ *actor.PE, head []byte, n int) (func(tail []byte) (actor.Message, error), error) {
	base, err := parseEnvHead(head)
	if err != nil {
		return nil, err
	}
	typed := base.Entry.wireEnv.Load()
	sl := &runSlabs{left: n}
	return func(tail []byte) (actor.Message, error) {
		m, err := decodeEnvOne(base, typed, tail, sl)
		sl.left--
		return m, err
	}, nil
}

// decodeEnvOne decodes the envelope of a tail under the header of its
// run, with the entry's typed decoder if it has one. sl is the run's
// slabs, or nil for a lone envelope, which is then one allocation (its
// index with it).
func decodeEnvOne(h Header, typed *wireDecoder, tail []byte, sl *runSlabs) (actor.Message, error) {
	reply, idx, msg, err := decodeEnvTail(&h, tail)
	if err != nil {
		return nil, err
	}
	if typed != nil {
		return (*typed)(h, reply, idx, msg, sl)
	}
	return decodeDyn(h, reply, idx, msg)
}

// parseEnvHead reads a run's head: the header that its messages share.
func parseEnvHead(head []byte) (Header, error) {
	if len(head) != envHeadLen {
		return Header{}, fmt.Errorf("an envelope head of %d bytes, not %d", len(head), envHeadLen)
	}
	le := binary.LittleEndian
	kind := Kind(head[0])
	if kind == KindNone || kind > KindSection {
		return Header{}, fmt.Errorf("an envelope of route kind %d", kind)
	}
	e, err := EntryByID(EntryID(le.Uint32(head[21:])))
	if err != nil {
		return Header{}, err
	}
	return Header{Route: Route{Kind: kind, Coll: CollID(le.Uint64(head[1:])), PE: int(int32(le.Uint32(head[9:])))},
		Entry: e, Src: int(int32(le.Uint32(head[13:]))), Root: int(int32(le.Uint32(head[17:])))}, nil
}

// decodeDyn decodes an envelope whose entry has no typed decoder in this
// process: the message by its type's codec, the call by reflection.
func decodeDyn(h Header, reply futureRef, idx, msg []byte) (actor.Message, error) {
	env, ix := withIndex[envDyn](idx)
	env.reply = reply
	env.h = h
	if idx != nil {
		env.h.Index = ix
	}
	e := h.Entry
	if e.Msg == nil {
		return env, noMessage(e, msg)
	}
	v := reflect.New(e.Msg)
	if err := codec.Of(e.Msg).DecodeValue(msg, v); err != nil {
		return nil, fmt.Errorf("decoding the message of %s: %w", e, err)
	}
	env.msg = v.Elem().Interface()
	return env, nil
}

func noMessage(e *Entry, msg []byte) error {
	if len(msg) != 0 {
		return fmt.Errorf("%d bytes of message for %s, which takes none", len(msg), e)
	}
	return nil
}

// encodeWhole writes an envelope as one msgpack binary, for WireEnvelope.
func encodeWhole(enc *msgpack.Encoder, r actor.WireRunner) error {
	b, err := r.AppendWireTail(r.AppendWireHead(nil))
	if err != nil {
		return err
	}
	return enc.EncodeBytes(b)
}

// decodeEnvelope reads an envelope written by encodeWhole.
func decodeEnvelope(ap *actor.PE, dec *msgpack.Decoder) (actor.Message, error) {
	n, err := dec.DecodeBytesLen()
	if err != nil {
		return nil, err
	}
	if n < envHeadLen {
		return nil, fmt.Errorf("an envelope of %d bytes", max(n, 0))
	}
	// The envelope's own copy of its bytes: a message type's UnmarshalMsg
	// may keep views into them (actor/codec leaves its bytes to it), as it
	// may into a run's tail, whose frame is never reused either.
	b, err := readBytes(dec, n)
	if err != nil {
		return nil, err
	}
	h, err := parseEnvHead(b[:envHeadLen])
	if err != nil {
		return nil, err
	}
	return decodeEnvOne(h, h.Entry.wireEnv.Load(), b[envHeadLen:], nil)
}

// maxEnvBuf is the most readBytes reads at a time.
const maxEnvBuf = 64 << 10

// readBytes reads n bytes from dec, maxEnvBuf at a time, its buffer
// doubling at most: n comes from the wire, and a few bytes must not make
// the process allocate gigabytes before the read fails (it allocates at
// most about twice what it has read; msgpack's DecodeBytes starts at a
// megabyte).
func readBytes(dec *msgpack.Decoder, n int) ([]byte, error) {
	var b []byte
	for len(b) < n {
		k := min(n-len(b), maxEnvBuf)
		if cap(b)-len(b) < k { // double, in pieces the scheduler can preempt between
			b = bigbuf.Grow(b, min(max(len(b), k), n-len(b)))
		}
		b = b[:len(b)+k]
		if err := dec.ReadFull(b[len(b)-k:]); err != nil {
			return b, fmt.Errorf("an envelope of %d bytes: %w", n, err)
		}
	}
	return b, nil
}

func (e *envHead) AppendWireHead(b []byte) []byte { return appendEnvHead(b, &e.h) }

func (e *env1[T, M]) WireKind() uint16                      { return wirekind.Envelope }
func (e *env1[T, M]) EncodeWire(enc *msgpack.Encoder) error { return encodeWhole(enc, e) }
func (e *env1[T, M]) AppendWireTail(b []byte) ([]byte, error) {
	b, err := appendEnvTail(b, &e.h, futureRef{})
	if err != nil {
		return b, err
	}
	return appendMsg(b, e.h.Entry, &e.msg)
}
func (e *env0[T]) WireKind() uint16                      { return wirekind.Envelope }
func (e *env0[T]) EncodeWire(enc *msgpack.Encoder) error { return encodeWhole(enc, e) }
func (e *env0[T]) AppendWireTail(b []byte) ([]byte, error) {
	return appendEnvTail(b, &e.h, futureRef{})
}
func (e *envCall[T, M, R]) WireKind() uint16                      { return wirekind.Envelope }
func (e *envCall[T, M, R]) EncodeWire(enc *msgpack.Encoder) error { return encodeWhole(enc, e) }
func (e *envCall[T, M, R]) AppendWireTail(b []byte) ([]byte, error) {
	b, err := appendEnvTail(b, &e.h, e.reply)
	if err != nil {
		return b, err
	}
	return appendMsg(b, e.h.Entry, &e.msg)
}
func (e *envCall0[T, R]) WireKind() uint16                      { return wirekind.Envelope }
func (e *envCall0[T, R]) EncodeWire(enc *msgpack.Encoder) error { return encodeWhole(enc, e) }
func (e *envCall0[T, R]) AppendWireTail(b []byte) ([]byte, error) {
	return appendEnvTail(b, &e.h, e.reply)
}
func (e *envDyn) WireKind() uint16                      { return wirekind.Envelope }
func (e *envDyn) EncodeWire(enc *msgpack.Encoder) error { return encodeWhole(enc, e) }
func (e *envDyn) AppendWireTail(b []byte) ([]byte, error) {
	b, err := appendEnvTail(b, &e.h, e.reply)
	if err != nil || e.h.Entry == nil || e.h.Entry.Msg == nil {
		return b, err
	}
	// The message came in an any (a callback's value): check and convert
	// it here as the entry method would when it runs, so that a mistake
	// gets the same error as in one process rather than a decoding error
	// in the other.
	v, err := convertArg(e.h.Entry, e.msg)
	if err != nil {
		return b, err
	}
	if b, err = codec.Of(e.h.Entry.Msg).AppendValue(b, v); err != nil {
		return b, fmt.Errorf("encoding the message of %s: %w", e.h.Entry, err)
	}
	return b, nil
}

// appendMsg appends a typed envelope's message with its type's codec.
func appendMsg[M any](b []byte, e *Entry, msg *M) ([]byte, error) {
	b, err := codec.Append(codec.For[M](), b, msg)
	if err != nil {
		return b, fmt.Errorf("encoding the message of %s: %w", e, err)
	}
	return b, nil
}

// resolve turns a raw index into the collection's index type.
func (pe *PE) resolve(c *Collection, i any) (any, error) {
	if r, ok := rawOf(i); ok {
		if c.DecodeIndex == nil {
			return nil, fmt.Errorf("chare: %s %v has no index decoder", c.Type.Name, c.ID)
		}
		return c.DecodeIndex(r)
	}
	if r, ok := i.([]any); ok { // section members on a multicast hop
		out := make([]any, len(r))
		for k, m := range r {
			v, err := pe.resolve(c, m)
			if err != nil {
				return nil, err
			}
			out[k] = v
		}
		return out, nil
	}
	return i, nil
}

// ---- creation, futures, reductions ----

func (m createMsg) WireKind() uint16                      { return wirekind.Create }
func (m createMsg) EncodeWire(enc *msgpack.Encoder) error { return enc.Encode(m.coll) }

func (m *futureMsg) WireKind() uint16 { return wirekind.Future }
func (m *futureMsg) EncodeWire(enc *msgpack.Encoder) error {
	v, err := msgpack.Marshal(m.val)
	if err != nil {
		return fmt.Errorf("encoding the value (%T) of future %d: %w", m.val, m.ref.ID, err)
	}
	return enc.Encode([]any{m.ref.PE, m.ref.ID, v})
}

// rawValue is a future's value still in msgpack form: Get decodes it into
// the future's type.
type rawValue []byte

type wireFuture struct {
	_msgpack struct{} `msgpack:",as_array"`
	PE       int
	ID       uint64
	Val      []byte
}

type wireReduction struct {
	Coll, Stream CollID
	No           int
	Has          bool
	Count        int
	Reducer      string
	Partial      []byte
	Callback     Callback
	Section      *wireSection `msgpack:",omitempty"`
}

type wireSection struct {
	ID   CollID
	Coll CollID
	N    int
}

// wireSectionInfo is a Section inside a message: the members that
// contribute with it (ContributeTo) may live in other processes.
type wireSectionInfo struct {
	ID, Coll CollID
	Members  [][]byte // raw indices: a multicast decodes them
}

// EncodeMsgpack lets a section travel in a message.
func (s *Section) EncodeMsgpack(enc *msgpack.Encoder) error {
	w := wireSectionInfo{ID: s.ID, Coll: s.Coll}
	for _, m := range s.Members {
		b, err := encodeIndex(m)
		if err != nil {
			return fmt.Errorf("chare: encoding member %v of section %v: %w", m, s.ID, err)
		}
		w.Members = append(w.Members, b)
	}
	return enc.Encode(&w)
}

// DecodeMsgpack reads a section from a message.
func (s *Section) DecodeMsgpack(dec *msgpack.Decoder) error {
	var w wireSectionInfo
	if err := dec.Decode(&w); err != nil {
		return err
	}
	*s = Section{ID: w.ID, Coll: w.Coll, N: len(w.Members), Members: make([]any, len(w.Members))}
	for i, b := range w.Members {
		s.Members[i] = rawIndex(b)
	}
	return nil
}

func (m *redUp) WireKind() uint16 { return wirekind.Reduction }
func (m *redUp) EncodeWire(enc *msgpack.Encoder) error {
	w := wireReduction{Coll: m.coll, Stream: m.key.coll, No: m.key.no, Has: m.has, Count: m.count, Reducer: m.r.Name(), Callback: m.cb}
	if m.has {
		var buf bytes.Buffer
		if err := reducer.EncodePartial(msgpack.NewEncoder(&buf), m.r, m.partial); err != nil {
			return err
		}
		w.Partial = buf.Bytes()
	}
	if m.sec != nil {
		w.Section = &wireSection{ID: m.sec.ID, Coll: m.sec.Coll, N: m.sec.N}
	}
	return enc.Encode(&w)
}

func decodeReduction(_ *actor.PE, dec *msgpack.Decoder) (actor.Message, error) {
	var w wireReduction
	if err := dec.Decode(&w); err != nil {
		return nil, err
	}
	r, err := reducer.Lookup(w.Reducer)
	if err != nil {
		return nil, err
	}
	if w.Count < 0 {
		return nil, fmt.Errorf("a reduction partial of %d contributions", w.Count)
	}
	m := &redUp{key: redKey{redStream{w.Stream}, w.No}, has: w.Has, count: w.Count, r: r, cb: w.Callback, coll: w.Coll}
	if w.Has {
		// The partial is opaque bytes to the check of the whole body.
		if err := reducer.CheckPartial(r, w.Partial); err != nil {
			return nil, fmt.Errorf("the partial of a %s reduction: %w", w.Reducer, err)
		}
		if m.partial, err = reducer.DecodePartial(msgpack.NewDecoder(bytes.NewReader(w.Partial)), r); err != nil {
			return nil, err
		}
	}
	if w.Section != nil {
		m.sec = &Section{ID: w.Section.ID, Coll: w.Section.Coll, N: w.Section.N}
	}
	return m, nil
}

func init() {
	actor.RegisterWire(wirekind.Envelope, "chare envelope", decodeEnvelope)
	actor.RegisterWireRun(wirekind.Envelope, "chare envelope", decodeEnvHead)
	actor.RegisterWireRunAll(wirekind.Envelope, "chare envelope", decodeEnvRun)
	actor.RegisterWireChecked(wirekind.Create, "collection creation", func(_ *actor.PE, dec *msgpack.Decoder) (actor.Message, error) {
		var c CollID
		err := dec.Decode(&c)
		return createMsg{c}, err
	})
	actor.RegisterWireChecked(wirekind.Announce, "collection announcement", func(_ *actor.PE, dec *msgpack.Decoder) (actor.Message, error) {
		m := &announceMsg{}
		err := dec.Decode(&m.spec)
		return m, err
	})
	actor.RegisterWireChecked(wirekind.Future, "future value", func(_ *actor.PE, dec *msgpack.Decoder) (actor.Message, error) {
		var w wireFuture
		if err := dec.Decode(&w); err != nil {
			return nil, err
		}
		return &futureMsg{ref: futureRef{w.PE, w.ID}, val: rawValue(w.Val)}, nil
	})
	actor.RegisterWireChecked(wirekind.Reduction, "reduction", decodeReduction)
	actor.RegisterStruct[ckptStart](wirekind.CkptStart, "checkpoint start")
	actor.RegisterStruct[ckptCollect](wirekind.CkptCollect, "checkpoint collection")
	actor.RegisterStruct[ckptPart](wirekind.CkptPart, "checkpoint part")
	actor.RegisterStruct[restoreMsg](wirekind.Restore, "restart objects")
	actor.RegisterWire(wirekind.RestoreFence, "restart fence", func(_ *actor.PE, dec *msgpack.Decoder) (actor.Message, error) {
		return restoreFence{}, decodeEmpty(dec)
	})
	actor.RegisterWire(wirekind.RestoreAck, "restart acknowledgement", func(_ *actor.PE, dec *msgpack.Decoder) (actor.Message, error) {
		return restoreAck{}, decodeEmpty(dec)
	})
}

// decodeEmpty reads the body of a kind that carries nothing: one nil.
// Skip would recurse once per level of whatever a corrupt body nests,
// and tens of megabytes of array headers overflow the stack, which no
// recover catches.
func decodeEmpty(dec *msgpack.Decoder) error {
	if err := dec.DecodeNil(); err != nil {
		return fmt.Errorf("the body is not nil: %w", err)
	}
	if _, err := dec.PeekCode(); err != io.EOF {
		return errors.New("bytes after the body's nil")
	}
	return nil
}

// ---- proxies and callbacks inside messages ----

// wireRoute is a Route inside a message, with the reference of a portable
// delegate if the proxy has one.
type wireRoute struct {
	Kind  Kind
	Coll  CollID
	PE    int
	Index []byte `msgpack:",omitempty"`
	DKind string `msgpack:",omitempty"`
	DID   uint64 `msgpack:",omitempty"`
}

func encodeRoute(enc *msgpack.Encoder, r Route, d Delegate) error {
	if r.Kind == KindSection {
		return errors.New("chare: a section proxy cannot travel to another process (send its members instead)")
	}
	idx, err := encodeIndex(r.Index)
	if err != nil {
		return err
	}
	w := wireRoute{Kind: r.Kind, Coll: r.Coll, PE: r.PE, Index: idx}
	if w.DKind, w.DID, err = delegateRef(d); err != nil {
		return fmt.Errorf("chare: a proxy to %v: %w", Proxy[struct{}]{route: r}, err)
	}
	return enc.Encode(&w)
}

// delegateRef returns the reference a delegate travels as: none for no
// delegate, the kind and identity of a PortableDelegate, and an error
// naming any other delegate, which cannot travel: its proxy would arrive
// undelegated, and its sends would silently go direct.
func delegateRef(d Delegate) (string, uint64, error) {
	if d == nil {
		return "", 0, nil
	}
	pd, ok := d.(PortableDelegate)
	if !ok {
		return "", 0, fmt.Errorf("it is delegated to %s, which cannot leave its process (a delegate that travels implements chare.PortableDelegate, its kind registered with chare.RegisterDelegateKind)", DelegateName(d))
	}
	kind, id := pd.DelegateRef()
	if kind == "" {
		return "", 0, fmt.Errorf("it is delegated to %s, whose DelegateRef names no kind", DelegateName(d))
	}
	if _, known := delegateKinds.Load(kind); !known {
		return "", 0, fmt.Errorf("it is delegated to %s, of kind %q, which is not registered (chare.RegisterDelegateKind; known: %v)", DelegateName(d), kind, delegateKindNames())
	}
	return kind, id, nil
}

func decodeRoute(dec *msgpack.Decoder) (Route, Delegate, error) {
	var w wireRoute
	if err := dec.Decode(&w); err != nil {
		return Route{}, nil, err
	}
	return w.route()
}

// route returns the route w describes, its index in wire form, and the
// delegate it names, if any.
func (w *wireRoute) route() (Route, Delegate, error) {
	r := Route{Kind: w.Kind, Coll: w.Coll, PE: w.PE}
	if w.Index != nil {
		r.Index = rawIndex(w.Index)
	}
	if w.DKind == "" {
		return r, nil, nil
	}
	rd, err := newRemoteDelegate(w.DKind, w.DID)
	if err != nil {
		return Route{}, nil, err
	}
	return r, rd, nil
}

// EncodeMsgpack lets a proxy travel in a message, in migrated or
// checkpointed state, with its delegate: a PortableDelegate travels as its
// reference (kind and identity) and is found again where the proxy is
// used; a proxy delegated to any other delegate cannot be encoded, and
// the error names the delegate.
func (p Proxy[T]) EncodeMsgpack(enc *msgpack.Encoder) error {
	return encodeRoute(enc, p.route, p.del)
}

// DecodeMsgpack reads a proxy from a message.
func (p *Proxy[T]) DecodeMsgpack(dec *msgpack.Decoder) error {
	r, d, err := decodeRoute(dec)
	p.route, p.del = r, d
	return err
}

type wireCallback struct {
	Kind   CallbackKind
	Route  wireRoute
	Entry  EntryID
	Future futureRef
	Func   uint64
	PE     int
	Code   int
}

// EncodeMsgpack lets a callback travel in a message.
func (cb Callback) EncodeMsgpack(enc *msgpack.Encoder) error {
	if cb.err != nil {
		return cb.err
	}
	idx, err := encodeIndex(cb.Route.Index)
	if err != nil {
		return err
	}
	w := wireCallback{Kind: cb.Kind, Route: wireRoute{Kind: cb.Route.Kind, Coll: cb.Route.Coll, PE: cb.Route.PE, Index: idx},
		Entry: cb.Entry, Future: cb.Future, Func: cb.Func, PE: cb.PE, Code: cb.Code}
	if w.Route.DKind, w.Route.DID, err = delegateRef(cb.del); err != nil {
		return fmt.Errorf("chare: callback %s: %w", cb.describe(), err)
	}
	return enc.Encode(&w)
}

// DecodeMsgpack reads a callback from a message.
func (cb *Callback) DecodeMsgpack(dec *msgpack.Decoder) error {
	var w wireCallback
	if err := dec.Decode(&w); err != nil {
		return err
	}
	r, d, err := w.Route.route()
	if err != nil {
		return err
	}
	*cb = Callback{Kind: w.Kind, Route: r, Entry: w.Entry, Future: w.Future, Func: w.Func, PE: w.PE, Code: w.Code, del: d}
	return nil
}

// Fingerprint identifies the program's chare types and entry methods, so
// that nodes running different programs refuse to form a job.
func Fingerprint() string {
	reg.mu.Lock()
	defer reg.mu.Unlock()
	h := sha256.New()
	for _, t := range reg.types {
		fmt.Fprintf(h, "%d %s\n", t.ID, t.Name)
		for _, e := range t.entries {
			fmt.Fprintf(h, " %d %s %v %v %v\n", e.ID, e.Name, e.Msg, e.Result, e.Threaded)
		}
	}
	return hex.EncodeToString(h.Sum(nil)[:8])
}

// wireDecoder builds a typed envelope from another process: its header,
// reply future, index bytes (nil for none) and message bytes (in the
// message type's codec), all aliasing a frame. sl, if not nil, is the
// run the tail belongs to, whose slabs the envelope and its index come
// from (calls for one run come from one goroutine); with sl nil the
// envelope and its index are one allocation (withIndex).
type wireDecoder func(h Header, reply futureRef, idx, msg []byte, sl *runSlabs) (actor.Message, error)

// wireInstaller is implemented by the typed envelopes: they install, once
// per entry method, the decoder that rebuilds them.
type wireInstaller interface {
	installWire(e *Entry)
}

// newWire allocates an envelope of type E for a message from another
// process and sets its header to h with the index idx (see wireDecoder).
// Only env1, the envelope of most messages, is carved from a run's slab
// (next); the others are allocated with their index.
func newWire[E any](h Header, idx []byte, sl *runSlabs, next func(*runSlabs) *E, head func(*E) *Header) *E {
	var out *E
	var ix any
	// A run's last envelope made before any slab (a run of one) is made as
	// a lone one.
	if sl != nil && next != nil && (sl.env != nil || sl.left > 1) {
		out = next(sl)
		if idx != nil {
			ix = sl.ix.index(idx, sl.left)
		}
	} else {
		out, ix = withIndex[E](idx)
	}
	hp := head(out)
	*hp = h
	if idx != nil {
		hp.Index = ix
	}
	return out
}

func (e *env1[T, M]) installWire(en *Entry) {
	fn, c := e.fn, codec.For[M]()
	next := func(sl *runSlabs) *env1[T, M] {
		s, ok := sl.env.(*envSlab[T, M])
		if !ok {
			s = &envSlab[T, M]{n: 4}
			sl.env = s
		}
		return s.nextOf(sl.left)
	}
	f := wireDecoder(func(h Header, reply futureRef, idx, msg []byte, sl *runSlabs) (actor.Message, error) {
		if reply.ID != 0 {
			return nil, fmt.Errorf("a reply future on a call of %s, which returns nothing", h.Entry)
		}
		out := newWire(h, idx, sl, next, (*env1[T, M]).Header)
		out.fn = fn
		if err := codec.Decode(c, msg, &out.msg); err != nil {
			return nil, fmt.Errorf("decoding the message of %s: %w", h.Entry, err)
		}
		return out, nil
	})
	en.wireEnv.CompareAndSwap(nil, &f)
	installRunDecoder(en, fn)
}

func (e *env0[T]) installWire(en *Entry) {
	fn := e.fn
	f := wireDecoder(func(h Header, reply futureRef, idx, msg []byte, _ *runSlabs) (actor.Message, error) {
		if reply.ID != 0 {
			return nil, fmt.Errorf("a reply future on a call of %s, which returns nothing", h.Entry)
		}
		out := newWire(h, idx, nil, nil, (*env0[T]).Header)
		out.fn = fn
		return out, noMessage(h.Entry, msg)
	})
	en.wireEnv.CompareAndSwap(nil, &f)
}

// The methods that return a value are decoded into the same envelopes
// for a sync call (a reply future in the header) and for SendR (none).

func (e *envCall[T, M, R]) installWire(en *Entry) {
	fn, c := e.fn, codec.For[M]()
	f := wireDecoder(func(h Header, reply futureRef, idx, msg []byte, _ *runSlabs) (actor.Message, error) {
		out := newWire(h, idx, nil, nil, (*envCall[T, M, R]).Header)
		out.fn, out.reply = fn, reply
		if err := codec.Decode(c, msg, &out.msg); err != nil {
			return nil, fmt.Errorf("decoding the message of %s: %w", h.Entry, err)
		}
		return out, nil
	})
	en.wireEnv.CompareAndSwap(nil, &f)
}

func (e *envCall0[T, R]) installWire(en *Entry) {
	fn := e.fn
	f := wireDecoder(func(h Header, reply futureRef, idx, msg []byte, _ *runSlabs) (actor.Message, error) {
		out := newWire(h, idx, nil, nil, (*envCall0[T, R]).Header)
		out.fn, out.reply = fn, reply
		return out, noMessage(h.Entry, msg)
	})
	en.wireEnv.CompareAndSwap(nil, &f)
}

// WireEnvelope lets an envelope travel inside another message (a TRAM
// delegate's batch, say): it msgpack-encodes the envelope as the transport
// does, and decodes it back into an envelope that calls its method
// through the entry's typed decoder, or by reflection.
type WireEnvelope struct{ E Envelope }

// EncodeMsgpack implements msgpack.CustomEncoder.
func (w WireEnvelope) EncodeMsgpack(enc *msgpack.Encoder) error {
	wm, ok := w.E.(actor.WireMessage)
	if !ok {
		return fmt.Errorf("chare: a %T cannot travel to another process", w.E)
	}
	return wm.EncodeWire(enc)
}

// DecodeMsgpack implements msgpack.CustomDecoder.
func (w *WireEnvelope) DecodeMsgpack(dec *msgpack.Decoder) error {
	m, err := decodeEnvelope(nil, dec)
	if err != nil {
		return err
	}
	e, ok := m.(Envelope)
	if !ok {
		return fmt.Errorf("chare: decoded a %T, not an envelope", m)
	}
	w.E = e
	return nil
}

func (restoreFence) WireKind() uint16                      { return wirekind.RestoreFence }
func (restoreFence) EncodeWire(enc *msgpack.Encoder) error { return enc.EncodeNil() }
func (restoreAck) WireKind() uint16                        { return wirekind.RestoreAck }
func (restoreAck) EncodeWire(enc *msgpack.Encoder) error   { return enc.EncodeNil() }
