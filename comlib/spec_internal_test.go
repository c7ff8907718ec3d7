package comlib

import (
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/actor/codec"
)

// TestSpecDefaults: each kind's zero parameters get their defaults in
// withDefaults, what is given is kept, and Window and Every of
// EachToMany, and Window of Streaming, get one only with Tune (Streaming
// with Scored has none: the program ends the evaluations).
func TestSpecDefaults(t *testing.T) {
	stream := func(o StreamOptions) Spec { return Spec{Kind: "streaming", Streaming: StreamSpec{StreamOptions: o}} }
	e2m := func(e EachToManySpec) Spec { return Spec{Kind: "each-to-many", EachToMany: e} }
	for _, c := range []struct {
		name     string
		in, want Spec
	}{
		{"direct", Spec{Kind: "direct"}, Spec{Kind: "direct"}},
		{"streaming", stream(StreamOptions{}), stream(StreamOptions{MaxMsgs: 64, MaxBytes: 32 << 10, Large: 8 << 10})},
		{"streaming given", stream(StreamOptions{MaxMsgs: 3, MaxBytes: 5, Large: 7, Period: time.Millisecond, NoIdleFlush: true}),
			stream(StreamOptions{MaxMsgs: 3, MaxBytes: 5, Large: 7, Period: time.Millisecond, NoIdleFlush: true})},
		{"streaming negative kept", stream(StreamOptions{MaxMsgs: -1}), stream(StreamOptions{MaxMsgs: -1, MaxBytes: 32 << 10, Large: 8 << 10})},
		{"streaming tune", stream(StreamOptions{Tune: true}), stream(StreamOptions{MaxMsgs: 64, MaxBytes: 32 << 10, Large: 8 << 10, Tune: true, Window: 256})},
		{"streaming tune window", stream(StreamOptions{Tune: true, Window: 9}), stream(StreamOptions{MaxMsgs: 64, MaxBytes: 32 << 10, Large: 8 << 10, Tune: true, Window: 9})},
		{"streaming tune scored", stream(StreamOptions{Tune: true, Scored: true}),
			stream(StreamOptions{MaxMsgs: 64, MaxBytes: 32 << 10, Large: 8 << 10, Tune: true, Scored: true})},
		{"streaming window without tune", stream(StreamOptions{Window: 5}), stream(StreamOptions{MaxMsgs: 64, MaxBytes: 32 << 10, Large: 8 << 10, Window: 5})},
		{"meshstreaming", Spec{Kind: "streaming", Streaming: StreamSpec{Mesh: true}},
			Spec{Kind: "streaming", Streaming: StreamSpec{StreamOptions: StreamOptions{MaxMsgs: 64, MaxBytes: 32 << 10, Large: 8 << 10}, Mesh: true}}},
		{"each-to-many", e2m(EachToManySpec{}), e2m(EachToManySpec{Router: "direct"})},
		{"each-to-many given", e2m(EachToManySpec{Router: "tree", Degree: 3, CountOnly: true, Sources: 7}),
			e2m(EachToManySpec{Router: "tree", Degree: 3, CountOnly: true, Sources: 7})},
		{"each-to-many tune", e2m(EachToManySpec{Router: "group", Tune: true}), e2m(EachToManySpec{Router: "group", Tune: true, Window: 8, Every: 16})},
		{"each-to-many tune given", e2m(EachToManySpec{Router: "group", Omega: 2, Tune: true, Window: 3, Every: 1}),
			e2m(EachToManySpec{Router: "group", Omega: 2, Tune: true, Window: 3, Every: 1})},
		{"each-to-many tune negative kept", e2m(EachToManySpec{Router: "group", Tune: true, Window: -2, Every: -1}),
			e2m(EachToManySpec{Router: "group", Tune: true, Window: -2, Every: -1})},
		{"each-to-many every without tune", e2m(EachToManySpec{Every: 4, Window: 2}), e2m(EachToManySpec{Router: "direct", Every: 4, Window: 2})},
		{"multicast", Spec{Kind: "multicast"}, Spec{Kind: "multicast", Multicast: MulticastOptions{Kind: "tree"}}},
		{"multicast given", Spec{Kind: "multicast", Multicast: MulticastOptions{Kind: "ring", Degree: 3, Rings: 2, Chunk: 9}},
			Spec{Kind: "multicast", Multicast: MulticastOptions{Kind: "ring", Degree: 3, Rings: 2, Chunk: 9}}},
		{"unknown kind untouched", Spec{Kind: "bogus", EachToMany: EachToManySpec{Tune: true}}, Spec{Kind: "bogus", EachToMany: EachToManySpec{Tune: true}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := c.in.withDefaults()
			require.Equal(t, c.want, got)
			require.Equal(t, got, got.withDefaults(), "applying the defaults twice changes nothing")
		})
	}
}

