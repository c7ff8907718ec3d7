package codec

import (
	"encoding"
	"fmt"
	"reflect"
	"strconv"
	"sync"
	"unsafe"

	"github.com/charmgo/charm/internal/bigbuf"
	"github.com/charmgo/charm/internal/mpcheck"
	"github.com/charmgo/charm/internal/msgp"
	"github.com/vmihailenco/msgpack/v5"
)

// How says which way a codec encodes its type.
type How uint8

const (
	Reflection How = iota // msgpack/v5, reflecting on every value
	Generated             // compiled once from the type's layout
	Marshaler             // the type's own MarshalMsg and UnmarshalMsg
)

func (h How) String() string {
	switch h {
	case Generated:
		return "generated"
	case Marshaler:
		return "marshaler"
	}
	return "reflection"
}

// MsgMarshaler and MsgUnmarshaler are the msgp convention: MarshalMsg
// appends the value's encoding to b; UnmarshalMsg decodes one value from
// the start of b and returns the bytes after it.
type (
	MsgMarshaler interface {
		MarshalMsg(b []byte) ([]byte, error)
	}
	MsgUnmarshaler interface {
		UnmarshalMsg(b []byte) ([]byte, error)
	}
)

// Codec encodes and decodes the values of one type. It is safe for
// concurrent use.
type Codec struct {
	typ reflect.Type
	how How
	enc encFn // Generated
	dec decFn // Generated
}

var (
	cache   sync.Map // reflect.Type → *Codec
	readers = sync.Pool{New: func() any { return new(msgp.Reader) }}
)

// For returns the codec of T, built on first use and cached.
func For[T any]() *Codec { return Of(reflect.TypeFor[T]()) }

// Of returns the codec of t, built on first use and cached.
func Of(t reflect.Type) *Codec {
	if c, ok := cache.Load(t); ok {
		return c.(*Codec)
	}
	c := &Codec{typ: t}
	pt := reflect.PointerTo(t)
	switch {
	case pt.Implements(msgMarshalerType) && pt.Implements(msgUnmarshalerType):
		c.how = Marshaler
	default:
		if enc, dec, ok := compile(t, map[reflect.Type]bool{}); ok {
			c.how, c.enc, c.dec = Generated, enc, dec
		}
	}
	got, _ := cache.LoadOrStore(t, c)
	return got.(*Codec)
}

// How says how the codec works.
func (c *Codec) How() How { return c.how }

// Type is the type the codec encodes.
func (c *Codec) Type() reflect.Type { return c.typ }

var (
	msgMarshalerType   = reflect.TypeFor[MsgMarshaler]()
	msgUnmarshalerType = reflect.TypeFor[MsgUnmarshaler]()
	// A type that has any of these encodes itself: never generate a codec
	// that would bypass it.
	selfEncoding = []reflect.Type{
		reflect.TypeFor[msgpack.CustomEncoder](), reflect.TypeFor[msgpack.CustomDecoder](),
		reflect.TypeFor[msgpack.Marshaler](), reflect.TypeFor[msgpack.Unmarshaler](),
		reflect.TypeFor[encoding.BinaryMarshaler](), reflect.TypeFor[encoding.BinaryUnmarshaler](),
		reflect.TypeFor[encoding.TextMarshaler](), reflect.TypeFor[encoding.TextUnmarshaler](),
		msgMarshalerType, msgUnmarshalerType,
	}
)

// Append appends the encoding of *v to b. c must be the codec of T.
func Append[T any](c *Codec, b []byte, v *T) ([]byte, error) {
	switch c.how {
	case Generated:
		return c.generate(b, unsafe.Pointer(v))
	case Marshaler:
		return c.marshal(b, any(v))
	}
	return c.reflectAppend(b, v)
}

// Decode decodes b, which must hold exactly one value, into *v. c must be
// the codec of T.
func Decode[T any](c *Codec, b []byte, v *T) error {
	switch c.how {
	case Generated:
		return c.decode(b, unsafe.Pointer(v))
	case Marshaler:
		return c.unmarshal(b, any(v))
	}
	return c.reflectDecode(b, v)
}

// AppendValue is Append for a value known only by reflection: v must hold
// a value of the codec's type.
func (c *Codec) AppendValue(b []byte, v reflect.Value) ([]byte, error) {
	if v.Type() != c.typ {
		return b, fmt.Errorf("codec: %v is not a %v", v.Type(), c.typ)
	}
	if !v.CanAddr() {
		p := reflect.New(c.typ)
		p.Elem().Set(v)
		v = p.Elem()
	}
	switch c.how {
	case Generated:
		return c.generate(b, v.Addr().UnsafePointer())
	case Marshaler:
		return c.marshal(b, v.Addr().Interface())
	}
	return c.reflectAppend(b, v.Addr().Interface())
}

