package rt_test

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/array"
	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/group"
	"github.com/charmgo/charm/internal/jobtest"
)

// Checkpoint and restart: a job of ckPEs PEs builds a dense array, a
// sparse array (with elements inserted before and after reductions, one
// on a PE other than its home, some migrated), a group, an array created
// by a group branch (on PE 1) and a singleton chare on the last PE, runs
// reductions and broadcasts over them, sets the main chare's own fields
// and checkpoints. The checkpoint's callback, ckMain.After, runs in that
// job and again in every job restarted from the checkpoint, on fewer,
// as many and more PEs: it reads every object's state, reduces over and
// broadcasts to every collection, inserts into the sparse array and
// creates new collections, and records what it saw (ckSummary) for the
// test to compare with the original job's.

// ---- the chare types ----

// ckMain is the main chare. Its exported fields are checkpointed.
type ckMain struct {
	chare.Chare[ckMain]
	Dense  array.Proxy[ckElem, int]
	Sparse array.Proxy[ckElem, int]
	Aux    array.Proxy[ckElem, int] // created by the group's branch on PE 1
	Grp    group.Proxy[ckBranch]
	Solo   chare.Proxy[ckSolo]
	Keys   []int // the sparse array's indices
	Label  string
	Steps  []int
	Afters int // After runs; the checkpoint holds 0
}

// ckElem is the element type of every array here.
type ckElem struct {
	array.Element[ckElem, int]
	Val     int
	Born    int // the PE where Set ran
	Hits    int // broadcasts received
	LastHit int
	Reds    int // contributions made
	Moves   int
}

type ckElemState struct{ Val, Born, Hits, LastHit, Reds, RedNo, Moves, PE int }

func (e *ckElem) Set(v int) { e.Val, e.Born = v, e.PE() }
func (e *ckElem) Hit(k int) { e.Hits, e.LastHit = e.Hits+1, k }
func (e *ckElem) Move(to int) {
	e.Moves++
	inJob.NoError(e.Migrate(to))
}
func (e *ckElem) Sum(cb chare.Callback) {
	e.Reds++
	inJob.NoError(e.Contribute(e.Val, sumInt{}, cb))
}
func (e *ckElem) State(int) ckElemState {
	return ckElemState{Val: e.Val, Born: e.Born, Hits: e.Hits, LastHit: e.LastHit, Reds: e.Reds,
		RedNo: e.MemberState().RedNo, Moves: e.Moves, PE: e.PE()}
}

// ckBranch is the group type.
type ckBranch struct {
	group.Branch[ckBranch]
	Val    int
	Born   int
	Hits   int
	Reds   int
	AuxIDs []chare.CollID // the arrays this branch created
}

type ckBranchState struct {
	Val, Born, Hits, Reds, RedNo, PE int
	AuxIDs                           []chare.CollID
}

func (b *ckBranch) Init(int) { b.Val, b.Born = b.PE()*10+1, b.PE() }
func (b *ckBranch) Hit(int)  { b.Hits++ }
func (b *ckBranch) Sum(cb chare.Callback) {
	b.Reds++
	inJob.NoError(b.Contribute(b.Val, sumInt{}, cb))
}
func (b *ckBranch) State(int) ckBranchState {
	return ckBranchState{Val: b.Val, Born: b.Born, Hits: b.Hits, Reds: b.Reds, RedNo: b.MemberState().RedNo,
		PE: b.PE(), AuxIDs: slices.Clone(b.AuxIDs)}
}

// MakeAux creates an array from this PE (its ID carries this PE's
// collection counter) and sets its elements' values.
func (b *ckBranch) MakeAux(n int) array.Proxy[ckElem, int] {
	a, err := array.New[ckElem](b, array.Dims(n))
	inJob.NoError(err)
	for i := range n {
		inJob.NoError(chare.Send(b, a.At(i), (*ckElem).Set, ckAuxVal(i)))
	}
	b.AuxIDs = append(b.AuxIDs, a.Route().Coll)
	return a
}

// Stats reads the location manager's counts of an array on this PE.
func (b *ckBranch) Stats(a array.Proxy[ckElem, int]) array.Stats {
	s, err := array.LocalStats(b, a)
	inJob.NoError(err)
	return s
}

// ckSolo is a singleton chare.
type ckSolo struct {
	chare.Chare[ckSolo]
	Val  string
	Born int
}

type ckSoloState struct {
	Val    string
	Born   int
	PE     int
	RouteP int // the PE its own proxy names
}

func (s *ckSolo) Set(v string) { s.Val, s.Born = v, s.PE() }
func (s *ckSolo) State(int) ckSoloState {
	return ckSoloState{Val: s.Val, Born: s.Born, PE: s.PE(), RouteP: s.ThisProxy().Route().PE}
}

func init() {
	chare.Register[ckMain](chare.Threaded((*ckMain).After))
	chare.Register[ckElem]()
	chare.Register[ckBranch]()
	chare.Register[ckSolo]()
}

// ---- the original job ----

