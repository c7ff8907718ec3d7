package rt_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/array"
	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/group"
)

// What survives packing (issue 14, items 6 and 8): Register refuses an
// array element type whose state would not survive a migration, a
// checkpoint refuses a group or chare type whose state would not, and an
// element whose state does not unpack on its new PE stops the job with an
// error naming the type, the field and the element.

// lossyElem would lose all but N when it migrates.
type lossyElem struct {
	array.Element[lossyElem, int]
	N     int
	cache map[int]int
	Label fmt.Stringer
	Any   any
	Hook  func()
}

// labelElem accepts the loss of Label: a non-nil one does not unpack.
type labelElem struct {
	array.Element[labelElem, int]
	N     int
	Label fmt.Stringer
}

type label string

func (l label) String() string { return string(l) }

type labelMove struct {
	To    int
	Label string
	Done  chare.Future[int]
}

func (e *labelElem) Move(m labelMove) {
	e.N = 5
	if m.Label != "" {
		e.Label = label(m.Label)
	}
	inJob.NoError(e.Migrate(m.To))
	inJob.NoError(chare.Send(e, e.ThisProxy().At(e.ThisIndex()), (*labelElem).Report, m.Done))
}

func (e *labelElem) Report(f chare.Future[int]) { inJob.NoError(f.Send(e, e.N*100+e.PE())) }

// cachedBranch is a group whose branches keep an unexported cache.
type cachedBranch struct {
	group.Branch[cachedBranch]
	Total int
	cache []int
}

func init() {
	chare.Register[labelElem](chare.Transient("Label"))
	chare.Register[cachedBranch]() // groups never migrate: no check here
}

func TestRegisterRefusesLossyElement(t *testing.T) {
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
	err := panicOf(func() { chare.Register[lossyElem]() })
	for _, want := range []string{"rt_test.lossyElem", "migration", "cache (map[int]int: unexported", "Label (fmt.Stringer", "Any (interface {}", "Hook (func()", "chare.Packer", ``} {
		require.ErrorContains(t, err, want)
	}
	require.NotContains(t, err.Error(), "N (", "N packs whole")
	_, err = chare.TypeOf[lossyElem]()
	require.Error(t, err, "a refused type is not registered")

	err = panicOf(func() { chare.Register[lossyElem](chare.Transient("cache", "Label", "Any")) })
	require.ErrorContains(t, err, "Hook (func()", "every field must be declared")
	err = panicOf(func() { chare.Register[lossyElem](chare.Transient("cahce")) })
	require.ErrorContains(t, err, `Transient("cahce")`)
}

// TestMigrationThatCannotUnpackStops: an element whose Label does not
// unpack on its new PE is lost; the job stops naming it, its type and the
// field, and both PEs. Without a Label it migrates.
func TestMigrationThatCannotUnpackStops(t *testing.T) {
	const pes = 2
	code, err := runJob(t, pes, func(m *tmain, _ []string) {
		a, err := array.New[labelElem](m, array.Dims(2))
		inJob.NoError(err)
		f := chare.NewFuture[int](m)
		inJob.NoError(chare.Send(m, a.At(0), (*labelElem).Move, labelMove{To: 1, Done: f}))
		inJob.Equal(501, get(m, f), "without a label, element 0 moved to PE 1 with its state")
		f = chare.NewFuture[int](m)
		inJob.NoError(chare.Send(m, a.At(1), (*labelElem).Move, labelMove{To: 0, Label: "x", Done: f}))
		_, err = f.Get(m)
		panic(fmt.Sprintf("the element arrived: %v", err))
	})
	require.Error(t, err)
	require.Equal(t, 1, code)
	for _, want := range []string{"element 1 of rt_test.labelElem", "from PE 1 to PE 0", "is lost", "field Label (fmt.Stringer)"} {
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
		inJob.ErrorContains(err, "cache ([]int: unexported")
		m.Exit(3)
	})
	require.Equal(t, 3, code)
}
