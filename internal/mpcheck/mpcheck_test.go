package mpcheck

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"
)

func TestOneAcceptsEncodedValues(t *testing.T) {
	type inner struct {
		A []int
		M map[string][]byte
	}
	values := []any{
		nil, true, 0, -1, 127, -33, 1 << 40, -1 << 40, uint8(200), float32(1.5), 2.5, "", "short",
		strings.Repeat("x", 300), strings.Repeat("y", 70000), []byte{}, bytes.Repeat([]byte{1}, 300),
		bytes.Repeat([]byte{2}, 70000), []int{}, make([]int, 20), make([]int, 70000), map[string]int{"a": 1},
		time.Unix(1700000000, 5).UTC(), time.Unix(1, 0), inner{A: []int{1, 2}, M: map[string][]byte{"k": {3}}},
		[][]any{{1, "a", nil}, {}},
	}
	for _, v := range values {
		b, err := msgpack.Marshal(v)
		require.NoError(t, err)
		require.NoError(t, One(b), "%T %v: % x", v, v, b)
	}
}

func TestOneRefuses(t *testing.T) {
	deep := append(bytes.Repeat([]byte{0x91}, MaxDepth+1), 0x00)
	ok := append(bytes.Repeat([]byte{0x91}, MaxDepth), 0x00)
	require.NoError(t, One(ok), "nesting of exactly MaxDepth")
	cases := []struct {
		name string
		b    []byte
		want string
	}{
		{"empty", nil, "truncated"},
		{"never_used", []byte{0xc1}, "0xc1"},
		{"trailing", []byte{0x01, 0x02}, "1 bytes after"},
		{"huge_array32", []byte{0xdd, 0x7f, 0xff, 0xff, 0xff, 0x00}, "claims 2147483647 values, and 1 bytes are left"},
		{"huge_map32", []byte{0xdf, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00}, "claims 131072 values"},
		{"fixarray_short", []byte{0x93, 0x01, 0x02}, "claims 3 values, and 2 bytes are left"},
		{"str32_short", []byte{0xdb, 0x00, 0x10, 0x00, 0x00, 'a'}, "truncated"},
		{"bin8_header_cut", []byte{0xc4}, "truncated"},
		{"ext_cut", []byte{0xd7, 0xff, 1, 2}, "truncated"},
		{"int64_cut", []byte{0xd3, 1, 2, 3}, "truncated"},
		{"array_of_cut_value", []byte{0x92, 0x01, 0xcd}, "truncated"},
		{"array_element_cut", []byte{0x92, 0xcd, 0x01, 0x02}, "truncated"},
		{"deep", deep, "nested deeper than 10000"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			require.ErrorContains(t, One(c.b), c.want)
		})
	}
}

// FuzzOne: One never panics, and what it accepts msgpack reads as one
// value that ends where One says.
func FuzzOne(f *testing.F) {
	for _, v := range []any{nil, 1, "a", []any{1, []any{2, map[string]any{"x": []byte{1}}}}, time.Unix(5, 6)} {
		b, _ := msgpack.Marshal(v)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if One(b) != nil {
			return
		}
		dec := msgpack.NewDecoder(bytes.NewReader(b))
		require.NoError(t, dec.Skip(), "% x", b)
		require.Zero(t, dec.Buffered().(*bytes.Reader).Len(), "% x", b)
	})
}

// customPair encodes itself as two values, as msgpack's own CustomEncoder
// example does (EncodeMulti): the map around it then holds one value more
// than its header says.
type customPair struct {
	S string
	N int
}

func (c *customPair) EncodeMsgpack(enc *msgpack.Encoder) error { return enc.EncodeMulti(c.S, c.N) }
func (c *customPair) DecodeMsgpack(dec *msgpack.Decoder) error { return dec.DecodeMulti(&c.S, &c.N) }

// TestSeqAcceptsUserEncoders: state with a field that encodes itself as
// several values, or a linked list deeper than the old bound of 64,
// decodes with msgpack and passes Seq (One refuses the first: its bytes
// are a value and then more).
func TestSeqAcceptsUserEncoders(t *testing.T) {
	type withPair struct {
		C    customPair
		Tail int
	}
	b, err := msgpack.Marshal(&withPair{C: customPair{S: "s", N: 7}, Tail: 9})
	require.NoError(t, err)
	var back withPair
	require.NoError(t, msgpack.Unmarshal(b, &back))
	require.Equal(t, withPair{C: customPair{S: "s", N: 7}, Tail: 9}, back)
	require.NoError(t, Seq(b))
	require.ErrorContains(t, One(b), "after the value")

	type node struct {
		V    int
		Next *node
	}
	var list *node
	for i := range 2000 {
		list = &node{V: i, Next: list}
	}
	b, err = msgpack.Marshal(list)
	require.NoError(t, err)
	require.NoError(t, Seq(b), "a list 2000 deep")
}

func TestSeqRefuses(t *testing.T) {
	deep := append(bytes.Repeat([]byte{0x91}, MaxDepth+1), 0x00)
	for _, c := range []struct {
		name string
		b    []byte
		want string
	}{
		{"empty", nil, "truncated"},
		{"second_value_cut", []byte{0x01, 0xcd, 0x01}, "truncated"},
		{"second_value_huge", []byte{0x01, 0xdd, 0x7f, 0xff, 0xff, 0xff, 0x00}, "claims 2147483647 values"},
		{"deep_second", append([]byte{0x01}, deep...), "nested deeper than"},
	} {
		t.Run(c.name, func(t *testing.T) {
			require.ErrorContains(t, Seq(c.b), c.want)
		})
	}
}