const (
	ckPEs         = 4
	ckDenseN      = 10
	ckAuxN        = 3
	ckSparseOnPE  = 64  // inserted on PE 2, not at its home
	ckInserted    = 555 // inserted by After
	ckInsertedVal = 5550
	ckSoloVal     = "the solo's state"
	ckLabel       = "set before the checkpoint"
	ckTouch       = "touch" // an argument of ckStart: send the main chare a message first
)

var (
	ckSparseEarly = []int{5, 11, 23, 42, 77, 1000} // inserted before the sparse reductions
	ckSparseLate  = []int{300, 301}                // inserted after the first one
	ckSparseMoved = []int{11, 42, 300}             // migrated before the checkpoint
	ckSteps       = []int{3, 1, 4, 1, 5}
)

func ckDenseVal(i int) int  { return 100 + 3*i }
func ckSparseVal(i int) int { return 1000 + i }
func ckAuxVal(i int) int    { return 50 + i }
func ckNewVal(i int) int    { return 200 + i }
func ckDenseMoved(i int) bool {
	return i%3 == 0
}

// ckBlockHome is the home of index i of n under the Block map.
func ckBlockHome(i, n, pes int) int { return i * pes / n }

func ckSparseKeys() []int {
	keys := append(slices.Clone(ckSparseEarly), ckSparseOnPE)
	return append(keys, ckSparseLate...)
}

// ckStarts counts the runs of the main function (node 0 only).
var ckStarts atomic.Int32

// ckResult is what the last run of After recorded.
var ckResult struct {
	sync.Mutex
	s *ckSummary
}

func ckRecord(s *ckSummary) {
	ckResult.Lock()
	defer ckResult.Unlock()
	ckResult.s = s
}

func ckTake() *ckSummary {
	ckResult.Lock()
	defer ckResult.Unlock()
	s := ckResult.s
	ckResult.s = nil
	return s
}

func ckSum[T any](m *ckMain, to chare.Target[T], method func(*T, chare.Callback)) int {
	f := chare.NewFuture[int](m)
	inJob.NoError(chare.Send(m, to, method, f.Callback()))
	return get(m, f)
}

func ckElemStates(m *ckMain, a array.Proxy[ckElem, int], keys []int) map[int]ckElemState {
	fs := map[int]chare.Future[ckElemState]{}
	for _, i := range keys {
		f, err := chare.Call(m, a.At(i), (*ckElem).State, 0)
		inJob.NoError(err)
		fs[i] = f
	}
	out := map[int]ckElemState{}
	for i, f := range fs {
		out[i] = get(m, f)
	}
	return out
}

func ckBranchStates(m *ckMain, g group.Proxy[ckBranch]) map[int]ckBranchState {
	out := map[int]ckBranchState{}
	for p := range m.NumPEs() {
		f, err := chare.Call(m, g.At(p), (*ckBranch).State, 0)
		inJob.NoError(err)
		out[p] = get(m, f)
	}
	return out
}

func ckSoloStateOf(m *ckMain, s chare.Proxy[ckSolo]) ckSoloState {
	f, err := chare.Call(m, s, (*ckSolo).State, 0)
	inJob.NoError(err)
	return get(m, f)
}

