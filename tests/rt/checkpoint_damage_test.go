package rt_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/charmgo/charm/actor"
	"github.com/charmgo/charm/array"
	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/group"
	"github.com/charmgo/charm/internal/core"
)

// Checkpoints with a valid checksum and wrong contents. The checksum is
// not a secret: a file edited by hand, or written by an older or buggy
// program, carries one. dmgCheckpoint writes a real checkpoint of a job
// with every kind of collection; dmgFile decodes its body into a mirror
// of the file's layout, a test changes one field, and dmgWrite encodes
// it again with a valid checksum. A restart from it must end with an
// error that names the file and what is wrong, never a panic, a hang or
// a job that runs on with other data.

// ---- the file's layout, as chare writes it ----

type dmgFile struct {
	Program string
	PEs     int
	Nodes   int
	Written time.Time
	Colls   []dmgColl
	Seqs    []uint32
	Reds    []dmgRed
	Resume  chare.Callback
}

type dmgColl struct {
	Spec core.Spec
	Objs []dmgObj
}

type dmgObj struct {
	PE    int
	Index []byte `msgpack:",omitempty"`
	State chare.MemberState
	Data  []byte
}

type dmgRed struct {
	Stream chare.CollID
	Next   int
}

// dmgMagic starts a checkpoint file; the body's length (8 bytes,
// big-endian) and its SHA-256 follow.
var dmgMagic = []byte("CHARMGO-CKPT-2\n\x00")

// dmgBody returns the body of the checkpoint in dir.
func dmgBody(t testing.TB, dir string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, chare.CheckpointFile))
	require.NoError(t, err)
	require.True(t, bytes.HasPrefix(b, dmgMagic))
	return b[len(dmgMagic)+8+sha256.Size:]
}

// dmgDecode decodes a checkpoint's body. The mirror must hold every field
// of the file: unknown fields are refused, and the body must encode back
// to the same bytes.
func dmgDecode(t testing.TB, body []byte) *dmgFile {
	t.Helper()
	var f dmgFile
	dec := msgpack.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields(true)
	require.NoError(t, dec.Decode(&f), "the test's mirror of the checkpoint file is out of date")
	again, err := msgpack.Marshal(&f)
	require.NoError(t, err)
	require.Equal(t, body, again, "the test's mirror of the checkpoint file does not encode back to the same bytes")
	return &f
}

// dmgWriteBody writes a checkpoint directory holding body with a valid
// checksum.
func dmgWriteBody(t testing.TB, dir string, body []byte) {
	t.Helper()
	sum := sha256.Sum256(body)
	b := slices.Concat(dmgMagic, binary.BigEndian.AppendUint64(nil, uint64(len(body))), sum[:], body)
	require.NoError(t, os.WriteFile(filepath.Join(dir, chare.CheckpointFile), b, 0o644))
}

// dmgWrite encodes f as a checkpoint in a new directory.
func dmgWrite(t testing.TB, f *dmgFile) string {
	t.Helper()
	body, err := msgpack.Marshal(f)
	require.NoError(t, err)
	dir := t.(interface{ TempDir() string }).TempDir()
	dmgWriteBody(t, dir, body)
	return dir
}

// clone returns a deep copy of f, through its encoding.
func (f *dmgFile) clone(t testing.TB) *dmgFile {
	t.Helper()
	b, err := msgpack.Marshal(f)
	require.NoError(t, err)
	var g dmgFile
	require.NoError(t, msgpack.Unmarshal(b, &g))
	return &g
}

// coll returns the collection built by builder whose type is named
// typeName (the first one).
func (f *dmgFile) coll(t testing.TB, builder string, typeName string) *dmgColl {
	t.Helper()
	for i := range f.Colls {
		c := &f.Colls[i]
		typ, err := chare.TypeByID(c.Spec.Type)
		require.NoError(t, err)
		if c.Spec.Builder == builder && typ.Name == typeName {
			return c
		}
	}
	require.FailNow(t, "no such collection", "%s of %s in the checkpoint", builder, typeName)
	return nil
}

// ---- the job ----

const dmgPEs = 4

// dmgMain is the main chare of the checkpointed job.
type dmgMain struct {
	chare.Chare[dmgMain]
	Dense  array.Proxy[ckElem, int]
	Sparse array.Proxy[ckElem, int]
	Grp    group.Proxy[ckBranch]
	Node   group.NodeProxy[ckBranch]
	Solo   chare.Proxy[ckSolo]
	Label  string
}