// TestSpecFromConstructors: the constructors copy the options into the
// kind's field and leave the defaults to withDefaults, so a Strategy and
// the Spec a name or a selection file gives for the same strategy resolve
// alike.
func TestSpecFromConstructors(t *testing.T) {
	require.Equal(t, Spec{Kind: "direct"}, Direct().spec())
	o := StreamOptions{MaxMsgs: 3, Period: time.Millisecond, Tune: true, Scored: true}
	require.Equal(t, Spec{Kind: "streaming", Streaming: StreamSpec{StreamOptions: o}}, Streaming(o).spec())
	require.Equal(t, Spec{Kind: "streaming", Streaming: StreamSpec{StreamOptions: o, Mesh: true}}, MeshStreaming(o).spec())
	require.Equal(t, Spec{Kind: "each-to-many", EachToMany: EachToManySpec{Router: "group", Degree: 2, Omega: 3, CountOnly: true, Tune: true, Window: 4, Every: 5}},
		EachToMany(EachToManyOptions{Router: "group", Degree: 2, Omega: 3, CountOnly: true, Tune: true, Window: 4, Every: 5}).spec())
	m := MulticastOptions{Kind: "multiring", Rings: 3, Chunk: 100}
	require.Equal(t, Spec{Kind: "multicast", Multicast: m}, Multicast(m).spec())
	require.Equal(t, Spec{Kind: "auto"}, autoStrategy{}.spec())

	for _, name := range []string{"direct", "streaming", "meshstreaming", "multicast", "multicast:ring", "each-to-many", "each-to-many:group"} {
		sp, err := ParseStrategy(name)
		require.NoError(t, err, name)
		if sp.Kind == "each-to-many" {
			sp.EachToMany.Sources = 1
		}
		_, err = sp.resolve(4)
		require.NoError(t, err, name)
	}
}

// TestParseStrategySpec: names give the kind and its parameters, with the
// defaults left zero; an unknown name is an error naming it and listing
// the valid ones.
func TestParseStrategySpec(t *testing.T) {
	for _, c := range []struct {
		name string
		want Spec
	}{
		{"direct", Spec{Kind: "direct"}},
		{"streaming", Spec{Kind: "streaming"}},
		{"meshstreaming", Spec{Kind: "streaming", Streaming: StreamSpec{Mesh: true}}},
		{"multicast", Spec{Kind: "multicast"}},
		{"multicast:ring", Spec{Kind: "multicast", Multicast: MulticastOptions{Kind: "ring"}}},
		{"multicast:star", Spec{Kind: "multicast", Multicast: MulticastOptions{Kind: "star"}}}, // refused by New
		{"each-to-many", Spec{Kind: "each-to-many"}},
		{"each-to-many:group", Spec{Kind: "each-to-many", EachToMany: EachToManySpec{Router: "group"}}},
	} {
		got, err := ParseStrategy(c.name)
		require.NoError(t, err, c.name)
		require.Equal(t, c.want, got, c.name)
	}
	for _, name := range []string{"fastest", "", "auto", "each-to-many-group", "Direct"} {
		_, err := ParseStrategy(name)
		require.ErrorContains(t, err, `comlib: unknown strategy "`+name+`" (valid: direct, streaming, meshstreaming, multicast:KIND, each-to-many:ROUTER)`)
	}
}

