package comlib_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/comlib"
	"github.com/charmgo/charm/comlib/selection"
)

func container(key, value string, params ...string) selection.Container {
	c := selection.Container{Key: key, Value: value}
	for _, p := range params {
		n, v, _ := strings.Cut(p, "=")
		c.Params = append(c.Params, selection.Param{Name: n, Value: v})
	}
	return c
}

// TestS02_ComlibParsesContainers: the selection engine hands containers
// through opaque; comlib turns them into strategies, and refuses what it
// does not know with an error that says what.
func TestS02_ComlibParsesContainers(t *testing.T) {
	for _, tc := range []struct {
		c    selection.Container
		want comlib.Spec
	}{
		{container("strategy", "direct"), comlib.Spec{Kind: "direct"}},
		{container("strategy", "eachtomany"), comlib.Spec{Kind: "each-to-many"}}, // Router: the default, when made
		{container("strategy", "each-to-many", "router=tree", "degree=3", "countonly=true"),
			comlib.Spec{Kind: "each-to-many", EachToMany: comlib.EachToManySpec{Router: "tree", Degree: 3, CountOnly: true}}},
		{container("router", "mesh"), comlib.Spec{Kind: "each-to-many", EachToMany: comlib.EachToManySpec{Router: "mesh"}}},
		{container("router", "group", "omega=3"), comlib.Spec{Kind: "each-to-many", EachToMany: comlib.EachToManySpec{Router: "group", Omega: 3}}},
		{container("router", "group", "tune=true"), comlib.Spec{Kind: "each-to-many", EachToMany: comlib.EachToManySpec{Router: "group", Tune: true}}}, // Window, Every: the defaults, when made
		{container("strategy", "eachtomany", "router=group", "tune=true", "window=3"),
			comlib.Spec{Kind: "each-to-many", EachToMany: comlib.EachToManySpec{Router: "group", Tune: true, Window: 3}}},
		{container("router", "group", "tune=true", "every=4"), comlib.Spec{Kind: "each-to-many", EachToMany: comlib.EachToManySpec{Router: "group", Tune: true, Every: 4}}},
		{container("router", "hypercube", "degree=4"), comlib.Spec{Kind: "each-to-many", EachToMany: comlib.EachToManySpec{Router: "hypercube", Degree: 4}}},
		{container("strategy", "streaming", "maxmsgs=8", "period=2ms", "idle=false"),
			comlib.Spec{Kind: "streaming", Streaming: comlib.StreamSpec{StreamOptions: comlib.StreamOptions{MaxMsgs: 8, Period: 2 * time.Millisecond, NoIdleFlush: true}}}},
		{container("strategy", "streaming", "idle=true"), comlib.Spec{Kind: "streaming"}},
		{container("strategy", "meshstreaming", "maxbytes=4096", "large=1024"),
			comlib.Spec{Kind: "streaming", Streaming: comlib.StreamSpec{StreamOptions: comlib.StreamOptions{MaxBytes: 4096, Large: 1024}, Mesh: true}}},
		{container("strategy", "streaming", "tune=true"),
			comlib.Spec{Kind: "streaming", Streaming: comlib.StreamSpec{StreamOptions: comlib.StreamOptions{Tune: true}}}},
		{container("strategy", "streaming", "maxmsgs=8", "period=2ms", "tune=true", "window=32"),
			comlib.Spec{Kind: "streaming", Streaming: comlib.StreamSpec{StreamOptions: comlib.StreamOptions{MaxMsgs: 8, Period: 2 * time.Millisecond, Tune: true, Window: 32}}}},
		{container("strategy", "meshstreaming", "tune=true", "scored=true"),
			comlib.Spec{Kind: "streaming", Streaming: comlib.StreamSpec{StreamOptions: comlib.StreamOptions{Tune: true, Scored: true}, Mesh: true}}},
		{container("strategy", "streaming", "tune=false", "scored=false"), comlib.Spec{Kind: "streaming"}},
		{container("strategy", "multicast"), comlib.Spec{Kind: "multicast"}}, // Kind: the default, when made
		{container("strategy", "multicast", "kind=multiring", "rings=3", "chunk=65536"),
			comlib.Spec{Kind: "multicast", Multicast: comlib.MulticastOptions{Kind: "multiring", Rings: 3, Chunk: 65536}}},
	} {
		t.Run(tc.c.String(), func(t *testing.T) {
			got, err := comlib.ContainerSpec(tc.c)
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
	for _, tc := range []struct {
		c    selection.Container
		want string
	}{
		{container("strategy", "bogus"), `unknown strategy "bogus" (valid: direct, eachtomany`},
		{container("schedule", "pairwise"), `unknown container "schedule"`},
		{container("strategy", "direct", "router=mesh"), "takes no parameters, not router"},
		{container("strategy", "eachtomany", "chunk=4"), `unknown parameter "chunk" (valid: router, degree, countonly, omega, tune, window, every)`},
		{container("router", "mesh", "tune=true"), `Tune tunes the group router's fan-out ω; router "mesh" has none`},
		{container("router", "group", "tune=yes"), `tune=yes: "yes" is not true or false`},
		{container("router", "group", "window=4"), "window=4 is the length of a tuning segment; it needs tune=true"},
		{container("router", "group", "tune=true", "window=0"), "window=0: 0 is out of range (1 to"},
		{container("router", "group", "every=4"), "Every=4 says how often a tuned ω is re-checked; it needs Tune"},
		{container("router", "group", "tune=true", "every=0"), "every=0: 0 is out of range (1 to"},
		{container("router", "nosuch"), `unknown router "nosuch"`},
		{container("strategy", "eachtomany", "router=ring"), `unknown router "ring"`},
		{container("strategy", "eachtomany", "router="), `strategy=eachtomany: route: unknown router ""`},
		{container("router", ""), `router=: route: unknown router ""`},
		{container("strategy", "eachtomany", "router=tree", "degree=four"), `degree=four: "four" is not a number`},
		{container("strategy", "eachtomany", "router=tree", "degree=1"), "degree=1: 1 is out of range (2 to"},
		{container("strategy", "eachtomany", "router=tree", "degree=-3"), `"-3" is not a number`},
		{container("strategy", "eachtomany", "degree=99999999999999999999"), "is not a number"},
		{container("strategy", "eachtomany", "omega=4"), "Omega=4 is the group router's fan-out"},
		{container("strategy", "eachtomany", "omega=x"), `"x" is not a number`},
		{container("strategy", "multicast", "chunk=64KiB"), `chunk=64KiB: "64KiB" is not a number`},
		{container("strategy", "multicast", "kind=star"), `unknown multicast kind "star"`},
		{container("strategy", "multicast", "kind="), `strategy=multicast: mcast: unknown multicast kind ""`},
		{container("strategy", "streaming", "period=soon"), `"soon" is not a duration`},
		{container("strategy", "streaming", "idle=maybe"), `"maybe" is not true or false`},
		{container("strategy", "streaming", "maxmsgs="), `"" is not a number`},
		{container("strategy", "streaming", "omega=4"), `unknown parameter "omega" (valid: maxmsgs, maxbytes, large, period, idle, tune, window, scored)`},
		{container("strategy", "streaming", "tune=often"), `tune=often: "often" is not true or false`},
		{container("strategy", "streaming", "tune=true", "scored=1x"), `scored=1x: "1x" is not true or false`},
		{container("strategy", "streaming", "scored=true"), "scored=true says the program scores the tuning's evaluations; it needs tune=true"},
		{container("strategy", "streaming", "window=64"), "window=64 is the number of messages per tuning evaluation; it needs tune=true"},
		{container("strategy", "streaming", "tune=true", "window=0"), "window=0: 0 is out of range (1 to"},
		{container("strategy", "meshstreaming", "tune=true", "scored=true", "window=64"), "strategy=meshstreaming: window=64 is not used with scored=true"},
	} {
		t.Run(tc.c.String(), func(t *testing.T) {
			_, err := comlib.ContainerSpec(tc.c)
			require.ErrorContains(t, err, tc.want)
		})
	}
}

// A bad container in a file fails the load, with the path of keys to it
// and its line.
func TestParseSelectionNamesThePath(t *testing.T) {
	for _, tc := range []struct {
		src  string
		path []string
		msg  string
	}{
		{`{"msg_size<=64": {"strategy=eachtomany": {"router=mesh": {}}},
  "msg_size=any": {"strategy=bogus": {}}}`, []string{"msg_size=any", "strategy=bogus"}, `unknown strategy "bogus"`},
		{`{"comm_type=intra": {"msg_size<=64": {"router=tree": {"degree=x": {}}}, "msg_size=any": {"strategy=direct": {}}},
  "comm_type=any": {"strategy=direct": {}}}`, []string{"comm_type=intra", "msg_size<=64", "router=tree"}, `"x" is not a number`},
		{`{"collective=alltoall": {"strategy=eachtomany": {"chunk=4": {}}}, "collective=any": {"strategy=direct": {}}}`,
			[]string{"collective=alltoall", "strategy=eachtomany"}, `unknown parameter "chunk"`},
		{`{"collective=stream": {"msg_size<=64": {"strategy=streaming": {"scored=true": {}}}, "msg_size=any": {"strategy=direct": {}}},
  "collective=any": {"strategy=direct": {}}}`, []string{"collective=stream", "msg_size<=64", "strategy=streaming"}, "scored=true says the program scores the tuning's evaluations; it needs tune=true"},
		{`{"collective=stream": {"strategy=meshstreaming": {"tune=true": {}, "scored=true": {}, "window=8": {}}}, "collective=any": {"strategy=direct": {}}}`,
			[]string{"collective=stream", "strategy=meshstreaming"}, "window=8 is not used with scored=true"},
	} {
		_, err := comlib.ParseSelection([]byte(tc.src))
		var e *selection.Error
		require.ErrorAs(t, err, &e, tc.src)
		require.Equal(t, tc.path, e.Path)
		require.ErrorIs(t, err, selection.ErrContainer)
		require.ErrorContains(t, err, tc.msg)
		require.Positive(t, e.Line)
	}
	// The operators' rules are package selection's: an incomplete subtree (S07).
	_, err := comlib.ParseSelection([]byte(`{"msg_size<=64": {"strategy=direct": {}}}`))
	require.ErrorIs(t, err, selection.ErrIncomplete)
}

// The shipped default loads, and chooses a strategy comlib knows for any
// facts.
func TestDefaultSelection(t *testing.T) {
	tr, err := comlib.DefaultSelection()
	require.NoError(t, err)
	again, err := comlib.ParseSelection(comlib.DefaultSelectJSON())
	require.NoError(t, err)
	require.Equal(t, tr.Size(), again.Size())
	for _, n := range []int{1, 2, 3, 8, 16, 17, 1000} {
		for _, ct := range []selection.CommType{selection.Intra, selection.Inter} {
			for _, col := range []selection.Collective{selection.Alltoall, selection.Multicast, selection.Broadcast, selection.Stream} {
				p, err := tr.Prune(selection.CreationFacts{CommSize: n, CommType: ct, Collective: col})
				require.NoError(t, err)
				for _, m := range []int{0, 100, 5000, 1 << 20} {
					c, _, err := p.Select(selection.CallFacts{MsgSize: m})
					require.NoError(t, err)
					_, err = comlib.ContainerSpec(c)
					require.NoError(t, err)
				}
			}
		}
	}
}

// -comlibselect: a bad file is an error when the flags are parsed, naming
// the file and the path in it; a missing one names the file.
func TestFlagSelectChecksTheFile(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte("{\n \"msg_size<=64\": {\"strategy=direct\": {}},\n \"msg_size=any\": {\"strategy=fast\": {}}\n}\n"), 0o644))
	_, err := chare.ParseArgs([]string{"-comlibselect", bad})
	require.ErrorContains(t, err, "flag -comlibselect")
	require.ErrorContains(t, err, bad+": line 3: msg_size=any > strategy=fast")
	require.ErrorContains(t, err, `unknown strategy "fast"`)

	_, err = chare.ParseArgs([]string{"-comlibselect", filepath.Join(dir, "none.json")})
	require.ErrorContains(t, err, "none.json")

	good := filepath.Join(dir, "good.json")
	require.NoError(t, os.WriteFile(good, comlib.DefaultSelectJSON(), 0o644))
	cfg, err := chare.ParseArgs([]string{"-comlibselect", good})
	require.NoError(t, err)
	require.Equal(t, good, cfg.Flags[comlib.FlagSelect])
}

// FuzzParseSelection: nothing in a file makes comlib panic; a file that
// loads gives a strategy for every container.
func FuzzParseSelection(f *testing.F) {
	f.Add(comlib.DefaultSelectJSON())
	for _, s := range []string{
		`{"msg_size<=64":{"router=mesh":{"degree=4":{}}},"msg_size=any":{"strategy=direct":{}}}`,
		`{"collective=stream":{"strategy=streaming":{"maxmsgs=8":{},"period=1ms":{}}},"collective=any":{"strategy=multicast":{"kind=tree":{},"chunk=65536":{}}}}`,
		`{"comm_size<=8":{"strategy=eachtomany":{"router=tree":{"degree=":{}}}},"comm_size=any":{"strategy=x":{}}}`,
		`{"strategy=eachtomany":{"omega=4":{}}}`, `{"router=":{}}`, `{"strategy=streaming":{"period=-1s":{}}}`,
		`{"strategy=streaming":{"tune=true":{},"scored=true":{},"period=1ms":{}}}`, `{"strategy=streaming":{"window=8":{}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, err := comlib.ParseSelection(data)
		if err != nil {
			require.NotEmpty(t, err.Error())
			return
		}
		for _, c := range tr.Containers() {
			_, err := comlib.ContainerSpec(c)
			require.NoError(t, err, c.String())
		}
	})
}
