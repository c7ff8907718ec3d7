package core

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
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
//   - an unexported field is not packed: it would come back as its zero
//     value;
//   - an interface field (any included) would come back as what msgpack
//     makes of the value without its type: numbers as the narrowest
//     integer (int8), structs as map[string]any, and a non-nil value of a
//     named interface type (fmt.Stringer) does not unpack at all;
//   - funcs, channels, unsafe pointers, uintptr and complex numbers cannot
//     be packed.
//
// A time.Time field keeps its instant to the nanosecond, but comes back in
// the local time zone (its Location is lost) and without its monotonic
// clock reading: compare times with Equal, not ==, and know that Sub
// between a time that travelled and time.Now uses the wall clock.
//
// Register records, for every type, the fields that would not survive
// and are not declared with Transient nor tagged `msgpack:"-"` (a type
// that implements Packer has none). A type with such fields registers and
// runs; its objects are simply not movable: migrating one (Migrate, or a
// load balancer) and checkpointing a job that has one are refused with
// an error naming the type and the fields (PackError), before anything
// is packed, and load balancers leave its elements where they are. This
// is Charm++'s rule that a chare without a pup routine does not migrate,
// decided per type from its fields.

// Transient declares fields of a chare type that are never packed: they
// do not travel when an object migrates nor go into a checkpoint, and
// they come back (on the new PE, or after a restart) as their zero value.
// Use it for caches rebuilt after a move, handles to per-PE things, and
// counters a test keeps on one PE. Fields are named as PackError reports
// them ("cache", "Stats.last", "Items[].note"); a name covers the fields
// below it ("Stats" drops the whole of Stats). A name that is not a field
// of the type is an error at Register, as is one that goes through an
// interface or into a map's keys (name the interface or the map itself).
// Tagging an exported field `msgpack:"-"` does the same as declaring it
// Transient.
func Transient(fields ...string) Option {
	return func(r *registration) { r.transient = append(r.transient, fields...) }
}

// migrates reports whether rt's objects migrate: a collection package
// (array) said so with RegisterMigrating.
func migrates(rt reflect.Type) bool { return Migrates(rt) }

// lossKind is why a field does not survive packing; each has its remedy.
type lossKind int

const (
	lossUnexported lossKind = iota // would pack if it were exported
	lossHidden                     // unexported, and its type does not pack either
	lossUntyped                    // an empty interface (any)
	lossInterface                  // a named interface (fmt.Stringer)
	lossUnpackable                 // func, chan, unsafe.Pointer, uintptr, complex
)

// loss is a field that packing does not carry faithfully.
type loss struct {
	path string       // as "Stats.last" or "Items[].note"
	typ  reflect.Type // the field's type
	kind lossKind
}

// transientName is the name to give Transient for l: its path, or the map
// whose keys do not pack.
func (l loss) transientName() string {
	if i := strings.Index(l.path, "[key]"); i >= 0 {
		return l.path[:i]
	}
	return l.path
}

// lossText says, for one field and for several, what is wrong with a kind
// of field and what would make it survive.
var lossText = map[lossKind][2]string{
	lossUnexported: {"is unexported, so it is not packed: export it, or declare it Transient",
		"are unexported, so they are not packed: export them, or declare them Transient"},
	lossHidden: {"is unexported, and its type would not pack either: declare it Transient",
		"are unexported, and their types would not pack either: declare them Transient"},
	lossUntyped: {"is an interface: its value would come back untyped (numbers as the narrowest integer, structs as maps): give it a concrete type, or declare it Transient",
		"are interfaces: their values would come back untyped (numbers as the narrowest integer, structs as maps): give them concrete types, or declare them Transient"},
	lossInterface: {"is an interface: a non-nil value does not unpack (its concrete type is not packed): give it a concrete type, or declare it Transient",
		"are interfaces: a non-nil value does not unpack (its concrete type is not packed): give them concrete types, or declare them Transient"},
	lossUnpackable: {"cannot be packed: declare it Transient", "cannot be packed: declare them Transient"},
}

// String says what is wrong with the field and what would make it
// survive.
func (l loss) String() string { return describeGroup([]loss{l}) }

// describeGroup says what is wrong with fields of one kind, and what
// would make them survive.
func describeGroup(ls []loss) string {
	var names []string
	for _, l := range ls {
		names = append(names, fmt.Sprintf("%s (%s)", l.path, typeName(l.typ)))
	}
	l := ls[0]
	if strings.Contains(l.path, "[key]") {
		return fmt.Sprintf("%s: the keys of map %s do not pack: give it keys of a type that does, or declare %s Transient",
			names[0], l.transientName(), l.transientName())
	}
	text := lossText[l.kind]
	if len(ls) == 1 {
		return names[0] + " " + text[0]
	}
	return strings.Join(names, ", ") + " " + text[1]
}

