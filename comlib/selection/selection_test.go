package selection

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Each TestSnn checks a few sentences of MPICH's collective selection framework (Csel); the
// claims are listed in docs/claims.md.

var opts = Options{Containers: []string{"strategy", "router", "schedule", "algorithm"}}

func loadDefault(t testing.TB) *Tree {
	t.Helper()
	tr, err := Load("testdata/alltoall.json", opts)
	require.NoError(t, err)
	return tr
}

func mustParse(t testing.TB, src string) *Tree {
	t.Helper()
	tr, err := Parse([]byte(src), opts)
	require.NoError(t, err, src)
	return tr
}

func marshal(t testing.TB, tr *Tree) string {
	t.Helper()
	b, err := tr.MarshalJSON()
	require.NoError(t, err)
	return string(b)
}

var (
	commSizes   = []int{1, 2, 3, 4, 7, 8, 9, 15, 16, 17, 64, 100}
	commTypes   = []CommType{Intra, Inter}
	collectives = []Collective{Alltoall, Multicast, Broadcast, Stream}
	msgSizes    = []int{0, 1, 255, 256, 257, 4096, 32768, 32769, 1 << 20}
)

// forAllFacts calls f for every combination of the grids above.
func forAllFacts(f func(CreationFacts, CallFacts)) {
	for _, n := range commSizes {
		for _, ct := range commTypes {
			for _, col := range collectives {
				for _, m := range msgSizes {
					f(CreationFacts{CommSize: n, CommType: ct, Collective: col}, CallFacts{MsgSize: m})
				}
			}
		}
	}
}

