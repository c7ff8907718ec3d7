package core

import (
	"path"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// corePath is this package's import path, which the types a program
// names as chare's (chare.Callback, chare.Proxy[T]) carry.
var corePath = reflect.TypeFor[PE]().PkgPath()

// charePath is the import path of package chare, which re-exports this
// package's types under its own name.
var charePath = path.Join(path.Dir(path.Dir(corePath)), "chare")

// coreArg is the qualifier of an exported type of this package in a
// generic type's arguments, which reflect spells with the full path.
var coreArg = regexp.MustCompile(regexp.QuoteMeta(corePath+".") + `(\p{Lu})`)

// exported reports whether a type's name (type arguments and all) starts
// with an upper-case letter: chare re-exports only those types.
func exported(name string) bool {
	r, _ := utf8.DecodeRuneInString(name)
	return unicode.IsUpper(r)
}

// typeName is t as a program writes it: the exported types of this
// package, which chare re-exports, are named chare's, as in "done (chare.Callback)", in any
// composite (pointer, slice, array, map, chan, func, struct, interface)
// and in the type arguments of a generic type. Where t holds none of
// them it is t.String(). A nil t is "<nil>", as fmt prints it.
func typeName(t reflect.Type) string {
	if t == nil {
		return "<nil>"
	}
	if t.Name() != "" { // a named type; its type arguments carry full paths
		s := coreArg.ReplaceAllString(t.String(), charePath+".$1")
		if t.PkgPath() == corePath && exported(t.Name()) {
			s = "chare." + strings.TrimPrefix(s, "core.")
		}
		return s
	}
	switch t.Kind() {
	case reflect.Pointer:
		return "*" + typeName(t.Elem())
	case reflect.Slice:
		return "[]" + typeName(t.Elem())
	case reflect.Array:
		return "[" + strconv.Itoa(t.Len()) + "]" + typeName(t.Elem())
	case reflect.Map:
		return "map[" + typeName(t.Key()) + "]" + typeName(t.Elem())
	case reflect.Chan:
		switch t.ChanDir() {
		case reflect.RecvDir:
			return "<-chan " + typeName(t.Elem())
		case reflect.SendDir:
			return "chan<- " + typeName(t.Elem())
		}
		if e := t.Elem(); e.Name() == "" && e.Kind() == reflect.Chan && e.ChanDir() == reflect.RecvDir {
			return "chan (" + typeName(e) + ")"
		}
		return "chan " + typeName(t.Elem())
	case reflect.Func:
		return "func" + signature(t)
	case reflect.Struct:
		if t.NumField() == 0 {
			return "struct {}"
		}
		fields := make([]string, t.NumField())
		for i := range fields {
			f := t.Field(i)
			s := typeName(f.Type)
			if !f.Anonymous {
				s = f.Name + " " + s
			}
			if f.Tag != "" {
				s += " " + strconv.Quote(string(f.Tag))
			}
			fields[i] = s
		}
		return "struct { " + strings.Join(fields, "; ") + " }"
	case reflect.Interface:
		if t.NumMethod() == 0 {
			return t.String() // interface {}
		}
		methods := make([]string, t.NumMethod())
		for i := range methods {
			m := t.Method(i)
			methods[i] = m.Name + signature(m.Type)
		}
		return "interface { " + strings.Join(methods, "; ") + " }"
	}
	return t.String()
}

// signature is a func type's parameters and results as written after
// "func": "(chare.Context, ...int) (int, error)".
func signature(t reflect.Type) string {
	in := make([]string, t.NumIn())
	for i := range in {
		if t.IsVariadic() && i == len(in)-1 {
			in[i] = "..." + typeName(t.In(i).Elem())
		} else {
			in[i] = typeName(t.In(i))
		}
	}
	s := "(" + strings.Join(in, ", ") + ")"
	switch t.NumOut() {
	case 0:
		return s
	case 1:
		return s + " " + typeName(t.Out(0))
	}
	out := make([]string, t.NumOut())
	for i := range out {
		out[i] = typeName(t.Out(i))
	}
	return s + " (" + strings.Join(out, ", ") + ")"
}

// valueTypeName is the type of v as typeName writes it, as %T would.
func valueTypeName(v any) string { return typeName(reflect.TypeOf(v)) }