// dmgSummary is what Resume finds: the sums of every collection's values.
type dmgSummary struct {
	PEs                        int
	Label                      string
	Dense, Sparse, Group, Node int
	Solo                       string
}

var dmgResult struct {
	sync.Mutex
	s       *dmgSummary
	resumed []int // elements whose Resumed ran: index, then Val
}

// Resumed is a checkpoint's resume callback to an element: it records
// the element and its restored value, and ends the job.
func (e *ckElem) Resumed() {
	dmgResult.Lock()
	dmgResult.resumed = append(dmgResult.resumed, e.ThisIndex(), e.Val)
	dmgResult.Unlock()
	e.Exit(0)
}

func init() {
	chare.Register[dmgMain](chare.Threaded((*dmgMain).Resume))
}

const (
	dmgDenseN = 6
	dmgLabel  = "the main chare's field"
)

var dmgSparseKeys = []int{3, 17, 90}

func dmgStart(m *dmgMain, args []string) {
	dir := args[0]
	var err error
	m.Dense, err = array.New[ckElem](m, array.Dims(dmgDenseN))
	inJob.NoError(err)
	for i := range dmgDenseN {
		inJob.NoError(chare.Send(m, m.Dense.At(i), (*ckElem).Set, 10+i))
	}
	m.Sparse, err = array.New[ckElem](m, array.Sparse[int]())
	inJob.NoError(err)
	for _, i := range dmgSparseKeys {
		inJob.NoError(m.Sparse.Insert(m, i, array.AtHome))
		inJob.NoError(chare.Send(m, m.Sparse.At(i), (*ckElem).Set, 1000+i))
	}
	inJob.NoError(m.Sparse.DoneInserting(m))
	m.Grp, err = group.New[ckBranch](m)
	inJob.NoError(err)
	inJob.NoError(chare.Send(m, m.Grp, (*ckBranch).Init, 0))
	m.Node, err = group.NewNode[ckBranch](m)
	inJob.NoError(err)
	inJob.NoError(chare.Send(m, m.Node, (*ckBranch).Init, 0))
	m.Solo, err = chare.New[ckSolo](m, dmgPEs-1)
	inJob.NoError(err)
	inJob.NoError(chare.Send(m, m.Solo, (*ckSolo).Set, "solo"))
	m.Label = dmgLabel
	quiesce(m)
	// One reduction over the dense array: the checkpoint holds a
	// reduction stream with a next number.
	m.sum(m.Dense, (*ckElem).Sum)
	inJob.NoError(chare.Checkpoint(m, dir, chare.EntryCallback0(m.ThisProxy(), (*dmgMain).Resume)))
}

func (m *dmgMain) sum(to chare.Target[ckElem], method func(*ckElem, chare.Callback)) int {
	f := chare.NewFuture[int](m)
	inJob.NoError(chare.Send(m, to, method, f.Callback()))
	return get(m, f)
}

func (m *dmgMain) sumGroup(to chare.Target[ckBranch]) int {
	f := chare.NewFuture[int](m)
	inJob.NoError(chare.Send(m, to, (*ckBranch).Sum, f.Callback()))
	return get(m, f)
}

// Resume runs after the checkpoint and after every restart: it records
// what the collections hold and ends the job.
func (m *dmgMain) Resume() {
	s := &dmgSummary{PEs: m.NumPEs(), Label: m.Label}
	s.Dense = m.sum(m.Dense, (*ckElem).Sum)
	s.Sparse = m.sum(m.Sparse, (*ckElem).Sum)
	s.Group = m.sumGroup(m.Grp)
	s.Node = m.sumGroup(m.Node)
	f, err := chare.Call(m, m.Solo, (*ckSolo).State, 0)
	inJob.NoError(err)
	s.Solo = get(m, f).Val
	dmgResult.Lock()
	dmgResult.s = s
	dmgResult.Unlock()
	m.Exit(0)
}

func dmgTake() *dmgSummary {
	dmgResult.Lock()
	defer dmgResult.Unlock()
	s := dmgResult.s
	dmgResult.s = nil
	return s
}

