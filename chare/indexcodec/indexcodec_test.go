package indexcodec

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/charmgo/charm/internal/msgp"
	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"
)

var edges = []int{0, 1, 127, 128, 255, 256, 65535, 65536, math.MaxUint32, math.MaxUint32 + 1, math.MaxInt64,
	-1, -32, -33, -128, -129, -32768, -32769, math.MinInt32, math.MinInt32 - 1, math.MinInt64}

// compact is what msgpack itself writes for v with compact integers: the
// bytes Append must give.
func compact(t *testing.T, v any) []byte {
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	enc.UseCompactInts(true)
	require.NoError(t, enc.Encode(v))
	return buf.Bytes()
}

// check encodes v, compares with msgpack's compact form and with
// msgpack.Marshal's bytes (the same, for these types), and decodes it both
// here and with msgpack; int64's longer form decodes too.
func check[I comparable](t *testing.T, v I) {
	t.Helper()
	b, err := Append(nil, v)
	require.NoError(t, err)
	require.Equal(t, compact(t, v), b, "%v", v)
	got, err := Decode[I](b)
	require.NoError(t, err)
	require.Equal(t, v, got)
	var viaMsgpack I
	require.NoError(t, msgpack.Unmarshal(b, &viaMsgpack))
	require.Equal(t, v, viaMsgpack)
	old, err := msgpack.Marshal(v)
	require.NoError(t, err)
	require.Equal(t, old, b, "msgpack.Marshal's bytes for %v", v)
	if x, ok := any(v).(int); ok {
		long, err := msgpack.Marshal(int64(x)) // 0xd3 and 8 bytes
		require.NoError(t, err)
		got, err := Decode[int](long)
		require.NoError(t, err, "% x", long)
		require.Equal(t, x, got)
	}
}

func TestRoundTrip(t *testing.T) {
	require.True(t, Fast(3) && Fast([6]int{}) && !Fast("x") && !Fast(int32(1)))
	for _, x := range edges {
		check(t, x)
		check(t, [2]int{x, -x})
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		n := func() int { return int(r.Int64()) >> r.IntN(64) }
		check(t, n())
		check(t, [2]int{n(), n()})
		check(t, [3]int{n(), n(), n()})
		check(t, [4]int{n(), n(), n(), n()})
		check(t, [5]int{n(), n(), n(), n(), n()})
		check(t, [6]int{n(), n(), n(), n(), n(), n()})
	}
	b, err := Append([]byte{7}, nil)
	require.NoError(t, err)
	require.Equal(t, []byte{7}, b, "a nil index appends nothing")
}

type cell struct {
	Name string
	X, Y int
}

func TestUserTypesGoThroughMsgpack(t *testing.T) {
	v := cell{"a", 3, -4}
	b, err := Append(nil, v)
	require.NoError(t, err)
	want, err := msgpack.Marshal(v)
	require.NoError(t, err)
	require.Equal(t, want, b)
	got, err := Decode[cell](b)
	require.NoError(t, err)
	require.Equal(t, v, got)
	_, err = Decode[cell](nil)
	require.ErrorContains(t, err, "bad indexcodec.cell index (0 bytes): no bytes")
	_, err = Decode[cell](b[:len(b)-1])
	require.ErrorContains(t, err, "bad indexcodec.cell index")
	_, err = Append(nil, make(chan int))
	require.ErrorContains(t, err, "index")
}

func TestDecodeRejects(t *testing.T) {
	for _, c := range []struct {
		name string
		b    []byte
		dec  func([]byte) error
		want string
	}{
		{"empty int", nil, dec[int], "bad int index (0 bytes): truncated"},
		{"empty array", nil, dec[[2]int], "bad [2]int index (0 bytes): no bytes"},
		{"truncated int", []byte{msgp.Int32, 0, 1}, dec[int], "bad int index (3 bytes): truncated: needs 4 bytes, 2 left (at byte 0)"},
		{"trailing", []byte{5, 6}, dec[int], "bad int index (2 bytes): 1 bytes left over after it"},
		{"not an integer", []byte{0xc0}, dec[int], "bad int index (1 bytes): want an integer, found nil (at byte 0)"},
		{"a string", []byte{0xa1, 'x'}, dec[int], "want an integer, found a string"},
		{"uint64 overflow", append([]byte{msgp.Uint64}, 0xff, 0, 0, 0, 0, 0, 0, 0), dec[int], "18374686479671623680 exceeds"},
		{"wrong length", []byte{msgp.FixArrLo | 3, 1, 2, 3}, dec[[2]int], "bad [2]int index (4 bytes): it starts with 0x93, not an array of 2 integers"},
		{"short array", []byte{msgp.FixArrLo | 3, 1, 2}, dec[[3]int], "integer 2 at byte 3: truncated"},
		{"array trailing", []byte{msgp.FixArrLo | 2, 1, 2, 3}, dec[[2]int], "1 bytes left over"},
		{"float member", []byte{msgp.FixArrLo | 2, 1, 0xcb, 0, 0, 0, 0, 0, 0, 0, 0}, dec[[2]int], "integer 1 at byte 2: want an integer, found a float"},
		{"user type cut after", append(must(msgpack.Marshal(cell{"a", 1, 2})), 0xcd), dec[cell], "bad indexcodec.cell index (15 bytes): msgpack: truncated"},
		{"user type huge slice", []byte{0xdd, 0x7f, 0xff, 0xff, 0xff, 0x00}, dec[[]cell], "claims 2147483647 values"},
	} {
		t.Run(c.name, func(t *testing.T) {
			require.ErrorContains(t, c.dec(c.b), c.want)
		})
	}
}

