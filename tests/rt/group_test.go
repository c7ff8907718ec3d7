package rt_test

import (
	"fmt"
	"testing"

	"github.com/charmgo/charm/actor"
	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/group"
)

// Groups: broadcasts reach every branch once, At addresses one branch,
// LocalBranch finds the caller's branch, NewWith initialises every branch
// first; node groups have one branch per process, on its first PE.

type grp struct {
	group.Branch[grp]
	hits   int
	atPEs  []int
	inited bool
	val    int
}

type grpHit struct{}

type grpAt struct{ PE int }

type grpInit struct{ Val int }

// grpState is what a branch reports.
type grpState struct {
	PE, Index, Hits, Val int
	AtPEs                []int
	Inited               bool
}

func (g *grp) Init(m grpInit) {
	inJob.False(g.inited, "init ran twice on PE %d", g.PE())
	g.inited, g.val = true, m.Val
}

func (g *grp) Hit(grpHit) { g.hits++ }

func (g *grp) At(m grpAt) { g.atPEs = append(g.atPEs, m.PE) }

func (g *grp) Report(cb chare.Callback) {
	inJob.NoError(g.Contribute(grpState{PE: g.PE(), Index: g.Index().(int), Hits: g.hits, Val: g.val, AtPEs: g.atPEs, Inited: g.inited}, gather[int, grpState]{}, cb))
}

// grpProbe finds the branch of another group on its own PE.
type grpProbe struct {
	group.Branch[grpProbe]
}

type grpProbeMsg struct {
	Target group.Proxy[grp]
	Done   chare.Callback
}

func (p *grpProbe) Probe(m grpProbeMsg) {
	b := group.LocalBranch(p, m.Target)
	inJob.NotNil(b, "no local branch on PE %d", p.PE())
	inJob.NoError(p.Contribute(b.PE(), gather[int, int]{}, m.Done))
}

func init() {
	chare.Register[grp]()
	chare.Register[grpProbe]()
	registerReducers(gather[int, grpState]{}, gather[int, int]{}, gather[int, bool]{})
}

func grpReport(m *tmain, g group.Proxy[grp]) map[int]grpState {
	f := chare.NewFuture[map[int]grpState](m)
	inJob.NoError(chare.Send(m, g, (*grp).Report, f.Callback()))
	return get(m, f)
}

var groupPEs = []int{1, 2, 3, 5}

func TestGroupBroadcastReachesEveryPEOnce(t *testing.T) {
	for _, pes := range groupPEs {
		t.Run(fmt.Sprintf("%dPEs", pes), func(t *testing.T) {
			runMain(t, pes, func(m *tmain) {
				g, err := group.New[grp](m)
				inJob.NoError(err)
				for range 3 {
					inJob.NoError(chare.Send(m, g, (*grp).Hit, grpHit{}))
				}
				got := grpReport(m, g)
				inJob.Len(got, pes)
				for pe := 0; pe < pes; pe++ {
					st := got[pe]
					inJob.Equal(3, st.Hits, "PE %d", pe)
					inJob.Equal(pe, st.PE)
					inJob.Equal(pe, st.Index)
				}
			})
		})
	}
}

func TestGroupAt(t *testing.T) {
	for _, pes := range groupPEs {
		t.Run(fmt.Sprintf("%dPEs", pes), func(t *testing.T) {
			runMain(t, pes, func(m *tmain) {
				g, err := group.New[grp](m)
				inJob.NoError(err)
				// PE p gets p+1 messages.
				for pe := 0; pe < pes; pe++ {
					for range pe + 1 {
						inJob.NoError(chare.Send(m, g.At(pe), (*grp).At, grpAt{pe}))
					}
				}
				got := grpReport(m, g)
				for pe := 0; pe < pes; pe++ {
					st := got[pe]
					inJob.Len(st.AtPEs, pe+1, "PE %d", pe)
					for _, p := range st.AtPEs {
						inJob.Equal(pe, p, "a message for PE %d reached PE %d", p, pe)
					}
					inJob.Zero(st.Hits)
				}
			})
		})
	}
}

func TestGroupLocalBranch(t *testing.T) {
	const pes = 4
	runMain(t, pes, func(m *tmain) {
		g, err := group.New[grp](m)
		inJob.NoError(err)
		b := group.LocalBranch(m, g)
		inJob.NotNil(b)
		inJob.Equal(0, b.PE(), "the main chare runs on PE 0")

		probes, err := group.New[grpProbe](m)
		inJob.NoError(err)
		f := chare.NewFuture[map[int]int](m)
		inJob.NoError(chare.Send(m, probes, (*grpProbe).Probe, grpProbeMsg{Target: g, Done: f.Callback()}))
		got := get(m, f)
		for pe := 0; pe < pes; pe++ {
			inJob.Equal(pe, got[pe], "LocalBranch called on PE %d", pe)
		}
		inJob.Nil(group.LocalBranch[grp](nil, g))
	})
}

func TestGroupNewWith(t *testing.T) {
	for _, pes := range groupPEs {
		t.Run(fmt.Sprintf("%dPEs", pes), func(t *testing.T) {
			runMain(t, pes, func(m *tmain) {
				g, err := group.NewWith(m, (*grp).Init, grpInit{Val: 42})
				inJob.NoError(err)
				// Sent at once: init must still come first on every branch.
				inJob.NoError(chare.Send(m, g, (*grp).Hit, grpHit{}))
				got := grpReport(m, g)
				inJob.Len(got, pes)
				for pe := 0; pe < pes; pe++ {
					st := got[pe]
					inJob.True(st.Inited, "PE %d", pe)
					inJob.Equal(42, st.Val)
					inJob.Equal(1, st.Hits)
				}
			})
		})
	}
}

