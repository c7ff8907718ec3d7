package reducer

import (
	"bytes"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"
)

// cell is a struct value type; msgpack would decode it into an any as a
// map, and its int64 field as int8.
type cell struct {
	Temp   float64
	Count  int64
	Label  string
	Hits   []uint8
	Corner [2]int16
}

// cell2 contributions over a 2-D index space, in no particular order.
func cells() []contrib {
	var cs []contrib
	for _, ix := range [][2]int{{1, 0}, {0, 2}, {0, 0}, {1, 1}, {-1, 5}, {0, 1}} {
		cs = append(cs, contrib{index: ix, value: cell{
			Temp:   float64(ix[0]) + float64(ix[1])/4,
			Count:  int64(ix[0]*10 + ix[1]),
			Label:  fmt.Sprint(ix),
			Hits:   []uint8{uint8(ix[1]), 255},
			Corner: [2]int16{int16(ix[0]), -1},
		}})
	}
	return cs
}

func TestGatherOfStructsOn2DIndices(t *testing.T) {
	r := GatherOf[[2]int, cell]()
	require.Equal(t, "gather([2]int,reducer.cell)", r.Name())
	got := requireCrossProcess(t, r, cells())
	// It is typed, and holds what Gather holds in-process, in its order.
	pairs, ok := got.([]Pair[[2]int, cell])
	require.True(t, ok, "GatherOf delivers a %T", got)
	items := mustReduce(t, Gather, cells()).([]Item)
	require.Len(t, pairs, len(items))
	for n, it := range items {
		require.Equal(t, it.Index, pairs[n].Index)
		require.Equal(t, it.Value, pairs[n].Value)
	}
	require.Equal(t, Pair[[2]int, cell]{Index: [2]int{-1, 5}, Value: cell{Temp: -1 + 1.25, Count: -5, Label: "[-1 5]", Hits: []uint8{5, 255}, Corner: [2]int16{-1, -1}}}, pairs[0])
	require.Equal(t, [2]int{1, 1}, pairs[5].Index)
}

func TestGatherOfScalars(t *testing.T) {
	got := requireCrossProcess(t, GatherOf[int, int64](), values(int64(7), int64(-1), int64(1)<<40))
	require.Equal(t, []Pair[int, int64]{{0, 7}, {1, -1}, {2, 1 << 40}}, got)
	got = requireCrossProcess(t, GatherOf[string, uint8](), []contrib{{"b", uint8(2)}, {"a", uint8(1)}})
	require.Equal(t, []Pair[string, uint8]{{"a", 1}, {"b", 2}}, got)
	// uintptr, which msgpack v5.4.1 cannot encode, and a Lesser index.
	got = requireCrossProcess(t, GatherOf[rev, uintptr](), []contrib{{rev(1), uintptr(10)}, {rev(3), uintptr(30)}})
	require.Equal(t, []Pair[rev, uintptr]{{rev(3), 30}, {rev(1), 10}}, got)
}

// TestTypedResults holds the typed reducers in variables of their Typed
// type: their result types are checked by the compiler, and TypedResult
// gives what Result gives, without an assertion.
func TestTypedResults(t *testing.T) {
	var gather Typed[[]Pair[[2]int, cell]] = GatherOf[[2]int, cell]()
	var concat Typed[[]cell] = ConcatOf[[2]int, cell]()
	var set Typed[[]string] = SetOf[string]()

	partial := func(r Reducer, cs []contrib) any {
		var acc any
		for i, c := range cs {
			p, err := r.Lift(c.value, c.index)
			require.NoError(t, err)
			if i == 0 {
				acc = p
				continue
			}
			acc, err = r.Combine(acc, p)
			require.NoError(t, err)
		}
		return acc
	}
	pairs, err := gather.TypedResult(partial(gather, cells()))
	require.NoError(t, err)
	require.Equal(t, mustReduce(t, gather, cells()), pairs)
	require.Len(t, pairs, 6)
	for n := 1; n < len(pairs); n++ {
		require.Negative(t, compareAny(pairs[n-1].Index, pairs[n].Index), "sorted by index")
	}
	vals, err := concat.TypedResult(partial(concat, cells()))
	require.NoError(t, err)
	require.Len(t, vals, 6)
	for n, p := range pairs {
		require.Equal(t, p.Value, vals[n])
	}
	elems, err := set.TypedResult(partial(set, values[any]("b", []string{"a", "b"})))
	require.NoError(t, err)
	require.Equal(t, []string{"a", "b"}, elems)

	// A partial result of another reducer's is refused, naming what is
	// wrong in it.
	_, err = gather.TypedResult([]Item{{[2]int{}, 3}})
	require.EqualError(t, err, "reducer gather([2]int,reducer.cell): partial result holds a value of type int, want reducer.cell")
	require.ErrorIs(t, err, ErrType)
	_, err = gather.TypedResult([]Item{{1, cell{}}})
	require.EqualError(t, err, "reducer gather([2]int,reducer.cell): partial result holds an index of type int, want [2]int")
	_, err = gather.TypedResult("x")
	require.EqualError(t, err, "reducer gather([2]int,reducer.cell): partial result of type string, want []reducer.Item")
}