// dmgCheckpoint runs the job, checks what it recorded, and returns the
// checkpoint's directory and the summary.
func dmgCheckpoint(t *testing.T) (string, *dmgSummary) {
	t.Helper()
	dir := t.TempDir()
	cfg := jobConfig(t, dmgPEs)
	cfg.Args = []string{dir}
	code, err := runConfig(t, cfg, dmgStart)
	require.NoError(t, err)
	require.Equal(t, 0, code)
	s := dmgTake()
	require.NotNil(t, s, "Resume did not run")
	nodeSum := 0
	for n := range testNodes {
		nodeSum += firstPE(n, dmgPEs)*10 + 1
	}
	want := &dmgSummary{PEs: dmgPEs, Label: dmgLabel, Dense: 10*dmgDenseN + dmgDenseN*(dmgDenseN-1)/2,
		Sparse: 3*1000 + 3 + 17 + 90, Group: 1 + 11 + 21 + 31, Node: nodeSum, Solo: "solo"}
	require.Equal(t, want, s)
	return dir, s
}

func firstPE(node, pes int) int {
	lo, _ := actor.PERange(node, testNodes, pes)
	return lo
}

// dmgRestart restarts from dir on pes PEs and returns what Run returned.
func dmgRestart(t *testing.T, dir string, pes int) (int, error) {
	t.Helper()
	cfg := jobConfig(t, pes)
	cfg.Restart = dir
	cfg.Timeout = 20 * time.Second
	return runConfig(t, cfg, func(*dmgMain, []string) { panic("the main function ran on a restart") })
}

// TestCheckpointDamagedContents: a checkpoint whose checksum is right and
// whose contents are wrong makes a restart fail with an error naming the
// file and the fault.
// dmgElemCallback is an entry callback to the element of c whose index
// has the wire form idx (none if nil), as a checkpoint's file holds it.
func dmgElemCallback(t testing.TB, c *dmgColl, idx []byte) chare.Callback {
	return dmgElemCallbackTo(t, c, idx, (*ckElem).Set)
}

// dmgElemCallbackTo is dmgElemCallback to the entry method method.
func dmgElemCallbackTo(t testing.TB, c *dmgColl, idx []byte, method any) chare.Callback {
	e, err := chare.EntryOf(method)
	require.NoError(t, err)
	type route struct {
		Kind  chare.Kind
		Coll  chare.CollID
		Index []byte `msgpack:",omitempty"`
	}
	b, err := msgpack.Marshal(struct {
		Kind  chare.CallbackKind
		Route route
		Entry chare.EntryID
	}{chare.CallbackEntry, route{chare.KindElement, c.Spec.ID, idx}, e.ID})
	require.NoError(t, err)
	var cb chare.Callback
	require.NoError(t, msgpack.Unmarshal(b, &cb))
	return cb
}

