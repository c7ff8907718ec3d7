package reducer

import (
	"fmt"
	"strings"
)

// Tuple returns a reducer that runs several reductions at once (Charm++'s
// tuple reduction). A contribution is an []any holding one value per
// reducer, in order; partial results are []any of the reducers' partial
// results, and the result is an []any of their results.
//
// Its name is "tuple(" + the reducers' names joined by "," + ")", e.g.
// "tuple(sum_int64,max_float64)". Tuple registers the reducer under that
// name; a later call with reducers of the same names returns the reducer
// already registered. The tuple implements Codec if all its reducers do.
// Tuple panics if a reducer is nil, or if the name is
// registered to a reducer that is not a tuple (see User).
func Tuple(rs ...Reducer) Reducer {
	names := make([]string, len(rs))
	for i, r := range rs {
		if r == nil {
			panic(fmt.Sprintf("reducer: Tuple: reducer %d is nil", i))
		}
		names[i] = r.Name()
	}
	name := "tuple(" + strings.Join(names, ",") + ")"
	return intern(name,
		func() Reducer {
			t := &tuple{name: name, rs: append([]Reducer(nil), rs...)}
			if t.whyNoCodec() == "" {
				return &codecTuple{t}
			}
			return t
		},
		func(r Reducer) bool {
			switch r.(type) {
			case *tuple, *codecTuple:
				return true
			}
			return false
		})
}

type tuple struct {
	name string
	rs   []Reducer
}

// Name returns "tuple(...)".
func (t *tuple) Name() string { return t.name }

// Lift lifts each value with its reducer, all with the contributor's index.
func (t *tuple) Lift(value, index any) (any, error) {
	vs, err := t.values("contribution", value)
	if err != nil {
		return nil, err
	}
	out := make([]any, len(t.rs))
	for i, r := range t.rs {
		if out[i], err = r.Lift(vs[i], index); err != nil {
			return nil, t.wrap(i, err)
		}
	}
	return out, nil
}

// Combine combines the partial results position by position.
func (t *tuple) Combine(a, b any) (any, error) {
	x, err := t.values("partial result", a)
	if err != nil {
		return nil, err
	}
	y, err := t.values("partial result", b)
	if err != nil {
		return nil, err
	}
	out := make([]any, len(t.rs))
	for i, r := range t.rs {
		if out[i], err = r.Combine(x[i], y[i]); err != nil {
			return nil, t.wrap(i, err)
		}
	}
	return out, nil
}

// Result returns the results of the reducers, in order.
func (t *tuple) Result(partial any) (any, error) {
	x, err := t.values("partial result", partial)
	if err != nil {
		return nil, err
	}
	out := make([]any, len(t.rs))
	for i, r := range t.rs {
		if out[i], err = r.Result(x[i]); err != nil {
			return nil, t.wrap(i, err)
		}
	}
	return out, nil
}

// values checks that v is an []any with one value per reducer.
func (t *tuple) values(what string, v any) ([]any, error) {
	vs, ok := v.([]any)
	if !ok {
		return nil, errorf(ErrType, "reducer %s: %s of type %T, want []any", t.name, what, v)
	}
	if len(vs) != len(t.rs) {
		return nil, errorf(ErrLength, "reducer %s: %s holds %d values, want %d", t.name, what, len(vs), len(t.rs))
	}
	return vs, nil
}

// wrap says which member of the tuple failed; the member's own error,
// which names the member, stays matchable with errors.Is.
func (t *tuple) wrap(i int, err error) error {
	return fmt.Errorf("reducer %s: value %d: %w", t.name, i, err)
}