// ckStart is the main function of the original job; its arguments are
// the checkpoint's directory and, optionally, ckTouch.
func ckStart(m *ckMain, args []string) {
	ckStarts.Add(1)
	inJob.NotEmpty(args)
	dir := args[0]
	pes := m.NumPEs()
	inJob.Equal(ckPEs, pes)

	// The dense array: values, two broadcasts, two reductions, and a third
	// of the elements migrated to the next PE.
	dense, err := array.New[ckElem](m, array.Dims(ckDenseN))
	inJob.NoError(err)
	want := 0
	for i := range ckDenseN {
		inJob.NoError(chare.Send(m, dense.At(i), (*ckElem).Set, ckDenseVal(i)))
		want += ckDenseVal(i)
	}
	quiesce(m) // the values are set before the broadcasts start
	for k := range 2 {
		inJob.NoError(chare.Send(m, dense, (*ckElem).Hit, k))
	}
	for k := range 2 {
		inJob.Equal(want, ckSum(m, dense, (*ckElem).Sum), "dense reduction %d", k)
	}
	for i := range ckDenseN {
		if ckDenseMoved(i) {
			inJob.NoError(chare.Send(m, dense.At(i), (*ckElem).Move, (ckBlockHome(i, ckDenseN, pes)+1)%pes))
		}
	}

	// The sparse array: elements inserted at home and one elsewhere, a
	// broadcast, a reduction, two more elements (which join the next
	// reduction), another reduction, and some elements migrated.
	sparse, err := array.New[ckElem](m, array.Sparse[int]())
	inJob.NoError(err)
	want = 0
	for _, i := range ckSparseEarly {
		inJob.NoError(sparse.Insert(m, i, array.AtHome))
		inJob.NoError(chare.Send(m, sparse.At(i), (*ckElem).Set, ckSparseVal(i)))
		want += ckSparseVal(i)
	}
	inJob.NoError(sparse.Insert(m, ckSparseOnPE, 2))
	inJob.NoError(chare.Send(m, sparse.At(ckSparseOnPE), (*ckElem).Set, ckSparseVal(ckSparseOnPE)))
	want += ckSparseVal(ckSparseOnPE)
	quiesce(m) // every element exists before the broadcast
	inJob.NoError(chare.Send(m, sparse, (*ckElem).Hit, 0))
	inJob.Equal(want, ckSum(m, sparse, (*ckElem).Sum), "first sparse reduction")
	for _, i := range ckSparseLate {
		inJob.NoError(sparse.Insert(m, i, array.AtHome))
		inJob.NoError(chare.Send(m, sparse.At(i), (*ckElem).Set, ckSparseVal(i)))
		want += ckSparseVal(i)
	}
	inJob.NoError(sparse.DoneInserting(m))
	// The new elements must exist before the broadcast that starts the
	// next reduction: a broadcast sent right after Insert reaches none of
	// the elements being inserted, although the root counts them in the
	// first reduction not complete, which would then never complete.
	quiesce(m)
	inJob.Equal(want, ckSum(m, sparse, (*ckElem).Sum), "second sparse reduction")
	before := ckElemStates(m, sparse, ckSparseMoved)
	for _, i := range ckSparseMoved {
		inJob.NoError(chare.Send(m, sparse.At(i), (*ckElem).Move, (before[i].PE+1)%pes))
	}

	// The group: branch p holds p*10+1; a broadcast and a reduction.
	g, err := group.New[ckBranch](m)
	inJob.NoError(err)
	inJob.NoError(chare.Send(m, g, (*ckBranch).Init, 0))
	inJob.NoError(chare.Send(m, g, (*ckBranch).Hit, 0))
	inJob.Equal(1+11+21+31, ckSum(m, g, (*ckBranch).Sum), "group reduction")

	// An array that PE 1 creates, with one reduction.
	fa, err := chare.Call(m, g.At(1), (*ckBranch).MakeAux, ckAuxN)
	inJob.NoError(err)
	aux := get(m, fa)
	inJob.Equal(uint32(1), uint32(uint64(aux.Route().Coll)>>32), "the aux array is made on PE 1")
	quiesce(m)
	inJob.Equal(ckAuxVal(0)+ckAuxVal(1)+ckAuxVal(2), ckSum(m, aux, (*ckElem).Sum), "aux reduction")

	// A singleton on the last PE.
	solo, err := chare.New[ckSolo](m, pes-1)
	inJob.NoError(err)
	inJob.NoError(chare.Send(m, solo, (*ckSolo).Set, ckSoloVal))

	quiesce(m)
	// The migrations happened: the checkpoint holds elements away from home.
	for i, st := range ckElemStates(m, dense, upTo(ckDenseN)) {
		home := ckBlockHome(i, ckDenseN, pes)
		if ckDenseMoved(i) {
			inJob.Equal((home+1)%pes, st.PE, "dense element %d migrated", i)
		} else {
			inJob.Equal(home, st.PE, "dense element %d", i)
		}
	}
	for i, st := range ckElemStates(m, sparse, ckSparseMoved) {
		inJob.Equal((before[i].PE+1)%pes, st.PE, "sparse element %d migrated", i)
	}

	m.Dense, m.Sparse, m.Aux, m.Grp, m.Solo = dense, sparse, aux, g, solo
	m.Keys = ckSparseKeys()
	m.Label, m.Steps = ckLabel, slices.Clone(ckSteps)
	if slices.Contains(args, ckTouch) {
		// The main chare gets a message before the checkpoint. Without
		// one, its part on PE 0 is never made (Run binds the object but
		// leaves the part to the first message), so the checkpoint
		// leaves it out (see TestCheckpointMainWithoutMessages).
		inJob.NoError(chare.Send(m, m.ThisProxy(), (*ckMain).Touch, 0))
	}
	inJob.NoError(chare.Checkpoint(m, dir, chare.EntryCallback0(m.ThisProxy(), (*ckMain).After)))
}

// ---- what After sees ----

type ckSnap struct {
	Dense, Sparse, Aux map[int]ckElemState
	Group              map[int]ckBranchState
	Solo               ckSoloState
}

type ckSummary struct {
	PEs    int
	Nodes  int // processes
	Label  string
	Steps  []int
	Afters int
	Keys   []int

	OldIDs []chare.CollID // main, dense, sparse, aux, group, solo
	NewIDs []chare.CollID // made by After: an array, a group, a singleton, an aux array from PE 1

	S0 ckSnap // on entry
	S1 ckSnap // after a reduction over every collection (two over the sparse array), an insertion and broadcasts

	DenseSum, SparseSum, SparseSum2, AuxSum, GroupSum int
	Forwarded                                         int // messages forwarded by the location managers of dense and sparse, over all PEs

	NewArraySum, NewGroupSum int
	NewSoloPE                int
	NewAux                   array.Proxy[ckElem, int]
}