func TestCheckpointDamagedContents(t *testing.T) {
	dir, orig := dmgCheckpoint(t)
	base := dmgDecode(t, dmgBody(t, dir))
	// Members come in the order PEs answered: put them in order of PE and
	// index, so that the first member of the dense array is element 0.
	for _, c := range base.Colls {
		slices.SortFunc(c.Objs, func(a, b dmgObj) int {
			if a.PE != b.PE {
				return a.PE - b.PE
			}
			return bytes.Compare(a.Index, b.Index)
		})
	}

	t.Run("unchanged", func(t *testing.T) {
		// The helper's round trip changes nothing: a restart works.
		code, err := dmgRestart(t, dmgWrite(t, base.clone(t)), 3)
		require.NoError(t, err)
		require.Equal(t, 0, code)
		s := dmgTake()
		require.NotNil(t, s, "the checkpoint's callback did not run")
		want := *orig
		want.PEs, want.Group = 3, 1+11+21 // branches 0..2 of the old 4
		require.Equal(t, &want, s)
	})

	type mutation struct {
		name   string
		mutate func(t *testing.T, f *dmgFile)
		want   []string // substrings of the error
	}
	elem := func(t *testing.T, f *dmgFile) *dmgColl {
		return f.coll(t, "array", "rt_test.ckElem")
	}

	t.Run("resume_element_held", func(t *testing.T) {
		// The check refuses callbacks to elements the file does not hold
		// (below); one to an element it holds restarts, and runs there.
		f := base.clone(t)
		f.Resume = dmgElemCallbackTo(t, elem(t, f), []byte{0x02}, (*ckElem).Resumed)
		dmgResult.Lock()
		dmgResult.resumed = nil
		dmgResult.Unlock()
		code, err := dmgRestart(t, dmgWrite(t, f), 3)
		// Only Resumed ends the job: without it, the restart would time out.
		require.NoError(t, err)
		require.Equal(t, 0, code)
		if testNodes > 1 {
			return // the element may live in another process, which recorded it
		}
		dmgResult.Lock()
		defer dmgResult.Unlock()
		require.Equal(t, []int{2, 10 + 2}, dmgResult.resumed, "element 2 resumed once, with its value")
	})
	muts := []mutation{
		{"pes_zero", func(t *testing.T, f *dmgFile) { f.PEs = 0 }, []string{"describes 0 PEs with 4 counters"}},
		{"seqs_short", func(t *testing.T, f *dmgFile) { f.Seqs = f.Seqs[:1] }, []string{"describes 4 PEs with 1 counters"}},
		{"nodes_more_than_pes", func(t *testing.T, f *dmgFile) { f.Nodes = f.PEs + 1 }, []string{"describes 5 processes for 4 PEs"}},
		{"nodes_negative", func(t *testing.T, f *dmgFile) { f.Nodes = -3 }, []string{"describes -3 processes for 4 PEs"}},
		{"unknown_builder", func(t *testing.T, f *dmgFile) { elem(t, f).Spec.Builder = "bogus" }, []string{"collection #0.2: no builder \"bogus\" in this program"}},
		{"unknown_type", func(t *testing.T, f *dmgFile) { elem(t, f).Spec.Type = 999 }, []string{"collection #0.2: chare: no chare type #999 is registered"}},
		{"type_zero", func(t *testing.T, f *dmgFile) { elem(t, f).Spec.Type = 0 }, []string{"no chare type #0"}},
		{"wrong_kind", func(t *testing.T, f *dmgFile) { elem(t, f).Spec.Kind = chare.KindBranch }, []string{"collection #0.2: built by \"array\", of kind branch: it must be element"}},
		{"kind_out_of_range", func(t *testing.T, f *dmgFile) { elem(t, f).Spec.Kind = 77 }, []string{"of kind kind(77)"}},
		{"array_spec_garbage", func(t *testing.T, f *dmgFile) { elem(t, f).Spec.Data = []byte{0xc1} }, []string{"rebuilding #0.2: array: decoding the spec of #0.2: msgpack: byte 0xc1"}},
		{"array_spec_empty", func(t *testing.T, f *dmgFile) { elem(t, f).Spec.Data = nil }, []string{"decoding the spec of #0.2: msgpack: truncated"}},
		{"duplicate_collection", func(t *testing.T, f *dmgFile) { f.Colls = append(f.Colls, f.Colls[1]) }, []string{"is listed twice"}},
		{"obj_pe_out_of_range", func(t *testing.T, f *dmgFile) { elem(t, f).Objs[0].PE = 99 }, []string{"rt_test.ckElem number 0 (on PE 99): no such PE (the job had 4)"}},
		{"obj_pe_negative", func(t *testing.T, f *dmgFile) { elem(t, f).Objs[0].PE = -1 }, []string{"(on PE -1): no such PE"}},
		{"index_garbage", func(t *testing.T, f *dmgFile) { elem(t, f).Objs[0].Index = []byte{0xc1} }, []string{"rt_test.ckElem number 0 of #0.2: array: an index for rt_test.ckElem #0.2: bad int index"}},
		{"index_empty", func(t *testing.T, f *dmgFile) { elem(t, f).Objs[0].Index = nil }, []string{"rt_test.ckElem number 0 (on PE 0): an array element without an index"}},
		{"index_out_of_shape", func(t *testing.T, f *dmgFile) { elem(t, f).Objs[0].Index = []byte{0x7f} }, []string{"rt_test.ckElem 127 of #0.2: array: index 127 is out of range for array rt_test.ckElem #0.2 of shape 6"}},
		{"index_negative", func(t *testing.T, f *dmgFile) { elem(t, f).Objs[0].Index = []byte{0xff} }, []string{"index -1 is out of range"}},
		{"index_duplicated", func(t *testing.T, f *dmgFile) {
			c := elem(t, f)
			c.Objs[1].Index = c.Objs[0].Index
		}, []string{"rt_test.ckElem 0 of #0.2 is listed twice (numbers 0 and 1)"}},
		{"object_duplicated", func(t *testing.T, f *dmgFile) {
			c := elem(t, f)
			c.Objs = append(c.Objs, c.Objs[0])
		}, []string{"rt_test.ckElem 0 of #0.2 is listed twice"}},
		{"object_data_garbage", func(t *testing.T, f *dmgFile) { elem(t, f).Objs[0].Data = []byte{0xc1} }, []string{"rt_test.ckElem 0 of #0.2 on PE 0: rt_test.ckElem: msgpack: byte 0xc1"}},
		{"object_data_wrong_type", func(t *testing.T, f *dmgFile) { elem(t, f).Objs[0].Data = []byte{0xa3, 'a', 'b', 'c'} }, []string{"rt_test.ckElem 0 of #0.2 on PE 0: rt_test.ckElem: msgpack: unexpected code=a3"}},
		{"object_data_empty", func(t *testing.T, f *dmgFile) { elem(t, f).Objs[0].Data = nil }, []string{"rt_test.ckElem: msgpack: truncated"}},
		{"object_data_trailing", func(t *testing.T, f *dmgFile) {
			o := &elem(t, f).Objs[0]
			o.Data = append(slices.Clone(o.Data), 0xcd) // a value cut after the state
		}, []string{"rt_test.ckElem: msgpack: truncated"}},
		{"member_state_negative_redno", func(t *testing.T, f *dmgFile) { elem(t, f).Objs[0].State.RedNo = -5 }, []string{"rt_test.ckElem number 0 (on PE 0): at reduction -5 of its collection, which has completed 1"}},
		{"member_state_bad_section", func(t *testing.T, f *dmgFile) {
			elem(t, f).Objs[0].State.Sections = map[chare.CollID]int{12345: -1}
		}, []string{"at reduction -1 of section #0.12345, which has completed 0"}},
		{"group_obj_duplicated_pe", func(t *testing.T, f *dmgFile) {
			c := f.coll(t, "group", "rt_test.ckBranch")
			c.Objs[1].PE = c.Objs[0].PE
		}, []string{"collection #0.4: rt_test.ckBranch number 1 (on PE 0): PE 0 has members number 0 and 1"}},
		{"group_obj_pe_out_of_range", func(t *testing.T, f *dmgFile) {
			c := f.coll(t, "group", "rt_test.ckBranch")
			c.Objs[1].PE = 50
		}, []string{"rt_test.ckBranch number 1 (on PE 50): no such PE"}},
		{"group_no_objs", func(t *testing.T, f *dmgFile) { f.coll(t, "group", "rt_test.ckBranch").Objs = nil }, []string{"a group with 0 branches in a job of 4 PEs"}},
		{"nodegroup_branch_of_missing_node", func(t *testing.T, f *dmgFile) {
			c := f.coll(t, "nodegroup", "rt_test.ckBranch")
			c.Objs = append(c.Objs, c.Objs[0])
			c.Objs[len(c.Objs)-1].PE = 3 // not a process's first PE
		}, []string{"collection #0.5: a node group's branch on PE 3, which is not the first PE of one of the job's"}},
		{"nodegroup_obj_pe_out_of_range", func(t *testing.T, f *dmgFile) {
			f.coll(t, "nodegroup", "rt_test.ckBranch").Objs[0].PE = 40
		}, []string{"(on PE 40): no such PE"}},
		{"chare_two_objs", func(t *testing.T, f *dmgFile) {
			c := f.coll(t, "chare", "rt_test.ckSolo")
			c.Objs = append(c.Objs, c.Objs[0])
		}, []string{"collection #0.6: rt_test.ckSolo number 1 (on PE 3): PE 3 has members number 0 and 1"}},
		{"chare_no_obj", func(t *testing.T, f *dmgFile) { f.coll(t, "chare", "rt_test.ckSolo").Objs = nil }, []string{"a singleton chare on PEs [3] with 0 objects"}},
		{"chare_tree_empty", func(t *testing.T, f *dmgFile) { f.coll(t, "chare", "rt_test.ckSolo").Spec.Tree = nil }, []string{"a singleton chare on PEs [] with 1 objects"}},
		{"chare_tree_negative", func(t *testing.T, f *dmgFile) { f.coll(t, "chare", "rt_test.ckSolo").Spec.Tree = []int{-3} }, []string{"a singleton chare on PEs [-3] with 1 objects"}},
		{"chare_index_set", func(t *testing.T, f *dmgFile) { f.coll(t, "chare", "rt_test.ckSolo").Objs[0].Index = []byte{0x01} }, []string{"rt_test.ckSolo number 0 (on PE 3): a member of a chare with an index"}},
		{"main_data_garbage", func(t *testing.T, f *dmgFile) { f.coll(t, "chare", "rt_test.dmgMain").Objs[0].Data = []byte{0xc1} }, []string{"rt_test.dmgMain 0 of #0.1 on PE 0: rt_test.dmgMain: msgpack: byte 0xc1"}},
		{"init_entry_unknown", func(t *testing.T, f *dmgFile) { elem(t, f).Spec.Init = 0xffff0001 }, []string{"collection #0.2: has a constructor (entry 0xffff0001): restored objects are not constructed again"}},
		{"red_next_negative", func(t *testing.T, f *dmgFile) { f.Reds[0].Next = -1 }, []string{"the next reduction of #0.2 is -1"}},
		{"red_stream_duplicated", func(t *testing.T, f *dmgFile) { f.Reds = append(f.Reds, dmgRed{Stream: f.Reds[0].Stream, Next: 7}) }, []string{"the reductions of #0.2 are listed twice"}},
		{"resume_ignore", func(t *testing.T, f *dmgFile) { f.Resume = chare.IgnoreCallback() }, []string{"the checkpoint's callback: an ignore callback: nothing would run after the restart"}},
		{"resume_unknown_entry", func(t *testing.T, f *dmgFile) { f.Resume.Entry = 0xffff0001 }, []string{"the checkpoint's callback: chare: unknown entry method #0xffff0001"}},
		{"resume_unknown_collection", func(t *testing.T, f *dmgFile) { f.Resume.Route.Coll = 0xdead }, []string{"the checkpoint's callback: rt_test.dmgMain.Resume of collection #0.57005, which the checkpoint does not hold"}},
		{"resume_entry_of_other_type", func(t *testing.T, f *dmgFile) {
			e, err := chare.EntryOf((*ckSolo).Set)
			require.NoError(t, err)
			f.Resume.Entry = e.ID
		}, []string{"the checkpoint's callback: rt_test.ckSolo.Set for collection #0.1, whose type is rt_test.dmgMain"}},
		{"resume_future", func(t *testing.T, f *dmgFile) { f.Resume = chare.Callback{Kind: chare.CallbackFuture} }, []string{"a future callback: only entry and exit callbacks survive a restart"}},
		{"resume_func", func(t *testing.T, f *dmgFile) { f.Resume = chare.Callback{Kind: chare.CallbackFunc, Func: 12345} }, []string{"a function callback: only entry and exit callbacks"}},
		{"resume_kind_unknown", func(t *testing.T, f *dmgFile) { f.Resume.Kind = 99 }, []string{"a callback of unknown kind 99"}},
		{"resume_pe_out_of_range", func(t *testing.T, f *dmgFile) { f.Resume.Route.PE = 77 }, []string{"rt_test.dmgMain.Resume of #0.1 on PE 77 (the job had 4)"}},
		{"resume_element_not_held", func(t *testing.T, f *dmgFile) {
			// A sparse array's index in range that was never inserted.
			var sparse *dmgColl
			for i, c := range f.Colls {
				if c.Spec.Type == elem(t, f).Spec.Type && c.Spec.ID != elem(t, f).Spec.ID {
					sparse = &f.Colls[i]
				}
			}
			require.NotNil(t, sparse, "no sparse array in the checkpoint")
			require.NotContains(t, dmgSparseKeys, 4)
			f.Resume = dmgElemCallback(t, sparse, []byte{0x04})
		}, []string{"the checkpoint's callback: rt_test.ckElem.Set of element 4 of #0.3, which the checkpoint does not hold"}},
		{"resume_element_out_of_shape", func(t *testing.T, f *dmgFile) { f.Resume = dmgElemCallback(t, elem(t, f), []byte{0x7f}) }, []string{"rt_test.ckElem.Set of element 127 of #0.2, which the checkpoint does not hold"}},
		{"resume_element_garbage_index", func(t *testing.T, f *dmgFile) { f.Resume = dmgElemCallback(t, elem(t, f), []byte{0xc1}) }, []string{"rt_test.ckElem.Set of element", "which the checkpoint does not hold"}},
		{"resume_element_no_index", func(t *testing.T, f *dmgFile) { f.Resume = dmgElemCallback(t, elem(t, f), nil) }, []string{"rt_test.ckElem.Set of an element of #0.2 with no index"}},
	}
	for _, m := range muts {
		t.Run(m.name, func(t *testing.T) {
			f := base.clone(t)
			m.mutate(t, f)
			dir := dmgWrite(t, f)
			dmgFails(t, dir, m.want...)
		})
	}

	// The body itself: msgpack whose lengths ask for more than the file
	// holds, or that nests too deep, is refused before it is decoded.
	raw := []struct {
		name string
		body []byte
		want string
	}{
		{"colls_length_huge", []byte{0x81, 0xa5, 'C', 'o', 'l', 'l', 's', 0xdd, 0x7f, 0xff, 0xff, 0xff}, "claims 2147483647 values"},
		{"nested_too_deep", append([]byte{0x81, 0xa6, 'R', 'e', 's', 'u', 'm', 'e'}, slices.Repeat([]byte{0x91}, 100000)...), "nested deeper than"},
		{"trailing_bytes", append(dmgBody(t, dir), 0xcd), "truncated"},
		{"not_a_map", []byte{0x2a}, "decoding"},
	}
	for _, r := range raw {
		t.Run(r.name, func(t *testing.T) {
			dir := t.TempDir()
			dmgWriteBody(t, dir, r.body)
			dmgFails(t, dir, r.want)
		})
	}
}

