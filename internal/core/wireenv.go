package core

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"reflect"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/charmgo/charm/actor"
	"github.com/charmgo/charm/actor/codec"
	"github.com/charmgo/charm/chare/indexcodec"
	"github.com/charmgo/charm/internal/bigbuf"
	"github.com/charmgo/charm/internal/wirekind"
)

// Envelopes on the wire: a head (collection, entry method, route) that
// a run of envelopes shares, and a tail per envelope (index, reply,
// message).

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
