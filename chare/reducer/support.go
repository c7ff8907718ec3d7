package reducer

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
)

// ErrType is matched (with errors.Is) by the errors reducers return for a
// contribution or partial result of the wrong type, so that the runtime can
// tell a user's mistake from a failing user reducer.
var ErrType = errors.New("wrong type")

// ErrLength is matched (with errors.Is) by the errors reducers return when
// element-wise operands (slices, tuples) differ in length.
var ErrLength = errors.New("length mismatch")

// kindError keeps a readable message while still matching a sentinel with
// errors.Is; fmt.Errorf's %w would force the sentinel's text into it.
type kindError struct {
	msg  string
	kind error
}

func (e *kindError) Error() string { return e.msg }
func (e *kindError) Unwrap() error { return e.kind }

// errorf formats an error of the given kind (ErrType or ErrLength).
func errorf(kind error, format string, args ...any) error {
	return &kindError{msg: fmt.Sprintf(format, args...), kind: kind}
}

// typeName is the name used in reducer names and messages, "int64" or
// "main.Meters" for a named type.
func typeName[T any]() string { return reflect.TypeFor[T]().String() }

// intern returns the reducer registered under name if same accepts it, and
// otherwise registers build() and returns it. Constructors such as Sum[T]
// and Tuple use it so that calling them twice yields the one registered
// reducer instead of a name clash. It panics if the name belongs to a
// reducer that same rejects: these constructors have no error result, and
// carrying on would let another process resolve the name to a different
// reducer.
func intern(name string, build func() Reducer, same func(Reducer) bool) Reducer {
	mu.Lock()
	defer mu.Unlock()
	if old, ok := byName[name]; ok {
		if same(old) {
			return old
		}
		panic(fmt.Sprintf("reducer: the name %q is taken by a %T", name, old))
	}
	r := build()
	byName[name] = r
	return r
}

// mustRegister registers built-in reducers from init functions, where a
// clash is a bug in this package.
func mustRegister(rs ...Reducer) {
	for _, r := range rs {
		if err := Register(r); err != nil {
			panic(err)
		}
	}
}

// isInterface tells whether T is an interface type, such as any.
func isInterface[T any]() bool { return reflect.TypeFor[T]().Kind() == reflect.Interface }

// collect returns get(e) for each element of es, as a []T. A value that is
// not a T (nor nil where T is an interface type) is an ErrType error: the
// partial result was not made by the reducer named name.
func collect[T, E any](name string, es []E, get func(E) any) ([]T, error) {
	out := make([]T, len(es))
	for i, e := range es {
		v := get(e)
		t, ok := v.(T)
		if !ok && (v != nil || !isInterface[T]()) {
			return nil, errorf(ErrType, "reducer %s: partial result holds a value of type %T, want %s", name, v, typeName[T]())
		}
		out[i] = t
	}
	return out, nil
}

// typedName returns the name of the typed variant of the reducer kind
// "gather", "concat" or "set": "GatherOf", "ConcatOf", "SetOf".
func typedName(kind string) string { return strings.ToUpper(kind[:1]) + kind[1:] + "Of" }
