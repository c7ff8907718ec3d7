// Package reducer holds the reducers of chare reductions: pure functions
// that combine the contributions of group branches and array elements,
// tested without a runtime.
//
// A reduction lifts every contribution into a partial result, combines
// partial results pairwise along a spanning tree of PEs (in no fixed
// order: Combine must be associative and commutative, or keep enough
// information to restore order, as Gather does with indices), and turns
// the final partial result into the value delivered to the target.
//
// The built-in reducers mirror Charm++'s CkReduction built-ins, and are
// registered under their names when the package is initialized:
//
//   - Nop ("nop"): a barrier; the result is nil.
//   - Sum, Product, Min, Max ("sum_int64", "max_float64"...): numbers of
//     one type T, or []T element-wise; SumInt64, MaxFloat64... for the
//     common types.
//   - And, Or, Xor ("and", "or", "xor"): bool, or []bool element-wise.
//   - BitAnd, BitOr, BitXor ("bitand", "bitor", "bitxor"): uint64, or
//     []uint64 bit vectors word by word.
//   - Gather ("gather") and Concat ("concat"): every contribution, in index
//     order, as []Item or as []any; GatherOf[I, T] ("gather(int,float64)")
//     and ConcatOf[I, T] for contributions of one type, as []Pair[I, T]
//     and []T.
//   - Set ("set"): the distinct values, sorted, as []any; SetOf[T]
//     ("set(string)") for values of one type, as []T.
//   - Stats ("stats"): count, mean and variance, as Statistics.
//   - Tuple ("tuple(sum_int64,max_float64)"): several reductions at once.
//   - User and UserFull: reducers of the program's own, registered by name.
//
// The built-ins are pure: Combine returns a new partial result and never
// modifies its operands, and the element-wise reducers copy contributed
// slices (Gather keeps contributed values as they are, without copying).
// Errors for contributions or partial results of the wrong type match
// ErrType, and those for element-wise operands of different lengths match
// ErrLength (with errors.Is).
//
// GatherOf, ConcatOf and SetOf are Typed: their result type is part of
// their Go type, so that the target of a reduction with them (a future, an
// entry method) is checked at compile time; see Typed.
//
// # Crossing processes
//
// A reduction that spans several processes sends partial results from PE
// to parent PE msgpack-encoded, with EncodePartial and DecodePartial, which
// use the reducer's Codec. The reducers whose partial results have a fixed
// type implement it: Nop, the numeric, logical and bit-vector reducers,
// Stats, GatherOf, ConcatOf, SetOf, a Tuple of reducers that all have one,
// and the reducers made by UserWithCodec. Gather, Concat, Set, User and
// UserFull hold values of any type, which msgpack cannot decode as they
// were (integers come back in the narrowest type, structs as maps): they
// have no Codec, and EncodePartial fails for them with an error matching
// ErrNoCodec that says what to use instead. A Reducer type of your own
// crosses processes if it implements Codec.
package reducer

import (
	"fmt"
	"sort"
	"sync"
)

// Reducer combines the contributions of a reduction.
type Reducer interface {
	// Name identifies the reducer across processes.
	Name() string
	// Lift turns one contribution, made by the contributor with the given
	// index (an array index, or the PE of a group branch), into a partial
	// result.
	Lift(value, index any) (any, error)
	// Combine merges two partial results.
	Combine(a, b any) (any, error)
	// Result turns the final partial result into the reduction's value.
	Result(partial any) (any, error)
}

// Typed is a Reducer whose result is always an R: GatherOf[I, T] (a
// []Pair[I, T]), ConcatOf[I, T] and SetOf[T] (a []T). A reduction's target
// is chosen apart from its contributions (a callback made by the main
// chare, passed to the elements), so the compiler cannot match the two by
// itself; chare.NewFutureFor and chare.EntryCallbackFor take the reducer
// to give the target its type R, and a target of another type does not
// compile.
type Typed[R any] interface {
	Reducer
	// TypedResult is Result with the result's type.
	TypedResult(partial any) (R, error)
}

var (
	mu     sync.RWMutex
	byName = map[string]Reducer{}
)

// Register makes a reducer known by its name, so that a reduction that
// crosses processes can find it. Registering a second reducer under a
// taken name is an error.
func Register(r Reducer) error {
	mu.Lock()
	defer mu.Unlock()
	if old, ok := byName[r.Name()]; ok && old != r {
		return fmt.Errorf("reducer: the name %q is taken", r.Name())
	}
	byName[r.Name()] = r
	return nil
}

// Lookup returns the reducer registered under name.
func Lookup(name string) (Reducer, error) {
	mu.RLock()
	defer mu.RUnlock()
	if r, ok := byName[name]; ok {
		return r, nil
	}
	names := make([]string, 0, len(byName))
	for n := range byName {
		names = append(names, n)
	}
	sort.Strings(names)
	return nil, fmt.Errorf("reducer: no reducer named %q (known: %v)", name, names)
}