// Node groups: one branch per node (process), on the node's first PE; in
// one process, a single branch on PE 0.

type nodeGrp struct {
	group.Branch[nodeGrp]
	hits   int
	val    int
	pinged int
}

func (n *nodeGrp) Init(m grpInit) { n.val = m.Val }
func (n *nodeGrp) Hit(grpHit)     { n.hits++ }
func (n *nodeGrp) Ping(grpHit)    { n.pinged++ }

// Bounce broadcasts a Hit to the whole node group through ThisNodeProxy.
func (n *nodeGrp) Bounce(grpHit) {
	inJob.NoError(chare.Send(n, n.ThisNodeProxy(), (*nodeGrp).Hit, grpHit{}))
}

func (n *nodeGrp) Report(cb chare.Callback) {
	inJob.NoError(n.Contribute(grpState{PE: n.PE(), Index: n.Index().(int), Hits: n.hits + 100*n.pinged, Val: n.val}, gather[int, grpState]{}, cb))
}

// nodeProbe asks, on every PE, for the node group's local branch.
type nodeProbe struct {
	group.Branch[nodeProbe]
}

type nodeProbeMsg struct {
	Target group.NodeProxy[nodeGrp]
	Done   chare.Callback
}

func (p *nodeProbe) Probe(m nodeProbeMsg) {
	b := group.LocalNodeBranch(p, m.Target)
	inJob.NoError(p.Contribute(b != nil, gather[int, bool]{}, m.Done))
}

func init() {
	chare.Register[nodeGrp]()
	chare.Register[nodeProbe]()
}

// nodeFirstPE is the PE that hosts the node group branch of node n, in
// a job of pes PEs on testNodes processes.
func nodeFirstPE(n, pes int) int {
	lo, _ := actor.PERange(n, testNodes, pes)
	return lo
}

func TestNodeGroup(t *testing.T) {
	for _, pes := range []int{1, 3, 5} {
		t.Run(fmt.Sprintf("%dPEs", pes), func(t *testing.T) {
			runMain(t, pes, func(m *tmain) {
				ng, err := group.NewNodeWith(m, (*nodeGrp).Init, grpInit{Val: 7})
				inJob.NoError(err)
				inJob.NoError(chare.Send(m, ng, (*nodeGrp).Hit, grpHit{}))        // broadcast: one branch per node
				inJob.NoError(chare.Send(m, ng.At(0), (*nodeGrp).Ping, grpHit{})) // node 0
				inJob.NoError(chare.Send(m, ng.At(0), (*nodeGrp).Bounce, grpHit{}))

				b := group.LocalNodeBranch(m, ng)
				inJob.NotNil(b, "PE 0 hosts the branch of node 0")
				inJob.Equal(0, b.PE())

				quiesce(m) // Bounce's broadcast comes from the branch, in no order with ours
				f := chare.NewFuture[map[int]grpState](m)
				inJob.NoError(chare.Send(m, ng, (*nodeGrp).Report, f.Callback()))
				want := map[int]grpState{}
				for n := 0; n < testNodes; n++ {
					want[n] = grpState{PE: nodeFirstPE(n, pes), Index: n, Hits: 2, Val: 7}
				}
				want[0] = grpState{PE: 0, Index: 0, Hits: 2 + 100, Val: 7}
				inJob.Equal(want, get(m, f), "one branch per node, on its first PE, got both broadcasts; node 0's the ping")

				probes, err := group.New[nodeProbe](m)
				inJob.NoError(err)
				f2 := chare.NewFuture[map[int]bool](m)
				inJob.NoError(chare.Send(m, probes, (*nodeProbe).Probe, nodeProbeMsg{Target: ng, Done: f2.Callback()}))
				got2 := get(m, f2)
				for pe := 0; pe < pes; pe++ {
					first := false
					for n := 0; n < testNodes; n++ {
						first = first || pe == nodeFirstPE(n, pes)
					}
					inJob.Equal(first, got2[pe], "LocalNodeBranch on PE %d", pe)
				}

				err = chare.Send(m, ng.At(testNodes), (*nodeGrp).Ping, grpHit{})
				inJob.ErrorContains(err, fmt.Sprintf("node %d does not exist", testNodes))
			})
		})
	}
}

func TestNodeGroupNew(t *testing.T) {
	const pes = 2
	runMain(t, pes, func(m *tmain) {
		ng, err := group.NewNode[nodeGrp](m)
		inJob.NoError(err)
		inJob.NoError(chare.Send(m, ng, (*nodeGrp).Hit, grpHit{}))
		f := chare.NewFuture[map[int]grpState](m)
		inJob.NoError(chare.Send(m, ng, (*nodeGrp).Report, f.Callback()))
		want := map[int]grpState{}
		for n := 0; n < testNodes; n++ {
			want[n] = grpState{PE: nodeFirstPE(n, pes), Index: n, Hits: 1}
		}
		inJob.Equal(want, get(m, f))
	})
}