// Touch does nothing: it is a message to the main chare.
func (m *ckMain) Touch(int) {}

// After runs once the checkpoint is written, and again in every job
// restarted from it.
func (m *ckMain) After() {
	m.Afters++
	pes := m.NumPEs()
	s := &ckSummary{PEs: pes, Nodes: chare.PEOf(m).Job().Runtime().NumNodes(), Label: m.Label, Steps: slices.Clone(m.Steps), Afters: m.Afters, Keys: slices.Clone(m.Keys)}
	s.OldIDs = []chare.CollID{m.ThisProxy().Route().Coll, m.Dense.Route().Coll, m.Sparse.Route().Coll, m.Aux.Route().Coll,
		m.Grp.Route().Coll, m.Solo.Route().Coll}
	snap := func(sparseKeys []int) ckSnap {
		return ckSnap{
			Dense:  ckElemStates(m, m.Dense, upTo(ckDenseN)),
			Sparse: ckElemStates(m, m.Sparse, sparseKeys),
			Aux:    ckElemStates(m, m.Aux, upTo(ckAuxN)),
			Group:  ckBranchStates(m, m.Grp),
			Solo:   ckSoloStateOf(m, m.Solo),
		}
	}
	s.S0 = snap(m.Keys)

	s.DenseSum = ckSum(m, m.Dense, (*ckElem).Sum)
	s.SparseSum = ckSum(m, m.Sparse, (*ckElem).Sum)
	s.AuxSum = ckSum(m, m.Aux, (*ckElem).Sum)
	s.GroupSum = ckSum(m, m.Grp, (*ckBranch).Sum)

	// An insertion into the restored sparse array joins its next reduction.
	inJob.NoError(m.Sparse.Insert(m, ckInserted, array.AtHome))
	inJob.NoError(chare.Send(m, m.Sparse.At(ckInserted), (*ckElem).Set, ckInsertedVal))
	quiesce(m)
	s.SparseSum2 = ckSum(m, m.Sparse, (*ckElem).Sum)

	// One broadcast to each collection.
	inJob.NoError(chare.Send(m, m.Dense, (*ckElem).Hit, 2))
	inJob.NoError(chare.Send(m, m.Sparse, (*ckElem).Hit, 1))
	inJob.NoError(chare.Send(m, m.Aux, (*ckElem).Hit, 0))
	inJob.NoError(chare.Send(m, m.Grp, (*ckBranch).Hit, 1))
	quiesce(m)
	s.S1 = snap(append(slices.Clone(m.Keys), ckInserted))

	for p := range pes {
		for _, a := range []array.Proxy[ckElem, int]{m.Dense, m.Sparse} {
			f, err := chare.Call(m, m.Grp.At(p), (*ckBranch).Stats, a)
			inJob.NoError(err)
			s.Forwarded += get(m, f).Forwarded
		}
	}

	// New collections: their IDs must not be those of restored ones.
	na, err := array.New[ckElem](m, array.Dims(4))
	inJob.NoError(err)
	for i := range 4 {
		inJob.NoError(chare.Send(m, na.At(i), (*ckElem).Set, ckNewVal(i)))
	}
	ng, err := group.New[ckBranch](m)
	inJob.NoError(err)
	inJob.NoError(chare.Send(m, ng, (*ckBranch).Init, 0))
	ns, err := chare.New[ckSolo](m, chare.AnyPE)
	inJob.NoError(err)
	inJob.NoError(chare.Send(m, ns, (*ckSolo).Set, "new"))
	fa, err := chare.Call(m, m.Grp.At(1%pes), (*ckBranch).MakeAux, 2)
	inJob.NoError(err)
	s.NewAux = get(m, fa)
	quiesce(m)
	s.NewIDs = []chare.CollID{na.Route().Coll, ng.Route().Coll, ns.Route().Coll, s.NewAux.Route().Coll}
	s.NewArraySum = ckSum(m, na, (*ckElem).Sum)
	s.NewGroupSum = ckSum(m, ng, (*ckBranch).Sum)
	st := ckSoloStateOf(m, ns)
	inJob.Equal("new", st.Val)
	s.NewSoloPE = st.PE
	// The aux array made now is usable beside the restored one.
	inJob.Equal(ckAuxVal(0)+ckAuxVal(1), ckSum(m, s.NewAux, (*ckElem).Sum), "the new aux array's reduction")

	ckRecord(s)
	m.Exit(0)
}

// ---- the test ----

