package core

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
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

func TestPackErrorAndTransient(t *testing.T) {
	type lossy struct {
		Chare[stInner]
		A     int
		cache map[string]int
		Label fmt.Stringer
		In    stInner
	}
	rt := reflect.TypeFor[lossy]()
	ty := &Type{Name: rt.String(), rtype: rt, losses: stateLosses(rt)}
	ty.setPlan(nil)
	require.False(t, ty.Packs())
	err := ty.PackError("migration")
	require.Error(t, err)
	for _, f := range []string{"core.lossy", "migration", "cache", "Label", "In.lost", `chare.Transient("cache", "Label", "In.lost")`} {
		require.ErrorContains(t, err, f)
	}
	require.NotContains(t, err.Error(), " A ")

	plan, err := checkTransient(ty, []string{"cache", "Label"})
	require.NoError(t, err)
	ty.transient = []string{"cache", "Label"}
	ty.setPlan(plan)
	require.ErrorContains(t, ty.PackError("migration"), "In.lost", "a field not declared is still refused")
	ty.transient = append(ty.transient, "In") // covers In.lost
	ty.setPlan(plan)
	require.NoError(t, ty.PackError("migration"))
	require.True(t, ty.Packs())

	_, err = checkTransient(ty, []string{"A", "In.Kept"})
	require.NoError(t, err, "a field that packs whole may be left out too")
	_, err = checkTransient(ty, []string{"cahce"})
	require.ErrorContains(t, err, `Transient("cahce")`)
	require.ErrorContains(t, err, "no field cahce")
	require.ErrorContains(t, err, "would not survive packing: cache, Label, In.lost")
	_, err = checkTransient(ty, []string{"Label.x"})
	require.ErrorContains(t, err, "through an interface")

	pr := reflect.TypeFor[stPacker]()
	pk := &Type{Name: pr.String(), rtype: pr, losses: stateLosses(pr), packer: reflect.PointerTo(pr).Implements(packerType)}
	pk.setPlan(nil)
	require.NotEmpty(t, pk.losses)
	require.NoError(t, pk.PackError("migration"), "a Packer packs itself")
}

// TestPackErrorSaysWhatApplies: the refusal tells, for each field, what
// would make it survive — "export it" only where exporting would
// (issue 27, item 2).
func TestPackErrorSaysWhatApplies(t *testing.T) {
	type advised struct {
		count  int
		label  fmt.Stringer
		Label  fmt.Stringer
		Any    any
		Hook   func()
		ByAny  map[any]int
		Nested stInner
	}
	rt := reflect.TypeFor[advised]()
	ty := &Type{Name: rt.String(), rtype: rt, losses: stateLosses(rt)}
	ty.setPlan(nil)
	err := ty.PackError("a checkpoint")
	require.Error(t, err)
	parts := map[string]string{}
	for _, p := range strings.Split(err.Error(), "; ") {
		for _, f := range []string{"count", "label", "Label", "Any", "Hook", "ByAny[key]", "Nested.lost"} {
			if strings.Contains(p, f+" (") {
				parts[f] = p
			}
		}
	}
	require.Len(t, parts, 7, "every field is named: %v", err)
	require.Equal(t, parts["count"], parts["Nested.lost"], "fields with the same remedy are named together")
	require.Contains(t, parts["count"], "are unexported")
	require.Contains(t, parts["count"], "export them")
	require.Contains(t, parts["label"], "is unexported, and its type would not pack either")
	require.NotContains(t, parts["label"], "export it", "exporting an interface field does not help")
	for _, f := range []string{"Label", "Any", "Hook", "ByAny[key]"} {
		require.NotContains(t, parts[f], "export", "%s is exported already", f)
		require.Contains(t, parts[f], "Transient", f)
	}
	require.Contains(t, parts["Label"], "give it a concrete type")
	require.Contains(t, parts["Any"], "untyped")
	require.Contains(t, parts["Hook"], "cannot be packed")
	require.Contains(t, parts["ByAny[key]"], "declare ByAny Transient")
	require.NotContains(t, parts["ByAny[key]"], "give it a concrete type", "the map's keys are the trouble")
	require.ErrorContains(t, err, `chare.Transient("count", "label", "Label", "Any", "Hook", "ByAny", "Nested.lost")`)
}

type trStats struct {
	Count int
	Last  any
}

type trItem struct {
	N    int
	Note fmt.Stringer
}

type trElem struct {
	Chare[trElem]
	Kept  int
	Label fmt.Stringer
	Any   any
	Cache map[int]string
	Stats trStats
	Items []trItem
	Ptr   *trStats
	ByKey map[string]trItem
	Arr   [2]trItem
	cache []int
}

