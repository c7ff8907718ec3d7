package msgp

import (
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"
)

func mp(t *testing.T, v any) []byte {
	t.Helper()
	b, err := msgpack.Marshal(v)
	require.NoError(t, err)
	return b
}

// TestReadIntegers: every form msgpack allows reads, the shortest and the
// longer ones other encoders may write, and a value must fit its range.
func TestReadIntegers(t *testing.T) {
	for _, n := range intEdges {
		for _, b := range [][]byte{AppendInt(nil, n), mp(t, n)} { // shortest, and msgpack's int64 form
			r := Reader{B: b}
			v, err := r.Int(math.MinInt64, math.MaxInt64)
			require.NoError(t, err, "% x", b)
			require.Equal(t, n, v)
			require.Equal(t, len(b), r.Off)
		}
	}
	for _, n := range uintEdges {
		r := Reader{B: AppendUint(nil, n)}
		v, err := r.Uint(math.MaxUint64)
		require.NoError(t, err)
		require.Equal(t, n, v)
	}
	r := Reader{B: []byte{Int64, 0, 0, 0, 0, 0, 0, 0, 5}}
	v, err := r.Uint(10)
	require.NoError(t, err, "a positive value in a signed form")
	require.Equal(t, uint64(5), v)
}

// TestReadRejects: each reader refuses what it must, and says what it
// wanted, what it found and at which byte the value starts.
func TestReadRejects(t *testing.T) {
	skip := func(n int) func(*Reader) { return func(r *Reader) { r.Off = n } }
	for _, c := range []struct {
		name string
		b    []byte
		pre  func(*Reader)
		read func(*Reader) error
		want string
	}{
		{"nothing", nil, nil, intIn(0, 10), "truncated (at byte 0)"},
		{"nil is not 0", []byte{Nil}, nil, intIn(0, 10), "want an integer, found nil (at byte 0)"},
		{"a string is not an integer", []byte{0xa1, 'x'}, nil, uintTo(10), "want an integer, found a string (at byte 0)"},
		{"over the range", []byte{0x0b}, nil, intIn(0, 10), "11 exceeds 10 (at byte 0)"},
		{"under the range", []byte{0xfb}, nil, intIn(-3, 10), "-5 is below -3 (at byte 0)"},
		{"negative for unsigned", []byte{0xff}, nil, uintTo(10), "-1 is negative (at byte 0)"},
		{"negative for int from 0", []byte{Int8, 0x80}, nil, intIn(0, 10), "-128 is negative (at byte 0)"},
		{"large unsigned for int64", []byte{Uint64, 0xff, 0, 0, 0, 0, 0, 0, 0}, nil, intIn(math.MinInt64, math.MaxInt64), "18374686479671623680 exceeds 9223372036854775807"},
		{"truncated integer", []byte{7, Int32, 0, 1}, skip(1), intIn(0, 10), "truncated: needs 4 bytes, 2 left (at byte 1)"},
		{"binary is not a string", []byte{Bin8, 1, 'x'}, nil, str, "want a string, found binary (at byte 0)"},
		{"nil is not a string", []byte{Nil}, nil, str, "want a string, found nil (at byte 0)"},
		{"string cut short", []byte{Str8, 5, 'a'}, nil, str, "truncated: needs 5 bytes, 1 left (at byte 0)"},
		{"a string is not binary", []byte{0xa1, 'x'}, nil, bin, "want binary, found a string (at byte 0)"},
		{"binary cut short", []byte{Bin32, 0x7f, 0xff, 0xff, 0xff, 0}, nil, bin, "truncated: needs 2147483647 bytes, 1 left (at byte 0)"},
		{"binary length cut short", []byte{Bin16, 1}, nil, bin, "truncated: needs 2 bytes, 1 left (at byte 0)"},
		{"an array is not bytes", []byte{0x90}, nil, bytesOf, "want a string or binary, found an array (at byte 0)"},
		{"a map is not an array", []byte{0x80}, nil, arrayLen, "want an array, found a map (at byte 0)"},
		{"array header cut short", []byte{Arr32, 0, 0}, nil, arrayLen, "truncated: needs 4 bytes, 2 left (at byte 0)"},
		{"a bool is not a float", []byte{True}, nil, float, "want a float, found a bool (at byte 0)"},
		{"float cut short", []byte{Double, 0}, nil, float, "truncated: needs 8 bytes, 1 left (at byte 0)"},
		{"unused code", []byte{Unused}, nil, intIn(0, 1), "want an integer, found the unused code 0xc1 (at byte 0)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := &Reader{B: c.b}
			if c.pre != nil {
				c.pre(r)
			}
			err := c.read(r)
			require.ErrorContains(t, err, c.want)
			var e *Error
			require.True(t, errors.As(err, &e), "%T", err)
			require.GreaterOrEqual(t, e.Off, 0)
			require.LessOrEqual(t, e.Off, len(c.b))
		})
	}
}