func TestCheckpointRestart(t *testing.T) {
	dir := t.TempDir()
	cfg := jobConfig(t, ckPEs)
	cfg.Args = []string{dir, ckTouch}
	starts := ckStarts.Load()
	code, err := runConfig(t, cfg, ckStart)
	require.NoError(t, err)
	require.Equal(t, 0, code)
	require.Equal(t, starts+1, ckStarts.Load())
	orig := ckTake()
	require.NotNil(t, orig, "After did not record a summary")
	require.Equal(t, testNodes, orig.Nodes)
	_, err = os.Stat(filepath.Join(dir, chare.CheckpointFile))
	require.NoError(t, err, "the checkpoint file")
	checkOriginal(t, orig)

	restart := func(t *testing.T, cfg chare.Config, nodes int) {
		t.Helper()
		cfg.Restart = dir
		starts := ckStarts.Load()
		code, err := runConfig(t, cfg, ckStart)
		require.NoError(t, err)
		require.Equal(t, 0, code)
		require.Equal(t, starts, ckStarts.Load(), "a restart does not run the main function")
		r := ckTake()
		require.NotNil(t, r, "After did not record a summary: the checkpoint's callback did not run")
		require.Equal(t, nodes, r.Nodes, "processes")
		checkRestart(t, orig, r, cfg.PEs)
	}
	for _, pes := range []int{2, 5, ckPEs, 1} {
		t.Run(fmt.Sprintf("restart_on_%d_PEs", pes), func(t *testing.T) {
			restart(t, jobConfig(t, pes), testNodes)
		})
	}
	// The checkpoint of a job of one process restarted as two, and that
	// of a job of two restarted as one.
	t.Run("restart_as_other_processes", func(t *testing.T) {
		switch testNodes {
		case 1:
			// 4 PEs: nodes {0, 1} and {2, 3}; PE 1, which made the aux
			// array, is on node 0.
			restart(t, asTwoProcesses(t, 4), 2)
		case 2:
			restart(t, chare.Config{PEs: 3, Timeout: jobDeadline}, 1)
		default:
			t.Skipf("with %s=%d, the other runs cover it", envTestNodes, testNodes)
		}
	})
	t.Run("restart_as_two_processes_creator_on_node_1", func(t *testing.T) {
		if testNodes != 1 {
			t.Skipf("the checkpoint must come from a job of one process (%s=%d)", envTestNodes, testNodes)
		}
		restart(t, asTwoProcesses(t, 3), 2)
	})
}

// asTwoProcesses is the configuration of a job of pes PEs as two
// processes, launched as jobConfig launches them.
func asTwoProcesses(t *testing.T, pes int) chare.Config {
	cfg := jobConfig(t, pes)
	cfg.Nodes = 2
	cfg.Launch = jobtest.Launch(t)
	return cfg
}

// TestCheckpointMainWithoutMessages: a main chare that got no message
// before the checkpoint (it ran only its main function) is checkpointed
// and restored like the others.
func TestCheckpointMainWithoutMessages(t *testing.T) {
	dir := t.TempDir()
	cfg := jobConfig(t, ckPEs)
	cfg.Args = []string{dir}
	code, err := runConfig(t, cfg, ckStart)
	require.NoError(t, err)
	require.Equal(t, 0, code)
	orig := ckTake()
	require.NotNil(t, orig, "After did not record a summary")
	checkOriginal(t, orig)

	cfg = jobConfig(t, 2)
	cfg.Restart = dir
	code, err = runConfig(t, cfg, ckStart)
	require.NoError(t, err, "the restored main chare has lost its fields, proxies among them")
	require.Equal(t, 0, code)
	r := ckTake()
	require.NotNil(t, r, "After did not record a summary")
	checkRestart(t, orig, r, 2)
}

// checkOriginal checks the original job's summary against what its main
// function did.
func checkOriginal(t *testing.T, s *ckSummary) {
	t.Helper()
	require.Equal(t, ckPEs, s.PEs)
	require.Equal(t, ckLabel, s.Label)
	require.Equal(t, ckSteps, s.Steps)
	require.Equal(t, 1, s.Afters)
	for i := range ckDenseN {
		home := ckBlockHome(i, ckDenseN, ckPEs)
		want := ckElemState{Val: ckDenseVal(i), Born: home, Hits: 2, LastHit: 1, Reds: 2, RedNo: 2, PE: home}
		if ckDenseMoved(i) {
			want.Moves, want.PE = 1, (home+1)%ckPEs
		}
		require.Equal(t, want, s.S0.Dense[i], "dense element %d", i)
	}
	require.Len(t, s.S0.Sparse, len(ckSparseKeys()))
	for _, i := range ckSparseKeys() {
		st := s.S0.Sparse[i]
		want := ckElemState{Val: ckSparseVal(i), Born: st.Born, Hits: 1, Reds: 2, RedNo: 2, PE: st.Born}
		if slices.Contains(ckSparseLate, i) {
			want.Hits, want.Reds = 0, 1 // inserted after the broadcast and the first reduction
		}
		if slices.Contains(ckSparseMoved, i) {
			want.Moves, want.PE = 1, (st.Born+1)%ckPEs
		}
		require.Equal(t, want, st, "sparse element %d", i)
	}
	require.Equal(t, 2, s.S0.Sparse[ckSparseOnPE].Born, "element %d was inserted on PE 2", ckSparseOnPE)
	for i := range ckAuxN {
		home := ckBlockHome(i, ckAuxN, ckPEs)
		require.Equal(t, ckElemState{Val: ckAuxVal(i), Born: home, Reds: 1, RedNo: 1, PE: home}, s.S0.Aux[i], "aux element %d", i)
	}
	require.Len(t, s.S0.Group, ckPEs)
	for p := range ckPEs {
		want := ckBranchState{Val: p*10 + 1, Born: p, Hits: 1, Reds: 1, RedNo: 1, PE: p}
		if p == 1 {
			want.AuxIDs = []chare.CollID{s.OldIDs[3]}
		}
		require.Equal(t, want, s.S0.Group[p], "branch %d", p)
	}
	require.Equal(t, ckSoloState{Val: ckSoloVal, Born: ckPEs - 1, PE: ckPEs - 1, RouteP: ckPEs - 1}, s.S0.Solo)
	checkAfter(t, s)
}

