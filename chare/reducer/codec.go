package reducer

import (
	"errors"
	"fmt"
	"reflect"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/charmgo/charm/internal/mpcheck"
)

// Codec is implemented by reducers whose partial results can cross
// processes. EncodePartial writes one partial result; DecodePartial reads it
// back as exactly the type Combine expects.
//
// A partial result is written as one msgpack value (an array for anything
// with several parts), so that a reader can skip it. DecodePartial must
// return an error, never panic, on input that is not an encoding of a
// partial result, and should not allocate what a length header claims
// before reading the elements. After an error from EncodePartial the
// encoder may hold part of a value: discard what it wrote.
//
// To make a reducer of your own cross processes, implement Codec on your
// Reducer type (decode into concrete types, never through any: msgpack
// returns integers in the narrowest type and unregistered structs as
// maps), or build it with UserWithCodec, for instance with CodecOf.
type Codec interface {
	EncodePartial(enc *msgpack.Encoder, partial any) error
	DecodePartial(dec *msgpack.Decoder) (any, error)
}

// The reducers of this package that have a Codec.
var (
	_ Codec = nop{}
	_ Codec = stats{}
	_ Codec = (*elementwise[int])(nil)
	_ Codec = (*typedGather[int, int])(nil)
	_ Codec = (*typedSet[int])(nil)
	_ Codec = (*codecTuple)(nil)
	_ Codec = (*userCodec)(nil)
)

// ErrNoCodec is matched (with errors.Is) by the errors of EncodePartial and
// DecodePartial for a reducer that has no Codec.
var ErrNoCodec = errors.New("reducer cannot cross processes")

// EncodePartial writes a partial result of r with r's Codec, or fails with
// an error matching ErrNoCodec that names r if r has none. Errors of a
// Codec that is not one of this package's are wrapped with r's name.
func EncodePartial(enc *msgpack.Encoder, r Reducer, partial any) error {
	c, err := codecOf(r)
	if err != nil {
		return err
	}
	return named(r, "encoding", c.EncodePartial(enc, partial))
}

// DecodePartial reads a partial result of r written by EncodePartial, as
// the type r's Combine expects; see EncodePartial for the errors.
func DecodePartial(dec *msgpack.Decoder, r Reducer) (any, error) {
	c, err := codecOf(r)
	if err != nil {
		return nil, err
	}
	p, err := c.DecodePartial(dec)
	if err != nil {
		return nil, named(r, "decoding", err)
	}
	return p, nil
}

// noCodec is implemented by the reducers of this package that have no
// Codec, to say why and what to use instead.
type noCodec interface {
	whyNoCodec() string
}

// codecOf returns r's Codec, or an error saying why r has none.
func codecOf(r Reducer) (Codec, error) {
	if c, ok := r.(Codec); ok {
		return c, nil
	}
	return nil, errorf(ErrNoCodec, "reducer %s cannot cross processes: %s", r.Name(), whyNoCodec(r))
}

func whyNoCodec(r Reducer) string {
	if n, ok := r.(noCodec); ok {
		return n.whyNoCodec()
	}
	return fmt.Sprintf("%T does not implement reducer.Codec", r)
}

// builtinCodec marks the Codecs of this package, whose errors already name
// their reducer.
type builtinCodec interface {
	namesItself()
}

// named wraps err, from r's Codec, with r's name unless the Codec is one of
// this package's.
func named(r Reducer, op string, err error) error {
	if _, ok := r.(builtinCodec); ok || err == nil {
		return err
	}
	return fmt.Errorf("reducer %s: %s partial result: %w", r.Name(), op, err)
}

// codecErr wraps an error of a built-in Codec with the reducer's name.
func codecErr(name, op string, err error) error {
	return fmt.Errorf("reducer %s: %s partial result: %w", name, op, err)
}

// partialTyper is implemented by the codecs whose partial results are
// msgpack values decoded into Go types they know.
type partialTyper interface {
	partialType() reflect.Type
}

// CheckPartial checks the bytes of a partial result of r that came from
// another process before DecodePartial reads them: msgpack values whose
// lengths and nesting a decode can afford (mpcheck.Seq) and, where r's
// codec decodes into Go types it knows (GatherOf, ConcatOf, SetOf,
// CodecOf), whose decoding allocates at most what mpcheck.SeqAs allows:
// msgpack/v5 decodes a one-byte nil into a whole zeroed element.
func CheckPartial(r Reducer, b []byte) error {
	c, err := codecOf(r)
	if err != nil {
		return err
	}
	var t reflect.Type // nil: lengths and nesting only
	if pt, ok := c.(partialTyper); ok {
		t = pt.partialType()
	}
	if err := mpcheck.SeqAs(b, t); err != nil {
		return codecErr(r.Name(), "checking", err)
	}
	return nil
}
