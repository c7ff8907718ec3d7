package reducer

import (
	"bytes"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"
)

// encode writes one partial result of r with EncodePartial.
func encode(t *testing.T, r Reducer, partial any) []byte {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, EncodePartial(msgpack.NewEncoder(&buf), r, partial), r.Name())
	return buf.Bytes()
}

// decode reads one partial result of r with DecodePartial, and reports how
// many bytes it left unread.
func decode(r Reducer, b []byte) (partial any, unread int, err error) {
	rd := bytes.NewReader(b)
	partial, err = DecodePartial(msgpack.NewDecoder(rd), r)
	return partial, rd.Len(), err
}

// roundTrip sends a partial result of r through msgpack and requires it
// back deeply equal and of the same Go type; reflect.DeepEqual also
// compares the dynamic types of values held in interfaces, such as the
// elements of an []any or the fields of an Item.
func roundTrip(t *testing.T, r Reducer, partial any) any {
	t.Helper()
	b := encode(t, r, partial)
	got, unread, err := decode(r, b)
	require.NoError(t, err, r.Name())
	require.Zero(t, unread, "%s: DecodePartial must read exactly what EncodePartial wrote", r.Name())
	require.Equal(t, reflect.TypeOf(partial), reflect.TypeOf(got), r.Name())
	require.Equal(t, partial, got, r.Name())
	return got
}

// requireTruncationFails decodes every strict prefix of an encoding, which
// must fail without a panic.
func requireTruncationFails(t *testing.T, r Reducer, b []byte) {
	t.Helper()
	for n := range len(b) {
		require.NotPanics(t, func() {
			_, _, err := decode(r, b[:n])
			require.Error(t, err, "%s: prefix of %d of %d bytes", r.Name(), n, len(b))
		})
	}
}

// wire is r as it behaves when every partial result crosses a process
// boundary: Lift and Combine round-trip their results.
type wire struct {
	t *testing.T
	r Reducer
}

func (w wire) Name() string { return w.r.Name() }

func (w wire) Lift(value, index any) (any, error) {
	p, err := w.r.Lift(value, index)
	if err != nil {
		return nil, err
	}
	return roundTrip(w.t, w.r, p), nil
}

func (w wire) Combine(a, b any) (any, error) {
	p, err := w.r.Combine(a, b)
	if err != nil {
		return nil, err
	}
	return roundTrip(w.t, w.r, p), nil
}

func (w wire) Result(partial any) (any, error) { return w.r.Result(partial) }

// requireCrossProcess checks that r implements Codec, that every partial
// result of a reduction of cs round-trips (the lifted ones and those of
// every combination, in many orders), that truncated encodings fail, and
// that the results are the in-process ones. It returns the result of the
// in-order reduction.
func requireCrossProcess(t *testing.T, r Reducer, cs []contrib) any {
	t.Helper()
	require.Implements(t, (*Codec)(nil), r, r.Name())
	want := mustReduce(t, r, cs)

	// Fold left to right, checking every partial result thoroughly.
	var acc any
	for i, c := range cs {
		p, err := r.Lift(c.value, c.index)
		require.NoError(t, err)
		requireTruncationFails(t, r, encode(t, r, p))
		p = roundTrip(t, r, p)
		if i == 0 {
			acc = p
			continue
		}
		acc, err = r.Combine(acc, p)
		require.NoError(t, err)
		requireTruncationFails(t, r, encode(t, r, acc))
		acc = roundTrip(t, r, acc)
	}
	got, err := r.Result(acc)
	require.NoError(t, err)
	require.Equal(t, want, got, r.Name())

	// In any order of combination, crossing processes changes nothing: the
	// same order gives the same result in-process, to the last bit.
	for seed := range uint64(20) {
		in, err := reduceRandom(r, cs, rand.New(rand.NewPCG(seed, 3)))
		require.NoError(t, err)
		across, err := reduceRandom(wire{t, r}, cs, rand.New(rand.NewPCG(seed, 3)))
		require.NoError(t, err)
		require.Equal(t, in, across, "%s, seed %d", r.Name(), seed)
	}
	return want
}

// requireStream checks that partial results written one after another to
// one encoder are read back one after another from one decoder.
func requireStream(t *testing.T, r Reducer, partials ...any) {
	t.Helper()
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	for _, p := range partials {
		require.NoError(t, EncodePartial(enc, r, p))
	}
	dec := msgpack.NewDecoder(&buf)
	for _, p := range partials {
		got, err := DecodePartial(dec, r)
		require.NoError(t, err)
		require.Equal(t, p, got)
	}
	require.Zero(t, buf.Len())
}
