package codec

import (
	"fmt"
	"math"
	"reflect"
	"strconv"
	"unsafe"

	"github.com/charmgo/charm/internal/bigbuf"
	"github.com/charmgo/charm/internal/msgp"
)

// A generated codec is a tree of these, one per field, built once per
// type: they read and write the field at p.
type (
	encFn func(b []byte, p unsafe.Pointer) []byte
	decFn func(r *msgp.Reader, p unsafe.Pointer) error
)

// compile builds the encoder and decoder of t, or reports that t needs
// reflection. busy holds the types being compiled (a recursive type is left
// to reflection).
func compile(t reflect.Type, busy map[reflect.Type]bool) (encFn, decFn, bool) {
	if busy[t] {
		return nil, nil, false
	}
	for _, i := range selfEncoding {
		if t.Implements(i) || reflect.PointerTo(t).Implements(i) {
			return nil, nil, false
		}
	}
	busy[t] = true
	defer delete(busy, t)
	switch t.Kind() {
	case reflect.Bool:
		return encBool, decBool, true
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return intCodec(t.Kind())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return uintCodec(t.Kind())
	case reflect.Float32:
		return encFloat32, decFloat32, true
	case reflect.Float64:
		return encFloat64, decFloat64, true
	case reflect.String:
		return encString, decString, true
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return encBytes, decBytes, true
		}
		return sliceCodec(t, busy)
	case reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return byteArrayCodec(t.Len())
		}
		return arrayCodec(t, busy)
	case reflect.Struct:
		return structCodec(t, busy)
	}
	return nil, nil, false
}

type field struct {
	name string
	off  uintptr
	enc  encFn
	dec  decFn
}

func structCodec(t reflect.Type, busy map[reflect.Type]bool) (encFn, decFn, bool) {
	var fs []field
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous {
			return nil, nil, false // msgpack inlines embedded structs: leave it to msgpack
		}
		if !f.IsExported() {
			continue // msgpack skips them too
		}
		if _, tagged := f.Tag.Lookup("msgpack"); tagged {
			return nil, nil, false // renamed, omitted, as_array...: msgpack's business
		}
		enc, dec, ok := compile(f.Type, busy)
		if !ok {
			return nil, nil, false
		}
		fs = append(fs, field{f.Name, f.Offset, enc, dec})
	}
	n := len(fs)
	enc := func(b []byte, p unsafe.Pointer) []byte {
		b = msgp.AppendArrayHeader(b, n)
		for i := range fs {
			b = fs[i].enc(b, unsafe.Add(p, fs[i].off))
		}
		return b
	}
	dec := func(r *msgp.Reader, p unsafe.Pointer) error {
		m, isNil, err := r.ArrayLen()
		if err != nil {
			return err
		}
		if isNil || m != n {
			return r.Fail("want an array of %d fields, found %s", n, msgp.Found(isNil, m))
		}
		for i := range fs {
			if err := fs[i].dec(r, unsafe.Add(p, fs[i].off)); err != nil {
				return within(err, fs[i].name)
			}
		}
		return nil
	}
	return enc, dec, true
}

func arrayCodec(t reflect.Type, busy map[reflect.Type]bool) (encFn, decFn, bool) {
	ee, ed, ok := compile(t.Elem(), busy)
	if !ok {
		return nil, nil, false
	}
	n, size := t.Len(), t.Elem().Size()
	enc := func(b []byte, p unsafe.Pointer) []byte {
		b = msgp.AppendArrayHeader(b, n)
		for i := range n {
			b = ee(b, unsafe.Add(p, uintptr(i)*size))
		}
		return b
	}
	dec := func(r *msgp.Reader, p unsafe.Pointer) error {
		m, isNil, err := r.ArrayLen()
		if err != nil {
			return err
		}
		if isNil || m != n {
			return r.Fail("want an array of %d elements, found %s", n, msgp.Found(isNil, m))
		}
		for i := range n {
			if err := ed(r, unsafe.Add(p, uintptr(i)*size)); err != nil {
				return within(err, "["+strconv.Itoa(i)+"]")
			}
		}
		return nil
	}
	return enc, dec, true
}

