package reducer

import (
	"errors"
	"reflect"
	"slices"

	"github.com/vmihailenco/msgpack/v5"
)

// SetOf returns the reducer named "set(T)", e.g. "set(string)": Set for
// contributions of type T, or []T to add several values, whose partial
// results can cross processes. Its result is a []T sorted as Set sorts.
// See GatherOf for what T must be; a contribution of another type is an
// ErrType error. It is Typed, as GatherOf is.
func SetOf[T comparable]() Typed[[]T] {
	mustBeConcrete[T]("SetOf", "T")
	name := "set(" + typeName[T]() + ")"
	return intern(name,
		func() Reducer { return &typedSet[T]{set{name: name}} },
		func(r Reducer) bool { _, ok := r.(*typedSet[T]); return ok }).(*typedSet[T])
}

// typedSet is a set whose elements are Ts. Its partial results are the
// sorted []any of Set.
type typedSet[T comparable] struct{ set }

// Lift checks the type of the contribution, then lifts it as Set does.
func (s *typedSet[T]) Lift(value, index any) (any, error) {
	switch value.(type) {
	case T, []T:
		return s.set.Lift(value, index)
	}
	t := typeName[T]()
	return nil, errorf(ErrType, "reducer %s: contribution of type %T, want %s or []%s", s.name, value, t, t)
}

// Result returns the sorted elements as a []T.
func (s *typedSet[T]) Result(partial any) (any, error) { return s.TypedResult(partial) }

// TypedResult is Result with the result's type.
func (s *typedSet[T]) TypedResult(partial any) ([]T, error) {
	elems, err := s.elems(partial)
	if err != nil {
		return nil, err
	}
	return collect[T](s.name, elems, func(e any) any { return e })
}

// EncodePartial writes the elements as an array.
func (s *typedSet[T]) EncodePartial(enc *msgpack.Encoder, partial any) error {
	vals, err := s.TypedResult(partial)
	if err != nil {
		return err
	}
	if err := encodeSlice(enc, vals, valueEncoder[T](enc)); err != nil {
		return codecErr(s.name, "encoding", err)
	}
	return nil
}

// DecodePartial reads what EncodePartial wrote, as a sorted []any of Ts.
func (s *typedSet[T]) DecodePartial(dec *msgpack.Decoder) (any, error) {
	elems, err := s.decode(dec)
	if err != nil {
		return nil, codecErr(s.name, "decoding", err)
	}
	return elems, nil
}

func (s *typedSet[T]) decode(dec *msgpack.Decoder) ([]any, error) {
	vals, err := decodeSlice(dec, valueDecoder[T](dec))
	if err != nil {
		return nil, err
	}
	elems := make([]any, len(vals))
	for i, v := range vals {
		elems[i] = v
		if err := s.checkElem(v); err != nil {
			return nil, err
		}
		if i > 0 && compareAny(elems[i-1], v) > 0 {
			// Combine merges sorted partial results.
			return nil, errors.New("elements out of order")
		}
	}
	if len(dedup(slices.Clone(elems))) != len(elems) {
		return nil, errors.New("repeated elements")
	}
	return elems, nil
}

func (s *typedSet[T]) namesItself() {}

func (s *typedSet[T]) partialType() reflect.Type { return reflect.TypeFor[[]T]() }
