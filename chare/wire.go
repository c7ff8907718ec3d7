package chare

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"reflect"
	"runtime/debug"
	"sync"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/charmgo/charm/actor"
	"github.com/charmgo/charm/chare/reducer"
)

// Messages between processes. Inside one process envelopes are handed
// over; to another process they are msgpack-encoded (wire kinds 100..199)
// and decoded on the destination PE into an envDyn, which calls the entry
// method through its description. Indices travel as msgpack bytes
// (rawIndex) and are decoded with the collection's own index type when
// they are used, so that a node can carry a proxy for a collection it
// does not know yet.
//
// Collections are described by a Spec that the creating PE announces to
// every other node. A message for a collection not known yet on a node
// waits there (pending) until its announcement arrives; the announcement
// always arrives, because the creator sends it before anything else.

const (
	kindEnvelope uint16 = 100 + iota
	kindCreate
	kindAnnounce
	kindFuture
	kindReduction
	kindCkptStart
	kindCkptCollect
	kindCkptPart
	kindRestore
	kindRestoreFence
	kindRestoreAck
)

// rawIndex is an index still in msgpack form.
type rawIndex []byte

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
		b, err := msgpack.Marshal(msg)
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
	if err := msgpack.Unmarshal(b, v.Interface()); err != nil {
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
func (m *announceMsg) WireKind() uint16 { return kindAnnounce }
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

func (knownCheck) Describe() string { return "a collection announcement check" }
func (m knownCheck) Deliver(ap *actor.PE) {
	pe := peOf(ap)
	if len(pe.pending[m.coll]) > 0 {
		pe.fail(fmt.Errorf("chare: no collection %v exists: messages for it waited %v on PE %d and its creator (PE %d) never announced it", m.coll, pendingLimit, pe.ID(), uint64(m.coll)>>32))
	}
}

// ---- envelopes ----

func encodeIndex(i any) ([]byte, error) {
	if r, ok := i.(rawIndex); ok {
		return r, nil
	}
	if i == nil {
		return nil, nil
	}
	return msgpack.Marshal(i)
}

// An envelope on the wire is a msgpack array of three, written by hand
// (the message path: no reflection on the header):
//
//	[header, index, message]
//
// header is a msgpack bin of fixed layout (little-endian): route kind (1
// byte), collection (8), PE, source PE, broadcast root (4 each), entry
// (4), reply future's PE (4) and ID (8), epoch (4), hops (1). index is nil, the index's
// msgpack bytes, or for a multicast hop an array of them; message is the
// entry's message inline (nil for none).
const headerLen = 1 + 8 + 4*4 + 4 + 8 + 4 + 1

func encodeEnvelope(enc *msgpack.Encoder, h *Header, msg any, reply futureRef) error {
	var entry EntryID
	if h.Entry != nil {
		entry = h.Entry.ID
	}
	var hb [headerLen]byte
	hb[0] = uint8(h.Kind)
	le := binary.LittleEndian
	le.PutUint64(hb[1:], uint64(h.Coll))
	le.PutUint32(hb[9:], uint32(int32(h.PE)))
	le.PutUint32(hb[13:], uint32(int32(h.Src)))
	le.PutUint32(hb[17:], uint32(int32(h.Root)))
	le.PutUint32(hb[21:], uint32(entry))
	le.PutUint32(hb[25:], uint32(int32(reply.PE)))
	le.PutUint64(hb[29:], reply.ID)
	le.PutUint32(hb[37:], h.Epoch)
	hb[41] = h.Hops
	if err := errors.Join(enc.EncodeArrayLen(3), enc.EncodeBytes(hb[:])); err != nil {
		return err
	}
	if h.Kind == KindSection {
		ms := h.Members()
		if err := enc.EncodeArrayLen(len(ms)); err != nil {
			return err
		}
		for _, m := range ms {
			b, err := encodeIndex(m)
			if err != nil {
				return fmt.Errorf("encoding section member %v: %w", m, err)
			}
			if err := enc.EncodeBytes(b); err != nil {
				return err
			}
		}
	} else {
		b, err := encodeIndex(h.Index)
		if err != nil {
			return fmt.Errorf("encoding index %v: %w", h.Index, err)
		}
		if err := enc.EncodeBytes(b); err != nil {
			return err
		}
	}
	if h.Entry == nil || h.Entry.Msg == nil {
		return enc.EncodeNil()
	}
	if err := enc.Encode(msg); err != nil {
		return fmt.Errorf("encoding the message of %s: %w", h.Entry, err)
	}
	return nil
}

func decodeEnvelope(ap *actor.PE, dec *msgpack.Decoder) (actor.Message, error) {
	n, err := dec.DecodeArrayLen()
	if err != nil {
		return nil, err
	}
	if n != 3 {
		return nil, fmt.Errorf("an envelope of %d fields, not 3", n)
	}
	hl, err := dec.DecodeBytesLen()
	if err != nil {
		return nil, err
	}
	if hl != headerLen {
		return nil, fmt.Errorf("an envelope header of %d bytes, not %d", hl, headerLen)
	}
	var hb []byte
	if ap != nil {
		hb = ap.Scratch(headerLen)
	} else {
		hb = make([]byte, headerLen)
	}
	if err := dec.ReadFull(hb); err != nil {
		return nil, err
	}
	le := binary.LittleEndian
	kind := Kind(hb[0])
	if kind == KindNone || kind > KindSection {
		return nil, fmt.Errorf("an envelope of route kind %d", kind)
	}
	e, err := EntryByID(EntryID(le.Uint32(hb[21:])))
	if err != nil {
		return nil, err
	}
	reply := futureRef{int(int32(le.Uint32(hb[25:]))), le.Uint64(hb[29:])}
	h := Header{Route: Route{Kind: kind, Coll: CollID(le.Uint64(hb[1:])), PE: int(int32(le.Uint32(hb[9:])))},
		Entry: e, Src: int(int32(le.Uint32(hb[13:]))), Root: int(int32(le.Uint32(hb[17:]))),
		Epoch: le.Uint32(hb[37:]), Hops: hb[41]}
	if kind == KindSection {
		m, err := dec.DecodeArrayLen()
		if err != nil {
			return nil, err
		}
		if br, ok := dec.Buffered().(interface{ Len() int }); m < 0 || ok && m > br.Len() {
			return nil, fmt.Errorf("a multicast hop of %d members", m)
		}
		ms := make([]any, m)
		for i := range ms {
			b, err := dec.DecodeBytes()
			if err != nil {
				return nil, err
			}
			ms[i] = rawIndex(b)
		}
		h.Index = ms
	} else {
		b, err := dec.DecodeBytes()
		if err != nil {
			return nil, err
		}
		if b != nil {
			h.Index = rawIndex(b)
		}
	}
	if f := e.wireEnv.Load(); f != nil {
		return (*f)(h, reply, dec)
	}
	env := &envDyn{reply: reply}
	env.h = h
	if e.Msg == nil {
		return env, dec.Skip()
	}
	v := reflect.New(e.Msg)
	if err := dec.Decode(v.Interface()); err != nil {
		return nil, fmt.Errorf("decoding the message of %s: %w", e, err)
	}
	env.msg = v.Elem().Interface()
	return env, nil
}

func (e *env1[T, M]) WireKind() uint16 { return kindEnvelope }
func (e *env1[T, M]) EncodeWire(enc *msgpack.Encoder) error {
	return encodeEnvelope(enc, &e.h, e.msg, futureRef{})
}
func (e *env0[T]) WireKind() uint16 { return kindEnvelope }
func (e *env0[T]) EncodeWire(enc *msgpack.Encoder) error {
	return encodeEnvelope(enc, &e.h, nil, futureRef{})
}
func (e *envCall[T, M, R]) WireKind() uint16 { return kindEnvelope }
func (e *envCall[T, M, R]) EncodeWire(enc *msgpack.Encoder) error {
	return encodeEnvelope(enc, &e.h, e.msg, e.reply)
}
func (e *envCall0[T, R]) WireKind() uint16 { return kindEnvelope }
func (e *envCall0[T, R]) EncodeWire(enc *msgpack.Encoder) error {
	return encodeEnvelope(enc, &e.h, nil, e.reply)
}
func (e *envDyn) WireKind() uint16 { return kindEnvelope }
func (e *envDyn) EncodeWire(enc *msgpack.Encoder) error {
	msg := e.msg
	if e.h.Entry != nil && e.h.Entry.Msg != nil {
		// The message came in an any (a callback's value): check and
		// convert it here as the entry method would when it runs, so that
		// a mistake gets the same error as in one process rather than a
		// decoding error in the other.
		v, err := convertArg(e.h.Entry, msg)
		if err != nil {
			return err
		}
		msg = v.Interface()
	}
	return encodeEnvelope(enc, &e.h, msg, e.reply)
}

// resolve turns a raw index into the collection's index type.
func (pe *PE) resolve(c *Collection, i any) (any, error) {
	switch r := i.(type) {
	case rawIndex:
		if c.DecodeIndex == nil {
			return nil, fmt.Errorf("chare: %s %v has no index decoder", c.Type.Name, c.ID)
		}
		return c.DecodeIndex(r)
	case []any: // section members on a multicast hop
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

func (m createMsg) WireKind() uint16                      { return kindCreate }
func (m createMsg) EncodeWire(enc *msgpack.Encoder) error { return enc.Encode(m.coll) }

func (m *futureMsg) WireKind() uint16 { return kindFuture }
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

func (m *redUp) WireKind() uint16 { return kindReduction }
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
	actor.RegisterWire(kindEnvelope, "chare envelope", decodeEnvelope)
	actor.RegisterWire(kindCreate, "collection creation", func(_ *actor.PE, dec *msgpack.Decoder) (actor.Message, error) {
		var c CollID
		err := dec.Decode(&c)
		return createMsg{c}, err
	})
	actor.RegisterWire(kindAnnounce, "collection announcement", func(_ *actor.PE, dec *msgpack.Decoder) (actor.Message, error) {
		m := &announceMsg{}
		err := dec.Decode(&m.spec)
		return m, err
	})
	actor.RegisterWire(kindFuture, "future value", func(_ *actor.PE, dec *msgpack.Decoder) (actor.Message, error) {
		var w wireFuture
		if err := dec.Decode(&w); err != nil {
			return nil, err
		}
		return &futureMsg{ref: futureRef{w.PE, w.ID}, val: rawValue(w.Val)}, nil
	})
	actor.RegisterWire(kindReduction, "reduction", decodeReduction)
	actor.RegisterStruct[ckptStart](kindCkptStart, "checkpoint start")
	actor.RegisterStruct[ckptCollect](kindCkptCollect, "checkpoint collection")
	actor.RegisterStruct[ckptPart](kindCkptPart, "checkpoint part")
	actor.RegisterStruct[restoreMsg](kindRestore, "restart objects")
	actor.RegisterWire(kindRestoreFence, "restart fence", func(_ *actor.PE, dec *msgpack.Decoder) (actor.Message, error) {
		return restoreFence{}, dec.Skip()
	})
	actor.RegisterWire(kindRestoreAck, "restart acknowledgement", func(_ *actor.PE, dec *msgpack.Decoder) (actor.Message, error) {
		return restoreAck{}, dec.Skip()
	})
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
	if pd, ok := d.(PortableDelegate); ok {
		w.DKind, w.DID = pd.DelegateRef()
	}
	return enc.Encode(&w)
}

func decodeRoute(dec *msgpack.Decoder) (Route, Delegate, error) {
	var w wireRoute
	if err := dec.Decode(&w); err != nil {
		return Route{}, nil, err
	}
	r := Route{Kind: w.Kind, Coll: w.Coll, PE: w.PE}
	if w.Index != nil {
		r.Index = rawIndex(w.Index)
	}
	var d Delegate
	if w.DKind != "" {
		rd, err := newRemoteDelegate(w.DKind, w.DID)
		if err != nil {
			return Route{}, nil, err
		}
		d = rd
	}
	return r, d, nil
}

// EncodeMsgpack lets a proxy travel in a message, with its delegate if
// that is a PortableDelegate (other delegates stay behind).
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
	return enc.Encode(&wireCallback{Kind: cb.Kind, Route: wireRoute{Kind: cb.Route.Kind, Coll: cb.Route.Coll, PE: cb.Route.PE, Index: idx},
		Entry: cb.Entry, Future: cb.Future, Func: cb.Func, PE: cb.PE, Code: cb.Code})
}

// DecodeMsgpack reads a callback from a message.
func (cb *Callback) DecodeMsgpack(dec *msgpack.Decoder) error {
	var w wireCallback
	if err := dec.Decode(&w); err != nil {
		return err
	}
	*cb = Callback{Kind: w.Kind, Route: Route{Kind: w.Route.Kind, Coll: w.Route.Coll, PE: w.Route.PE}, Entry: w.Entry, Future: w.Future, Func: w.Func, PE: w.PE, Code: w.Code}
	if w.Route.Index != nil {
		cb.Route.Index = rawIndex(w.Route.Index)
	}
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

// wireDecoder reads the message of a typed envelope from another process.
type wireDecoder func(h Header, reply futureRef, dec *msgpack.Decoder) (actor.Message, error)

// wireInstaller is implemented by the typed envelopes: they install, once
// per entry method, the decoder that rebuilds them.
type wireInstaller interface {
	installWire(e *Entry)
}

func (e *env1[T, M]) installWire(en *Entry) {
	fn := e.fn
	f := wireDecoder(func(h Header, reply futureRef, dec *msgpack.Decoder) (actor.Message, error) {
		if reply.ID != 0 {
			return nil, fmt.Errorf("a reply future on a call of %s, which returns nothing", h.Entry)
		}
		out := &env1[T, M]{fn: fn}
		out.h = h
		if err := dec.Decode(&out.msg); err != nil {
			return nil, fmt.Errorf("decoding the message of %s: %w", h.Entry, err)
		}
		return out, nil
	})
	en.wireEnv.CompareAndSwap(nil, &f)
}

func (e *env0[T]) installWire(en *Entry) {
	fn := e.fn
	f := wireDecoder(func(h Header, reply futureRef, dec *msgpack.Decoder) (actor.Message, error) {
		if reply.ID != 0 {
			return nil, fmt.Errorf("a reply future on a call of %s, which returns nothing", h.Entry)
		}
		out := &env0[T]{fn: fn}
		out.h = h
		return out, dec.Skip()
	})
	en.wireEnv.CompareAndSwap(nil, &f)
}

// The methods that return a value are decoded into the same envelopes
// for a sync call (a reply future in the header) and for SendR (none).

func (e *envCall[T, M, R]) installWire(en *Entry) {
	fn := e.fn
	f := wireDecoder(func(h Header, reply futureRef, dec *msgpack.Decoder) (actor.Message, error) {
		out := &envCall[T, M, R]{fn: fn, reply: reply}
		out.h = h
		if err := dec.Decode(&out.msg); err != nil {
			return nil, fmt.Errorf("decoding the message of %s: %w", h.Entry, err)
		}
		return out, nil
	})
	en.wireEnv.CompareAndSwap(nil, &f)
}

func (e *envCall0[T, R]) installWire(en *Entry) {
	fn := e.fn
	f := wireDecoder(func(h Header, reply futureRef, dec *msgpack.Decoder) (actor.Message, error) {
		out := &envCall0[T, R]{fn: fn, reply: reply}
		out.h = h
		return out, dec.Skip()
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

func (m *ckptStart) WireKind() uint16                        { return kindCkptStart }
func (m *ckptStart) EncodeWire(enc *msgpack.Encoder) error   { return enc.Encode(m) }
func (m *ckptCollect) WireKind() uint16                      { return kindCkptCollect }
func (m *ckptCollect) EncodeWire(enc *msgpack.Encoder) error { return enc.Encode(m) }
func (m *ckptPart) WireKind() uint16                         { return kindCkptPart }
func (m *ckptPart) EncodeWire(enc *msgpack.Encoder) error    { return enc.Encode(m) }
func (m *restoreMsg) WireKind() uint16                       { return kindRestore }
func (m *restoreMsg) EncodeWire(enc *msgpack.Encoder) error  { return enc.Encode(m) }
func (restoreFence) WireKind() uint16                        { return kindRestoreFence }
func (restoreFence) EncodeWire(enc *msgpack.Encoder) error   { return enc.EncodeNil() }
func (restoreAck) WireKind() uint16                          { return kindRestoreAck }
func (restoreAck) EncodeWire(enc *msgpack.Encoder) error     { return enc.EncodeNil() }