func sliceCodec(t reflect.Type, busy map[reflect.Type]bool) (encFn, decFn, bool) {
	ee, ed, ok := compile(t.Elem(), busy)
	if !ok {
		return nil, nil, false
	}
	size := t.Elem().Size()
	least := uint64(minWire(t.Elem()))
	enc := func(b []byte, p unsafe.Pointer) []byte {
		s := (*sliceHeader)(p)
		if s.data == nil {
			return append(b, msgp.Nil)
		}
		b = msgp.AppendArrayHeader(b, s.len)
		for i := range s.len {
			// A buffer of megabytes grows in pieces here, not by
			// append inside ee, which copies it in one call.
			b = ee(bigbuf.Reserve(b), unsafe.Add(s.data, uintptr(i)*size))
		}
		return b
	}
	dec := func(r *msgp.Reader, p unsafe.Pointer) error {
		m, isNil, err := r.ArrayLen()
		if err != nil {
			return err
		}
		if isNil {
			*(*sliceHeader)(p) = sliceHeader{}
			return nil
		}
		// Every element takes at least least bytes: a count that the rest
		// cannot hold is refused before anything is allocated, so that
		// what is allocated stays in proportion to the bytes (a [4096]byte
		// element is 4096 bytes on the wire too).
		if left := len(r.B) - r.Off; uint64(m)*least > uint64(left) {
			return r.Fail("%d elements declared, of at least %d bytes each, but only %d bytes left", m, least, left)
		}
		v := reflect.MakeSlice(t, m, m)
		reflect.NewAt(t, p).Elem().Set(v)
		data := (*sliceHeader)(p).data
		for i := range m {
			if err := ed(r, unsafe.Add(data, uintptr(i)*size)); err != nil {
				return within(err, "["+strconv.Itoa(i)+"]")
			}
		}
		return nil
	}
	return enc, dec, true
}

// minWire is the fewest bytes a generated decoder of t accepts for one
// value: a header byte for each struct and array, whose fields or elements
// it requires all of, and one byte for anything else (nil for a slice or a
// string). It is capped, and so a bound that never refuses valid input.
func minWire(t reflect.Type) int {
	const most = 1 << 30
	n := 1
	switch t.Kind() {
	case reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			n += t.Len()
		} else {
			e := minWire(t.Elem())
			if t.Len() > most/e {
				return most
			}
			n += t.Len() * e
		}
	case reflect.Struct:
		for i := range t.NumField() {
			if f := t.Field(i); f.IsExported() {
				n += minWire(f.Type)
			}
		}
	}
	return min(n, most)
}

// sliceHeader is the layout of every Go slice.
type sliceHeader struct {
	data     unsafe.Pointer
	len, cap int
}

func byteArrayCodec(n int) (encFn, decFn, bool) {
	enc := func(b []byte, p unsafe.Pointer) []byte {
		b = msgp.AppendBinHeader(b, n)
		return append(b, unsafe.Slice((*byte)(p), n)...)
	}
	dec := func(r *msgp.Reader, p unsafe.Pointer) error {
		s, isNil, err := r.Bytes()
		if err != nil {
			return err
		}
		if isNil || len(s) != n {
			return r.Fail("want %d bytes, found %s", n, msgp.Found(isNil, len(s)))
		}
		copy(unsafe.Slice((*byte)(p), n), s)
		return nil
	}
	return enc, dec, true
}

func encBool(b []byte, p unsafe.Pointer) []byte { return msgp.AppendBool(b, *(*bool)(p)) }

func decBool(r *msgp.Reader, p unsafe.Pointer) error {
	c, err := r.Code()
	if err != nil {
		return err
	}
	switch c {
	case msgp.True:
		*(*bool)(p) = true
	case msgp.False:
		*(*bool)(p) = false
	default:
		return r.Fail("want a bool, found %s", msgp.Describe(c))
	}
	return nil
}

func intCodec(k reflect.Kind) (encFn, decFn, bool) {
	switch k {
	case reflect.Int8:
		return signed[int8](math.MinInt8, math.MaxInt8)
	case reflect.Int16:
		return signed[int16](math.MinInt16, math.MaxInt16)
	case reflect.Int32:
		return signed[int32](math.MinInt32, math.MaxInt32)
	case reflect.Int:
		return signed[int](math.MinInt, math.MaxInt)
	}
	return signed[int64](math.MinInt64, math.MaxInt64)
}