func init() {
	Register[trElem](Transient("Label", "Any", "Cache", "Stats.Last", "Items[].Note", "Ptr.Last", "ByKey[].Note", "Arr[].Note", "cache"))
}

// TestTransientIsNotPacked: a Transient field is never packed and comes
// back as its zero value, however deep; the object packed is not changed
// (issue 27, item 2: a non-nil fmt.Stringer used to make unpacking fail,
// and an any came back as int8).
func TestTransientIsNotPacked(t *testing.T) {
	ty, err := TypeOf[trElem]()
	require.NoError(t, err)
	require.NoError(t, ty.PackError("migration"))
	orig := &trElem{
		Kept: 7, Label: stStringer(1), Any: 5, Cache: map[int]string{1: "x"},
		Stats: trStats{Count: 3, Last: stStringer(2)},
		Items: []trItem{{N: 1, Note: stStringer(3)}, {N: 2}},
		Ptr:   &trStats{Count: 4, Last: "s"},
		ByKey: map[string]trItem{"k": {N: 5, Note: stStringer(4)}},
		Arr:   [2]trItem{{N: 6, Note: stStringer(5)}, {N: 7}},
		cache: []int{1},
	}
	b, err := PackObject(orig)
	require.NoError(t, err)
	var got trElem
	require.NoError(t, UnpackObject(&got, b))
	require.Equal(t, trElem{
		Kept:  7,
		Stats: trStats{Count: 3},
		Items: []trItem{{N: 1}, {N: 2}},
		Ptr:   &trStats{Count: 4},
		ByKey: map[string]trItem{"k": {N: 5}},
		Arr:   [2]trItem{{N: 6}, {N: 7}},
	}, got)

	// The object itself keeps every field.
	require.Equal(t, stStringer(1), orig.Label)
	require.Equal(t, 5, orig.Any)
	require.Equal(t, stStringer(2), orig.Stats.Last)
	require.Equal(t, stStringer(3), orig.Items[0].Note)
	require.Equal(t, "s", orig.Ptr.Last)
	require.Equal(t, stStringer(4), orig.ByKey["k"].Note)
	require.Equal(t, stStringer(5), orig.Arr[0].Note)
	require.Equal(t, []int{1}, orig.cache)
	require.Equal(t, map[int]string{1: "x"}, orig.Cache)

	// Nil pointers, slices and maps on the way are left as they are.
	b, err = PackObject(&trElem{Kept: 1, Any: "a"})
	require.NoError(t, err)
	got = trElem{}
	require.NoError(t, UnpackObject(&got, b))
	require.Equal(t, trElem{Kept: 1}, got)
}

func TestTransientNames(t *testing.T) {
	rt := reflect.TypeFor[trElem]()
	for _, c := range []struct {
		name   string
		packed bool
		err    string
	}{
		{"Kept", true, ""},
		{"cache", false, ""},
		{"Stats.Last", true, ""},
		{"Items[].Note", true, ""},
		{"ByKey[]", true, ""},
		{"Ptr.Count", true, ""},
		{"Base", false, ""}, // the runtime's own, never packed
		{"Nope", false, "has no field Nope"},
		{"Label.X", false, "through an interface"},
		{"Kept[]", false, "not a slice"},
		{"ByKey[key]", false, "name the map itself"},
		{"Items[0]", false, "write []"},
		{"", false, "empty"},
	} {
		_, packed, err := resolveTransient(rt, c.name)
		if c.err != "" {
			require.ErrorContains(t, err, c.err, c.name)
			continue
		}
		require.NoError(t, err, c.name)
		require.Equal(t, c.packed, packed, c.name)
	}
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
	require.ErrorContains(t, err, "core.labelled")
	require.ErrorContains(t, err, "field Label (fmt.Stringer)")

	require.ErrorContains(t, UnpackObject(&got, []byte{0xc1}), "core.labelled")
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

// A field of a type that a program names as chare's is named so in a
// packing error, though the type lives in internal/core.
func TestTypeNameAsProgramsWriteIt(t *testing.T) {
	require.Equal(t, "chare.Callback", typeName(reflect.TypeFor[Callback]()))
	require.Equal(t, "map[string][]*chare.Callback", typeName(reflect.TypeFor[map[string][]*Callback]()))
	require.Equal(t, "[]int", typeName(reflect.TypeFor[[]int]()))
	require.Equal(t, "reflect.Value", typeName(reflect.TypeFor[reflect.Value]()))
}