// checkAfter checks what After did on top of the state it found: sums,
// an insertion, one broadcast received once by every member, new
// collections with IDs of their own.
func checkAfter(t *testing.T, s *ckSummary) {
	t.Helper()
	sum := func(m map[int]ckElemState) int {
		n := 0
		for _, st := range m {
			n += st.Val
		}
		return n
	}
	require.Equal(t, sum(s.S0.Dense), s.DenseSum, "dense reduction")
	require.Equal(t, sum(s.S0.Sparse), s.SparseSum, "sparse reduction")
	require.Equal(t, sum(s.S0.Sparse)+ckInsertedVal, s.SparseSum2, "sparse reduction with the inserted element")
	require.Equal(t, sum(s.S0.Aux), s.AuxSum, "aux reduction")
	groupSum := 0
	for _, st := range s.S0.Group {
		groupSum += st.Val
	}
	require.Equal(t, groupSum, s.GroupSum, "group reduction")

	// Each member got the broadcast once, and contributed once more.
	bumped := func(st ckElemState, reds int) ckElemState {
		st.Hits++
		st.Reds += reds
		st.RedNo += reds
		return st
	}
	lastHit := func(st ckElemState, k int) ckElemState { st.LastHit = k; return st }
	for i, st := range s.S0.Dense {
		require.Equal(t, lastHit(bumped(st, 1), 2), s.S1.Dense[i], "dense element %d after After's broadcast and reduction", i)
	}
	for i, st := range s.S0.Sparse {
		require.Equal(t, lastHit(bumped(st, 2), 1), s.S1.Sparse[i], "sparse element %d after After's broadcast and reductions", i)
	}
	ins := s.S1.Sparse[ckInserted]
	require.Equal(t, ckElemState{Val: ckInsertedVal, Born: ins.PE, Hits: 1, LastHit: 1, Reds: 1, RedNo: s.S0.Sparse[5].RedNo + 2, PE: ins.PE}, ins,
		"the element After inserted joined the next reduction (number %d) and got the broadcast", s.S0.Sparse[5].RedNo+1)
	for i, st := range s.S0.Aux {
		require.Equal(t, bumped(st, 1), s.S1.Aux[i], "aux element %d", i)
	}
	require.Len(t, s.S1.Group, s.PEs)
	for p, st := range s.S0.Group {
		st.Hits++
		st.Reds++
		st.RedNo++
		require.Equal(t, st, s.S1.Group[p], "branch %d after After's broadcast and reduction", p)
	}
	require.Equal(t, s.S0.Solo, s.S1.Solo)

	// New collections.
	for _, id := range s.NewIDs {
		require.NotContains(t, s.OldIDs, id, "new collection %v has the ID of a restored one (old %v, new %v)", id, s.OldIDs, s.NewIDs)
	}
	require.Len(t, slices.Compact(slices.Sorted(slices.Values(s.NewIDs))), len(s.NewIDs), "new IDs %v", s.NewIDs)
	require.Equal(t, uint32(1%s.PEs), uint32(uint64(s.NewIDs[3])>>32), "the new aux array is made on PE 1 (0 in a job of 1 PE)")
	require.Equal(t, ckNewVal(0)+ckNewVal(1)+ckNewVal(2)+ckNewVal(3), s.NewArraySum)
	wantGroup := 0
	for p := range s.PEs {
		wantGroup += p*10 + 1
	}
	require.Equal(t, wantGroup, s.NewGroupSum, "new group's reduction")
	require.True(t, s.NewSoloPE >= 0 && s.NewSoloPE < s.PEs, "new singleton on PE %d", s.NewSoloPE)
}

