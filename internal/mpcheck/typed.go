package mpcheck

import (
	"encoding"
	"fmt"
	"reflect"
	"strings"
	"sync"

	"github.com/charmgo/charm/internal/msgp"
	"github.com/vmihailenco/msgpack/v5"
)

// Expansion bounds what decoding may allocate into a known Go type: at
// most Expansion bytes per byte of msgpack, plus Slack. Seq bounds a
// header's count by the bytes left, one byte an element, but an element
// of one byte (nil, or an empty map for a struct) becomes a whole Go
// value: a slice of 4 KiB arrays takes 4 KiB per byte, a slice of
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
// values along t — a slice's elements at twice their Go size (msgpack/v5
// makes them, then copies them into the slice), a map's entries, the
// contents of strings and byte slices, what pointers point to. Values
// that t decodes with its own decoder (msgpack.CustomDecoder,
// msgpack.Unmarshaler, encoding's BinaryUnmarshaler and TextUnmarshaler)
// are counted as their bytes, and struct fields that msgpack/v5 skips
// (unknown names) as nothing. With t nil it is Seq.
func SeqAs(b []byte, t reflect.Type) error {
	if err := Seq(b); err != nil || t == nil {
		return err
	}
	end, n := walk(b, 0, nodeOf(t))
	for end < len(b) { // the values a type's own encoder wrote after the first
		var m int64
		end, m = walk(b, end, nodeOf(anyType))
		n += m
	}
	if limit := int64(Expansion)*int64(len(b)) + Slack; n > limit {
		return fmt.Errorf("msgpack: decoding %d bytes into %v would allocate at least %d bytes, over the limit of %d (%d per byte and %d)",
			len(b), t, n, limit, Expansion, Slack)
	}
	return nil
}

// Unmarshal is msgpack.Unmarshal for bytes from another process or a
// file: they are checked as bytes that decode into v's type first
// (SeqAs).
func Unmarshal(b []byte, v any) error {
	if err := SeqAs(b, reflect.TypeOf(v)); err != nil {
		return err
	}
	return msgpack.Unmarshal(b, v)
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

// node is what walk needs to know of a type, built once per type with
// the nodes of the types it holds (a recursive type's nodes point back).
type node struct {
	kind   reflect.Kind
	own    bool  // it decodes itself (a pointer: its pointee does)
	flat   bool  // its values allocate nothing beyond their own slot
	size   int64 // reflect.Type.Size
	elem   *node // a pointer's pointee; a slice's, an array's or a map's elements
	key    *node // a map's keys
	fields map[string]*node
	list   []*node // a struct's fields in msgpack/v5's order, for structs as arrays
}

var (
	nodesMu sync.Mutex
	nodes   = map[reflect.Type]*node{} // complete once nodesMu is released
)

// roots holds the nodes nodeOf returned, for lookups without the lock.
var roots sync.Map // reflect.Type → *node

// nodeOf returns t's node (nil for nil).
func nodeOf(t reflect.Type) *node {
	if t == nil {
		return nil
	}
	if nd, ok := roots.Load(t); ok {
		return nd.(*node)
	}
	nodesMu.Lock()
	nd := build(t)
	nodesMu.Unlock()
	roots.Store(t, nd)
	return nd
}

// build makes t's node and those it needs; nodesMu is held.
func build(t reflect.Type) *node {
	if nd, ok := nodes[t]; ok {
		return nd
	}
	nd := &node{kind: t.Kind(), size: int64(t.Size())}
	nodes[t] = nd // before the parts: a recursive type finds itself
	nd.own = t.Kind() != reflect.Interface && t.Kind() != reflect.Pointer && ownDecoder(t)
	if nd.own {
		return nd
	}
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array:
		nd.elem = build(t.Elem())
	case reflect.Map:
		nd.key, nd.elem = build(t.Key()), build(t.Elem())
	case reflect.Struct:
		nd.fields = map[string]*node{}
		addFields(nd, t, 0)
	}
	nd.flat = flatType(t, 0)
	return nd
}

// ownDecoder tells whether t decodes itself.
func ownDecoder(t reflect.Type) bool {
	if t.PkgPath() == "" && t.Kind() != reflect.Struct {
		return false // predeclared, or unnamed and not a struct: no methods
	}
	pt := reflect.PointerTo(t)
	for _, o := range ownTypes {
		if t.Implements(o) || pt.Implements(o) {
			return true
		}
	}
	return false
}

// flatType tells whether a value of t allocates nothing beyond its slot.
func flatType(t reflect.Type, depth int) bool {
	if depth > 0 && ownDecoder(t) {
		return false
	}
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128:
		return true
	case reflect.Array:
		return depth < 16 && flatType(t.Elem(), depth+1)
	case reflect.Struct:
		if depth >= 16 {
			return false
		}
		for i := range t.NumField() {
			if !flatType(t.Field(i).Type, depth+1) {
				return false
			}
		}
		return true
	}
	return false
}

// sliceCost is what msgpack/v5 allocates for a slice, in elements per
// element: it makes the elements a header claims and appends them to the
// (empty) slice, which copies them into a new array.
const sliceCost = 2

// mapCost is what a Go map takes before its entries.
const mapCost = 48

