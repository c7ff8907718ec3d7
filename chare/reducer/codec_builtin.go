package reducer

import (
	"fmt"

	"github.com/vmihailenco/msgpack/v5"
)

// The Codecs of the reducers whose partial results have a fixed type: the
// element-wise reducers (numeric, logical, bit-vector), Nop and Stats.

// Tags of the element-wise partial results, which may be a T or a []T.
const (
	tagScalar = 0
	tagSlice  = 1
)

// EncodePartial writes [tagScalar, T] or [tagSlice, [T...]].
func (r *elementwise[T]) EncodePartial(enc *msgpack.Encoder, partial any) error {
	var err error
	switch p := partial.(type) {
	case T:
		err = encodeTagged(enc, tagScalar, func() error { return valueEncoder[T](enc)(p) })
	case []T:
		err = encodeTagged(enc, tagSlice, func() error { return encodeSlice(enc, p, valueEncoder[T](enc)) })
	default:
		return r.typeError("partial result", partial)
	}
	if err != nil {
		return codecErr(r.name, "encoding", err)
	}
	return nil
}

// DecodePartial reads what EncodePartial wrote, as a T or a []T.
func (r *elementwise[T]) DecodePartial(dec *msgpack.Decoder) (any, error) {
	p, err := r.decode(dec)
	if err != nil {
		return nil, codecErr(r.name, "decoding", err)
	}
	return p, nil
}

func (r *elementwise[T]) decode(dec *msgpack.Decoder) (any, error) {
	if err := decodeArrayLen(dec, 2); err != nil {
		return nil, err
	}
	tag, err := dec.DecodeUint8()
	if err != nil {
		return nil, err
	}
	switch tag {
	case tagScalar:
		return valueDecoder[T](dec)()
	case tagSlice:
		return decodeSlice(dec, valueDecoder[T](dec))
	}
	return nil, fmt.Errorf("unknown tag %d", tag)
}

func (r *elementwise[T]) namesItself() {}

func encodeTagged(enc *msgpack.Encoder, tag uint8, value func() error) error {
	if err := enc.EncodeArrayLen(2); err != nil {
		return err
	}
	if err := enc.EncodeUint8(tag); err != nil {
		return err
	}
	return value()
}

// EncodePartial writes nil, whatever the partial result: Nop ignores them.
func (nop) EncodePartial(enc *msgpack.Encoder, _ any) error {
	if err := enc.EncodeNil(); err != nil {
		return codecErr("nop", "encoding", err)
	}
	return nil
}

// DecodePartial reads the nil that EncodePartial wrote.
func (nop) DecodePartial(dec *msgpack.Decoder) (any, error) {
	if err := dec.DecodeNil(); err != nil {
		return nil, codecErr("nop", "decoding", err)
	}
	return nil, nil
}

func (nop) namesItself() {}

// EncodePartial writes Moments as [Count, Mean, M2].
func (stats) EncodePartial(enc *msgpack.Encoder, partial any) error {
	m, err := moments(partial)
	if err != nil {
		return err
	}
	err = enc.EncodeArrayLen(3)
	if err == nil {
		err = enc.EncodeInt(m.Count)
	}
	if err == nil {
		err = enc.EncodeFloat64(m.Mean)
	}
	if err == nil {
		err = enc.EncodeFloat64(m.M2)
	}
	if err != nil {
		return codecErr("stats", "encoding", err)
	}
	return nil
}

// DecodePartial reads Moments written by EncodePartial.
func (stats) DecodePartial(dec *msgpack.Decoder) (any, error) {
	var m Moments
	err := decodeArrayLen(dec, 3)
	if err == nil {
		m.Count, err = dec.DecodeInt64()
	}
	if err == nil {
		m.Mean, err = dec.DecodeFloat64()
	}
	if err == nil {
		m.M2, err = dec.DecodeFloat64()
	}
	if err == nil && m.Count < 0 {
		err = fmt.Errorf("count %d", m.Count)
	}
	if err != nil {
		return nil, codecErr("stats", "decoding", err)
	}
	return m, nil
}

func (stats) namesItself() {}
