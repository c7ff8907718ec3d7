package rt_test

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/array"
	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/group"
)

// What survives packing (issue 14, items 6 and 8; issue 27, item 2;
// issue 28, item 5): an element type whose state would not survive a
// migration registers and runs, but Migrate and Checkpoint refuse it with
// an error naming the type and the fields, before anything is lost; a
// checkpoint refuses a group type whose state would not survive it; a
// Transient field is never packed and comes back as its zero value after
// a migration and after a restart; an element whose state does not unpack
// on its new PE stops the job with an error naming the type and the
// element.

// lossyElem would lose all but N if it migrated; it declares nothing.
type lossyElem struct {
	array.Element[lossyElem, int]
	N     int
	cache map[int]int
	Label fmt.Stringer
	Any   any
	Hook  func()
}

type lossyState struct {
	N, Cached, PE int
	Labelled      bool
}

func (e *lossyElem) Fill(k int) {
	e.N, e.cache, e.Label, e.Any = k, map[int]int{k: k * k}, label("x"), k
}

// Move asks the element to migrate to the next PE and answers with
// Migrate's error.
func (e *lossyElem) Move(f chare.Future[string]) {
	msg := ""
	if err := e.Migrate((e.PE() + 1) % e.NumPEs()); err != nil {
		msg = err.Error()
	}
	inJob.NoError(f.Send(e, msg))
}

func (e *lossyElem) Report(f chare.Future[lossyState]) {
	inJob.NoError(f.Send(e, lossyState{N: e.N, Cached: e.cache[e.N], PE: e.PE(), Labelled: e.Label != nil}))
}

// labelElem declares Label and Any Transient: they are not packed.
type labelElem struct {
	array.Element[labelElem, int]
	N     int
	Label fmt.Stringer
	Any   any
}

type label string

func (l label) String() string { return string(l) }

type labelMove struct {
	To    int
	Label string
	Done  chare.Future[labelState]
}

type labelState struct {
	N, PE            int
	Labelled, HasAny bool
}

func (e *labelElem) Move(m labelMove) {
	e.N = 5
	if m.Label != "" {
		e.Label, e.Any = label(m.Label), 7
	}
	inJob.NoError(e.Migrate(m.To))
	inJob.NoError(chare.Send(e, e.ThisProxy().At(e.ThisIndex()), (*labelElem).Report, m.Done))
}

func (e *labelElem) Set(n int) { e.N, e.Label, e.Any = n, label("x"), n }

func (e *labelElem) Report(f chare.Future[labelState]) {
	inJob.NoError(f.Send(e, labelState{N: e.N, PE: e.PE(), Labelled: e.Label != nil, HasAny: e.Any != nil}))
}

// cachedBranch is a group whose branches keep an unexported cache.
type cachedBranch struct {
	group.Branch[cachedBranch]
	Total int
	cache []int
}

// typoElem is registered with a Transient name that is no field of it.
type typoElem struct {
	array.Element[typoElem, int]
	cache []int
}

func init() {
	chare.Register[lossyElem]()
	chare.Register[labelElem](chare.Transient("Label", "Any"))
	chare.Register[cachedBranch]()
}

