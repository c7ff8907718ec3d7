package reducer

import (
	"bytes"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"
)

func TestCodecTupleOfCodecs(t *testing.T) {
	r := Tuple(SumInt64, Stats, GatherOf[int, string](), SetOf[int](), Nop, Tuple(And, MaxFloat32))
	cs := []contrib{
		{2, []any{int64(5), 1, "c", []int{3}, nil, []any{true, float32(1)}}},
		{0, []any{int64(-2), 3, "a", 2, nil, []any{true, float32(-1)}}},
		{1, []any{int64(10), 2, "b", []int{2, 9}, nil, []any{false, float32(0.5)}}},
	}
	got := requireCrossProcess(t, r, cs)
	require.Equal(t, []any{
		int64(13),
		Statistics{Count: 3, Mean: 2, Variance: 2.0 / 3},
		[]Pair[int, string]{{0, "a"}, {1, "b"}, {2, "c"}},
		[]int{2, 3, 9},
		nil,
		[]any{false, float32(1)},
	}, got)
	requireStream(t, Tuple(SumInt, And), []any{1, true}, []any{[]int{2}, false})
}

func TestCodecTupleWithoutCodecs(t *testing.T) {
	r := Tuple(SumInt, Gather)
	_, ok := r.(Codec)
	require.False(t, ok, "a tuple has a Codec only if all its reducers have one")
	var buf bytes.Buffer
	err := EncodePartial(msgpack.NewEncoder(&buf), r, []any{1, []Item{{0, "x"}}})
	require.EqualError(t, err, "reducer tuple(sum_int,gather) cannot cross processes: "+
		"its value 1, of reducer gather, cannot: its values have no fixed type; use GatherOf[I, T]")
	require.ErrorIs(t, err, ErrNoCodec)
	require.Zero(t, buf.Len())
	_, err = DecodePartial(msgpack.NewDecoder(&buf), r)
	require.ErrorIs(t, err, ErrNoCodec)

	// Nested: the outer tuple names the inner one, which names its part.
	err = EncodePartial(nil, Tuple(Nop, Tuple(Set, And)), []any{nil, []any{[]any{}, true}})
	require.EqualError(t, err, "reducer tuple(nop,tuple(set,and)) cannot cross processes: "+
		"its value 1, of reducer tuple(set,and), cannot: "+
		"its value 0, of reducer set, cannot: its values have no fixed type; use SetOf[T]")
}

func TestCodecTupleErrors(t *testing.T) {
	r := Tuple(SumInt, And)
	err := EncodePartial(nil, r, []any{1})
	require.EqualError(t, err, "reducer tuple(sum_int,and): partial result holds 1 values, want 2")
	require.ErrorIs(t, err, ErrLength)
	var buf bytes.Buffer
	err = EncodePartial(msgpack.NewEncoder(&buf), r, []any{1, 2})
	require.EqualError(t, err, "reducer tuple(sum_int,and): value 1: reducer and: partial result of type int, want bool or []bool")
	require.ErrorIs(t, err, ErrType)

	b, err := msgpack.Marshal([]any{[]any{0, 1}, []any{0, "x"}})
	require.NoError(t, err)
	_, _, err = decode(r, b)
	require.EqualError(t, err, "reducer tuple(sum_int,and): value 1: reducer and: decoding partial result: msgpack: invalid code=a1 decoding bool")
	b, err = msgpack.Marshal([]any{[]any{0, 1}})
	require.NoError(t, err)
	_, _, err = decode(r, b)
	require.EqualError(t, err, "reducer tuple(sum_int,and): decoding partial result: array of 1 values, want 2")
}