func TestConcatOf(t *testing.T) {
	r := ConcatOf[[2]int, cell]()
	require.Equal(t, "concat([2]int,reducer.cell)", r.Name())
	got := requireCrossProcess(t, r, cells())
	require.IsType(t, []cell{}, got)
	want := mustReduce(t, Concat, cells())
	require.Len(t, got, len(want.([]any)))
	for i, v := range want.([]any) {
		require.Equal(t, v, got.([]cell)[i])
	}
	got = requireCrossProcess(t, ConcatOf[int, string](), values("x", "y", "z"))
	require.Equal(t, []string{"x", "y", "z"}, got)
}

// pair is a comparable struct set element.
type pair struct {
	A int8
	B string
}

func TestSetOf(t *testing.T) {
	r := SetOf[string]()
	require.Equal(t, "set(string)", r.Name())
	cs := values[any]("b", []string{"c", "a"}, "b", []string{}, []string{"d", "d"})
	got := requireCrossProcess(t, r, cs)
	require.Equal(t, []string{"a", "b", "c", "d"}, got)

	got = requireCrossProcess(t, SetOf[int64](), values[any](int64(3), []int64{-1, 3, 1 << 40}))
	require.Equal(t, []int64{-1, 3, 1 << 40}, got)

	pairs := values[any](pair{1, "x"}, []pair{{1, "x"}, {-2, "y"}}, pair{1, "w"})
	got = requireCrossProcess(t, SetOf[pair](), pairs)
	require.Equal(t, []pair{{-2, "y"}, {1, "w"}, {1, "x"}}, got)

	got = requireCrossProcess(t, SetOf[[2]int](), values([2]int{1, 2}, [2]int{0, 9}, [2]int{1, 2}))
	require.Equal(t, [][2]int{{0, 9}, {1, 2}}, got)

	// It sorts as Set does.
	floats := values[any](2.5, []float64{-1, 0}, 7.0)
	setGot := mustReduce(t, Set, floats)
	require.Equal(t, []any{-1.0, 0.0, 2.5, 7.0}, setGot)
	require.Equal(t, []float64{-1, 0, 2.5, 7}, requireCrossProcess(t, SetOf[float64](), floats))
}

func TestTypedContributionErrors(t *testing.T) {
	g := GatherOf[[2]int, cell]()
	_, err := g.Lift(cell{}, 3)
	require.EqualError(t, err, "reducer gather([2]int,reducer.cell): index of type int, want [2]int")
	require.ErrorIs(t, err, ErrType)
	_, err = g.Lift(map[string]any{}, [2]int{})
	require.EqualError(t, err, "reducer gather([2]int,reducer.cell): contribution of type map[string]interface {}, want reducer.cell")
	require.ErrorIs(t, err, ErrType)
	_, err = ConcatOf[int, int64]().Lift(7, 0)
	require.EqualError(t, err, "reducer concat(int,int64): contribution of type int, want int64")

	s := SetOf[int]()
	_, err = s.Lift(int64(1), 0)
	require.EqualError(t, err, "reducer set(int): contribution of type int64, want int or []int")
	require.ErrorIs(t, err, ErrType)
	_, err = s.Lift([]any{1}, 0)
	require.EqualError(t, err, "reducer set(int): contribution of type []interface {}, want int or []int")
	_, err = s.Combine([]any{1}, "x")
	require.EqualError(t, err, "reducer set(int): partial result of type string, want []any")

	// Partial results made by the untyped reducers, with values of other
	// types, are refused by Result and EncodePartial.
	_, err = ConcatOf[int, string]().Result([]Item{{0, 1}})
	require.EqualError(t, err, "reducer concat(int,string): partial result holds a value of type int, want string")
	_, err = s.Result([]any{"x"})
	require.EqualError(t, err, "reducer set(int): partial result holds a value of type string, want int")
	err = EncodePartial(nil, g, []Item{{[2]int{}, 3}})
	require.EqualError(t, err, "reducer gather([2]int,reducer.cell): partial result holds a value of type int, want reducer.cell")
	require.ErrorIs(t, err, ErrType)
	err = EncodePartial(nil, g, []Item{{1, cell{}}})
	require.EqualError(t, err, "reducer gather([2]int,reducer.cell): partial result holds a value of type int, want [2]int")
}