// TestLossyElementRegistersButStays: a type with fields that would not
// survive packing registers and runs; migrating one of its elements is
// refused with an error naming the element, its type and every field
// with what would make it survive, and the element stays, intact; a
// checkpoint is refused before anything is written.
func TestLossyElementRegistersButStays(t *testing.T) {
	ty, err := chare.TypeOf[lossyElem]()
	require.NoError(t, err, "the type registered")
	require.False(t, ty.Packs())
	dir := t.TempDir()
	runMain(t, 2, func(m *tmain) {
		a, err := array.New[lossyElem](m, array.Dims(4))
		inJob.NoError(err)
		for i := range 4 {
			inJob.NoError(chare.Send(m, a.At(i), (*lossyElem).Fill, i+1))
		}
		why := chare.NewFuture[string](m)
		inJob.NoError(chare.Send(m, a.At(1), (*lossyElem).Move, why))
		msg := get(m, why)
		for _, want := range []string{
			"element 1 of rt_test.lossyElem stays on PE 0",
			"cache (map[int]int) is unexported",
			"Label (fmt.Stringer) is an interface",
			"Any (interface {}) is an interface",
			"Hook (func()) cannot be packed",
			`chare.Register[lossyElem](chare.Transient("cache", "Label", "Any", "Hook"))`,
		} {
			inJob.Contains(msg, want)
		}
		inJob.NotContains(msg, "N (", "N packs whole")
		st := chare.NewFuture[lossyState](m)
		inJob.NoError(chare.Send(m, a.At(1), (*lossyElem).Report, st))
		inJob.Equal(lossyState{N: 2, Cached: 4, PE: 0, Labelled: true}, get(m, st), "it stayed, intact")

		err = chare.Checkpoint(m, dir, chare.ExitCallback(0))
		inJob.ErrorContains(err, "rt_test.lossyElem cannot be packed for a checkpoint")
		inJob.ErrorContains(err, "cache (map[int]int) is unexported")
	})
	_, err = os.Stat(filepath.Join(dir, chare.CheckpointFile))
	require.True(t, errors.Is(err, fs.ErrNotExist), "nothing was written: %v", err)
}

func TestRegisterRefusesUnknownTransient(t *testing.T) {
	panicOf := func(f func()) (err error) {
		defer func() {
			r := recover()
			require.NotNil(t, r, "Register accepted the type")
			e, ok := r.(error)
			require.True(t, ok, "Register panics with an error, not %T", r)
			err = e
		}()
		f()
		return nil
	}
	err := panicOf(func() { chare.Register[typoElem](chare.Transient("cahce")) })
	require.ErrorContains(t, err, `Transient("cahce")`)
	require.ErrorContains(t, err, "no field cahce")
	require.ErrorContains(t, err, "would not survive packing: cache")
	_, err = chare.TypeOf[typoElem]()
	require.Error(t, err, "a refused type is not registered")
}

// TestTransientFieldsMigrateAsZero: an element with a non-nil Transient
// fmt.Stringer and any migrates; they arrive as nil, the rest intact
// (issue 27, item 2: the Stringer used to make unpacking fail, which
// ended the job, and the any came back as an int8).
func TestTransientFieldsMigrateAsZero(t *testing.T) {
	runMain(t, 2, func(m *tmain) {
		a, err := array.New[labelElem](m, array.Dims(2))
		inJob.NoError(err)
		f := chare.NewFuture[labelState](m)
		inJob.NoError(chare.Send(m, a.At(0), (*labelElem).Move, labelMove{To: 1, Done: f}))
		inJob.Equal(labelState{N: 5, PE: 1}, get(m, f), "without a label")
		f = chare.NewFuture[labelState](m)
		inJob.NoError(chare.Send(m, a.At(1), (*labelElem).Move, labelMove{To: 0, Label: "x", Done: f}))
		inJob.Equal(labelState{N: 5, PE: 0}, get(m, f), "with a label and an any, both left behind")
	})
}

// trMain checkpoints an array of labelElem whose Transient fields are
// set; After records what the elements hold, in the job and after a
// restart.
type trMain struct {
	chare.Chare[trMain]
	Elems array.Proxy[labelElem, int]
}

var trSeen struct {
	sync.Mutex
	runs [][]labelState
}

func (m *trMain) After() {
	var out []labelState
	for i := range 2 {
		f := chare.NewFuture[labelState](m)
		inJob.NoError(chare.Send(m, m.Elems.At(i), (*labelElem).Report, f))
		out = append(out, get(m, f))
	}
	trSeen.Lock()
	trSeen.runs = append(trSeen.runs, out)
	trSeen.Unlock()
	m.Exit(0)
}

func init() { chare.Register[trMain](chare.Threaded((*trMain).After)) }

