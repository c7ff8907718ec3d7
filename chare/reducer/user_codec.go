package reducer

import (
	"reflect"

	"github.com/vmihailenco/msgpack/v5"
)

// userCodec is a user reducer made by UserWithCodec.
type userCodec struct {
	*user
	codec Codec
}

// EncodePartial writes a partial result with the user's codec.
func (u *userCodec) EncodePartial(enc *msgpack.Encoder, partial any) error {
	if err := u.codec.EncodePartial(enc, partial); err != nil {
		return codecErr(u.name, "encoding", err)
	}
	return nil
}

// DecodePartial reads a partial result with the user's codec.
func (u *userCodec) DecodePartial(dec *msgpack.Decoder) (any, error) {
	p, err := u.codec.DecodePartial(dec)
	if err != nil {
		return nil, codecErr(u.name, "decoding", err)
	}
	return p, nil
}

func (u *userCodec) namesItself() {}

// CodecOf returns a Codec for partial results of type P: it writes a P as
// msgpack does, and reads it back into a P. P's values must survive a
// msgpack round trip: exported fields, none of interface type (they would
// come back as the types msgpack picks), or msgpack's CustomEncoder and
// CustomDecoder. Encoding a partial result of another type is an ErrType
// error. CodecOf panics if P is an interface type.
//
// msgpack v5.4.1 allocates all the elements a slice's header claims
// before reading them, and makes a whole zeroed element of a one-byte
// nil: the runtime checks a partial from another process as a P first
// (CheckPartial), so that what decoding allocates stays in proportion to
// the bytes. The built-in Codecs read their own slices element by
// element.
func CodecOf[P any]() Codec {
	mustBeConcrete[P]("CodecOf", "P")
	return valueCodec[P]{}
}

type valueCodec[P any] struct{}

// EncodePartial writes a P.
func (valueCodec[P]) EncodePartial(enc *msgpack.Encoder, partial any) error {
	p, ok := partial.(P)
	if !ok {
		return errorf(ErrType, "partial result of type %T, want %s", partial, typeName[P]())
	}
	return valueEncoder[P](enc)(p)
}

// DecodePartial reads a P.
func (valueCodec[P]) DecodePartial(dec *msgpack.Decoder) (any, error) {
	p, err := valueDecoder[P](dec)()
	if err != nil {
		return nil, err
	}
	return p, nil
}

func (valueCodec[P]) partialType() reflect.Type { return reflect.TypeFor[P]() }

// partialType is the user's codec's, if it says (nil otherwise).
func (u *userCodec) partialType() reflect.Type {
	if pt, ok := u.codec.(partialTyper); ok {
		return pt.partialType()
	}
	return nil
}