// signed codes an integer of type T, whose range is [lo, hi].
func signed[T int8 | int16 | int32 | int | int64](lo, hi int64) (encFn, decFn, bool) {
	return func(b []byte, p unsafe.Pointer) []byte { return msgp.AppendInt(b, int64(*(*T)(p))) },
		func(r *msgp.Reader, p unsafe.Pointer) error {
			v, err := r.Int(lo, hi)
			*(*T)(p) = T(v)
			return err
		}, true
}

func uintCodec(k reflect.Kind) (encFn, decFn, bool) {
	switch k {
	case reflect.Uint8:
		return unsigned[uint8](math.MaxUint8)
	case reflect.Uint16:
		return unsigned[uint16](math.MaxUint16)
	case reflect.Uint32:
		return unsigned[uint32](math.MaxUint32)
	case reflect.Uint:
		return unsigned[uint](math.MaxUint)
	}
	return unsigned[uint64](math.MaxUint64)
}

// unsigned codes an unsigned integer of type T, at most hi.
func unsigned[T uint8 | uint16 | uint32 | uint | uint64](hi uint64) (encFn, decFn, bool) {
	return func(b []byte, p unsafe.Pointer) []byte { return msgp.AppendUint(b, uint64(*(*T)(p))) },
		func(r *msgp.Reader, p unsafe.Pointer) error {
			v, err := r.Uint(hi)
			*(*T)(p) = T(v)
			return err
		}, true
}

func encFloat32(b []byte, p unsafe.Pointer) []byte { return msgp.AppendFloat32(b, *(*float32)(p)) }

func encFloat64(b []byte, p unsafe.Pointer) []byte { return msgp.AppendFloat64(b, *(*float64)(p)) }

func decFloat32(r *msgp.Reader, p unsafe.Pointer) error {
	v, err := r.Float()
	*(*float32)(p) = float32(v)
	return err
}

func decFloat64(r *msgp.Reader, p unsafe.Pointer) error {
	v, err := r.Float()
	*(*float64)(p) = v
	return err
}

func encString(b []byte, p unsafe.Pointer) []byte {
	s := *(*string)(p)
	return bigbuf.AppendString(msgp.AppendStrHeader(b, len(s)), s) // a long one in pieces
}

func decString(r *msgp.Reader, p unsafe.Pointer) error {
	s, isNil, err := r.Bytes()
	if err != nil {
		return err
	}
	if isNil {
		return r.Fail("want a string, found nil")
	}
	*(*string)(p) = string(s)
	return nil
}

func encBytes(b []byte, p unsafe.Pointer) []byte {
	s := *(*[]byte)(p)
	if s == nil {
		return append(b, msgp.Nil)
	}
	return bigbuf.Append(msgp.AppendBinHeader(b, len(s)), s) // a long one in pieces
}

func decBytes(r *msgp.Reader, p unsafe.Pointer) error {
	s, isNil, err := r.Bytes()
	if err != nil {
		return err
	}
	if isNil {
		*(*[]byte)(p) = nil
		return nil
	}
	// The input is not ours to keep. A long one is copied in pieces.
	*(*[]byte)(p) = bigbuf.Clone(s)
	return nil
}

// within prefixes a decoding error's field path with name.
func within(err error, name string) error {
	var d *decErr
	switch e := err.(type) {
	case *decErr:
		d = e
	case *msgp.Error:
		d = &decErr{off: e.Off, msg: e.Msg}
	default:
		return err
	}
	switch {
	case d.path == "":
		d.path = name
	case d.path[0] == '[':
		d.path = name + d.path
	default:
		d.path = name + "." + d.path
	}
	return d
}

// decErr is a decoding error on its way up: its path grows at each level.
type decErr struct {
	off  int
	path string
	msg  string
}

func (e *decErr) Error() string { return fmt.Sprintf("%s: %s (at byte %d)", e.path, e.msg, e.off) }