func dec[I any](b []byte) error { _, err := Decode[I](b); return err }

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

// TestRandomDamage: truncated indices always fail, and flipped or
// appended bytes fail or decode to some value, never panic.
func TestRandomDamage(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	decs := []func([]byte) error{dec[int], dec[[2]int], dec[[3]int], dec[[4]int], dec[[5]int], dec[[6]int], dec[cell]}
	vals := []any{0, [2]int{}, [3]int{}, [4]int{}, [5]int{}, [6]int{}, cell{}}
	for range 5000 {
		k := r.IntN(len(vals))
		v := vals[k]
		switch x := v.(type) {
		case int:
			v = int(r.Int64()) >> r.IntN(64)
		case [3]int:
			x[1] = -int(r.Uint32())
			v = x
		case cell:
			v = cell{"ab", r.IntN(1000), -r.IntN(5)}
		}
		b, err := Append(nil, v)
		require.NoError(t, err)
		require.NoError(t, decs[k](b))
		if len(b) > 1 {
			require.Error(t, decs[k](b[:r.IntN(len(b))]), "a truncated %T index % x", v, b)
		}
		d := append([]byte(nil), b...)
		for range 1 + r.IntN(3) {
			switch r.IntN(3) {
			case 0:
				d[r.IntN(len(d))] ^= byte(1 + r.IntN(255))
			case 1:
				d = append(d, byte(r.IntN(256)))
			case 2:
				d = d[:r.IntN(len(d)+1)]
				if len(d) == 0 {
					d = append(d, byte(r.IntN(256)))
				}
			}
		}
		for _, f := range decs {
			_ = f(d) // must not panic, whichever type it is read as
		}
	}
}

func FuzzDecode(f *testing.F) {
	for _, v := range []any{5, -300, [2]int{1, 2}, [6]int{1, -1, 1 << 40, 0, 9, 9}} {
		b, _ := Append(nil, v)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if v, err := Decode[[2]int](b); err == nil {
			again, err := Append(nil, v)
			require.NoError(t, err)
			w, err := Decode[[2]int](again)
			require.NoError(t, err)
			require.Equal(t, v, w)
		}
		_, _ = Decode[int](b)
		_, _ = Decode[[6]int](b)
		_, _ = Decode[cell](b)
	})
}

func TestNoAllocations(t *testing.T) {
	buf := make([]byte, 0, 64)
	v := [3]int{1, -70000, 1 << 40}
	b, _ := Append(nil, v)
	one, _ := Append(nil, 123456)
	var sink [3]int
	var isink int
	var vi, ii any = v, 123456 // indices travel in an any (Header.Index) already
	require.Zero(t, testing.AllocsPerRun(100, func() {
		buf, _ = Append(buf[:0], vi)
		buf, _ = Append(buf[:0], ii)
	}), "encoding a built-in index allocates")
	require.Zero(t, testing.AllocsPerRun(100, func() {
		sink, _ = Decode[[3]int](b)
		isink, _ = Decode[int](one)
	}), "decoding a built-in index allocates")
	require.Equal(t, v, sink)
	require.Equal(t, 123456, isink)
}

// Format shows the bytes of a built-in index as %v shows the index, and
// anything else in hex.
func TestFormat(t *testing.T) {
	cases := []struct {
		index any
		want  string
	}{
		{7, "7"}, {-40, "-40"}, {math.MaxInt64, "9223372036854775807"},
		{[2]int{1, 300}, "[1 300]"}, {[3]int{-1, 0, 1}, "[-1 0 1]"}, {[6]int{1, 2, 3, 4, 5, 6}, "[1 2 3 4 5 6]"},
	}
	for _, tc := range cases {
		b, err := Append(nil, tc.index)
		require.NoError(t, err)
		require.Equal(t, tc.want, Format(b), "%v", tc.index)
		require.Equal(t, fmt.Sprint(tc.index), Format(b))
	}
	user, err := Append(nil, "north")
	require.NoError(t, err)
	require.Equal(t, "index bytes a56e6f727468", Format(user))
	require.Equal(t, "index bytes 920102ff", Format([]byte{0x92, 1, 2, 0xff}), "trailing bytes")
	require.Equal(t, "index bytes ", Format(nil))
}