// checkRestart checks a restarted job's summary against the original's.
func checkRestart(t *testing.T, orig, r *ckSummary, pes int) {
	t.Helper()
	require.Equal(t, pes, r.PEs)
	// The main chare is the restored one: its fields are those of the
	// checkpoint (Afters was 0 then), its collections the same ones.
	require.Equal(t, ckLabel, r.Label)
	require.Equal(t, ckSteps, r.Steps)
	require.Equal(t, 1, r.Afters, "the main chare's state is the checkpoint's, not the one After left")
	require.Equal(t, ckSparseKeys(), r.Keys)
	require.Equal(t, orig.OldIDs, r.OldIDs)

	noPE := func(st ckElemState) ckElemState { st.PE = 0; return st }
	// Dense elements: the same state, each at its home under the new map.
	require.Len(t, r.S0.Dense, ckDenseN)
	for i := range ckDenseN {
		require.Equal(t, noPE(orig.S0.Dense[i]), noPE(r.S0.Dense[i]), "dense element %d", i)
		require.Equal(t, ckBlockHome(i, ckDenseN, pes), r.S0.Dense[i].PE, "dense element %d is at its home on %d PEs", i, pes)
	}
	// Sparse elements: the same state; they are at their homes, as no
	// message to them was forwarded.
	require.Len(t, r.S0.Sparse, len(ckSparseKeys()))
	for _, i := range ckSparseKeys() {
		require.Equal(t, noPE(orig.S0.Sparse[i]), noPE(r.S0.Sparse[i]), "sparse element %d", i)
		require.Less(t, r.S0.Sparse[i].PE, pes)
	}
	require.Zero(t, r.Forwarded, "messages forwarded: a restored element is not at its home")
	require.Len(t, r.S0.Aux, ckAuxN)
	for i := range ckAuxN {
		require.Equal(t, noPE(orig.S0.Aux[i]), noPE(r.S0.Aux[i]), "aux element %d", i)
		require.Equal(t, ckBlockHome(i, ckAuxN, pes), r.S0.Aux[i].PE, "aux element %d", i)
	}
	// Group branches: branch p has the old branch p's state, or branch 0's
	// on a PE the old job did not have.
	require.Len(t, r.S0.Group, pes)
	for p := range pes {
		want := orig.S0.Group[p]
		if p >= ckPEs {
			want = orig.S0.Group[0]
			want.PE = p
			require.Equal(t, 1, r.S0.Group[p].Val, "branch %d (a new PE) has branch 0's value", p)
			require.Equal(t, 0, r.S0.Group[p].Born, "branch %d (a new PE) has branch 0's state", p)
		}
		require.Equal(t, want, r.S0.Group[p], "branch %d", p)
	}
	// The singleton lives on its old PE modulo the PEs; its proxy follows.
	require.Equal(t, ckSoloState{Val: ckSoloVal, Born: ckPEs - 1, PE: (ckPEs - 1) % pes, RouteP: (ckPEs - 1) % pes}, r.S0.Solo)

	require.Equal(t, orig.DenseSum, r.DenseSum)
	require.Equal(t, orig.SparseSum, r.SparseSum)
	require.Equal(t, orig.SparseSum2, r.SparseSum2)
	require.Equal(t, orig.AuxSum, r.AuxSum)
	checkAfter(t, r)
}

// ---- mistakes ----

