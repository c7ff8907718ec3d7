package reducer

import (
	"errors"
	"fmt"
	"reflect"

	"github.com/vmihailenco/msgpack/v5"
)

// GatherOf returns the reducer named "gather(I,T)", e.g.
// "gather([2]int,main.Cell)": Gather for contributions of type T made by
// contributors whose index is of type I, whose partial results can cross
// processes (it implements Codec). Its result is a []Pair[I, T] sorted as
// Gather sorts (by index); it is a Typed reducer, so that
// chare.NewFutureFor and chare.EntryCallbackFor give the reduction a
// target of that type checked by the compiler.
//
// I and T must not be interface types, and their values must survive a
// msgpack round trip (exported fields, no fields of interface type, or
// msgpack's CustomEncoder and CustomDecoder). A contribution or index of
// another type is an ErrType error.
//
// Every call for the same I and T returns the same registered reducer;
// GatherOf panics if I or T is an interface type, or if the name is taken
// by a reducer of another kind.
func GatherOf[I comparable, T any]() Typed[[]Pair[I, T]] {
	name := typedGatherName[I, T]("gather")
	return intern(name,
		func() Reducer { return &typedGather[I, T]{gather{name: name}} },
		func(r Reducer) bool { _, ok := r.(*typedGather[I, T]); return ok }).(*typedGather[I, T])
}

// ConcatOf returns the reducer named "concat(I,T)": Concat for
// contributions of type T made by contributors with an index of type I,
// whose partial results can cross processes. Its result is a []T in index
// order. See GatherOf.
func ConcatOf[I comparable, T any]() Typed[[]T] {
	name := typedGatherName[I, T]("concat")
	return intern(name,
		func() Reducer { return &typedConcat[I, T]{typedGather[I, T]{gather{name: name, valuesOnly: true}}} },
		func(r Reducer) bool { _, ok := r.(*typedConcat[I, T]); return ok }).(*typedConcat[I, T])
}

// typedGatherName checks I and T and names the reducer of the kind
// ("gather" or "concat") over them.
func typedGatherName[I comparable, T any](kind string) string {
	mustBeConcrete[I](typedName(kind), "I")
	mustBeConcrete[T](typedName(kind), "T")
	return fmt.Sprintf("%s(%s,%s)", kind, typeName[I](), typeName[T]())
}

// mustBeConcrete panics if V, the type parameter param of the function
// fn, is an interface type, whose values msgpack cannot decode as the
// types they had.
func mustBeConcrete[V any](fn, param string) {
	if isInterface[V]() {
		panic(fmt.Sprintf("reducer: %s: %s is %s, an interface type: its values would not decode as the types they had",
			fn, param, typeName[V]()))
	}
}

// typedGather is a gather whose indices are Is and values Ts. Its partial
// results are the []Item of Gather (merged by compareItems, which works on
// values of any type); only the result is typed.
type typedGather[I comparable, T any] struct{ gather }

// typedConcat is ConcatOf: a typedGather whose result is the values alone.
type typedConcat[I comparable, T any] struct{ typedGather[I, T] }

// Lift checks the types of the value and index, then lifts them as Gather
// does.
func (g *typedGather[I, T]) Lift(value, index any) (any, error) {
	if _, ok := index.(I); !ok {
		return nil, errorf(ErrType, "reducer %s: index of type %T, want %s", g.name, index, typeName[I]())
	}
	if _, ok := value.(T); !ok {
		return nil, errorf(ErrType, "reducer %s: contribution of type %T, want %s", g.name, value, typeName[T]())
	}
	return g.gather.Lift(value, index)
}

// Result returns the items as a []Pair[I, T].
func (g *typedGather[I, T]) Result(partial any) (any, error) { return g.TypedResult(partial) }

// TypedResult is Result with the result's type.
func (g *typedGather[I, T]) TypedResult(partial any) ([]Pair[I, T], error) {
	items, err := g.items(partial)
	if err != nil {
		return nil, err
	}
	out := make([]Pair[I, T], len(items))
	for n, it := range items {
		if out[n], err = g.pair(it); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// pair returns an item as a Pair[I, T], or an ErrType error naming the
// part of it that is not of its type.
func (g *typedGather[I, T]) pair(it Item) (Pair[I, T], error) {
	i, ok := it.Index.(I)
	if !ok {
		return Pair[I, T]{}, errorf(ErrType, "reducer %s: partial result holds an index of type %T, want %s", g.name, it.Index, typeName[I]())
	}
	v, ok := it.Value.(T)
	if !ok {
		return Pair[I, T]{}, errorf(ErrType, "reducer %s: partial result holds a value of type %T, want %s", g.name, it.Value, typeName[T]())
	}
	return Pair[I, T]{Index: i, Value: v}, nil
}

// Result returns the values as a []T.
func (c *typedConcat[I, T]) Result(partial any) (any, error) { return c.TypedResult(partial) }

// TypedResult is Result with the result's type.
func (c *typedConcat[I, T]) TypedResult(partial any) ([]T, error) {
	items, err := c.items(partial)
	if err != nil {
		return nil, err
	}
	return collect[T](c.name, items, func(it Item) any { return it.Value })
}

// EncodePartial writes the items as [[index...], [value...]].
func (g *typedGather[I, T]) EncodePartial(enc *msgpack.Encoder, partial any) error {
	items, err := g.items(partial)
	if err != nil {
		return err
	}
	idxs, err := collect[I](g.name, items, func(it Item) any { return it.Index })
	if err != nil {
		return err
	}
	vals, err := collect[T](g.name, items, func(it Item) any { return it.Value })
	if err != nil {
		return err
	}
	err = enc.EncodeArrayLen(2)
	if err == nil {
		err = encodeSlice(enc, idxs, valueEncoder[I](enc))
	}
	if err == nil {
		err = encodeSlice(enc, vals, valueEncoder[T](enc))
	}
	if err != nil {
		return codecErr(g.name, "encoding", err)
	}
	return nil
}

// DecodePartial reads what EncodePartial wrote, as an []Item of Is and Ts.
func (g *typedGather[I, T]) DecodePartial(dec *msgpack.Decoder) (any, error) {
	items, err := g.decode(dec)
	if err != nil {
		return nil, codecErr(g.name, "decoding", err)
	}
	return items, nil
}

func (g *typedGather[I, T]) decode(dec *msgpack.Decoder) ([]Item, error) {
	if err := decodeArrayLen(dec, 2); err != nil {
		return nil, err
	}
	idxs, err := decodeSlice(dec, valueDecoder[I](dec))
	if err != nil {
		return nil, err
	}
	vals, err := decodeSlice(dec, valueDecoder[T](dec))
	if err != nil {
		return nil, err
	}
	if len(idxs) != len(vals) {
		return nil, fmt.Errorf("%d indices for %d values", len(idxs), len(vals))
	}
	items := make([]Item, len(idxs))
	for i := range items {
		items[i] = Item{Index: idxs[i], Value: vals[i]}
		if i > 0 && compareItems(items[i-1], items[i]) > 0 {
			// Combine merges sorted partial results.
			return nil, errors.New("items out of order")
		}
	}
	return items, nil
}

func (g *typedGather[I, T]) namesItself() {}

// gatherWire is a typed gather's partial as it travels: its indices, then
// its values.
type gatherWire[I, T any] struct {
	_msgpack struct{} `msgpack:",as_array"`
	I        []I
	V        []T
}

func (g *typedGather[I, T]) partialType() reflect.Type { return reflect.TypeFor[gatherWire[I, T]]() }
