package core

import (
	"bytes"
	"fmt"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/charmgo/charm/actor"
	"github.com/charmgo/charm/chare/reducer"
	"github.com/charmgo/charm/internal/wirekind"
)

// Creation, futures and reductions between processes.

func (m createMsg) WireKind() uint16                      { return wirekind.Create }
func (m createMsg) EncodeWire(enc *msgpack.Encoder) error { return enc.Encode(m.coll) }

func (m *futureMsg) WireKind() uint16 { return wirekind.Future }
func (m *futureMsg) EncodeWire(enc *msgpack.Encoder) error {
	v, err := msgpack.Marshal(m.val)
	if err != nil {
		return fmt.Errorf("encoding the value (%s) of future %d: %w", valueTypeName(m.val), m.ref.ID, err)
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

func (restoreFence) WireKind() uint16                      { return wirekind.RestoreFence }
func (restoreFence) EncodeWire(enc *msgpack.Encoder) error { return enc.EncodeNil() }
func (restoreAck) WireKind() uint16                        { return wirekind.RestoreAck }
func (restoreAck) EncodeWire(enc *msgpack.Encoder) error   { return enc.EncodeNil() }
