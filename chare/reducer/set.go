package reducer

import (
	"reflect"
	"slices"
)

// Set, named "set", collects the distinct contributed values. A
// contribution that is a slice ([]int, []string, []any...) adds each of
// its elements rather than itself, so a contributor can add several values
// at once (and an empty slice adds none); any other value is added as is.
// Values must be comparable (not maps, slices or funcs) and not nil.
//
// Values are distinct by Go's ==, so int(1) and int64(1) are two elements,
// as are two NaNs. The result is an []any sorted like Gather's indices:
// integers and floats by value (ties broken by type name, -0 before +0,
// NaN last), then arrays of integers, then strings, then Lesser types, then
// the rest by type name and fmt.Sprint.
//
// Partial results are sorted []any without duplicates.
var Set Reducer = &set{name: "set"}

// set backs Set and SetOf.
type set struct{ name string }

// Name returns the reducer's registered name.
func (s *set) Name() string { return s.name }

// Lift turns the contribution into a sorted set of its value or, for a
// slice, of its elements.
func (s *set) Lift(value, _ any) (any, error) {
	var elems []any
	if v := reflect.ValueOf(value); v.Kind() == reflect.Slice {
		elems = make([]any, 0, v.Len())
		for i := range v.Len() {
			elems = append(elems, v.Index(i).Interface())
		}
	} else {
		elems = []any{value}
	}
	for _, e := range elems {
		if err := s.checkElem(e); err != nil {
			return nil, err
		}
	}
	slices.SortStableFunc(elems, compareAny)
	return dedup(elems), nil
}

// Combine returns the union of two partial results.
func (s *set) Combine(a, b any) (any, error) {
	x, err := s.elems(a)
	if err != nil {
		return nil, err
	}
	y, err := s.elems(b)
	if err != nil {
		return nil, err
	}
	return dedup(merge(x, y, compareAny)), nil
}

// Result returns the sorted elements.
func (s *set) Result(partial any) (any, error) { return s.elems(partial) }

// whyNoCodec says what to use to cross processes.
func (s *set) whyNoCodec() string { return "its values have no fixed type; use SetOf[T]" }

func (s *set) elems(partial any) ([]any, error) {
	elems, ok := partial.([]any)
	if !ok {
		return nil, errorf(ErrType, "reducer %s: partial result of type %T, want []any", s.name, partial)
	}
	return elems, nil
}

// checkElem checks that e can be an element: not nil, and comparable
// with == without a panic.
func (s *set) checkElem(e any) error {
	if e == nil || !reflect.ValueOf(e).Comparable() {
		return errorf(ErrType, "reducer %s: element of type %T is not comparable", s.name, e)
	}
	return nil
}

// dedup drops repeated values from a sorted slice, in place. Values that
// compareAny ties are not necessarily equal (two structs that print alike),
// so each is checked against the whole run of ties before it.
func dedup(sorted []any) []any {
	out := sorted[:0]
	run := 0 // start in out of the run of values tied with the last one
	for _, v := range sorted {
		if len(out) > 0 && compareAny(out[len(out)-1], v) != 0 {
			run = len(out)
		}
		if !slices.Contains(out[run:], v) {
			out = append(out, v)
		}
	}
	return out
}

func init() { mustRegister(Set) }