// DecodeValue is Decode for a value known only by reflection: p must be a
// pointer to the codec's type.
func (c *Codec) DecodeValue(b []byte, p reflect.Value) error {
	if p.Kind() != reflect.Pointer || p.Type().Elem() != c.typ || p.IsNil() {
		return fmt.Errorf("codec: decoding %v needs a non-nil *%v", c.typ, c.typ)
	}
	switch c.how {
	case Generated:
		return c.decode(b, p.UnsafePointer())
	case Marshaler:
		return c.unmarshal(b, p.Interface())
	}
	return c.reflectDecode(b, p.Interface())
}

func (c *Codec) decode(b []byte, p unsafe.Pointer) error {
	// A reader on the stack would escape through the indirect call: an
	// allocation per message. Pooled readers cost none.
	r := readers.Get().(*msgp.Reader)
	*r = msgp.Reader{B: b}
	err := c.dec(r, p)
	off := r.Off
	*r = msgp.Reader{}
	readers.Put(r)
	if err != nil {
		return c.wrap(err)
	}
	if off != len(b) {
		return c.wrap(&decErr{off: off, msg: fmt.Sprintf("%d trailing bytes", len(b)-off)})
	}
	return nil
}

// Error is a decoding error: it names the type and, for a generated codec,
// the field and the byte offset.
type Error struct {
	Type  reflect.Type
	Field string // "Seq", "Inner.Vals[3]"; empty for the whole value
	Off   int    // -1 if unknown
	Msg   string
}

func (e *Error) Error() string {
	s := "codec: decoding " + e.Type.String() + ": "
	if e.Field != "" {
		s += "field " + e.Field + ": "
	}
	s += e.Msg
	if e.Off >= 0 {
		s += fmt.Sprintf(" (at byte %d)", e.Off)
	}
	return s
}

func (c *Codec) wrap(err error) error {
	switch d := err.(type) {
	case *decErr:
		return &Error{Type: c.typ, Field: d.path, Off: d.off, Msg: d.msg}
	case *msgp.Error:
		return &Error{Type: c.typ, Off: d.Off, Msg: d.Msg}
	}
	return &Error{Type: c.typ, Off: -1, Msg: err.Error()}
}

// maxLen is the longest string, []byte or slice msgpack can describe
// (a test lowers it).
var maxLen uint64 = msgp.MaxLen

// generate runs the generated encoder. A string, []byte or slice longer
// than msgpack can describe (4 GiB) gets an error naming the type and the
// field: its header would otherwise be written with its length cut short.
// Such a value makes an encoding longer than that too, so only then is
// the value searched for one.
func (c *Codec) generate(b []byte, p unsafe.Pointer) ([]byte, error) {
	out := c.enc(b, p)
	if uint64(len(out)-len(b)) > maxLen {
		if path, n, found := tooLong(reflect.NewAt(c.typ, p).Elem(), "", 0); found {
			return b, fmt.Errorf("codec: encoding %v: %s has length %d, longer than msgpack can describe (%d)", c.typ, path, n, maxLen)
		}
	}
	return out, nil
}

// tooLong finds a string, []byte, slice or map in v longer than maxLen,
// and says where it is (path names v). It follows pointers and interfaces
// to a depth of 64, which a cycle cannot take it past.
func tooLong(v reflect.Value, path string, depth int) (string, int, bool) {
	if depth > 64 {
		return "", 0, false
	}
	name := func(p string) string {
		if p == "" {
			return "the value"
		}
		return "field " + p
	}
	switch v.Kind() {
	case reflect.String, reflect.Slice:
		if uint64(v.Len()) > maxLen {
			return name(path), v.Len(), true
		}
		if v.Kind() == reflect.String || v.Type().Elem().Kind() == reflect.Uint8 {
			return "", 0, false
		}
		fallthrough
	case reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return "", 0, false
		}
		for i := range v.Len() {
			if p, n, found := tooLong(v.Index(i), path+"["+strconv.Itoa(i)+"]", depth+1); found {
				return p, n, true
			}
		}
	case reflect.Struct:
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if !f.IsExported() {
				continue
			}
			sub := f.Name
			if path != "" {
				sub = path + "." + f.Name
			}
			if p, n, found := tooLong(v.Field(i), sub, depth+1); found {
				return p, n, true
			}
		}
	case reflect.Map:
		if uint64(v.Len()) > maxLen {
			return name(path), v.Len(), true
		}
		for it := v.MapRange(); it.Next(); {
			sub := path + "[" + fmt.Sprint(it.Key()) + "]"
			if p, n, found := tooLong(it.Key(), sub, depth+1); found {
				return p, n, true
			}
			if p, n, found := tooLong(it.Value(), sub, depth+1); found {
				return p, n, true
			}
		}
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			return tooLong(v.Elem(), path, depth+1)
		}
	}
	return "", 0, false
}

