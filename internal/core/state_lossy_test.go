package core

import (
	"maps"
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"
)

// walkStateListing is walkState as it was before lossy: below an
// unexported field it listed every loss (walking every unexported field
// below again) to learn whether there was one. stateLosses must give the
// same list with lossy.
func walkStateListing(t reflect.Type, path string, seen map[reflect.Type]bool, out *[]loss) {
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
			walkStateListing(t.Elem(), path, seen, out)
		}
	case reflect.Slice, reflect.Array:
		walkStateListing(t.Elem(), path+"[]", seen, out)
	case reflect.Map:
		walkStateListing(t.Key(), path+"[key]", seen, out)
		walkStateListing(t.Elem(), path+"[]", seen, out)
	case reflect.Struct:
		if seen[t] {
			return
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
					walkStateListing(f.Type, path, seen, out)
					continue
				}
			}
			if !f.IsExported() && !f.Anonymous {
				k := lossUnexported
				var inner []loss
				walkStateListing(f.Type, "", maps.Clone(seen), &inner)
				if len(inner) > 0 {
					k = lossHidden
				}
				*out = append(*out, loss{path: join(path, f.Name), typ: f.Type, kind: k})
				continue
			}
			walkStateListing(f.Type, join(path, f.Name), seen, out)
		}
	}
}

type lossyLeaf struct{ n int }

type lossyHidden struct {
	Shown int
	fn    func()
}

type lossyMix struct {
	Base
	stEmbedded
	*lossyLeaf
	plain   lossyLeaf   // unexported, type packs apart from its field: hidden
	hidden  lossyHidden // hidden
	counts  map[string]int
	Nested  lossyHidden
	Ring    *stNode
	ring    *stNode
	Items   []lossyHidden
	byKey   map[lossyLeaf]int
	Tagged  func() `msgpack:"-"`
	Any     any
	when    [2]complex64
	ptrBack *lossyMix
}

// TestStateLossesLossy: stateLosses, whose unexported fields ask lossy,
// lists the same losses (paths, types and kinds, in order) as the walk
// that listed every loss below them, for test types and for the runtime's
// own large type graphs (Job, PE, Type, RunBuffer), which have many
// unexported fields below unexported fields.
func TestStateLossesLossy(t *testing.T) {
	types := []reflect.Type{
		reflect.TypeFor[lossyMix](),
		reflect.TypeFor[lossyHidden](),
		reflect.TypeFor[stNode](),
		reflect.TypeFor[stInner](),
		reflect.TypeFor[stPacker](),
		reflect.TypeFor[Job](),
		reflect.TypeFor[PE](),
		reflect.TypeFor[Type](),
		reflect.TypeFor[RunBuffer](),
		reflect.TypeFor[Collection](),
		reflect.TypeFor[Callback](),
	}
	hidden := 0
	for _, rt := range types {
		var want []loss
		walkStateListing(rt, "", map[reflect.Type]bool{}, &want)
		got := stateLosses(rt)
		require.Equal(t, want, got, "%v", rt)
		for _, l := range got {
			if l.kind == lossHidden {
				hidden++
			}
		}
	}
	require.Positive(t, hidden, "the types have hidden fields, so lossy was asked and said yes")
	lm := stateLosses(reflect.TypeFor[lossyMix]())
	kinds := map[string]lossKind{}
	for _, l := range lm {
		kinds[l.path] = l.kind
	}
	require.Equal(t, lossHidden, kinds["hidden"])
	require.Equal(t, lossUnexported, kinds["counts"], "a map of string to int would pack if exported")
	require.Equal(t, lossHidden, kinds["plain"], "lossyLeaf's own field is unexported")
}
