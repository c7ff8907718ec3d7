package mpcheck

import (
	"encoding"
	"fmt"
	"reflect"
	"sync"

	"github.com/vmihailenco/msgpack/v5"
)

// Expansion bounds what decoding may allocate into a known Go type: at
// most Expansion bytes per byte of msgpack, plus Slack. Seq bounds a
// header's count by the bytes left, one byte an element, but an element
// of one byte (nil, or an empty map for a struct) becomes a whole Go
// value: a slice of 4 KiB arrays took 4 KiB per byte, a slice of
// checkpoint objects 200 bytes per byte. Real data stays far below 64:
// the dearest ordinary values are empty strings and interfaces (16 bytes
// of Go for 1 of msgpack) and small map entries.
const (
	Expansion = 64
	Slack     = 1 << 20
)

// SeqAs is Seq for bytes that msgpack/v5 will decode, by reflection, into
// a value of type t (their first value; the others a type's own decoder
// reads): it also refuses bytes whose decoding would allocate more than
// Expansion times their length plus Slack, estimated by walking the
// values along t — a slice's or a map's elements at their Go size, the
// contents of strings and byte slices, what pointers point to. Values
// that t decodes with its own decoder (msgpack.CustomDecoder,
// msgpack.Unmarshaler, encoding's BinaryUnmarshaler and TextUnmarshaler)
// are counted as their bytes, and struct fields that msgpack/v5 skips
// (unknown names) as nothing.
func SeqAs(b []byte, t reflect.Type) error {
	if err := Seq(b); err != nil {
		return err
	}
	end, n := walk(b, 0, t)
	for end < len(b) { // the values a type's own encoder wrote after the first
		var m int64
		end, m = walk(b, end, anyType)
		n += m
	}
	if limit := int64(Expansion)*int64(len(b)) + Slack; n > limit {
		return fmt.Errorf("msgpack: decoding %d bytes into %v would allocate at least %d bytes, over the limit of %d (%d per byte and %d)",
			len(b), t, n, limit, Expansion, Slack)
	}
	return nil
}

var (
	anyType  = reflect.TypeFor[any]()
	ownTypes = []reflect.Type{
		reflect.TypeFor[msgpack.CustomDecoder](),
		reflect.TypeFor[msgpack.Unmarshaler](),
		reflect.TypeFor[encoding.BinaryUnmarshaler](),
		reflect.TypeFor[encoding.TextUnmarshaler](),
	}
)

// own tells whether t decodes itself.
func own(t reflect.Type) bool {
	pt := reflect.PointerTo(t)
	for _, o := range ownTypes {
		if t.Implements(o) || pt.Implements(o) {
			return true
		}
	}
	return false
}

// walk returns where the value at b[at:] ends and what decoding it into
// t allocates (t nil: skipped, nothing). b has passed Seq.
func walk(b []byte, at int, t reflect.Type) (int, int64) {
	var n int64
	for t != nil && t.Kind() == reflect.Pointer {
		if b[at] == 0xc0 { // nil: a nil pointer
			return at + 1, n
		}
		n += int64(t.Elem().Size())
		t = t.Elem()
	}
	if t != nil && t.Kind() != reflect.Interface && own(t) {
		end, _ := value(b, at, 0)
		return end, n + int64(end-at)
	}
	c := b[at]
	h, count, isMap := header(b, at)
	switch {
	case h == 0: // not an array or a map
		end, _ := value(b, at, 0)
		if t != nil && (c >= 0xa0 && c <= 0xbf || c >= 0xc4 && c <= 0xc6 || c >= 0xd9 && c <= 0xdb) {
			n += int64(end - at) // a string's or bytes' contents
		}
		return end, n
	case t == nil: // skipped
		end, _ := value(b, at, 0)
		return end, n
	}
	at += h
	var elem func(i int, key bool) reflect.Type
	switch k := t.Kind(); {
	case k == reflect.Interface: // []any or map[string]any, and so on
		n += int64(count) * 16
		if isMap {
			n += int64(count) * 32
		}
		elem = func(int, bool) reflect.Type { return anyType }
	case k == reflect.Slice && !isMap:
		n += int64(count) * int64(t.Elem().Size())
		elem = func(int, bool) reflect.Type { return t.Elem() }
	case k == reflect.Array && !isMap:
		elem = func(int, bool) reflect.Type { return t.Elem() }
	case k == reflect.Map && isMap:
		n += int64(count) * int64(t.Key().Size()+t.Elem().Size()+8)
		elem = func(_ int, key bool) reflect.Type {
			if key {
				return t.Key()
			}
			return t.Elem()
		}
	case k == reflect.Struct && !isMap: // as an array: the fields in order
		fs := fieldsOf(t)
		elem = func(i int, _ bool) reflect.Type {
			if i < len(fs.list) {
				return fs.list[i]
			}
			return nil
		}
	case k == reflect.Struct: // as a map: the fields by name
		fs := fieldsOf(t)
		for range count {
			kEnd, _ := value(b, at, 0)
			ft := fs.byName[string(key(b, at, kEnd))] // nil for a name msgpack skips
			var m int64
			at, m = walk(b, kEnd, ft)
			n += m
		}
		return at, n
	default: // a container where t wants none: decoding fails
		end, _ := value(b, at-h, 0)
		return end, n
	}
	for i := range count {
		var m int64
		if isMap {
			at, m = walk(b, at, elem(i, true))
			n += m
		}
		at, m = walk(b, at, elem(i, false))
		n += m
	}
	return at, n
}