// dmgFails restarts from dir and checks that the job fails before it
// starts, with an error that names the file and says each of want.
func dmgFails(t *testing.T, dir string, want ...string) {
	t.Helper()
	dmgTake()
	code, err := dmgRestart(t, dir, 3)
	require.Error(t, err)
	require.Equal(t, 1, code)
	var pe *actor.PanicError
	require.False(t, errors.As(err, &pe), "a panic: %v", err)
	require.NotContains(t, err.Error(), "did not end", "the restart hung")
	require.ErrorContains(t, err, filepath.Join(dir, chare.CheckpointFile), "the error names the file")
	for _, w := range want {
		require.ErrorContains(t, err, w)
	}
	require.Nil(t, dmgTake(), "the checkpoint's callback ran")
}

// FuzzCheckpointRestart restarts from checkpoint bodies that the fuzzer
// changes, each written with a valid checksum: a restart either works or
// fails with an error, never with a panic or a hang. Its seed corpus (a
// real checkpoint's body) runs with the other tests; to fuzz, run
//
//	go test ./tests/rt -run '^$' -fuzz FuzzCheckpointRestart -fuzztime 2m
func FuzzCheckpointRestart(f *testing.F) {
	if testNodes > 1 {
		f.Skipf("in one process only (%s=%d): every input is a job", envTestNodes, testNodes)
	}
	dir := f.TempDir()
	code, err := chare.Run(chare.Config{PEs: dmgPEs, Timeout: jobDeadline, Args: []string{dir}}, dmgStart)
	require.NoError(f, err)
	require.Equal(f, 0, code)
	require.NotNil(f, dmgTake(), "Resume did not run")
	body := dmgBody(f, dir)
	f.Add(body)
	f.Add(body[:len(body)/2])
	f.Fuzz(func(t *testing.T, body []byte) {
		dir := t.TempDir()
		dmgWriteBody(t, dir, body)
		code, err := chare.Run(chare.Config{PEs: 3, Timeout: 10 * time.Second, Restart: dir},
			func(*dmgMain, []string) { panic("the main function ran on a restart") })
		dmgTake()
		if err == nil {
			require.Equal(t, 0, code)
			return
		}
		var pe *actor.PanicError
		require.False(t, errors.As(err, &pe), "a panic: %v", err)
		require.NotContains(t, err.Error(), "did not end", "the restart hung")
		require.ErrorContains(t, err, dir, "the error names the checkpoint")
	})
}
