package chare

import (
	"fmt"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/charmgo/charm/internal/mpcheck"
)

// What survives packing.
//
// Migration and checkpoints pack an object with msgpack (unless its type
// implements Packer). A field comes back as it left if it is exported and
// its type is made of numbers, strings, booleans, slices, arrays, maps,
// pointers and structs of such fields, or implements msgpack's
// CustomEncoder/CustomDecoder or Marshaler/Unmarshaler (proxies,
// callbacks and futures do). Other fields do not survive:
//
//   - an unexported field is not packed: it comes back as its zero value;
//   - an interface field (any included) comes back as what msgpack makes
//     of the value without its type: numbers as the narrowest integer
//     (int8), structs as map[string]any, and a non-nil value of a named
//     interface type (fmt.Stringer) does not unpack at all;
//   - funcs, channels, unsafe pointers, uintptr and complex numbers cannot
//     be packed.
//
// A time.Time field keeps its instant to the nanosecond, but comes back in
// the local time zone (its Location is lost) and without its monotonic
// clock reading: compare times with Equal, not ==, and know that Sub
// between a time that travelled and time.Now uses the wall clock.
//
// Register reports the fields that would not survive for every type whose
// objects migrate (array elements), and refuses the type unless each of
// them is tagged `msgpack:"-"` or declared with Transient, or the type
// implements Packer. The types of singleton chares and groups, which never
// migrate, are checked when a checkpoint is asked for (Checkpoint returns
// the error), since only then is their state packed.

// Transient declares fields of a chare type whose state need not survive
// migration and checkpoints, by name as Register reports them ("cache",
// "Stats.last", "Items[].note"; a name covers the fields below it): caches
// rebuilt after a move, counters a test keeps on one PE. An unexported
// field comes back as its zero value; an exported interface field comes
// back as msgpack makes it (see above), and a non-nil one of a named
// interface type makes unpacking fail, which stops the job. A name that is
// not one of the type's lossy fields is an error.
func Transient(fields ...string) Option {
	return func(r *registration) { r.transient = append(r.transient, fields...) }
}

// migrating lists the tests, given by collection packages, that say
// whether a chare type's objects migrate (array's is: it embeds
// array.Element).
var migrating struct {
	sync.Mutex
	is []func(reflect.Type) bool
}

// RegisterMigrating tells Register how to recognise chare types whose
// objects migrate: Register checks that their state survives packing.
// Package array calls it for its Element; call it before registering the
// types it recognises (in an init function of the package that defines
// their base).
func RegisterMigrating(is func(t reflect.Type) bool) {
	migrating.Lock()
	defer migrating.Unlock()
	migrating.is = append(migrating.is, is)
}

func migrates(rt reflect.Type) bool {
	migrating.Lock()
	defer migrating.Unlock()
	for _, is := range migrating.is {
		if is(rt) {
			return true
		}
	}
	return false
}

// loss is a field that packing does not carry faithfully.
type loss struct {
	path string       // as "Stats.last" or "Items[].note"
	typ  reflect.Type // the field's type
	why  string
}

func (l loss) String() string { return fmt.Sprintf("%s (%v: %s)", l.path, l.typ, l.why) }

var (
	baseType      = reflect.TypeFor[Base]()
	timeType      = reflect.TypeFor[time.Time]()
	customEncoder = reflect.TypeFor[msgpack.CustomEncoder]()
	customDecoder = reflect.TypeFor[msgpack.CustomDecoder]()
	marshaler     = reflect.TypeFor[msgpack.Marshaler]()
	unmarshaler   = reflect.TypeFor[msgpack.Unmarshaler]()
	packerType    = reflect.TypeFor[Packer]()
)

// packsItself reports whether msgpack packs values of t with t's own
// methods, which are trusted.
func packsItself(t reflect.Type) bool {
	pt := t
	if t.Kind() != reflect.Pointer {
		pt = reflect.PointerTo(t)
	}
	return (t.Implements(customEncoder) || pt.Implements(customEncoder)) && pt.Implements(customDecoder) ||
		(t.Implements(marshaler) || pt.Implements(marshaler)) && pt.Implements(unmarshaler)
}

