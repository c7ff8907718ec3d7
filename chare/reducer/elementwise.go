package reducer

import "slices"

// elementwise reduces contributions of type T, or of type []T position by
// position, with a binary operation. It backs the numeric, logical and
// bit-vector reducers, which differ only in T and the operation.
//
// Partial results are T or []T. Lift copies slices and Combine allocates
// its result, so that no partial shares memory with a contribution (a
// contributor may reuse its buffer, as in Charm++ where contribute copies)
// or with another partial.
type elementwise[T any] struct {
	name string
	op   func(a, b T) T
}

// Name returns the reducer's registered name.
func (r *elementwise[T]) Name() string { return r.name }

// Lift accepts a T or a []T; the index plays no part.
func (r *elementwise[T]) Lift(value, _ any) (any, error) {
	switch v := value.(type) {
	case T:
		return v, nil
	case []T:
		return slices.Clone(v), nil
	}
	return nil, r.typeError("contribution", value)
}

// Combine applies the operation to two scalars, or to two slices of the
// same length position by position.
func (r *elementwise[T]) Combine(a, b any) (any, error) {
	switch x := a.(type) {
	case T:
		if y, ok := b.(T); ok {
			return r.op(x, y), nil
		}
	case []T:
		if y, ok := b.([]T); ok {
			if len(x) != len(y) {
				return nil, errorf(ErrLength, "reducer %s: length mismatch: %d vs %d", r.name, len(x), len(y))
			}
			out := make([]T, len(x))
			for i := range x {
				out[i] = r.op(x[i], y[i])
			}
			return out, nil
		}
	default:
		return nil, r.typeError("partial result", a)
	}
	switch b.(type) {
	case T, []T:
		// Both are valid alone: some contributor sent a scalar and another
		// a slice.
		return nil, errorf(ErrType, "reducer %s: cannot combine %T with %T", r.name, a, b)
	}
	return nil, r.typeError("partial result", b)
}

// Result returns the partial result unchanged, after checking its type.
func (r *elementwise[T]) Result(partial any) (any, error) {
	switch partial.(type) {
	case T, []T:
		return partial, nil
	}
	return nil, r.typeError("partial result", partial)
}

func (r *elementwise[T]) typeError(what string, v any) error {
	t := typeName[T]()
	return errorf(ErrType, "reducer %s: %s of type %T, want %s or []%s", r.name, what, v, t, t)
}