// TestCheckpointBadRestart: a restart from a missing, empty or damaged
// checkpoint fails before any job starts, saying what is wrong; so does
// a checkpoint that cannot be written or that is given the wrong callback.
func TestCheckpointBadRestart(t *testing.T) {
	good := t.TempDir()
	code := run(t, 2, func(m *tmain, _ []string) {
		f := chare.NewFuture[any](m)
		err := chare.Checkpoint(m, good, f.Callback())
		inJob.ErrorContains(err, "callback")
		inJob.ErrorContains(err, "future")
		err = chare.Checkpoint(m, good, chare.FuncCallback(m, 0, func(chare.Context, any) {}))
		inJob.ErrorContains(err, "callback")
		inJob.ErrorContains(err, "func")
		err = chare.Checkpoint(m, "", chare.ExitCallback(0))
		inJob.ErrorContains(err, "directory")
		inJob.NoError(chare.Checkpoint(m, good, chare.ExitCallback(7)))
	})
	require.Equal(t, 7, code, "the exit callback ends the job after the checkpoint")
	body, err := os.ReadFile(filepath.Join(good, chare.CheckpointFile))
	require.NoError(t, err)
	magic := []byte("CHARMGO-CKPT-2\n\x00")
	sumAt := len(magic) + 8 // the body's length, then its checksum
	head := sumAt + sha256.Size
	require.True(t, bytes.HasPrefix(body, magic), "the file starts with its magic")
	require.Greater(t, len(body), head+16)

	// restartFrom restarts a job from dir; it must fail.
	restartFrom := func(t *testing.T, dir string) error {
		t.Helper()
		cfg := jobConfig(t, 2)
		cfg.Restart = dir
		code, err := runConfig(t, cfg, func(m *tmain, _ []string) {
			panic("the main function ran on a restart")
		})
		require.Error(t, err)
		require.Equal(t, 1, code)
		return err
	}
	// withFile writes a checkpoint directory holding b.
	withFile := func(t *testing.T, b []byte) string {
		dir := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(dir, chare.CheckpointFile), b, 0o644))
		return dir
	}
	flip := func(at int) []byte {
		b := slices.Clone(body)
		b[at] ^= 0x20
		return b
	}

	t.Run("missing_directory", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "nowhere")
		err := restartFrom(t, dir)
		require.ErrorIs(t, err, fs.ErrNotExist)
		require.ErrorContains(t, err, "checkpoint directory "+dir)
	})
	t.Run("not_a_directory", func(t *testing.T) {
		dir := filepath.Join(withFile(t, body), chare.CheckpointFile)
		require.ErrorContains(t, restartFrom(t, dir), "is not a directory")
	})
	t.Run("empty_directory", func(t *testing.T) {
		dir := t.TempDir()
		err := restartFrom(t, dir)
		require.ErrorIs(t, err, fs.ErrNotExist)
		require.ErrorContains(t, err, "no checkpoint in "+dir)
	})
	t.Run("empty_file", func(t *testing.T) {
		err := restartFrom(t, withFile(t, nil))
		require.ErrorContains(t, err, "truncated")
		require.ErrorContains(t, err, "bad header")
	})
	t.Run("truncated_header", func(t *testing.T) {
		err := restartFrom(t, withFile(t, body[:head-1]))
		require.ErrorContains(t, err, "truncated")
		require.ErrorContains(t, err, "bad header")
	})
	t.Run("truncated_body", func(t *testing.T) {
		for _, n := range []int{head, head + (len(body)-head)/2, len(body) - 1} {
			err := restartFrom(t, withFile(t, body[:n]))
			require.ErrorContains(t, err, fmt.Sprintf("truncated: it has %d bytes, its header declares %d", n, len(body)), "cut to %d bytes of %d", n, len(body))
		}
	})
	t.Run("bytes_appended", func(t *testing.T) {
		err := restartFrom(t, withFile(t, append(slices.Clone(body), 0xc0)))
		require.ErrorContains(t, err, "corrupt")
		require.ErrorContains(t, err, fmt.Sprintf("larger than its header declares, so it is corrupt: it has %d bytes, its header declares %d", len(body)+1, len(body)))
	})
	t.Run("byte_flipped_in_body", func(t *testing.T) {
		for _, at := range []int{head, head + (len(body)-head)/2, len(body) - 1} {
			err := restartFrom(t, withFile(t, flip(at)))
			require.ErrorContains(t, err, "corrupt", "byte %d of %d flipped", at, len(body))
			require.ErrorContains(t, err, "checksum", "byte %d of %d flipped", at, len(body))
		}
	})
	t.Run("byte_flipped_in_checksum", func(t *testing.T) {
		err := restartFrom(t, withFile(t, flip(sumAt+3)))
		require.ErrorContains(t, err, "corrupt")
		require.ErrorContains(t, err, "checksum")
	})
	t.Run("byte_flipped_in_magic", func(t *testing.T) {
		require.ErrorContains(t, restartFrom(t, withFile(t, flip(2))), "bad header")
	})
	t.Run("another_program", func(t *testing.T) {
		// A valid file whose program fingerprint differs: the checksum
		// matches, the types do not.
		fp := []byte(chare.Fingerprint())
		at := bytes.Index(body[head:], fp)
		require.GreaterOrEqual(t, at, 0, "the fingerprint %s is in the body", fp)
		b := slices.Clone(body)
		copy(b[head+at:], bytes.Repeat([]byte("0"), len(fp)))
		sum := sha256.Sum256(b[head:])
		copy(b[sumAt:], sum[:])
		require.ErrorContains(t, restartFrom(t, withFile(t, b)), "another program")
	})
	t.Run("unwritable_directory", func(t *testing.T) {
		// The directory's place is taken by a file: the checkpoint fails
		// when PE 0 writes it, and the job aborts saying so.
		file := filepath.Join(withFile(t, body), chare.CheckpointFile)
		_, err := runJob(t, 2, func(m *tmain, _ []string) {
			inJob.NoError(chare.Checkpoint(m, filepath.Join(file, "sub"), chare.ExitCallback(0)))
		})
		require.Error(t, err)
		require.ErrorContains(t, err, "checkpoint directory")
		require.False(t, errors.Is(err, fs.ErrNotExist), "%v", err)
	})
}

// TestCheckpointRefusesPartialReduction: at quiescence, a reduction that
// some members have contributed to and others have not would be lost by a
// checkpoint; the job stops with an error that says so.
func TestCheckpointRefusesPartialReduction(t *testing.T) {
	_, err := runJob(t, 4, func(m *tmain, _ []string) {
		g, err := group.New[ckBranch](m)
		inJob.NoError(err)
		for pe := range 2 {
			inJob.NoError(chare.Send(m, g.At(pe), (*ckBranch).Sum, chare.IgnoreCallback()))
		}
		quiesce(m)
		inJob.NoError(chare.Checkpoint(m, t.TempDir(), chare.ExitCallback(0)))
	})
	require.ErrorContains(t, err, "is under way")
	require.ErrorContains(t, err, "checkpoint between reductions")
}
