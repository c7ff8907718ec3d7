package core

import (
	"fmt"
	"reflect"
	"strings"
	"sync"
	"unsafe"
)

// Transient fields are left out of packing: PackObject packs a copy of the
// object in which they are zero, so that they travel as nil (or as an
// empty value) and come back as their zero value. Only the fields msgpack
// would pack need this (an unexported field is left out anyway); the copy
// is shallow, except along the path to a nested Transient field, where
// the pointers, slices and maps on the way are copied too, so that the
// object itself is never written to.

// stepKind is one step of a field's path.
type stepKind uint8

const (
	stepField stepKind = iota // a struct field (through pointers, promoted fields included)
	stepElem                  // every element of a slice or array, or every value of a map
)

type pathStep struct {
	kind  stepKind
	index []int // stepField: reflect's index of the field, embedded fields first
}

// dropPlan is how to leave a type's Transient fields out of packing.
type dropPlan struct {
	paths [][]pathStep // those msgpack would pack
}

// dropPlans maps *T to the plan of chare type T, for the types that have
// Transient fields msgpack would pack.
var dropPlans sync.Map

// resolveTransient reads a name given to Transient against struct type t:
// the steps to the field it names, and whether msgpack would pack that
// field (every field on the way exported or embedded, none tagged
// `msgpack:"-"`).
func resolveTransient(t reflect.Type, name string) (steps []pathStep, packed bool, err error) {
	if name == "" {
		return nil, false, fmt.Errorf("an empty name")
	}
	packed = true
	cur := t
	for _, part := range strings.Split(name, ".") {
		field, rest, _ := strings.Cut(part, "[")
		if rest != "" {
			rest = "[" + rest
		}
		for cur.Kind() == reflect.Pointer {
			cur = cur.Elem()
		}
		if field == "" || cur.Kind() != reflect.Struct {
			if cur.Kind() == reflect.Interface {
				return nil, false, fmt.Errorf("it goes through an interface (%v): name the interface field itself", cur)
			}
			return nil, false, fmt.Errorf("%q is not a field of %v", part, cur)
		}
		f, ok := cur.FieldByName(field)
		if !ok {
			return nil, false, fmt.Errorf("%v has no field %s", cur, field)
		}
		// Every struct on the way to a promoted field must be inlined by
		// msgpack, and the field itself exported and not tagged out.
		walk := cur
		for k, i := range f.Index {
			for walk.Kind() == reflect.Pointer {
				walk = walk.Elem()
			}
			sf := walk.Field(i)
			if sf.Type == baseType || sf.Tag.Get("msgpack") == "-" || !sf.IsExported() && (k == len(f.Index)-1 || !sf.Anonymous) {
				packed = false
			}
			walk = sf.Type
		}
		steps = append(steps, pathStep{kind: stepField, index: f.Index})
		cur = f.Type
		for rest != "" {
			switch {
			case strings.HasPrefix(rest, "[]"):
				for cur.Kind() == reflect.Pointer {
					cur = cur.Elem()
				}
				switch cur.Kind() {
				case reflect.Slice, reflect.Array, reflect.Map:
					cur = cur.Elem()
				default:
					return nil, false, fmt.Errorf("%s[] is not a slice, array or map but %v", field, cur)
				}
				steps = append(steps, pathStep{kind: stepElem})
				rest = rest[2:]
			case strings.HasPrefix(rest, "[key]"):
				return nil, false, fmt.Errorf("a map's keys cannot be left out alone: name the map itself")
			default:
				return nil, false, fmt.Errorf("%q: write [] for the elements of a slice, an array or a map", part)
			}
		}
	}
	return steps, packed, nil
}

// open returns v, which must be addressable, as a value that may be read
// and set even if it was reached through unexported fields: the object
// copies it belongs to are the packer's own.
func open(v reflect.Value) reflect.Value {
	return reflect.NewAt(v.Type(), unsafe.Pointer(v.UnsafeAddr())).Elem()
}

// own replaces the pointers at v (addressable) by pointers to copies of
// what they point to, and returns the value at the end, or an invalid
// value at a nil pointer.
func own(v reflect.Value) reflect.Value {
	for v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return reflect.Value{}
		}
		c := reflect.New(v.Type().Elem())
		c.Elem().Set(v.Elem())
		v.Set(c)
		v = c.Elem()
	}
	return v
}

// zeroAt sets the field at the end of steps, below v, to its zero value,
// copying what it goes through. v is addressable and opened.
func zeroAt(v reflect.Value, steps []pathStep) {
	if len(steps) == 0 {
		v.SetZero()
		return
	}
	s, rest := steps[0], steps[1:]
	switch s.kind {
	case stepField:
		for _, i := range s.index {
			if v = own(v); !v.IsValid() {
				return // a nil embedded pointer on the way: nothing to drop
			}
			v = open(v.Field(i))
		}
		zeroAt(v, rest)
	case stepElem:
		if v = own(v); !v.IsValid() {
			return
		}
		switch v.Kind() {
		case reflect.Slice:
			if v.IsNil() {
				return
			}
			c := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
			reflect.Copy(c, v)
			v.Set(c)
			for i := range c.Len() {
				zeroAt(open(c.Index(i)), rest)
			}
		case reflect.Array:
			for i := range v.Len() {
				zeroAt(open(v.Index(i)), rest)
			}
		case reflect.Map:
			if v.IsNil() {
				return
			}
			c := reflect.MakeMapWithSize(v.Type(), v.Len())
			for it := v.MapRange(); it.Next(); {
				e := reflect.New(v.Type().Elem()).Elem()
				e.Set(it.Value())
				zeroAt(e, rest)
				c.SetMapIndex(it.Key(), e)
			}
			v.Set(c)
		}
	}
}

// strip returns a copy of obj (a pointer to a struct) whose Transient
// fields are zero; obj is not written to.
func (p *dropPlan) strip(obj any) any {
	src := reflect.ValueOf(obj)
	if src.IsNil() {
		return obj
	}
	c := reflect.New(src.Type().Elem())
	c.Elem().Set(src.Elem())
	for _, path := range p.paths {
		zeroAt(c.Elem(), path)
	}
	return c.Interface()
}

// checkTransient resolves every name given to Transient for t and returns
// the plan that leaves out those msgpack would pack (nil if none would be).
func checkTransient(t *Type, names []string) (*dropPlan, error) {
	var plan dropPlan
	for _, n := range names {
		steps, packed, err := resolveTransient(t.rtype, n)
		if err != nil {
			return nil, fmt.Errorf("chare: Transient(%q) for %s: %v (%s)", n, t.Name, err, describeLosses(t.losses))
		}
		if packed {
			plan.paths = append(plan.paths, steps)
		}
	}
	if len(plan.paths) == 0 {
		return nil, nil
	}
	return &plan, nil
}
