package core

import (
	"fmt"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/charmgo/charm/actor"
	"github.com/charmgo/charm/actor/codec"
)

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
		return fmt.Errorf("chare: a %s cannot travel to another process", valueTypeName(w.E))
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
		return fmt.Errorf("chare: decoded a %s, not an envelope", valueTypeName(m))
	}
	w.E = e
	return nil
}