// describeLossesByKind groups fields by what is wrong with them, in the
// order they first appear.
func describeLossesByKind(ls []loss) []string {
	var kinds []lossKind
	groups := map[lossKind][]loss{}
	var out []string
	for _, l := range ls {
		if strings.Contains(l.path, "[key]") {
			out = append(out, describeGroup([]loss{l}))
			continue
		}
		if groups[l.kind] == nil {
			kinds = append(kinds, l.kind)
		}
		groups[l.kind] = append(groups[l.kind], l)
	}
	for _, k := range kinds {
		out = append(out, describeGroup(groups[k]))
	}
	return out
}

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
	add := func(k lossKind) { *out = append(*out, loss{path: path, typ: t, kind: k}) }
	switch t.Kind() {
	case reflect.Interface:
		if t.NumMethod() == 0 {
			add(lossUntyped)
		} else {
			add(lossInterface)
		}
	case reflect.Func, reflect.Chan, reflect.UnsafePointer, reflect.Uintptr, reflect.Complex64, reflect.Complex128:
		add(lossUnpackable)
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
				k := lossUnexported
				if lossy(f.Type, maps.Clone(seen)) {
					k = lossHidden
				}
				*out = append(*out, loss{path: join(path, f.Name), typ: f.Type, kind: k})
				continue
			}
			walkState(f.Type, join(path, f.Name), seen, out)
		}
	}
}

// lossy reports whether walkState(t, "", seen, ...) would find a loss. It
// takes the same steps in the same order, but stops at the first loss and
// builds no paths: below an unexported field only whether something is
// lost matters, and a walk that listed every loss there (and walked every
// unexported field below it again) grew with the depth of the type graph.
func lossy(t reflect.Type, seen map[reflect.Type]bool) bool {
	if t == timeType || packsItself(t) {
		return false
	}
	switch t.Kind() {
	case reflect.Interface, reflect.Func, reflect.Chan, reflect.UnsafePointer, reflect.Uintptr, reflect.Complex64, reflect.Complex128:
		return true
	case reflect.Pointer:
		if !seen[t] {
			seen[t] = true
			return lossy(t.Elem(), seen)
		}
	case reflect.Slice, reflect.Array:
		return lossy(t.Elem(), seen)
	case reflect.Map:
		return lossy(t.Key(), seen) || lossy(t.Elem(), seen)
	case reflect.Struct:
		if seen[t] {
			return false
		}
		seen[t] = true
		defer delete(seen, t)
		for i := range t.NumField() {
			f := t.Field(i)
			if f.Type == baseType || f.Tag.Get("msgpack") == "-" {
				continue
			}
			if f.Anonymous {
				ft := f.Type
				if ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				if ft.Kind() == reflect.Struct && !packsItself(f.Type) && ft != timeType {
					if lossy(f.Type, seen) {
						return true
					}
					continue
				}
			}
			if !f.IsExported() && !f.Anonymous {
				return true
			}
			if lossy(f.Type, seen) {
				return true
			}
		}
	}
	return false
}

// covers reports whether a Transient name covers a lossy field's path.
func covers(name, path string) bool {
	return path == name || strings.HasPrefix(path, name+".") || strings.HasPrefix(path, name+"[")
}

func describeLosses(ls []loss) string {
	if len(ls) == 0 {
		return "every field of it packs"
	}
	var s []string
	for _, l := range ls {
		s = append(s, l.path)
	}
	return "the fields that would not survive packing: " + strings.Join(s, ", ")
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

// PackError returns nil if the objects of the type can be packed for what
// (as "migration" or "a checkpoint") without losing state: every field
// survives packing, is declared with Transient or tagged `msgpack:"-"`,
// or the type implements Packer. Otherwise it returns an error naming the
// type and each field that would not survive, with what would make it
// survive (export it, give it a concrete type, declare it Transient).
// Migration and Checkpoint refuse such a type with this error.
func (t *Type) PackError(what string) error {
	if t.packable.Load() {
		return nil
	}
	bad := t.unaccepted()
	if len(bad) == 0 {
		return nil
	}
	var names []string
	for _, l := range bad {
		n := fmt.Sprintf("%q", l.transientName())
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	return fmt.Errorf("chare: %s cannot be packed for %s, as these fields would not survive it: %s. "+
		"Either make them survive, or accept their loss with chare.Register[%s](chare.Transient(%s)), or implement chare.Packer",
		t.Name, what, strings.Join(describeLossesByKind(bad), "; "), t.rtype.Name(), strings.Join(names, ", "))
}

// Packs reports whether the objects of the type can be packed without
// losing state (PackError returns nil): whether they may migrate.
func (t *Type) Packs() bool { return t.packable.Load() }

// Migrates reports whether the type's objects are of a kind that migrates
// (array elements); whether they may is Packs.
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
		return fmt.Errorf("%s: %w", typeName(t), err)
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
		return fmt.Errorf("%s: %w", typeName(t), cause)
	}
	var raw map[string]msgpack.RawMessage
	if msgpack.Unmarshal(b, &raw) != nil {
		return fmt.Errorf("%s: %w", typeName(t), cause)
	}
	for _, f := range packedFields(t, "") {
		r, ok := raw[f.key]
		if !ok {
			continue
		}
		if ferr := decodeInto(f.typ, r); ferr != nil {
			return fmt.Errorf("%s: field %s (%s): %w", typeName(t), f.path, typeName(f.typ), ferr)
		}
	}
	return fmt.Errorf("%s: %w", typeName(t), cause)
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
