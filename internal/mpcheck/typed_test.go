package mpcheck

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"
)

type wideElem struct {
	S string
	B [4096]byte
}

type objLike struct {
	Coll  uint32
	Index []byte
	State []byte
	Inner struct{ A, B, C int64 }
	Ptrs  []*wideElem
	Wides []wideElem
}

type embedded struct {
	Wide []wideElem
}

type outer struct {
	embedded
	Name string     `msgpack:"n"`
	Skip []wideElem `msgpack:"-"`
	M    map[int32][512]byte
}

type asArray struct {
	_msgpack struct{} `msgpack:",as_array"`
	Kind     int
	Items    []wideElem
}

type selfDecoding struct{ B [4096]byte }

// Recursive types: the walk's nodes point back.
type linked struct {
	V    int
	Next *linked
}

type tree struct {
	Name string
	Kids []tree
}

func (s *selfDecoding) DecodeMsgpack(dec *msgpack.Decoder) error { return dec.Skip() }

// arrayOfNils is a msgpack array of n nils, wrapped in a map with key k
// when k is not "".
func arrayOfNils(k string, n int) []byte {
	var b []byte
	if k != "" {
		b = append(b, 0x81, 0xa0|byte(len(k)))
		b = append(b, k...)
	}
	b = append(b, 0xdd, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	return append(b, bytes.Repeat([]byte{0xc0}, n)...)
}

// Elements of one byte (nil) that become whole Go values are counted at
// their Go size, wherever the type puts them; Seq alone passes them all.
func TestSeqAsRefusesExpansion(t *testing.T) {
	const n = 64 << 10
	cases := []struct {
		name string
		b    []byte
		t    reflect.Type
	}{
		{"slice of wide structs", arrayOfNils("", n), reflect.TypeFor[[]wideElem]()},
		{"through a pointer", arrayOfNils("", n), reflect.TypeFor[*[]wideElem]()},
		{"a struct field", arrayOfNils("Wides", n), reflect.TypeFor[objLike]()},
		{"an inlined embedded field", arrayOfNils("Wide", n), reflect.TypeFor[outer]()},
		{"as an array", append([]byte{0x92, 0x01}, arrayOfNils("", n)...), reflect.TypeFor[asArray]()},
		{"map values", append([]byte{0xdf, 0, 1, 0, 0}, bytes.Repeat([]byte{0x01, 0xc0}, 1<<16)...), reflect.TypeFor[outer]()},
	}
	cases[5].b = append([]byte{0x81, 0xa1, 'M'}, cases[5].b...)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.NoError(t, Seq(tc.b))
			err := SeqAs(tc.b, tc.t)
			require.ErrorContains(t, err, "would allocate at least")
			require.ErrorContains(t, err, tc.t.String())
		})
	}
}

// Real values pass, and so do fields msgpack/v5 skips or a type decodes
// itself.
func TestSeqAsAcceptsRealValues(t *testing.T) {
	const n = 64 << 10
	ok := []struct {
		name string
		v    any
	}{
		{"wide elements", make([]wideElem, 100)},
		{"empty strings", make([]string, n)},
		{"small ints", make([]int64, n)},
		{"interfaces", make([]any, n)},
		{"a map", map[string]int{"a": 1, "b": 2}},
		{"objects", []objLike{{Coll: 1, Index: []byte{1}, State: make([]byte, 100), Ptrs: []*wideElem{nil, {S: "x"}}}}},
		{"outer", outer{embedded: embedded{Wide: make([]wideElem, 3)}, Name: "x", M: map[int32][512]byte{1: {}}}},
		{"as an array", asArray{Kind: 1, Items: make([]wideElem, 2)}},
		{"a linked list", func() *linked {
			var l *linked
			for i := range 200 {
				l = &linked{V: i, Next: l}
			}
			return l
		}()},
		{"a tree", tree{Name: "r", Kids: []tree{{Name: "a"}, {Name: "b", Kids: []tree{{Name: "c"}}}}}},
	}
	for _, tc := range ok {
		t.Run(tc.name, func(t *testing.T) {
			b, err := msgpack.Marshal(tc.v)
			require.NoError(t, err)
			require.NoError(t, SeqAs(b, reflect.TypeOf(tc.v)))
			require.NoError(t, SeqAs(b, reflect.PointerTo(reflect.TypeOf(tc.v))))
		})
	}
	require.NoError(t, SeqAs(arrayOfNils("", n), nil), "no type: lengths and nesting only, as Seq")
	require.ErrorContains(t, SeqAs([]byte{0xdd, 0, 1, 0, 0}, nil), "claims 65536 values")
	skipped := arrayOfNils("Skip", n) // a "-" field: msgpack/v5 skips it
	require.NoError(t, SeqAs(skipped, reflect.TypeFor[outer]()))
	require.NoError(t, SeqAs(arrayOfNils("", n), reflect.TypeFor[selfDecoding]()), "a type's own decoder: counted as its bytes")
	require.NoError(t, SeqAs(arrayOfNils("", n), reflect.TypeFor[[]*wideElem]()), "nil pointers are 8 bytes")
	// Empty maps: each one a map made (48 bytes) for one byte.
	emptyMaps := append([]byte{0xdd, 0, 1, 0, 0}, bytes.Repeat([]byte{0x80}, 1<<16)...)
	require.NoError(t, SeqAs(emptyMaps, reflect.TypeFor[[]map[string]int]()), "64 bytes a byte: at the limit")
	emptyMaps = append([]byte{0xdd, 0, 0x10, 0, 0}, bytes.Repeat([]byte{0x80}, 1<<20)...)
	require.ErrorContains(t, SeqAs(emptyMaps, reflect.TypeFor[[]any]()), "would allocate at least", "16 for the slot, 48 for the map")
}