func TestS01_LeavesAreContainers(t *testing.T) {
	tr := loadDefault(t)
	// Every walk through the JSON tree ends in a container, whatever the facts.
	forAllFacts(func(c CreationFacts, call CallFacts) {
		got, trace, err := tr.Walk(c, call)
		require.NoError(t, err, "%+v %+v", c, call)
		require.Equal(t, "strategy", got.Key, trace.String())
		require.Contains(t, []string{"direct", "eachtomany"}, got.Value)
	})
	require.Equal(t, []string{
		"strategy=eachtomany(router=direct)", "strategy=direct", "strategy=eachtomany(router=mesh)",
		"strategy=eachtomany(router=hypercube)", "strategy=eachtomany(router=grid)",
	}, containerStrings(tr.Containers()))

	// Leaves that are not containers, and containers that are not leaves, are refused.
	for _, tc := range []struct{ name, src string }{
		{"operator without subtree", `{"msg_size=any":{}}`},
		{"operator as a leaf deeper down", `{"comm_size=any":{"msg_size<=8":{"strategy=direct":{}},"msg_size=any":{}}}`},
		{"container with an operator child", `{"strategy=direct":{"msg_size=any":{"strategy=direct":{}}}}`},
		{"container with a container child", `{"strategy=eachtomany":{"router=mesh":{"k=2":{}}}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.src), opts)
			require.Error(t, err)
			require.True(t, errors.Is(err, ErrEmpty) || errors.Is(err, ErrParam), "%v", err)
		})
	}
}

func containerStrings(cs []Container) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.String())
	}
	return out
}

func TestS02_ContainersAreOpaque(t *testing.T) {
	// The engine hands parameters through uninterpreted, in file order.
	tr := mustParse(t, `{"comm_size=any":{"algorithm=MPIR_Alltoall_k_brucks":{"k=2":{},"chunk= 8KiB ":{},"z=":{}}}}`)
	got, _, err := tr.Walk(CreationFacts{CommSize: 3}, CallFacts{})
	require.NoError(t, err)
	require.Equal(t, Container{Key: "algorithm", Value: "MPIR_Alltoall_k_brucks",
		Params: []Param{{"k", "2"}, {"chunk", "8KiB"}, {"z", ""}}}, got)
	v, ok := got.Param("chunk")
	require.True(t, ok)
	require.Equal(t, "8KiB", v)
	_, ok = got.Param("missing")
	require.False(t, ok)

	// The caller parses containers: its Check rejects what it does not know, with the path.
	known := map[string]bool{"direct": true, "eachtomany": true}
	o := Options{Containers: []string{"strategy"}, Check: func(c Container) error {
		if !known[c.Value] {
			return fmt.Errorf("unknown strategy %q", c.Value)
		}
		return nil
	}}
	_, err = Parse([]byte(`{"msg_size<=64":{"strategy=eachtomany":{}},"msg_size=any":{"strategy=bogus":{}}}`), o)
	var e *Error
	require.ErrorAs(t, err, &e)
	require.ErrorIs(t, err, ErrContainer)
	require.Equal(t, []string{"msg_size=any", "strategy=bogus"}, e.Path)
	require.Contains(t, err.Error(), `unknown strategy "bogus"`)

	// A container name the caller did not declare is unknown, however plausible.
	_, err = Parse([]byte(`{"router=mesh":{}}`), Options{Containers: []string{"strategy"}})
	require.ErrorIs(t, err, ErrUnknown)
	require.Contains(t, err.Error(), "containers: strategy")

	// Container names may not shadow operators.
	_, err = Parse([]byte(`{"strategy=direct":{}}`), Options{Containers: []string{"msg_size"}})
	require.ErrorContains(t, err, "is an operator")
}

func TestS03_Operators(t *testing.T) {
	base := CreationFacts{CommSize: 4, CommType: Intra, Collective: Alltoall}
	for _, tc := range []struct {
		key   string
		edit  func(*CreationFacts, *CallFacts)
		holds bool
	}{
		{"comm_size<=8", func(c *CreationFacts, _ *CallFacts) { c.CommSize = 8 }, true},
		{"comm_size<=8", func(c *CreationFacts, _ *CallFacts) { c.CommSize = 9 }, false},
		{"comm_size<=8", func(c *CreationFacts, _ *CallFacts) { c.CommSize = 1 }, true},
		{"coll_size<=8", func(c *CreationFacts, _ *CallFacts) { c.CommSize = 8 }, true},
		{"coll_size<=8", func(c *CreationFacts, _ *CallFacts) { c.CommSize = 9 }, false},
		{"comm_size=pow2", func(c *CreationFacts, _ *CallFacts) { c.CommSize = 1 }, true},
		{"comm_size=pow2", func(c *CreationFacts, _ *CallFacts) { c.CommSize = 64 }, true},
		{"comm_size=pow2", func(c *CreationFacts, _ *CallFacts) { c.CommSize = 6 }, false},
		{"coll_size=pow2", func(c *CreationFacts, _ *CallFacts) { c.CommSize = 12 }, false},
		{"comm_size=any", func(c *CreationFacts, _ *CallFacts) { c.CommSize = 7 }, true},
		{"coll_size=any", func(c *CreationFacts, _ *CallFacts) { c.CommSize = 7 }, true},
		{"msg_size<=256", func(_ *CreationFacts, m *CallFacts) { m.MsgSize = 256 }, true},
		{"msg_size<=256", func(_ *CreationFacts, m *CallFacts) { m.MsgSize = 257 }, false},
		{"msg_size<=256", func(_ *CreationFacts, m *CallFacts) { m.MsgSize = 0 }, true},
		{"msg_size<=0", func(_ *CreationFacts, m *CallFacts) { m.MsgSize = 1 }, false},
		{"msg_size=any", func(_ *CreationFacts, m *CallFacts) { m.MsgSize = 1 << 30 }, true},
		{"comm_type=intra", func(c *CreationFacts, _ *CallFacts) { c.CommType = Intra }, true},
		{"comm_type=intra", func(c *CreationFacts, _ *CallFacts) { c.CommType = Inter }, false},
		{"comm_type=inter", func(c *CreationFacts, _ *CallFacts) { c.CommType = Inter }, true},
		{"comm_type=inter", func(c *CreationFacts, _ *CallFacts) { c.CommType = Intra }, false},
		{"collective=alltoall", func(c *CreationFacts, _ *CallFacts) { c.Collective = Alltoall }, true},
		{"collective=alltoall", func(c *CreationFacts, _ *CallFacts) { c.Collective = Stream }, false},
		{"collective=multicast", func(c *CreationFacts, _ *CallFacts) { c.Collective = Multicast }, true},
		{"collective=broadcast", func(c *CreationFacts, _ *CallFacts) { c.Collective = Broadcast }, true},
		{"collective=broadcast", func(c *CreationFacts, _ *CallFacts) { c.Collective = Multicast }, false},
		{"collective=stream", func(c *CreationFacts, _ *CallFacts) { c.Collective = Stream }, true},
		{"collective=any", func(c *CreationFacts, _ *CallFacts) { c.Collective = Stream }, true},
	} {
		c, call := base, CallFacts{MsgSize: 100}
		tc.edit(&c, &call)
		t.Run(fmt.Sprintf("%s/%+v/%d", tc.key, c, call.MsgSize), func(t *testing.T) {
			name, _, _, _ := splitKey(tc.key)
			src := fmt.Sprintf(`{%q:{"strategy=yes":{}}, "%s=any":{"strategy=no":{}}}`, tc.key, name)
			if strings.HasSuffix(tc.key, "=any") {
				src = fmt.Sprintf(`{%q:{"strategy=yes":{}}}`, tc.key)
			}
			tr := mustParse(t, src)
			got, trace, err := tr.Walk(c, call)
			require.NoError(t, err)
			require.Equal(t, tc.holds, got.Value == "yes", trace.String())
			// Pruning then selecting agrees with the full walk.
			p, err := tr.Prune(c)
			require.NoError(t, err)
			got2, _, err := p.Select(call)
			require.NoError(t, err)
			require.Equal(t, got, got2)
		})
	}
}

func TestS04_SiblingsOfOneType(t *testing.T) {
	for _, tc := range []struct{ name, src, path string }{
		{"comm_size beside msg_size", `{"comm_size<=8":{"strategy=a":{}},"msg_size=any":{"strategy=b":{}}}`, "msg_size=any"},
		{"collective beside comm_type", `{"collective=alltoall":{"strategy=a":{}},"comm_type=inter":{"strategy=b":{}}}`, "comm_type=inter"},
		{"deeper", `{"comm_size=any":{"msg_size<=8":{"strategy=a":{}},"coll_size=any":{"strategy=b":{}}}}`, "comm_size=any > coll_size=any"},
		{"container beside operator", `{"strategy=a":{},"msg_size=any":{"strategy=b":{}}}`, "strategy=a"},
		{"operator beside container", `{"msg_size=any":{"strategy=b":{}},"strategy=a":{}}`, "strategy=a"},
		{"two containers", `{"strategy=a":{},"router=mesh":{}}`, "strategy=a"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.src), opts)
			var e *Error
			require.ErrorAs(t, err, &e)
			require.ErrorIs(t, err, ErrMixed)
			require.Equal(t, tc.path, PathString(e.Path))
		})
	}
	// The seed's coll_size and MPICH's comm_size are one operator, so they may be siblings.
	tr := mustParse(t, `{"coll_size<=8":{"strategy=a":{}},"comm_size=any":{"strategy=b":{}}}`)
	got, _, err := tr.Walk(CreationFacts{CommSize: 9}, CallFacts{})
	require.NoError(t, err)
	require.Equal(t, "b", got.Value)
}

func TestS05_CreationFactsOutsidePruneToPerCall(t *testing.T) {
	tr := loadDefault(t)
	p, err := tr.Prune(CreationFacts{CommSize: 16, CommType: Inter, Collective: Alltoall})
	require.NoError(t, err)
	// With the creation-time operators at the outer levels, what is left is the message-size
	// rule for this communicator alone.
	require.JSONEq(t, `{
		"msg_size<=256": {"strategy=eachtomany": {"router=hypercube": {}}},
		"msg_size<=32768": {"strategy=eachtomany": {"router=mesh": {}}},
		"msg_size=any": {"strategy=direct": {}}}`, marshal(t, p))
	require.Equal(t, 6, p.Size())
	require.Equal(t, 30, tr.Size())

	// Every creation fact given: no creation-time operator is left, anywhere, for any facts.
	forAllFacts(func(c CreationFacts, _ CallFacts) {
		p, err := tr.Prune(c)
		require.NoError(t, err)
		js := marshal(t, p)
		for _, name := range []string{"comm_size", "comm_type", "collective"} {
			require.NotContains(t, js, name, "%+v", c)
		}
	})

	// A collective this tree has no rule for prunes to the fallback container itself.
	p, err = tr.Prune(CreationFacts{CommSize: 16, CommType: Inter, Collective: Stream})
	require.NoError(t, err)
	require.Equal(t, 1, p.Size())
	got, trace, err := p.Select(CallFacts{MsgSize: 1 << 20})
	require.NoError(t, err)
	require.Equal(t, "strategy=direct", got.String())
	require.Equal(t, Trace{Steps: []Step{{Key: "collective=any", Pruned: true}}, Visited: 1}, trace)
}

func TestS06_CollectiveAtAnyLevelPrunedAroundIt(t *testing.T) {
	// collective between two comm_size levels, and a comm_type under msg_size.
	src := `{
	  "comm_size<=4": {
	    "collective=alltoall": {
	      "comm_size=pow2": {"msg_size<=64": {"comm_type=intra": {"strategy=a":{}}, "comm_type=inter": {"strategy=b":{}}},
	                         "msg_size=any": {"strategy=c":{}}},
	      "comm_size=any": {"strategy=d":{}}
	    },
	    "collective=any": {"strategy=e":{}}
	  },
	  "comm_size=any": {"strategy=f":{}}
	}`
	tr := mustParse(t, src)

	// Size known, collective not: pruned before the collective (the outer comm_size) and after
	// it (the inner one); the collective stays.
	bySize, err := tr.Prune(CreationFacts{CommSize: 4})
	require.NoError(t, err)
	require.JSONEq(t, `{
	  "collective=alltoall": {"msg_size<=64": {"comm_type=intra": {"strategy=a":{}}, "comm_type=inter": {"strategy=b":{}}},
	                          "msg_size=any": {"strategy=c":{}}},
	  "collective=any": {"strategy=e":{}}}`, marshal(t, bySize))

	// Select cannot decide the collective: the error names the operator and where it is.
	_, _, err = bySize.Select(CallFacts{MsgSize: 10})
	require.ErrorContains(t, err, "comm_size<=4 > collective=alltoall: the collective is not known")

	// Pruning again with the rest: the comm_type under msg_size is resolved too, so each call
	// tests only message sizes.
	all, err := bySize.Prune(CreationFacts{Collective: Alltoall, CommType: Inter})
	require.NoError(t, err)
	require.JSONEq(t, `{"msg_size<=64": {"strategy=b":{}}, "msg_size=any": {"strategy=c":{}}}`, marshal(t, all))
	got, trace, err := all.Select(CallFacts{MsgSize: 64})
	require.NoError(t, err)
	require.Equal(t, "b", got.Value)
	require.Equal(t, []Step{
		{"comm_size<=4", true}, {"collective=alltoall", true}, {"comm_size=pow2", true},
		{"msg_size<=64", false}, {"comm_type=inter", true},
	}, trace.Steps)
	require.Equal(t, "comm_size<=4 (pruned) > collective=alltoall (pruned) > comm_size=pow2 (pruned) > msg_size<=64 > comm_type=inter (pruned); 2 nodes", trace.String())

	// Collective known, size not: the collective is resolved under the unresolved comm_size.
	byColl, err := tr.Prune(CreationFacts{Collective: Multicast})
	require.NoError(t, err)
	require.JSONEq(t, `{"comm_size<=4": {"strategy=e":{}}, "comm_size=any": {"strategy=f":{}}}`, marshal(t, byColl))

	// In any order, pruning agrees with the full walk.
	forAllFacts(func(c CreationFacts, call CallFacts) {
		want, _, err := tr.Walk(c, call)
		require.NoError(t, err)
		p1, err := tr.Prune(CreationFacts{CommSize: c.CommSize})
		require.NoError(t, err)
		p2, err := p1.Prune(CreationFacts{Collective: c.Collective})
		require.NoError(t, err)
		p3, err := p2.Prune(CreationFacts{CommType: c.CommType})
		require.NoError(t, err)
		got, _, err := p3.Select(call)
		require.NoError(t, err)
		require.Equal(t, want, got, "%+v %+v", c, call)
	})
}

func TestS07_SubtreesAreComplete(t *testing.T) {
	for _, tc := range []struct{ name, src, path, msg string }{
		{"small messages only", `{"msg_size<=256":{"strategy=a":{}}}`, "msg_size<=256", "msg_size=any"},
		{"deep, MPICH-like", `{"collective=alltoall":{"comm_size<=8":{"msg_size<=256":{"strategy=a":{}}},"comm_size=any":{"strategy=b":{}}},"collective=any":{"strategy=c":{}}}`,
			"collective=alltoall > comm_size<=8 > msg_size<=256", "msg_size=any"},
		{"pow2 without any", `{"comm_size<=8":{"strategy=a":{}},"coll_size=pow2":{"strategy=b":{}}}`, "coll_size=pow2", "comm_size=any"},
		{"intra without inter", `{"comm_type=intra":{"strategy=a":{}}}`, "comm_type=intra", "comm_type=inter"},
		{"some collectives", `{"collective=alltoall":{"strategy=a":{}},"collective=stream":{"strategy=b":{}}}`, "collective=stream",
			"collective=multicast, collective=broadcast"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.src), opts)
			var e *Error
			require.ErrorAs(t, err, &e)
			require.ErrorIs(t, err, ErrIncomplete)
			require.Equal(t, tc.path, PathString(e.Path))
			require.Contains(t, err.Error(), tc.msg)
		})
	}
	// Finite operators are complete when every value has a branch, or with a final any.
	for _, src := range []string{
		`{"comm_type=inter":{"strategy=a":{}},"comm_type=intra":{"strategy=b":{}}}`,
		`{"comm_type=inter":{"strategy=a":{}},"comm_type=any":{"strategy=b":{}}}`,
		`{"collective=stream":{"strategy=a":{}},"collective=alltoall":{"strategy=b":{}},"collective=broadcast":{"strategy=c":{}},"collective=multicast":{"strategy=d":{}}}`,
	} {
		tr := mustParse(t, src)
		forAllFacts(func(c CreationFacts, call CallFacts) {
			_, _, err := tr.Walk(c, call)
			require.NoError(t, err)
		})
	}
}

func TestS08_PruningCutsPerCallWork(t *testing.T) {
	tr := loadDefault(t)
	var walked, selected int
	forAllFacts(func(c CreationFacts, call CallFacts) {
		want, wt, err := tr.Walk(c, call)
		require.NoError(t, err)
		p, err := tr.Prune(c)
		require.NoError(t, err)
		require.Less(t, p.Size(), tr.Size())
		got, st, err := p.Select(call)
		require.NoError(t, err)
		require.Equal(t, want, got, "%+v %+v", c, call)
		require.Equal(t, stepKeys(wt.Steps), stepKeys(st.Steps), "the same branches, decided earlier")
		// At least the collective test moved to creation; at most the message-size tests and the
		// container remain per call.
		require.Less(t, st.Visited, wt.Visited, "%+v %+v", c, call)
		require.LessOrEqual(t, st.Visited, 4)
		walked += wt.Visited
		selected += st.Visited
	})
	t.Logf("nodes visited over the grid: %d walking the whole tree, %d after pruning", walked, selected)
	require.Less(t, 2*selected, walked+1)
}

func TestParseErrors(t *testing.T) {
	deep := strings.Repeat(`{"msg_size=any":`, MaxDepth+1) + `{"strategy=a":{}}` + strings.Repeat("}", MaxDepth+1)
	for _, tc := range []struct {
		name, src string
		kind      error
		path      string
		line      int
	}{
		{"empty input", "  \n", ErrSyntax, "", 0},
		{"not json", `{"msg_size=any":`, ErrSyntax, "msg_size=any", 1},
		{"bad json", "{\n\"msg_size=any\" {}}", ErrSyntax, "msg_size=any", 2},
		{"top-level array", `[]`, ErrSyntax, "", 1},
		{"value not an object", `{"msg_size=any":3}`, ErrSyntax, "msg_size=any", 1},
		{"value an array", `{"msg_size=any":[{"strategy=a":{}}]}`, ErrSyntax, "msg_size=any", 1},
		{"value null", `{"msg_size=any":null}`, ErrSyntax, "msg_size=any", 1},
		{"trailing data", `{"strategy=a":{}} {}`, ErrSyntax, "", 1},
		{"too deep", deep, ErrSyntax, strings.TrimSuffix(strings.Repeat("msg_size=any > ", MaxDepth), " > "), 1},
		{"unknown operator", `{"avg_msg_size<=8":{"strategy=a":{}}}`, ErrUnknown, "avg_msg_size<=8", 1},
		{"unknown container", `{"msg_size=any":{"planner=x":{}}}`, ErrUnknown, "msg_size=any > planner=x", 1},
		{"bare word", `{"comm_size":{"strategy=a":{}}}`, ErrUnknown, "comm_size", 1},
		{"container without value", `{"strategy=":{}}`, ErrUnknown, "strategy=", 1},
		{"container with <=", `{"strategy<=3":{}}`, ErrUnknown, "strategy<=3", 1},
		{"number not digits", `{"comm_size<=abc":{"strategy=a":{}}}`, ErrNumber, "comm_size<=abc", 1},
		{"negative number", `{"comm_size<=-1":{"strategy=a":{}}}`, ErrNumber, "comm_size<=-1", 1},
		{"exponent", `{"msg_size<=1e3":{"strategy=a":{}}}`, ErrNumber, "msg_size<=1e3", 1},
		{"missing number", `{"msg_size<=":{"strategy=a":{}}}`, ErrNumber, "msg_size<=", 1},
		{"huge number", `{"msg_size<=99999999999999999999999":{"strategy=a":{}}}`, ErrNumber, "msg_size<=99999999999999999999999", 1},
		{"msg_size=pow2", `{"msg_size=pow2":{"strategy=a":{}}}`, ErrNumber, "msg_size=pow2", 1},
		{"comm_size=big", `{"comm_size=big":{"strategy=a":{}}}`, ErrNumber, "comm_size=big", 1},
		{"comm_type<=", `{"comm_type<=3":{"strategy=a":{}}}`, ErrNumber, "comm_type<=3", 1},
		{"unknown collective", `{"collective=reduce":{"strategy=a":{}}}`, ErrNumber, "collective=reduce", 1},
		{"duplicate key", "{\"msg_size<=8\":{\"strategy=a\":{}},\n\"msg_size<=8\":{\"strategy=b\":{}},\"msg_size=any\":{\"strategy=c\":{}}}", ErrDuplicate, "msg_size<=8", 2},
		{"duplicate parameter", `{"strategy=a":{"k=2":{},"k=3":{}}}`, ErrDuplicate, "strategy=a > k=3", 1},
		{"parameter without =", `{"strategy=a":{"fast":{}}}`, ErrParam, "strategy=a > fast", 1},
		{"parameter with <=", `{"strategy=a":{"k<=2":{}}}`, ErrParam, "strategy=a > k<=2", 1},
		{"parameter with children", `{"strategy=a":{"k=2":{"j=1":{}}}}`, ErrParam, "strategy=a > k=2", 1},
		{"parameter not an object", `{"strategy=a":{"k=2":2}}`, ErrSyntax, "strategy=a > k=2", 1},
		{"empty top level", `{}`, ErrEmpty, "", 1},
		{"empty subtree", "{\"comm_size=any\":\n{}}", ErrEmpty, "comm_size=any", 2},
		{"after any", `{"msg_size=any":{"strategy=a":{}},"msg_size<=8":{"strategy=b":{}}}`, ErrUnreachable, "msg_size<=8", 1},
		{"smaller bound later", `{"msg_size<=64":{"strategy=a":{}},"msg_size<=8":{"strategy=b":{}},"msg_size=any":{"strategy=c":{}}}`, ErrUnreachable, "msg_size<=8", 1},
		{"same bound in both spellings", `{"comm_size<=8":{"strategy=a":{}},"coll_size<=8":{"strategy=b":{}},"comm_size=any":{"strategy=c":{}}}`, ErrUnreachable, "coll_size<=8", 1},
		{"pow2 twice", `{"comm_size=pow2":{"strategy=a":{}},"coll_size=pow2":{"strategy=b":{}},"comm_size=any":{"strategy=c":{}}}`, ErrUnreachable, "coll_size=pow2", 1},
		{"value twice", `{"comm_type=intra":{"strategy=a":{}},"comm_type= intra":{"strategy=b":{}},"comm_type=any":{"strategy=c":{}}}`, ErrUnreachable, "comm_type= intra", 1},
		{"any after every value", `{"comm_type=intra":{"strategy=a":{}},"comm_type=inter":{"strategy=b":{}},"comm_type=any":{"strategy=c":{}}}`, ErrUnreachable, "comm_type=any", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr, err := Parse([]byte(tc.src), opts)
			require.Nil(t, tr)
			var e *Error
			require.ErrorAs(t, err, &e, "%v", err)
			require.ErrorIs(t, err, tc.kind, "%v", err)
			require.Equal(t, tc.path, PathString(e.Path), "%v", err)
			require.Equal(t, tc.line, e.Line, "%v", err)
		})
	}
}

func TestErrorMessageNamesThePath(t *testing.T) {
	src := `{
  "collective=alltoall": {
    "comm_size<=8": {
      "msg_size<=256": {"strategy=a": {}}
    },
    "comm_size=any": {"strategy=b": {}}
  },
  "collective=any": {"strategy=c": {}}
}`
	_, err := Parse([]byte(src), opts)
	require.EqualError(t, err, "selection: line 4: collective=alltoall > comm_size<=8 > msg_size<=256: "+
		"incomplete subtree: the last branch must be msg_size=any, so that every msg_size has a container")

	dir := t.TempDir()
	name := dir + "/bad.json"
	require.NoError(t, os.WriteFile(name, []byte(src), 0o644))
	_, err = Load(name, opts)
	require.ErrorContains(t, err, "selection: "+name+": line 4: collective=alltoall > comm_size<=8 > msg_size<=256")
	_, err = Load(dir+"/missing.json", opts)
	require.ErrorContains(t, err, "missing.json")
}

func TestFactsAreChecked(t *testing.T) {
	tr := loadDefault(t)
	for _, c := range []CreationFacts{{CommSize: -1}, {CommType: "local"}, {Collective: "reduce"}} {
		_, err := tr.Prune(c)
		require.Error(t, err, "%+v", c)
		_, _, err = tr.Walk(c, CallFacts{})
		require.Error(t, err, "%+v", c)
	}
	_, _, err := tr.Walk(CreationFacts{CommSize: 2}, CallFacts{MsgSize: -1})
	require.ErrorContains(t, err, "MsgSize -1")
	// An unpruned tree cannot be walked with per-call facts alone.
	_, _, err = tr.Select(CallFacts{MsgSize: 1})
	require.ErrorContains(t, err, "collective=alltoall: the collective is not known")
	var empty *Tree
	_, _, err = empty.Select(CallFacts{})
	require.Error(t, err)
	_, err = empty.Prune(CreationFacts{})
	require.Error(t, err)
}

func TestMarshalRoundTrip(t *testing.T) {
	tr := loadDefault(t)
	js := marshal(t, tr)
	raw, err := os.ReadFile("testdata/alltoall.json")
	require.NoError(t, err)
	require.JSONEq(t, string(raw), js)
	again := mustParse(t, js)
	require.Equal(t, js, marshal(t, again))
	// Key order survives: the first matching sibling wins, so order is meaning.
	require.Less(t, strings.Index(js, "comm_size<=8"), strings.Index(js, "comm_size=pow2"))
}

func TestFileOrderDecides(t *testing.T) {
	// pow2 first: 8 takes the pow2 branch; <=8 first: it takes that one.
	a := mustParse(t, `{"comm_size=pow2":{"strategy=p":{}},"comm_size<=8":{"strategy=s":{}},"comm_size=any":{"strategy=x":{}}}`)
	b := mustParse(t, `{"comm_size<=8":{"strategy=s":{}},"comm_size=pow2":{"strategy=p":{}},"comm_size=any":{"strategy=x":{}}}`)
	for _, tc := range []struct {
		n    int
		a, b string
	}{{8, "p", "s"}, {6, "s", "s"}, {16, "p", "p"}, {12, "x", "x"}} {
		ga, _, err := a.Walk(CreationFacts{CommSize: tc.n}, CallFacts{})
		require.NoError(t, err)
		gb, _, err := b.Walk(CreationFacts{CommSize: tc.n}, CallFacts{})
		require.NoError(t, err)
		require.Equal(t, []string{tc.a, tc.b}, []string{ga.Value, gb.Value}, "comm_size=%d", tc.n)
	}
}

// TestS05_FixedTreesNeedNoCallFacts: a pruned tree that chooses one container whatever the
// message needs no walk per call; one that depends on the message is not fixed.
func TestS05_FixedTreesNeedNoCallFacts(t *testing.T) {
	intra := CreationFacts{CommSize: 16, CommType: Intra, Collective: Alltoall}
	for _, tc := range []struct {
		name, src string
		fixed     bool
		container string
		trace     string
	}{
		{"one leaf", `{"strategy=direct":{}}`, true, "strategy=direct", "(top level); 0 nodes"},
		{"pruned to one leaf", `{"comm_type=intra":{"strategy=direct":{}},"comm_type=any":{"router=mesh":{}}}`,
			true, "strategy=direct", "comm_type=intra (pruned); 0 nodes"},
		{"msg_size=any first", `{"comm_size<=4":{"router=mesh":{}},"comm_size=any":{"msg_size=any":{"strategy=direct":{}}}}`,
			true, "strategy=direct", "comm_size=any (pruned) > msg_size=any; 0 nodes"},
		{"every branch the same", `{"msg_size<=64":{"strategy=direct":{}},"msg_size<=1024":{"msg_size=any":{"strategy=direct":{}}},"msg_size=any":{"strategy=direct":{}}}`,
			true, "strategy=direct", "msg_size=* (every branch); 0 nodes"},
		{"the same, parameters differ", `{"msg_size<=64":{"router=mesh":{}},"msg_size=any":{"router=mesh":{"omega=2":{}}}}`,
			false, "", ""},
		{"depends on the size", `{"msg_size<=64":{"strategy=direct":{}},"msg_size=any":{"router=mesh":{}}}`, false, "", ""},
		{"deeper, depends", `{"msg_size<=64":{"strategy=direct":{}},"msg_size=any":{"msg_size<=99":{"strategy=direct":{}},"msg_size=any":{"router=grid":{}}}}`,
			false, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := mustParse(t, tc.src).Prune(intra)
			require.NoError(t, err)
			c, tr, ok := p.Fixed()
			require.Equal(t, tc.fixed, ok)
			if !ok {
				// Not fixed: two sizes choose differently.
				seen := map[string]bool{}
				for _, m := range msgSizes {
					c, _, err := p.Select(CallFacts{MsgSize: m})
					require.NoError(t, err)
					seen[c.String()] = true
				}
				require.Greater(t, len(seen), 1, "a tree that is not fixed chooses more than one container")
				return
			}
			require.Equal(t, tc.container, c.String())
			require.Equal(t, tc.trace, tr.String())
			// Fixed means every call chooses it.
			for _, m := range msgSizes {
				got, _, err := p.Select(CallFacts{MsgSize: m})
				require.NoError(t, err)
				require.Equal(t, c, got, "msg_size %d", m)
			}
		})
	}
}

// TestS05_DeclaredMsgSizePrunesToOneContainer: a message size declared at creation is one more
// creation fact: Prune resolves the msg_size operators too, wherever they stand, and the tree
// left is the container Walk chooses for that size — fixed, nothing tested per call, the
// msg_size branch in its trace marked pruned. Every declared size over the grid agrees with
// the per-call walk; a negative one is an error naming it.
func TestS05_DeclaredMsgSizePrunesToOneContainer(t *testing.T) {
	tr := loadDefault(t)
	forAllFacts(func(c CreationFacts, call CallFacts) {
		if call.MsgSize == 0 {
			return // 0 declares nothing
		}
		want, wt, err := tr.Walk(c, call)
		require.NoError(t, err)
		d := c
		d.MsgSize = call.MsgSize
		p, err := tr.Prune(d)
		require.NoError(t, err)
		got, ft, ok := p.Fixed()
		require.True(t, ok, "%+v: a declared size leaves one container", d)
		require.Equal(t, want, got, "%+v", d)
		require.Equal(t, 1, p.Size(), "%+v", d)
		require.Equal(t, stepKeys(wt.Steps), stepKeys(ft.Steps), "%+v: the same branches, all decided at creation", d)
		for _, s := range ft.Steps {
			require.True(t, s.Pruned, "%+v: %s", d, s.Key)
		}
		require.Zero(t, ft.Visited)
		// Walk with the declaration: the declared size counts, not the call's.
		other, _, err := tr.Walk(d, CallFacts{MsgSize: 1 << 30})
		require.NoError(t, err)
		require.Equal(t, want, other, "%+v", d)
	})

	// A msg_size operator above the creation-time ones is resolved as well (S06).
	mixed := mustParse(t, `{"msg_size<=100":{"comm_type=intra":{"strategy=direct":{}},"comm_type=any":{"router=mesh":{}}},"msg_size=any":{"router=hypercube":{}}}`)
	for _, tc := range []struct {
		size int
		ct   CommType
		want string
	}{{100, Intra, "strategy=direct"}, {100, Inter, "router=mesh"}, {101, Intra, "router=hypercube"}} {
		p, err := mixed.Prune(CreationFacts{CommType: tc.ct, MsgSize: tc.size})
		require.NoError(t, err)
		c, _, ok := p.Fixed()
		require.True(t, ok)
		require.Equal(t, tc.want, c.String(), "%d B %s", tc.size, tc.ct)
	}
	// Declared but the comm_type not known: what depends on it stays.
	p, err := mixed.Prune(CreationFacts{MsgSize: 50})
	require.NoError(t, err)
	require.JSONEq(t, `{"comm_type=intra":{"strategy=direct":{}},"comm_type=any":{"router=mesh":{}}}`, marshal(t, p))

	_, err = tr.Prune(CreationFacts{MsgSize: -3})
	require.ErrorContains(t, err, "MsgSize -3 is negative")
	_, _, err = tr.Walk(CreationFacts{MsgSize: -3}, CallFacts{MsgSize: 1})
	require.ErrorContains(t, err, "MsgSize -3 is negative")
}

// siblingsFile returns a selection file of n sibling operators, one per
// line, without the final comm_size=any when incomplete is set.
func siblingsFile(n int, incomplete bool) []byte {
	var b strings.Builder
	b.WriteString("{\n")
	for i := range n {
		fmt.Fprintf(&b, "  \"comm_size<=%d\": {\"strategy=s%d\": {}},\n", i+1, i)
	}
	if incomplete {
		return []byte(strings.TrimSuffix(b.String(), ",\n") + "\n}\n")
	}
	b.WriteString("  \"comm_size=any\": {\"strategy=direct\": {}}\n}\n")
	return []byte(b.String())
}

// TestParseLinear: the line numbers of a parse cost one pass over the
// file, however many keys it has (they were counted from the start of the
// file for every key: 40,000 siblings took seconds, 100 MB never ended),
// and the error still names the right line; a container's parameters are
// checked for duplicates without a pass over the others per parameter.
func TestParseLinear(t *testing.T) {
	for _, n := range []int{1000, 40000} {
		data := siblingsFile(n, false)
		_, p, err := parse(data, opts)
		require.NoError(t, err)
		require.LessOrEqual(t, p.scanned, int64(len(data)), "%d keys: %d bytes of %d scanned for line numbers", n, p.scanned, len(data))

		data = siblingsFile(n, true)
		_, p, err = parse(data, opts)
		require.ErrorIs(t, err, ErrIncomplete)
		require.ErrorContains(t, err, fmt.Sprintf("line %d: comm_size<=%d: ", n+1, n))
		require.LessOrEqual(t, p.scanned, int64(len(data)), "%d keys: %d bytes of %d scanned for line numbers", n, p.scanned, len(data))
	}
	var b strings.Builder
	b.WriteString(`{"strategy=x": {`)
	for i := range 40000 {
		fmt.Fprintf(&b, "\n\"p%d=1\": {},", i)
	}
	b.WriteString("\n\"p7=2\": {}}}")
	data := []byte(b.String())
	_, p, err := parse(data, opts)
	require.ErrorIs(t, err, ErrDuplicate)
	require.ErrorContains(t, err, "line 40002: strategy=x > p7=2: duplicate key: parameter \"p7\" is given twice")
	require.LessOrEqual(t, p.scanned, int64(len(data)))
}

// TestParseErrorsQuoteKeysBriefly: an error about a key of megabytes
// quotes a few dozen bytes of it and says how long it is, wherever the
// key is named (the path, the message).
func TestParseErrorsQuoteKeysBriefly(t *testing.T) {
	huge := strings.Repeat("x", 1<<20)
	digits := strings.Repeat("9", 1<<20)
	for _, src := range []string{
		`{"` + huge + `": {}}`,
		`{"comm_size<=` + digits + `": {"strategy=a": {}}, "comm_size=any": {"strategy=a": {}}}`,
		`{"comm_size<=` + huge + `": {"strategy=a": {}}, "comm_size=any": {"strategy=a": {}}}`,
		`{"collective=` + huge + `": {"strategy=a": {}}}`,
		`{"collective=any": {"strategy=` + huge + `": {}, "strategy=b": {}}}`,
		`{"collective=any": {"strategy=a": {"` + huge + `=1": {}, "` + huge + `=2": {}}}}`,
		`{"collective=any": "` + huge + `"}`,
		`{"collective=any": {"strategy=a": {}}} ` + huge,
	} {
		_, err := Parse([]byte(src), opts)
		require.Error(t, err, src[:40])
		require.Less(t, len(err.Error()), 800, "%.300s", err.Error())
		require.Regexp(t, `… \(10485\d\d bytes\)`, err.Error(), "the key's length")
	}
	// A container rejected by Check with a message quoting the key whole.
	o := opts
	o.Check = func(c Container) error { return fmt.Errorf("no strategy %q", c.Value) }
	_, err := Parse([]byte(`{"strategy=`+huge+`": {}}`), o)
	require.ErrorIs(t, err, ErrContainer)
	require.Less(t, len(err.Error()), 800)
}

// TestParseRefusesTrailingData: what follows the top-level object is
// named as such, not as the decoder reads its first bytes ("invalid
// character 'a' in literal true").
func TestParseRefusesTrailingData(t *testing.T) {
	const good = `{"collective=any": {"strategy=direct": {}}}`
	for _, tail := range []string{"true abc", "trash", "{}", "\n\n  ]", ` "x"`} {
		_, err := Parse([]byte(good+tail), opts)
		require.ErrorIs(t, err, ErrSyntax, tail)
		require.ErrorContains(t, err, "after the top-level object", tail)
		require.NotContains(t, err.Error(), "literal", tail)
	}
	_, err := Parse([]byte(good+"\n\n  ]"), opts)
	require.ErrorContains(t, err, `line 3: top level: not a selection tree: "]" after the top-level object (1 bytes`)
	_, err = Parse([]byte(good+" \n\t"), opts)
	require.NoError(t, err)
}

// TestLoadBoundsTheFile: Load refuses a file larger than MaxFileBytes from
// its size, and reads an endless one (/dev/zero) only up to the limit.
func TestLoadBoundsTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big.json")
	f, err := os.Create(path)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(1<<30))
	require.NoError(t, f.Close())
	_, err = Load(path, opts)
	require.ErrorContains(t, err, fmt.Sprintf("%s has %d bytes, more than %d, the limit for a selection file", path, 1<<30, MaxFileBytes))

	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	_, err = readFile("/dev/zero", 1<<20)
	require.ErrorContains(t, err, "/dev/zero is larger than 1048576 bytes, the limit for a selection file")
}
