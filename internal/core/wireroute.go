package core

import (
	"errors"
	"fmt"

	"github.com/vmihailenco/msgpack/v5"
)

// Proxies and callbacks inside messages.

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
