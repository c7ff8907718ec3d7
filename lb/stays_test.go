package lb_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/array"
	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/chare/reducer"
	"github.com/charmgo/charm/lb"
)

// keeper is an element written plainly, as a Charm++ element without a
// pup routine: its state is in unexported fields, and its type declares
// nothing. It registers and runs; it cannot migrate, so load balancers
// leave it where it is and Migrate refuses, naming the type and fields.
type keeper struct {
	array.Element[keeper, int]
	units   int
	history []int
	start   int
	done    chare.Callback
}

type keeperOut struct {
	Start, PE, Units, History int
	Resumed                   bool
}

var keeperGather = reducer.GatherOf[int, keeperOut]()

func (k *keeper) Init(units int) {
	k.units = units * (k.ThisIndex() + 1)
	k.start = k.PE()
}

// Go records a round in the element's history, sets its load, and
// either waits in AtSync or reports at once.
func (k *keeper) Go(m goMsg) {
	k.history = append(k.history, len(k.history))
	k.done = m.Done
	inJob.NoError(k.SetLoad(float64(k.units) * 1e-3))
	if m.AtSync {
		k.AtSync()
		return
	}
	k.report(false)
}

func (k *keeper) ResumeFromSync() { k.report(true) }

func (k *keeper) report(resumed bool) {
	inJob.NoError(k.Contribute(keeperOut{Start: k.start, PE: k.PE(), Units: k.units, History: len(k.history), Resumed: resumed}, keeperGather, k.done))
}

// Move asks the element to migrate and answers with Migrate's error.
func (k *keeper) Move(f chare.Future[string]) {
	err := k.Migrate((k.PE() + 1) % k.NumPEs())
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	inJob.NoError(f.Send(k, msg))
}

func init() { chare.Register[keeper]() }

func keepersAt(m *lbMain, a array.Proxy[keeper, int], atSync bool) map[int]keeperOut {
	f := chare.NewFutureFor(m, keeperGather)
	inJob.NoError(chare.Send(m, a, (*keeper).Go, goMsg{Done: f.Callback(), AtSync: atSync}))
	out := map[int]keeperOut{}
	for _, it := range get(m, f) {
		out[it.Index] = it.Value
	}
	return out
}

// TestUnpackableElementsStay (issue 28, item 5): an element type with
// unexported fields and no Transient runs with a balancer. An AtSync
// step of greedy over imbalanced loads, and a manual step of rotate
// (which moves every object it may) over it and a migratable array,
// leave its elements where they are with their state intact, move the
// others, and name the type in the report; an explicit Migrate of one of
// its elements returns an error naming the type and the fields.
func TestUnpackableElementsStay(t *testing.T) {
	const n, pes = 8, 2
	var reps []lb.Report
	runLB(t, pes, map[string]string{lb.FlagBalancer: "greedy,rotate"}, func(m *lbMain) {
		keepers, err := array.NewWith(m, array.Dims(n), (*keeper).Init, 1)
		inJob.NoError(err)
		// Block placement, loads growing with the index: greedy would
		// move some, were they movable.
		out := keepersAt(m, keepers, true)
		inJob.Len(out, n)
		for i, o := range out {
			inJob.True(o.Resumed, "element %d resumed", i)
			inJob.Equal(o.Start, o.PE, "element %d stayed", i)
			inJob.Equal(i*pes/n, o.PE, "element %d is on its block PE", i)
			inJob.Equal(i+1, o.Units, "element %d kept its state", i)
			inJob.Equal(1, o.History, "element %d kept its history", i)
		}

		// A manual step of rotate over both arrays: the workers move,
		// the keepers do not.
		workers, err := array.NewWith(m, array.Dims(n), (*worker).Init, 1)
		inJob.NoError(err)
		first := placed(m, workers, false)
		f := chare.NewFuture[any](m)
		inJob.NoError(lb.StartStep(m, f.Callback()))
		get(m, f)
		after := placed(m, workers, false)
		for i := range n {
			inJob.Equal((first[i].To+1)%pes, after[i].To, "rotate moved worker %d", i)
		}
		for i, o := range keepersAt(m, keepers, false) {
			inJob.Equal(i*pes/n, o.PE, "keeper %d stayed", i)
			inJob.Equal(2, o.History, "keeper %d kept its history", i)
		}

		// An explicit migration is refused, naming the type and fields.
		why := chare.NewFuture[string](m)
		inJob.NoError(chare.Send(m, keepers.At(3), (*keeper).Move, why))
		msg := get(m, why)
		for _, want := range []string{"element 3 of lb_test.keeper stays on PE 0", "units (int), history ([]int), start (int), done (chare.Callback) are unexported", "export them"} {
			inJob.Contains(msg, want)
		}
		o := keepersAt(m, keepers, false)[3]
		inJob.Equal(0, o.PE, "it stayed")
		inJob.Equal(4, o.Units, "with its state")
		inJob.Equal(3, o.History)

		reps, err = lb.Reports(m)
		inJob.NoError(err)
	})
	require.Len(t, reps, 2)
	require.Equal(t, "greedy", reps[0].Strategy)
	require.Zero(t, reps[0].Migrations, "%s", reps[0].LogLine())
	require.Equal(t, n, reps[0].Fixed)
	require.Equal(t, []string{"lb_test.keeper"}, reps[0].Unmovable)
	require.Contains(t, strings.Fields(reps[0].LogLine()), "unmovable=lb_test.keeper")
	require.Equal(t, "rotate", reps[1].Strategy)
	require.Equal(t, n, reps[1].Migrations, "the workers moved: %s", reps[1].LogLine())
	require.Equal(t, n, reps[1].Fixed)
	require.Equal(t, []string{"lb_test.keeper"}, reps[1].Unmovable)
}

// TestUnpackableElementsStayDistributed: the distributed strategy leaves
// them in place too, and its report names their type.
func TestUnpackableElementsStayDistributed(t *testing.T) {
	const n, pes = 16, 4
	var reps []lb.Report
	runLB(t, pes, map[string]string{lb.FlagBalancer: "distributed", lb.FlagObjOnly: "true"}, func(m *lbMain) {
		keepers, err := array.NewWith(m, array.Dims(n), (*keeper).Init, 1)
		inJob.NoError(err)
		for i, o := range keepersAt(m, keepers, true) {
			inJob.True(o.Resumed, "element %d resumed", i)
			inJob.Equal(i*pes/n, o.PE, "element %d stayed", i)
			inJob.Equal(i+1, o.Units, "element %d kept its state", i)
		}
		reps, err = lb.Reports(m)
		inJob.NoError(err)
	})
	require.Len(t, reps, 1)
	require.Zero(t, reps[0].Migrations, "%s", reps[0].LogLine())
	require.Equal(t, []string{"lb_test.keeper"}, reps[0].Unmovable)
}