func TestCodecUntypedReducersHaveNone(t *testing.T) {
	u, err := User(uniqueName(t), func(a, _ any) (any, error) { return a, nil })
	require.NoError(t, err)
	for _, tc := range []struct {
		r    Reducer
		want string
	}{
		{Gather, "reducer gather cannot cross processes: its values have no fixed type; use GatherOf[I, T]"},
		{Concat, "reducer concat cannot cross processes: its values have no fixed type; use ConcatOf[I, T]"},
		{Set, "reducer set cannot cross processes: its values have no fixed type; use SetOf[T]"},
		{u, "reducer " + u.Name() + " cannot cross processes: it was made by User or UserFull; " +
			"make it with UserWithCodec, or implement Codec on a Reducer type of your own"},
		{sumOnly{}, "reducer sum_only cannot cross processes: reducer.sumOnly does not implement reducer.Codec"},
	} {
		_, ok := tc.r.(Codec)
		require.False(t, ok, tc.r.Name())
		var buf bytes.Buffer
		err := EncodePartial(msgpack.NewEncoder(&buf), tc.r, []Item{})
		require.EqualError(t, err, tc.want)
		require.ErrorIs(t, err, ErrNoCodec)
		_, err = DecodePartial(msgpack.NewDecoder(&buf), tc.r)
		require.EqualError(t, err, tc.want)
	}
}

// maxLoc is the partial result of a user reducer: the largest value and
// where it was contributed.
type maxLoc struct {
	Value float64
	Index [3]int
}

func TestCodecUserWithCodec(t *testing.T) {
	r, err := UserWithCodec(uniqueName(t),
		func(v, i any) (any, error) { return maxLoc{v.(float64), i.([3]int)}, nil },
		func(a, b any) (any, error) {
			x, y := a.(maxLoc), b.(maxLoc)
			if y.Value > x.Value || y.Value == x.Value && compareAny(y.Index, x.Index) < 0 {
				return y, nil
			}
			return x, nil
		},
		nil, CodecOf[maxLoc]())
	require.NoError(t, err)
	got := requireCrossProcess(t, r, []contrib{
		{[3]int{0, 0, 1}, 2.5}, {[3]int{1, 0, 0}, 7.0}, {[3]int{0, 1, 0}, 7.0}, {[3]int{2, 2, 2}, -1.0},
	})
	require.Equal(t, maxLoc{7, [3]int{0, 1, 0}}, got)

	// Errors of the user's codec name the reducer.
	err = EncodePartial(nil, r, "x")
	require.EqualError(t, err, "reducer "+r.Name()+": encoding partial result: partial result of type string, want reducer.maxLoc")
	require.ErrorIs(t, err, ErrType)
	_, _, err = decode(r, []byte{0xc1})
	require.ErrorContains(t, err, "reducer "+r.Name()+": decoding partial result: ")

	_, err = UserWithCodec(uniqueName(t), nil, r.Combine, nil, nil)
	require.ErrorContains(t, err, "UserWithCodec needs a codec")
	_, err = UserWithCodec("", nil, r.Combine, nil, CodecOf[int]())
	require.EqualError(t, err, "reducer: a user reducer needs a name")
}

// sumOnly is a reducer of a program's own, without a Codec.
type sumOnly struct{}

func (sumOnly) Name() string                    { return "sum_only" }
func (sumOnly) Lift(v, _ any) (any, error)      { return v, nil }
func (sumOnly) Combine(a, b any) (any, error)   { return a.(int) + b.(int), nil }
func (sumOnly) Result(partial any) (any, error) { return partial, nil }

// sumCodec is sumOnly with a Codec of its own, as a program would write
// one.
type sumCodec struct{ sumOnly }

func (sumCodec) EncodePartial(enc *msgpack.Encoder, partial any) error {
	n, ok := partial.(int)
	if !ok {
		return errors.New("not an int")
	}
	return enc.EncodeInt(int64(n))
}

func (sumCodec) DecodePartial(dec *msgpack.Decoder) (any, error) { return dec.DecodeInt() }

func TestCodecOfAProgramsOwnReducer(t *testing.T) {
	r := sumCodec{}
	require.Equal(t, 10, requireCrossProcess(t, r, values(1, 2, 3, 4)))
	// In a tuple too, and the helpers name it in its errors.
	requireCrossProcess(t, Tuple(r, SumInt64), []contrib{{0, []any{1, int64(2)}}, {1, []any{3, int64(4)}}})
	err := EncodePartial(msgpack.NewEncoder(new(bytes.Buffer)), Tuple(SumInt64, r), []any{int64(1), "x"})
	require.EqualError(t, err, "reducer tuple(sum_int64,sum_only): value 1: reducer sum_only: encoding partial result: not an int")
}