func intIn(lo, hi int64) func(*Reader) error {
	return func(r *Reader) error { _, err := r.Int(lo, hi); return err }
}

func uintTo(hi uint64) func(*Reader) error {
	return func(r *Reader) error { _, err := r.Uint(hi); return err }
}

func str(r *Reader) error      { _, err := r.Str(); return err }
func bin(r *Reader) error      { _, err := r.Bin(); return err }
func bytesOf(r *Reader) error  { _, _, err := r.Bytes(); return err }
func arrayLen(r *Reader) error { _, _, err := r.ArrayLen(); return err }
func float(r *Reader) error    { _, err := r.Float(); return err }

// TestReadValues: what each reader returns, nil told from empty, bodies
// aliasing the input with their capacity cut.
func TestReadValues(t *testing.T) {
	b := AppendStrHeader(nil, 3)
	b = append(b, "abc"...)
	b = append(AppendBinHeader(b, 2), 7, 8)
	b = append(b, Nil)
	b = AppendBinHeader(b, 0)
	b = append(AppendStrHeader(b, 1), 'z')
	b = append(b, Nil)
	b = AppendArrayHeader(b, 20)
	b = append(b, Nil)
	b = AppendFloat32(b, 1.5)
	b = AppendInt(b, -7) // a float reads integers too
	r := Reader{B: b}

	s, err := r.Str()
	require.NoError(t, err)
	require.Equal(t, "abc", string(s))
	p, err := r.Bin()
	require.NoError(t, err)
	require.Equal(t, []byte{7, 8}, p)
	require.Equal(t, 2, cap(p), "capacity cut: appending cannot overwrite the input")
	p[0] = 9
	require.Equal(t, byte(9), b[r.Off-2], "aliases the input")
	p, err = r.Bin()
	require.NoError(t, err)
	require.Nil(t, p)
	p, err = r.Bin()
	require.NoError(t, err)
	require.NotNil(t, p)
	require.Empty(t, p)
	p, isNil, err := r.Bytes()
	require.NoError(t, err)
	require.False(t, isNil)
	require.Equal(t, "z", string(p))
	_, isNil, err = r.Bytes()
	require.NoError(t, err)
	require.True(t, isNil)
	n, isNil, err := r.ArrayLen()
	require.NoError(t, err)
	require.False(t, isNil)
	require.Equal(t, 20, n, "declared, not checked against the input")
	_, isNil, err = r.ArrayLen()
	require.NoError(t, err)
	require.True(t, isNil)
	f, err := r.Float()
	require.NoError(t, err)
	require.Equal(t, 1.5, f)
	f, err = r.Float()
	require.NoError(t, err)
	require.Equal(t, -7.0, f)
	require.Equal(t, len(b), r.Off)
	_, err = r.Float()
	require.ErrorContains(t, err, "truncated")
}