// TestSpecResolveErrors: what New refuses, once the defaults are applied,
// with errors that name the parameter and its value.
func TestSpecResolveErrors(t *testing.T) {
	e2m := func(e EachToManySpec) Spec {
		if e.Sources == 0 {
			e.Sources = 1
		}
		return Spec{Kind: "each-to-many", EachToMany: e}
	}
	for _, c := range []struct {
		sp   Spec
		want string
	}{
		{Spec{Kind: "nosuch"}, `comlib: unknown strategy "nosuch" (valid: auto, direct, each-to-many, multicast, streaming)`},
		{Spec{Kind: "auto"}, "make it with New(ctx, Auto(...))"},
		{Spec{Kind: "streaming", Streaming: StreamSpec{StreamOptions: StreamOptions{MaxBytes: -4}}}, "streaming needs positive caps (MaxMsgs 64, MaxBytes -4, Large 8192)"},
		{Spec{Kind: "streaming", Streaming: StreamSpec{StreamOptions: StreamOptions{Period: -time.Second}}}, "a period ≥ 0 (-1s)"},
		{Spec{Kind: "streaming", Streaming: StreamSpec{StreamOptions: StreamOptions{Tune: true, Window: -1}}}, "tuning window of at least 1 message (Window -1)"},
		{Spec{Kind: "streaming", Streaming: StreamSpec{StreamOptions: StreamOptions{Scored: true}}}, "Scored says who scores the tuning's evaluations; it needs Tune"},
		{e2m(EachToManySpec{Router: "mesh", Omega: 2}), `Omega=2 is the group router's fan-out; router "mesh" has none`},
		{e2m(EachToManySpec{Tune: true}), `Tune tunes the group router's fan-out ω; router "direct" has none`},
		{e2m(EachToManySpec{Router: "group", Tune: true, Window: -2}), "segments of at least 1 iteration (Window -2)"},
		{e2m(EachToManySpec{Router: "group", Every: 4}), "Every=4 says how often a tuned ω is re-checked; it needs Tune"},
		{e2m(EachToManySpec{Router: "group", Tune: true, Every: -1}), "Every=-1, want segments per reported one ≥ 1"},
		{e2m(EachToManySpec{Router: "ring"}), `comlib: each-to-many: route: unknown router "ring"`},
		{Spec{Kind: "each-to-many"}, "each-to-many needs Sources"},
		{Spec{Kind: "multicast", Multicast: MulticastOptions{Kind: "star"}}, `comlib: multicast: mcast: unknown multicast kind "star"`},
		{Spec{Kind: "multicast", Multicast: MulticastOptions{Chunk: -1}}, "multicast chunk size -1"},
		{Spec{Kind: "multicast", Multicast: MulticastOptions{Degree: 1}}, "multicast tree degree 1: must be ≥ 2"},
		{Spec{Kind: "multicast", Multicast: MulticastOptions{Rings: -1}}, "multicast rings -1: must be ≥ 1"},
	} {
		_, err := c.sp.resolve(4)
		require.ErrorContains(t, err, c.want, "%+v", c.sp)
	}
}

// TestSpecTravels: a resolved Spec of every kind comes back equal through
// the runtime's codec, as the strategy table carries it to other
// processes.
func TestSpecTravels(t *testing.T) {
	in := tableMsg{Version: 3, IDs: []uint32{1, 2, 3, 4, 5}, Specs: []Spec{
		{Kind: "direct"},
		{Kind: "streaming", Streaming: StreamSpec{StreamOptions: StreamOptions{MaxMsgs: 3, MaxBytes: 4, Large: 5, Period: time.Millisecond, NoIdleFlush: true, Tune: true, Window: 6}, Mesh: true}},
		{Kind: "each-to-many", EachToMany: EachToManySpec{Router: "group", Degree: 2, Omega: 3, Sources: 77, CountOnly: true, Tune: true, Window: 4, Every: 5}},
		{Kind: "multicast", Multicast: MulticastOptions{Kind: "multiring", Degree: 3, Rings: 2, Chunk: 100}},
		{Kind: "auto", Auto: &AutoSpec{Tree: "{}", CommSize: 4, CommType: "intra", Collective: "alltoall", MsgSize: 8, Parts: []uint32{1, 2}}},
	}}
	c := codec.For[tableMsg]()
	b, err := codec.Append(c, nil, &in)
	require.NoError(t, err)
	var out tableMsg
	require.NoError(t, c.DecodeValue(b, reflect.ValueOf(&out)))
	require.Equal(t, in, out)
}
