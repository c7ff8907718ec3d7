package reducer

import (
	"fmt"
	"reflect"
	"sync"

	"github.com/vmihailenco/msgpack/v5"
)

// valueEncoder returns a function that writes values of type T. Numbers
// and bools of every type, defined types included, are written directly:
// msgpack v5.4.1 panics on uintptr, and goes through reflection for
// defined types. Other values are written by msgpack, and a panic of
// msgpack's on a type it cannot handle (a struct with a uintptr field)
// becomes an error.
func valueEncoder[T any](enc *msgpack.Encoder) func(T) error {
	if isScalar[T]() {
		return func(v T) error { return encodeScalar(enc, reflect.ValueOf(v)) }
	}
	return func(v T) (err error) {
		defer recoverTo(&err, "encoding", typeName[T]())
		return enc.Encode(v)
	}
}

// valueDecoder returns a function that reads a value written by
// valueEncoder into a T, so that it comes back as a T and not as whatever
// type msgpack would pick for an any. Integers that do not fit T are an
// error rather than truncated.
func valueDecoder[T any](dec *msgpack.Decoder) func() (T, error) {
	if isScalar[T]() {
		return func() (v T, err error) {
			err = decodeScalar(dec, reflect.ValueOf(&v).Elem())
			return v, err
		}
	}
	return func() (v T, err error) {
		defer recoverTo(&err, "decoding", typeName[T]())
		err = dec.Decode(&v)
		return v, err
	}
}

func recoverTo(err *error, op, typ string) {
	if p := recover(); p != nil {
		*err = fmt.Errorf("msgpack panicked %s a %s: %v", op, typ, p)
	}
}

var msgpackMethods = []reflect.Type{
	reflect.TypeFor[msgpack.CustomEncoder](), reflect.TypeFor[msgpack.CustomDecoder](),
	reflect.TypeFor[msgpack.Marshaler](), reflect.TypeFor[msgpack.Unmarshaler](),
}

// scalars caches isScalar, which costs more than encoding a number.
var scalars sync.Map // reflect.Type -> bool

// isScalar tells whether T is a number or bool type that does not encode
// itself.
func isScalar[T any]() bool {
	t := reflect.TypeFor[T]()
	if s, ok := scalars.Load(t); ok {
		return s.(bool)
	}
	s := scalarType(t)
	scalars.Store(t, s)
	return s
}

func scalarType(t reflect.Type) bool {
	if k := t.Kind(); !isInt(k) && !isUint(k) && !isFloat(k) && k != reflect.Bool {
		return false
	}
	for _, m := range msgpackMethods {
		if t.Implements(m) || reflect.PointerTo(t).Implements(m) {
			return false
		}
	}
	return true
}

func encodeScalar(enc *msgpack.Encoder, v reflect.Value) error {
	switch k := v.Kind(); {
	case isInt(k):
		return enc.EncodeInt(v.Int())
	case isUint(k):
		return enc.EncodeUint(v.Uint())
	case k == reflect.Float32:
		return enc.EncodeFloat32(float32(v.Float()))
	case k == reflect.Float64:
		return enc.EncodeFloat64(v.Float())
	}
	return enc.EncodeBool(v.Bool())
}

func decodeScalar(dec *msgpack.Decoder, v reflect.Value) error {
	switch k := v.Kind(); {
	case isInt(k):
		n, err := dec.DecodeInt64()
		if err == nil && v.OverflowInt(n) {
			err = fmt.Errorf("%d overflows %s", n, v.Type())
		}
		v.SetInt(n)
		return err
	case isUint(k):
		n, err := dec.DecodeUint64()
		if err == nil && v.OverflowUint(n) {
			err = fmt.Errorf("%d overflows %s", n, v.Type())
		}
		v.SetUint(n)
		return err
	case k == reflect.Float32:
		f, err := dec.DecodeFloat32()
		v.SetFloat(float64(f))
		return err
	case k == reflect.Float64:
		f, err := dec.DecodeFloat64()
		v.SetFloat(f)
		return err
	}
	b, err := dec.DecodeBool()
	v.SetBool(b)
	return err
}
