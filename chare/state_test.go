package chare

import (
	"bytes"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"
)

// What packing loses (issue 14, item 8): the fields that a msgpack round
// trip drops or changes, as Register and Checkpoint report them.

type stInner struct {
	Kept int
	lost int
}

type stEmbedded struct {
	Shown  int
	hidden int
}

type stNode struct {
	Next *stNode
	note string
}

type stPacker struct {
	cache map[string]int
}

func (*stPacker) Pack() ([]byte, error) { return nil, nil }
func (*stPacker) Unpack([]byte) error   { return nil }

type stStringer int

func (stStringer) String() string { return "s" }

func TestStateLosses(t *testing.T) {
	cases := []struct {
		name string
		typ  reflect.Type
		want []string // lossy paths, in field order
	}{
		{"plain exported fields", reflect.TypeFor[struct {
			A int
			B []string
			C map[int]float64
			D *stInner `msgpack:"-"`
		}](), nil},
		{"unexported", reflect.TypeFor[struct {
			A int
			b int
		}](), []string{"b"}},
		{"any and interfaces", reflect.TypeFor[struct {
			A any
			S fmt.Stringer
		}](), []string{"A", "S"}},
		{"funcs, channels and the unpackable", reflect.TypeFor[struct {
			F func()
			C chan int
			U uintptr
			X complex128
		}](), []string{"F", "C", "U", "X"}},
		{"nested", reflect.TypeFor[struct {
			In    stInner
			Ins   []stInner
			ByKey map[string]*stInner
			Keys  map[any]int
		}](), []string{"In.lost", "Ins[].lost", "ByKey[].lost", "Keys[key]"}},
		{"embedded structs are inlined", reflect.TypeFor[struct {
			stEmbedded
			Chare[stInner]
		}](), []string{"hidden"}},
		{"recursive types end", reflect.TypeFor[stNode](), []string{"note"}},
		{"times, proxies, callbacks and futures pack", reflect.TypeFor[struct {
			T  time.Time
			P  Proxy[stInner]
			CB Callback
			F  Future[int]
			D  time.Duration
		}](), nil},
		{"a tag leaves a field out on purpose", reflect.TypeFor[struct {
			c map[string]int `msgpack:"-"`
		}](), nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			for _, l := range stateLosses(c.typ) {
				got = append(got, l.path)
			}
			require.Equal(t, c.want, got)
		})
	}
}

func TestCheckStateAndTransient(t *testing.T) {
	type lossy struct {
		Chare[stInner]
		A     int
		cache map[string]int
		Label fmt.Stringer
		In    stInner
	}
	rt := reflect.TypeFor[lossy]()
	ty := &Type{Name: rt.String(), rtype: rt, losses: stateLosses(rt)}
	err := ty.checkState("migration")
	require.Error(t, err)
	for _, f := range []string{"chare.lossy", "cache", "Label", "In.lost", `chare.Transient("cache", "Label", "In.lost")`} {
		require.ErrorContains(t, err, f)
	}
	require.NotContains(t, err.Error(), " A ")

	ty.transient = []string{"cache", "Label"}
	require.ErrorContains(t, ty.checkState("migration"), "In.lost", "a field not declared is still refused")
	ty.transient = append(ty.transient, "In") // covers In.lost
	require.NoError(t, ty.checkState("migration"))

	require.NoError(t, checkTransient(ty, []string{"cache", "In"}))
	require.ErrorContains(t, checkTransient(ty, []string{"A"}), `Transient("A")`, "a field that packs whole")
	require.ErrorContains(t, checkTransient(ty, []string{"cahce"}), "its lossy fields: cache, Label, In.lost")

	pr := reflect.TypeFor[stPacker]()
	pk := &Type{Name: pr.String(), rtype: pr, losses: stateLosses(pr), packer: reflect.PointerTo(pr).Implements(packerType)}
	require.NotEmpty(t, pk.losses)
	require.NoError(t, pk.checkState("migration"), "a Packer packs itself")
}

// TestUnpackNamesTheField: a state that does not unpack is an error naming
// the type and the field, not a panic (issue 14, item 6).
func TestUnpackNamesTheField(t *testing.T) {
	type labelled struct {
		N     int
		Label fmt.Stringer
	}
	b, err := PackObject(&labelled{N: 3, Label: stStringer(1)})
	require.NoError(t, err, "it packs")
	var got labelled
	err = UnpackObject(&got, b)
	require.Error(t, err)
	require.ErrorContains(t, err, "chare.labelled")
	require.ErrorContains(t, err, "field Label (fmt.Stringer)")

	require.ErrorContains(t, UnpackObject(&got, []byte{0xc1}), "chare.labelled")
}

// TestTimeAfterPacking documents what a time.Time keeps: its instant, not
// its zone nor its monotonic reading.
func TestTimeAfterPacking(t *testing.T) {
	type stamped struct{ At time.Time }
	now := time.Now().In(time.FixedZone("X", 5*3600))
	b, err := PackObject(&stamped{At: now})
	require.NoError(t, err)
	var got stamped
	require.NoError(t, UnpackObject(&got, b))
	require.True(t, got.At.Equal(now), "the instant survives")
	require.Equal(t, time.Local, got.At.Location(), "the zone does not")
	require.Equal(t, now.Round(0).In(time.Local), got.At, "nor the monotonic reading (Round(0) strips it)")
}

// twoValues encodes itself as two msgpack values (EncodeMulti, as in
// msgpack's own CustomEncoder example).
type twoValues struct {
	S string
	N int
}

func (v *twoValues) EncodeMsgpack(enc *msgpack.Encoder) error { return enc.EncodeMulti(v.S, v.N) }
func (v *twoValues) DecodeMsgpack(dec *msgpack.Decoder) error { return dec.DecodeMulti(&v.S, &v.N) }

// TestUnpackStateChecksBeforeDecoding: state that a field's own encoder
// wrote as several values unpacks (its bytes are a value and then more);
// bytes nested deep enough to exhaust the stack are refused before
// anything decodes them, the explanation of a failure included (it used
// to decode them again, unchecked: a fatal stack overflow).
func TestUnpackStateChecksBeforeDecoding(t *testing.T) {
	type withPair struct {
		P    twoValues
		Tail int
	}
	want := withPair{P: twoValues{S: "s", N: 7}, Tail: 9}
	b, err := msgpack.Marshal(&want)
	require.NoError(t, err)
	var got withPair
	require.NoError(t, unpackState(&got, b))
	require.Equal(t, want, got)

	deep := append([]byte{0x81, 0xa1, 'A'}, bytes.Repeat([]byte{0x91}, 30_000_000)...)
	var st struct{ A any }
	err = unpackState(&st, append(deep, 0x00))
	require.ErrorContains(t, err, "nested deeper than")
}