// header returns the length of the array or map header at b[at:] (0 if
// it is neither), its count of elements or entries, and whether it is a
// map.
func header(b []byte, at int) (int, int, bool) {
	c := b[at]
	switch {
	case c >= 0x80 && c <= 0x8f:
		return 1, int(c & 0x0f), true
	case c >= 0x90 && c <= 0x9f:
		return 1, int(c & 0x0f), false
	case c == 0xdc || c == 0xde:
		l, _ := length(b, at+1, 2)
		return 3, l, c == 0xde
	case c == 0xdd || c == 0xdf:
		l, _ := length(b, at+1, 4)
		return 5, l, c == 0xdf
	}
	return 0, 0, false
}

// key returns the contents of the string at b[at:end] (nil if it is not
// one).
func key(b []byte, at, end int) []byte {
	switch c := b[at]; {
	case c >= 0xa0 && c <= 0xbf:
		return b[at+1 : end]
	case c == 0xd9:
		return b[at+2 : end]
	case c == 0xda:
		return b[at+3 : end]
	case c == 0xdb:
		return b[at+5 : end]
	}
	return nil
}

// fields are a struct type's fields as msgpack/v5 names them.
type fields struct {
	byName map[string]reflect.Type
	list   []reflect.Type // in msgpack/v5's order, for structs as arrays
}

var fieldCache sync.Map // reflect.Type → *fields

// fieldsOf follows msgpack/v5's getFields: exported fields under their
// msgpack tag's name or their own, "-" left out, embedded structs
// without noinline inlined. An embedded struct is also known under its
// own name, as msgpack/v5 keeps it when inlining would shadow a field:
// a name too many costs nothing, one too few would let its value pass
// uncounted.
func fieldsOf(t reflect.Type) *fields {
	if f, ok := fieldCache.Load(t); ok {
		return f.(*fields)
	}
	fs := &fields{byName: map[string]reflect.Type{}}
	addFields(fs, t, 0)
	fieldCache.Store(t, fs)
	return fs
}

func addFields(fs *fields, t reflect.Type, depth int) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("msgpack")
		name, opts := tag, ""
		for j := 0; j < len(tag); j++ {
			if tag[j] == ',' {
				name, opts = tag[:j], tag[j:]
				break
			}
		}
		if name == "-" || f.PkgPath != "" && !f.Anonymous {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if _, dup := fs.byName[name]; !dup {
			fs.byName[name] = f.Type
		}
		inner := f.Type
		for inner.Kind() == reflect.Pointer {
			inner = inner.Elem()
		}
		if f.Anonymous && inner.Kind() == reflect.Struct && !contains(opts, ",noinline") && depth < 16 && !own(inner) {
			addFields(fs, inner, depth+1)
			continue
		}
		fs.list = append(fs.list, f.Type)
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}
