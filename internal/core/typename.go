package core

import (
	"reflect"
	"regexp"
)

// corePath is this package's import path, which the types a program
// names as chare's (chare.Callback, chare.Proxy[T]) carry.
var corePath = reflect.TypeFor[PE]().PkgPath()

var corePrefix = regexp.MustCompile(`\bcore\.`)

// typeName is t as a program writes it: the types chare re-exports from
// this package are named chare's, as in "done (chare.Callback)".
func typeName(t reflect.Type) string {
	s := t.String()
	if !fromCore(t) {
		return s
	}
	return corePrefix.ReplaceAllString(s, "chare.")
}

// fromCore reports whether t is, or is built of, a type of this package.
func fromCore(t reflect.Type) bool {
	if t.PkgPath() == corePath {
		return true
	}
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Chan:
		return fromCore(t.Elem())
	case reflect.Map:
		return fromCore(t.Key()) || fromCore(t.Elem())
	}
	return false
}