// walk returns where the value at b[at:] ends and what decoding it into
// nd's type allocates (nd nil: skipped, nothing). b has passed Seq.
func walk(b []byte, at int, nd *node) (int, int64) {
	var n int64
	for nd != nil && nd.kind == reflect.Pointer {
		if b[at] == msgp.Nil { // a nil pointer
			return at + 1, n
		}
		n += nd.elem.size
		nd = nd.elem
	}
	if nd != nil && nd.own {
		end, _ := value(b, at, 0)
		return end, n + int64(end-at)
	}
	c := b[at]
	h, count, isMap := header(b, at)
	switch {
	case h == 0: // not an array or a map
		end, _ := value(b, at, 0)
		if nd != nil && (msgp.IsStr(c) || msgp.IsBin(c)) {
			n += int64(end - at) // a string's or bytes' contents
		}
		return end, n
	case nd == nil: // skipped
		end, _ := value(b, at, 0)
		return end, n
	}
	at += h
	if isMap && (nd.kind == reflect.Map || nd.kind == reflect.Interface) {
		n += mapCost // a map is made, even an empty one
	}
	var keys, vals *node // the nodes of a map's keys and of the elements (nil: per field)
	switch k := nd.kind; {
	case k == reflect.Interface: // []any or map[string]any, and so on
		n += int64(count) * 16
		if isMap {
			n += int64(count) * 32
		}
		keys, vals = nd, nd
	case (k == reflect.Slice || k == reflect.Array) && !isMap && nd.elem.flat:
		// Elements that allocate nothing beyond their slot: no walk.
		if k == reflect.Slice {
			n += sliceCost * int64(count) * nd.elem.size
		}
		end, _ := value(b, at-h, 0)
		return end, n
	case (k == reflect.Slice || k == reflect.Array) && !isMap:
		if k == reflect.Slice {
			n += sliceCost * int64(count) * nd.elem.size
		}
		vals = nd.elem
	case k == reflect.Map && isMap:
		n += int64(count) * (nd.key.size + nd.elem.size + 8)
		keys, vals = nd.key, nd.elem
	case k == reflect.Struct && !isMap: // as an array: the fields in order
		for i := range count {
			var f *node
			if i < len(nd.list) {
				f = nd.list[i]
			}
			var m int64
			at, m = walk(b, at, f)
			n += m
		}
		return at, n
	case k == reflect.Struct: // as a map: the fields by name
		for range count {
			kEnd, _ := value(b, at, 0)
			var m int64
			at, m = walk(b, kEnd, nd.fields[string(key(b, at, kEnd))]) // nil for a name msgpack skips
			n += m
		}
		return at, n
	default: // a container where the type wants none: decoding fails
		end, _ := value(b, at-h, 0)
		return end, n
	}
	for range count {
		var m int64
		if isMap {
			at, m = walk(b, at, keys)
			n += m
		}
		at, m = walk(b, at, vals)
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
	case c >= msgp.FixMapLo && c <= msgp.FixMapHi:
		return 1, int(c - msgp.FixMapLo), true
	case c >= msgp.FixArrLo && c <= msgp.FixArrHi:
		return 1, int(c - msgp.FixArrLo), false
	case c == msgp.Arr16 || c == msgp.Map16:
		l, _ := length(b, at+1, 2)
		return 3, l, c == msgp.Map16
	case c == msgp.Arr32 || c == msgp.Map32:
		l, _ := length(b, at+1, 4)
		return 5, l, c == msgp.Map32
	}
	return 0, 0, false
}

// key returns the contents of the string at b[at:end] (nil if it is not
// one).
func key(b []byte, at, end int) []byte {
	switch c := b[at]; {
	case c >= msgp.FixStrLo && c <= msgp.FixStrHi:
		return b[at+1 : end]
	case c == msgp.Str8:
		return b[at+2 : end]
	case c == msgp.Str16:
		return b[at+3 : end]
	case c == msgp.Str32:
		return b[at+5 : end]
	}
	return nil
}

// addFields follows msgpack/v5's getFields: exported fields under their
// msgpack tag's name or their own, "-" left out, embedded structs
// without noinline inlined. An embedded struct is also known under its
// own name, as msgpack/v5 keeps it when inlining would shadow a field: a
// name too many costs nothing, one too few would let its value pass
// uncounted. nodesMu is held.
func addFields(nd *node, t reflect.Type, depth int) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("msgpack")
		name, opts := tag, ""
		if j := strings.IndexByte(tag, ','); j >= 0 {
			name, opts = tag[:j], tag[j:]
		}
		if name == "-" || f.PkgPath != "" && !f.Anonymous {
			continue
		}
		if name == "" {
			name = f.Name
		}
		fn := build(f.Type)
		if _, dup := nd.fields[name]; !dup {
			nd.fields[name] = fn
		}
		inner := f.Type
		for inner.Kind() == reflect.Pointer {
			inner = inner.Elem()
		}
		if f.Anonymous && inner.Kind() == reflect.Struct && !strings.Contains(opts, ",noinline") && depth < 16 && !ownDecoder(inner) {
			addFields(nd, inner, depth+1)
			continue
		}
		nd.list = append(nd.list, fn)
	}
}