// stateLosses lists the fields of struct type rt that do not survive a
// msgpack round trip, in field order.
func stateLosses(rt reflect.Type) []loss {
	var out []loss
	walkState(rt, "", map[reflect.Type]bool{}, &out)
	return out
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

func walkState(t reflect.Type, path string, seen map[reflect.Type]bool, out *[]loss) {
	if t == timeType || packsItself(t) {
		return
	}
	add := func(why string) { *out = append(*out, loss{path: path, typ: t, why: why}) }
	switch t.Kind() {
	case reflect.Interface:
		if t.NumMethod() == 0 {
			add("comes back untyped: numbers as the narrowest integer, structs as maps")
		} else {
			add("a non-nil value does not unpack: the concrete type is not packed")
		}
	case reflect.Func, reflect.Chan, reflect.UnsafePointer, reflect.Uintptr, reflect.Complex64, reflect.Complex128:
		add("cannot be packed")
	case reflect.Pointer:
		if !seen[t] {
			seen[t] = true
			walkState(t.Elem(), path, seen, out)
		}
	case reflect.Slice, reflect.Array:
		walkState(t.Elem(), path+"[]", seen, out)
	case reflect.Map:
		walkState(t.Key(), path+"[key]", seen, out)
		walkState(t.Elem(), path+"[]", seen, out)
	case reflect.Struct:
		if seen[t] {
			return
		}
		seen[t] = true
		defer delete(seen, t) // a struct type may appear in two fields
		for i := range t.NumField() {
			f := t.Field(i)
			if f.Type == baseType || f.Tag.Get("msgpack") == "-" {
				continue // the runtime's own state; a field left out on purpose
			}
			if f.Anonymous {
				// msgpack inlines an embedded struct's fields.
				ft := f.Type
				if ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				if ft.Kind() == reflect.Struct && !packsItself(f.Type) && ft != timeType {
					walkState(f.Type, path, seen, out)
					continue
				}
			}
			if !f.IsExported() && !f.Anonymous {
				*out = append(*out, loss{path: join(path, f.Name), typ: f.Type, why: "unexported: not packed, comes back as its zero value"})
				continue
			}
			walkState(f.Type, join(path, f.Name), seen, out)
		}
	}
}

// covers reports whether a Transient name covers a lossy field's path.
func covers(name, path string) bool {
	return path == name || strings.HasPrefix(path, name+".") || strings.HasPrefix(path, name+"[")
}

// checkTransient verifies that every name given to Transient covers a
// lossy field of t.
func checkTransient(t *Type, names []string) error {
	for _, n := range names {
		found := false
		for _, l := range t.losses {
			if covers(n, l.path) {
				found = true
				break
			}
		}
		if !found {
			return fmt.Errorf("chare: Transient(%q) for %s: no field of that name is lost in packing (%s)", n, t.Name, describeLosses(t.losses))
		}
	}
	return nil
}

func describeLosses(ls []loss) string {
	if len(ls) == 0 {
		return "its state packs whole"
	}
	var s []string
	for _, l := range ls {
		s = append(s, l.path)
	}
	return "its lossy fields: " + strings.Join(s, ", ")
}

// unaccepted returns the lossy fields of t that Transient does not cover,
// or nil if t implements Packer.
func (t *Type) unaccepted() []loss {
	if t.packer {
		return nil
	}
	var out []loss
	for _, l := range t.losses {
		ok := false
		for _, n := range t.transient {
			if covers(n, l.path) {
				ok = true
				break
			}
		}
		if !ok {
			out = append(out, l)
		}
	}
	return out
}

// checkState returns an error naming the fields of t that would not
// survive being packed for what (migration, a checkpoint).
func (t *Type) checkState(what string) error {
	bad := t.unaccepted()
	if len(bad) == 0 {
		return nil
	}
	var s, names []string
	for _, l := range bad {
		s = append(s, l.String())
		names = append(names, fmt.Sprintf("%q", l.path))
	}
	return fmt.Errorf("chare: the state of %s is packed for %s, and these fields would not survive it: %s; "+
		"export them, tag them `msgpack:\"-\"`, implement chare.Packer, or accept their loss with chare.Register[%s](chare.Transient(%s))",
		t.Name, what, strings.Join(s, "; "), t.rtype.Name(), strings.Join(names, ", "))
}

// Migrates reports whether the type's objects migrate (array elements).
func (t *Type) Migrates() bool { return t.migrates }

// unpackState decodes b into obj with msgpack; a failure, or a panic of
// the decoder, becomes an error naming the field that does not unpack.
func unpackState(obj any, b []byte) (err error) {
	// The bytes come from another process or from a file: check that
	// they are values of a size and depth that decoding can afford
	// (mpcheck) before anything decodes them, explainUnpack included.
	if err := mpcheck.SeqAs(b, reflect.TypeOf(obj)); err != nil {
		t := reflect.TypeOf(obj)
		for t != nil && t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		return fmt.Errorf("%v: %w", t, err)
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
		if err != nil {
			err = explainUnpack(reflect.TypeOf(obj), b, err)
		}
	}()
	return msgpack.Unmarshal(b, obj)
}

// explainUnpack finds which field of the packed struct fails to decode.
func explainUnpack(pt reflect.Type, b []byte, cause error) error {
	t := pt
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return fmt.Errorf("%v: %w", t, cause)
	}
	var raw map[string]msgpack.RawMessage
	if msgpack.Unmarshal(b, &raw) != nil {
		return fmt.Errorf("%v: %w", t, cause)
	}
	for _, f := range packedFields(t, "") {
		r, ok := raw[f.key]
		if !ok {
			continue
		}
		if ferr := decodeInto(f.typ, r); ferr != nil {
			return fmt.Errorf("%v: field %s (%v): %w", t, f.path, f.typ, ferr)
		}
	}
	return fmt.Errorf("%v: %w", t, cause)
}

func decodeInto(t reflect.Type, r []byte) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%v", p)
		}
	}()
	return msgpack.Unmarshal(r, reflect.New(t).Interface())
}

type packedField struct {
	key  string // the name msgpack packs it under
	path string // the Go path, as "Inner.Field"
	typ  reflect.Type
}

// packedFields lists the fields msgpack packs for struct t at the top
// level (embedded structs inlined).
func packedFields(t reflect.Type, path string) []packedField {
	var out []packedField
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("msgpack"), ",")
		if name == "-" || f.Type == baseType || !f.IsExported() && !f.Anonymous {
			continue
		}
		if f.Anonymous && f.Type.Kind() == reflect.Struct && !packsItself(f.Type) && f.Type != timeType {
			out = append(out, packedFields(f.Type, join(path, f.Name))...)
			continue
		}
		if name == "" {
			name = f.Name
		}
		out = append(out, packedField{key: name, path: join(path, f.Name), typ: f.Type})
	}
	return out
}