// TestTransientFieldsAfterRestart: Transient fields are not in a
// checkpoint; after a restart they are zero and the rest is restored.
func TestTransientFieldsAfterRestart(t *testing.T) {
	dir := t.TempDir()
	start := func(m *trMain, args []string) {
		var err error
		m.Elems, err = array.New[labelElem](m, array.Dims(2))
		inJob.NoError(err)
		for i := range 2 {
			inJob.NoError(chare.Send(m, m.Elems.At(i), (*labelElem).Set, 10+i))
		}
		quiesce(m)
		inJob.NoError(chare.Checkpoint(m, args[0], chare.EntryCallback0(m.ThisProxy(), (*trMain).After)))
	}
	cfg := jobConfig(t, 2)
	cfg.Args = []string{dir}
	code, err := runConfig(t, cfg, start)
	require.NoError(t, err)
	require.Equal(t, 0, code)
	cfg.Restart = dir
	code, err = runConfig(t, cfg, start)
	require.NoError(t, err)
	require.Equal(t, 0, code)
	trSeen.Lock()
	defer trSeen.Unlock()
	require.Equal(t, [][]labelState{
		{{N: 10, PE: 0, Labelled: true, HasAny: true}, {N: 11, PE: 1, Labelled: true, HasAny: true}},
		{{N: 10, PE: 0}, {N: 11, PE: 1}},
	}, trSeen.runs, "in the job, then after the restart")
}

// badElem's state packs, but does not unpack where it arrives when Bad
// is set: its own Unpack refuses it.
type badElem struct {
	array.Element[badElem, int]
	Bad bool
}

func (e *badElem) Pack() ([]byte, error) {
	if e.Bad {
		return []byte{1}, nil
	}
	return []byte{0}, nil
}

func (e *badElem) Unpack(b []byte) error {
	if len(b) != 1 || b[0] != 0 {
		return errors.New("refusing this state")
	}
	return nil
}

func (e *badElem) Move(m labelMove) {
	e.Bad = m.Label != ""
	inJob.NoError(e.Migrate(m.To))
	inJob.NoError(chare.Send(e, e.ThisProxy().At(e.ThisIndex()), (*badElem).Report, m.Done))
}

func (e *badElem) Report(f chare.Future[labelState]) {
	inJob.NoError(f.Send(e, labelState{PE: e.PE()}))
}

func init() { chare.Register[badElem]() }

// TestMigrationThatCannotUnpackStops: an element whose state does not
// unpack on its new PE is lost; the job stops naming it, its type, the
// reason, and both PEs.
func TestMigrationThatCannotUnpackStops(t *testing.T) {
	code, err := runJob(t, 2, func(m *tmain, _ []string) {
		a, err := array.New[badElem](m, array.Dims(2))
		inJob.NoError(err)
		f := chare.NewFuture[labelState](m)
		inJob.NoError(chare.Send(m, a.At(0), (*badElem).Move, labelMove{To: 1, Done: f}))
		inJob.Equal(1, get(m, f).PE, "a good state moves")
		f = chare.NewFuture[labelState](m)
		inJob.NoError(chare.Send(m, a.At(1), (*badElem).Move, labelMove{To: 0, Label: "x", Done: f}))
		_, err = f.Get(m)
		panic(fmt.Sprintf("the element arrived: %v", err))
	})
	require.Error(t, err)
	require.Equal(t, 1, code)
	for _, want := range []string{"element 1 of rt_test.badElem", "from PE 1 to PE 0", "is lost", "refusing this state"} {
		require.ErrorContains(t, err, want)
	}
}

func TestCheckpointRefusesLossyTypes(t *testing.T) {
	dir := t.TempDir()
	code := run(t, 2, func(m *tmain, _ []string) {
		_, err := group.New[cachedBranch](m)
		inJob.NoError(err)
		err = chare.Checkpoint(m, dir, chare.ExitCallback(0))
		inJob.ErrorContains(err, "rt_test.cachedBranch")
		inJob.ErrorContains(err, "a checkpoint")
		inJob.ErrorContains(err, "cache ([]int) is unexported")
		m.Exit(3)
	})
	require.Equal(t, 3, code)
}