// FuzzRoundTrip: what the writer writes, the reader reads back, whole.
func FuzzRoundTrip(f *testing.F) {
	for i, n := range intEdges {
		f.Add(n, uintEdges[i%len(uintEdges)])
	}
	f.Fuzz(func(t *testing.T, n int64, u uint64) {
		b := AppendUint(AppendInt(nil, n), u)
		require.Equal(t, IntSize(n)+UintSize(u), len(b))
		r := Reader{B: b}
		v, err := r.Int(math.MinInt64, math.MaxInt64)
		require.NoError(t, err)
		require.Equal(t, n, v)
		w, err := r.Uint(math.MaxUint64)
		require.NoError(t, err)
		require.Equal(t, u, w)
		require.Equal(t, len(b), r.Off)
		var back struct{ N int64 }
		require.NoError(t, msgpack.Unmarshal(append(AppendArrayHeader(nil, 1), AppendInt(nil, n)...), &back))
		require.Equal(t, n, back.N, "msgpack/v5 reads it")
	})
}

// FuzzReader: any bytes, read as any sequence of values, give values or
// an *Error at a byte inside the input; never a panic, never a read past
// the end.
func FuzzReader(f *testing.F) {
	f.Add([]byte{0x93, 0x01, 0xa1, 'x', 0xc4, 0x01, 0x02}, []byte{6, 2, 3, 4})
	f.Add([]byte{Bin32, 0xff, 0xff, 0xff, 0xff}, []byte{4})
	f.Add([]byte{Uint64, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, []byte{0, 1})
	f.Fuzz(func(t *testing.T, b []byte, ops []byte) {
		r := Reader{B: b}
		for _, op := range ops {
			var err error
			switch op % 7 {
			case 0:
				_, err = r.Int(-100, 100)
			case 1:
				_, err = r.Uint(math.MaxUint64)
			case 2:
				_, err = r.Str()
			case 3:
				_, err = r.Bin()
			case 4:
				_, _, err = r.Bytes()
			case 5:
				_, _, err = r.ArrayLen()
			case 6:
				_, err = r.Float()
			}
			require.LessOrEqual(t, r.Off, len(b))
			if err != nil {
				var e *Error
				require.True(t, errors.As(err, &e), "%T", err)
				require.True(t, e.Off >= 0 && e.Off <= len(b), "error at byte %d of %d", e.Off, len(b))
				return
			}
		}
	})
}

// FuzzIntegerForms: Int and Uint, which read an integer in one step, agree
// with Code and Integer on every input: the same value, the same length,
// an error where they find one.
func FuzzIntegerForms(f *testing.F) {
	for _, n := range intEdges {
		f.Add(AppendInt(nil, n))
	}
	f.Add([]byte{Int64, 0, 0, 0, 0, 0, 0, 0, 5})
	f.Add([]byte{Uint32, 1, 2})
	f.Add([]byte{Nil})
	f.Fuzz(func(t *testing.T, b []byte) {
		ref := Reader{B: b}
		c, err := ref.Code()
		var u uint64
		var neg bool
		if err == nil {
			u, neg, err = ref.Integer(c)
		}
		r := Reader{B: b}
		v, ierr := r.Int(math.MinInt64, math.MaxInt64)
		w := Reader{B: b}
		uv, uerr := w.Uint(math.MaxUint64)
		if err != nil {
			require.Error(t, ierr)
			require.Equal(t, err.Error(), ierr.Error())
			require.Error(t, uerr)
			require.Equal(t, err.Error(), uerr.Error())
			return
		}
		require.Equal(t, ref.Off, r.Off)
		if neg {
			require.NoError(t, ierr)
			require.Equal(t, int64(u), v)
			require.ErrorContains(t, uerr, "is negative")
			return
		}
		require.NoError(t, uerr)
		require.Equal(t, u, uv)
		require.Equal(t, ref.Off, w.Off)
		if u > math.MaxInt64 {
			require.ErrorContains(t, ierr, "exceeds")
		} else {
			require.NoError(t, ierr)
			require.Equal(t, int64(u), v)
		}
	})
}