func (c *Codec) marshal(b []byte, v any) (out []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = b, fmt.Errorf("codec: %v.MarshalMsg panicked: %v", c.typ, r)
		}
	}()
	out, err = v.(MsgMarshaler).MarshalMsg(b)
	if err != nil {
		return b, fmt.Errorf("codec: encoding %v: %w", c.typ, err)
	}
	return out, nil
}

func (c *Codec) unmarshal(b []byte, v any) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &Error{Type: c.typ, Off: -1, Msg: fmt.Sprintf("UnmarshalMsg panicked: %v", r)}
		}
	}()
	rest, err := v.(MsgUnmarshaler).UnmarshalMsg(b)
	if err != nil {
		return &Error{Type: c.typ, Off: -1, Msg: err.Error()}
	}
	if len(rest) != 0 {
		return &Error{Type: c.typ, Off: len(b) - len(rest), Msg: fmt.Sprintf("%d trailing bytes", len(rest))}
	}
	return nil
}

// The reflection path: pooled msgpack/v5 encoders and decoders, structs
// as arrays, as the runtime has always written them.

type reflEnc struct {
	w   appender
	enc *msgpack.Encoder
}

// appender is a reflEnc's writer: msgpack writes straight into the
// caller's slice, a long []byte in pieces (package bigbuf), rather than
// into a buffer that doubles as it grows and is copied out after.
type appender struct{ b []byte }

func (a *appender) Write(p []byte) (int, error) { a.b = bigbuf.Append(a.b, p); return len(p), nil }
func (a *appender) WriteByte(c byte) error      { a.b = bigbuf.AppendByte(a.b, c); return nil }
func (a *appender) WriteString(s string) (int, error) {
	a.b = bigbuf.AppendString(a.b, s)
	return len(s), nil
}

var reflEncs = sync.Pool{New: func() any {
	e := &reflEnc{}
	e.enc = msgpack.NewEncoder(&e.w)
	e.enc.UseArrayEncodedStructs(true)
	e.enc.UseCompactInts(true)
	return e
}}

type reflDec struct {
	r   bigbuf.Reader // a long []byte in pieces, not in one copy
	dec *msgpack.Decoder
}

var reflDecs = sync.Pool{New: func() any {
	d := &reflDec{}
	d.dec = msgpack.NewDecoder(&d.r)
	return d
}}

func (c *Codec) reflectAppend(b []byte, v any) (out []byte, err error) {
	e := reflEncs.Get().(*reflEnc)
	defer func() {
		if r := recover(); r != nil { // msgpack/v5 panics on uintptr, say
			out, err = b, fmt.Errorf("codec: encoding %v: %v", c.typ, r)
		}
		e.w.b = nil // the caller's
		reflEncs.Put(e)
	}()
	e.w.b = b
	if err := e.enc.Encode(v); err != nil {
		return b, fmt.Errorf("codec: encoding %v: %w", c.typ, err)
	}
	if uint64(len(e.w.b)-len(b)) > maxLen { // msgpack/v5 cuts such a length short too
		if path, n, found := tooLong(reflect.ValueOf(v), "", 0); found {
			return b, fmt.Errorf("codec: encoding %v: %s has length %d, longer than msgpack can describe (%d)", c.typ, path, n, maxLen)
		}
	}
	return e.w.b, nil
}

func (c *Codec) reflectDecode(b []byte, v any) (err error) {
	// msgpack/v5 makes a slice for as many elements as a header claims
	// (four billion from five bytes: its limit is never applied to
	// slices) and recurses once per level of nesting: the bytes, from
	// another process, are checked first. Beside reflection the pass is
	// small.
	if err := mpcheck.SeqAs(b, c.typ); err != nil {
		return &Error{Type: c.typ, Off: -1, Msg: err.Error()}
	}
	d := reflDecs.Get().(*reflDec)
	d.r.Reset(b)
	d.dec.Reset(&d.r)
	defer func() {
		if r := recover(); r != nil {
			err = &Error{Type: c.typ, Off: -1, Msg: fmt.Sprint(r)}
		}
		d.r.Reset(nil)
		reflDecs.Put(d)
	}()
	if err := d.dec.Decode(v); err != nil {
		return &Error{Type: c.typ, Off: -1, Msg: err.Error()}
	}
	if n := d.r.Len(); n != 0 {
		return &Error{Type: c.typ, Off: len(b) - n, Msg: fmt.Sprintf("%d trailing bytes", n)}
	}
	return nil
}