func TestTypedRegistration(t *testing.T) {
	for _, r := range []Reducer{GatherOf[int, string](), ConcatOf[int, string](), SetOf[uint16]()} {
		got, err := Lookup(r.Name())
		require.NoError(t, err)
		require.Same(t, r, got)
	}
	require.Same(t, GatherOf[int, string](), GatherOf[int, string]())
	require.NotSame(t, GatherOf[int, string](), ConcatOf[int, string]())
	require.Equal(t, "concat(int,string)", ConcatOf[int, string]().Name())
	require.Equal(t, "set(uint16)", SetOf[uint16]().Name())

	// Concurrent first constructions all get the one registered reducer.
	type fresh struct{ N int }
	var wg sync.WaitGroup
	got := make([][3]Reducer, 16)
	for i := range got {
		wg.Go(func() { got[i] = [3]Reducer{GatherOf[fresh, fresh](), ConcatOf[fresh, fresh](), SetOf[fresh]()} })
	}
	wg.Wait()
	for i := range got {
		for j := range got[i] {
			require.Same(t, got[0][j], got[i][j])
		}
	}
}

func TestTypedRejectInterfaceTypes(t *testing.T) {
	require.PanicsWithValue(t,
		"reducer: GatherOf: T is interface {}, an interface type: its values would not decode as the types they had",
		func() { GatherOf[int, any]() })
	require.PanicsWithValue(t,
		"reducer: ConcatOf: I is fmt.Stringer, an interface type: its values would not decode as the types they had",
		func() { ConcatOf[fmt.Stringer, int]() })
	require.Panics(t, func() { SetOf[any]() })
	require.Panics(t, func() { CodecOf[error]() })
	// Nothing was registered.
	_, err := Lookup("gather(int,interface {})")
	require.Error(t, err)
}

func TestTypedMsgpackPanicsBecomeErrors(t *testing.T) {
	// msgpack v5.4.1 panics on a uintptr field; the Codec returns an error.
	type handle struct{ P uintptr }
	r := ConcatOf[int, handle]()
	p, err := r.Lift(handle{7}, 0)
	require.NoError(t, err)
	var buf bytes.Buffer
	err = EncodePartial(msgpack.NewEncoder(&buf), r, p)
	require.ErrorContains(t, err, "reducer concat(int,reducer.handle): encoding partial result: msgpack panicked encoding a reducer.handle: ")
}

// wide takes 4 KiB in memory and one byte (nil) on the wire.
type wide struct{ B [4096]byte }

// A partial from another process is checked as the types its codec
// decodes into: Seq passed a partial of nils, one byte an element, and
// each became a whole zeroed value (a 16 KB gather partial allocated
// 406 MB; found in an audit). Real partials pass.
func TestCheckPartialCountsWhatDecodingTakes(t *testing.T) {
	const n = 16000
	nils := func(prefix ...byte) []byte {
		b := append(prefix, 0xdc, n>>8, n&0xff)
		return append(b, bytes.Repeat([]byte{0xc0}, n)...)
	}
	cases := []struct {
		r    Reducer
		bomb []byte
	}{
		{GatherOf[int, wide](), nils(0x92, 0x90)},
		{SetOf[wide](), nils()},
		{mustUser(t), nils()},
	}
	for _, tc := range cases {
		t.Run(tc.r.Name(), func(t *testing.T) {
			err := CheckPartial(tc.r, tc.bomb)
			require.ErrorContains(t, err, "would allocate at least")
			require.ErrorContains(t, err, tc.r.Name())
		})
	}
	// Real partials pass, and an unbounded one fails as Seq does.
	g := GatherOf[int, wide]()
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	require.NoError(t, EncodePartial(enc, g, []Item{{Index: 1, Value: wide{}}, {Index: 2, Value: wide{}}}))
	require.NoError(t, CheckPartial(g, buf.Bytes()))
	require.ErrorContains(t, CheckPartial(Sum[int](), []byte{0xdd, 0x7f, 0xff, 0xff, 0xff}), "claims")
}

// wideUser is registered once per process (a name is taken for good):
// go test -count=2 runs the test again.
var wideUser = sync.OnceValues(func() (Reducer, error) {
	id := func(v any) (any, error) { return v, nil }
	return UserWithCodec("wide-user", func(v, _ any) (any, error) { return v, nil },
		func(a, b any) (any, error) { return a, nil }, id, CodecOf[[]wide]())
})

func mustUser(t *testing.T) Reducer {
	r, err := wideUser()
	require.NoError(t, err)
	return r
}
