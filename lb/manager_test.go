package lb_test

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/array"
	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/chare/reducer"
	"github.com/charmgo/charm/group"
	"github.com/charmgo/charm/internal/core"
	"github.com/charmgo/charm/lb"
)

// jobT lets require run inside a job: a failed check panics, the job
// aborts, and the test fails on Run's error.
type jobT struct{}

func (jobT) Errorf(format string, args ...any) { panic(fmt.Sprintf(format, args...)) }
func (jobT) FailNow()                          { panic("check failed") }

var inJob = require.New(jobT{})

type lbMain struct {
	chare.Chare[lbMain]
	noted []chare.Future[lb.Report] // Noted sends its k-th report to noted[k]
	seen  int
}

// Noted is a typed report target (lb.NotifyEntry).
func (m *lbMain) Noted(r lb.Report) {
	inJob.NoError(m.noted[m.seen].Send(m, r))
	m.seen++
}

// worker is an element with a load it sets itself (or burns), that
// takes part in AtSync steps.
type worker struct {
	array.Element[worker, int]
	Units   int // its load, in units
	Resumed int
	Start   int // the PE it started on
	Done    chare.Callback
}

type goMsg struct {
	Done   chare.Callback
	AtSync bool
}

type placeOut struct{ From, To, Resumed int }

var placeGather = reducer.GatherOf[int, placeOut]()

func (w *worker) Go(m goMsg) {
	w.Start, w.Done = w.PE(), m.Done
	inJob.NoError(w.SetLoad(float64(w.Units) * 1e-3))
	if m.AtSync {
		w.AtSync()
		return
	}
	inJob.NoError(w.Contribute(placeOut{w.Start, w.PE(), w.Resumed}, placeGather, w.Done))
}

func (w *worker) ResumeFromSync() {
	w.Resumed++
	inJob.NoError(w.Contribute(placeOut{w.Start, w.PE(), w.Resumed}, placeGather, w.Done))
}

func (w *worker) Init(units int) { w.Units = units + w.ThisIndex() }

// Where returns the PE the element is on.
func (w *worker) Where(int) int { return w.PE() }

func init() {
	chare.Register[lbMain](chare.Threaded((*lbMain).Start))
	chare.Register[worker]()
}

func (m *lbMain) Start([]string) {}

func runLB(t *testing.T, pes int, flags map[string]string, body func(m *lbMain)) {
	t.Helper()
	code, err := chare.Run(chare.Config{PEs: pes, Flags: flags, Timeout: 30 * time.Second}, func(m *lbMain, _ []string) {
		body(m)
		m.Exit(0)
	})
	require.NoError(t, err)
	require.Equal(t, 0, code)
}

func get[T any](ctx chare.Context, f chare.Future[T]) T {
	v, err := f.Get(ctx)
	inJob.NoError(err)
	return v
}

// placed gathers where every element is, after a step.
func placed(m *lbMain, a array.Proxy[worker, int], atSync bool) map[int]placeOut {
	f := chare.NewFutureFor(m, placeGather)
	inJob.NoError(chare.Send(m, a, (*worker).Go, goMsg{Done: f.Callback(), AtSync: atSync}))
	out := map[int]placeOut{}
	for _, it := range get(m, f) {
		out[it.Index] = it.Value
	}
	return out
}

func TestAtSyncStepBalances(t *testing.T) {
	const n, pes = 32, 4
	var reps []lb.Report
	runLB(t, pes, map[string]string{lb.FlagBalancer: "greedy"}, func(m *lbMain) {
		// Block placement and loads growing with the index: PE 3 has the
		// most.
		a, err := array.NewWith(m, array.Dims(n), (*worker).Init, 1)
		inJob.NoError(err)
		notes := chare.NewFuture[lb.Report](m)
		inJob.NoError(lb.Notify(m, notes.Callback()))
		out := placed(m, a, true)
		inJob.Len(out, n)
		moved := 0
		for i, o := range out {
			inJob.Equal(1, o.Resumed, "element %d resumed once", i)
			inJob.Equal(i*pes/n, o.From, "element %d started on its block PE", i)
			if o.To != o.From {
				moved++
			}
		}
		inJob.Positive(moved, "greedy moved elements")
		rep := get(m, notes)
		inJob.Equal(moved, rep.Migrations)
		var err2 error
		reps, err2 = lb.Reports(m)
		inJob.NoError(err2)
	})
	require.Len(t, reps, 1)
	r := reps[0]
	require.Equal(t, "greedy", r.Strategy)
	require.Equal(t, n, r.Objects)
	require.Greater(t, r.MaxAvgBefore, 1.5, "block placement of growing loads is imbalanced")
	require.Less(t, r.MaxAvgAfter, 1.1, "greedy balances it")
}

func TestManualStepMovesElements(t *testing.T) {
	const n, pes = 24, 3
	runLB(t, pes, map[string]string{lb.FlagBalancer: "rotate"}, func(m *lbMain) {
		a, err := array.NewWith(m, array.Dims(n), (*worker).Init, 1)
		inJob.NoError(err)
		first := placed(m, a, false) // the elements set their loads
		f := chare.NewFuture[any](m)
		inJob.NoError(lb.StartStep(m, f.Callback()))
		get(m, f)
		after := placed(m, a, false)
		for i := range n {
			inJob.Equal((first[i].To+1)%pes, after[i].To, "rotate moved element %d to the next PE", i)
		}
	})
}

func TestPeriodicSteps(t *testing.T) {
	runLB(t, 2, map[string]string{lb.FlagBalancer: "dummy", lb.FlagPeriod: "5ms"}, func(m *lbMain) {
		a, err := array.NewWith(m, array.Dims(4), (*worker).Init, 1)
		inJob.NoError(err)
		placed(m, a, false)
		var notes []chare.Future[lb.Report]
		for range 2 {
			notes = append(notes, chare.NewFuture[lb.Report](m))
		}
		// Two steps come by themselves; each reports to the next future.
		for _, f := range notes {
			inJob.NoError(lb.Notify(m, f.Callback()))
		}
		r := get(m, notes[0])
		inJob.Equal("dummy", r.Strategy)
		inJob.Zero(r.Migrations)
	})
}

func TestStepWithoutBalancer(t *testing.T) {
	runLB(t, 2, nil, func(m *lbMain) {
		a, err := array.NewWith(m, array.Dims(6), (*worker).Init, 1)
		inJob.NoError(err)
		out := placed(m, a, true) // AtSync resumes at once
		for i, o := range out {
			inJob.Equal(o.From, o.To, "element %d stayed", i)
			inJob.Equal(1, o.Resumed)
		}
		inJob.ErrorContains(lb.StartStep(m, chare.IgnoreCallback()), "set -balancer")
	})
}

func TestBadFlags(t *testing.T) {
	_, err := chare.ParseArgs([]string{"-balancer", "nosuch"})
	require.ErrorContains(t, err, `unknown strategy "nosuch"`)
	require.ErrorContains(t, err, "greedy")
	_, err = chare.ParseArgs([]string{"-balancer=greedy,nope"})
	require.ErrorContains(t, err, `"nope"`)
	for _, bad := range []string{"0", "-1s", "soon"} {
		_, err = chare.ParseArgs([]string{"-lbperiod", bad})
		require.ErrorContains(t, err, "bad period", bad)
	}
	cfg, err := chare.ParseArgs([]string{"-balancer", "greedy,refine", "-lbperiod=20ms", "-lbdebug", "x"})
	require.NoError(t, err)
	require.Equal(t, map[string]string{"balancer": "greedy,refine", "lbperiod": "20ms", "lbdebug": "true"}, cfg.Flags)
	require.Equal(t, []string{"x"}, cfg.Args)
}

// TestFlagsKnownToChare: every flag lb registers is one that chare
// names lb's when lb is not imported (core.FlagPackage), and with lb
// imported a misspelt one is refused without the import hint.
func TestFlagsKnownToChare(t *testing.T) {
	for _, f := range []string{lb.FlagBalancer, lb.FlagPeriod, lb.FlagDebug, lb.FlagCSV, lb.FlagSVG, lb.FlagComm} {
		require.Equal(t, "github.com/charmgo/charm/lb", core.FlagPackage(f), "flag -%s", f)
	}
	_, err := chare.ParseArgs([]string{"-balncer", "greedy"})
	require.ErrorContains(t, err, "did you mean -balancer?")
}

// broken returns a placement of the wrong length.
type broken struct{}

func (broken) Name() string                               { return "broken" }
func (broken) Place(s *lb.Snapshot) (lb.Placement, error) { return lb.Placement{0}, nil }

func init() { lb.Register("broken", func() lb.Strategy { return broken{} }) }

func TestInvalidPlacementChangesNothing(t *testing.T) {
	runLB(t, 2, map[string]string{lb.FlagBalancer: "broken"}, func(m *lbMain) {
		a, err := array.NewWith(m, array.Dims(6), (*worker).Init, 1)
		inJob.NoError(err)
		notes := chare.NewFuture[lb.Report](m)
		inJob.NoError(lb.Notify(m, notes.Callback()))
		out := placed(m, a, true)
		for i, o := range out {
			inJob.Equal(o.From, o.To, "element %d stayed", i)
		}
		r := get(m, notes)
		inJob.Zero(r.Migrations)
		inJob.Contains(r.Error, "placement has 1 entries for 6 objects")
	})
}

// TestDistributedStepGathersNothing: the distributed strategy runs as a
// protocol between the PEs (gossip, offers), and balances the block
// placement of growing loads.
func TestDistributedStepGathersNothing(t *testing.T) {
	const n, pes = 64, 4
	var reps []lb.Report
	// -lbobjonly: the background load (runtime work between entry
	// methods, measured) swings with the machine's load; seen under 8
	// concurrent test runs, it moved the second step's view by 0.062.
	runLB(t, pes, map[string]string{lb.FlagBalancer: "distributed", lb.FlagObjOnly: "true"}, func(m *lbMain) {
		a, err := array.NewWith(m, array.Dims(n), (*worker).Init, 1)
		inJob.NoError(err)
		out := placed(m, a, true)
		moved := 0
		for i, o := range out {
			inJob.Equal(1, o.Resumed, "element %d resumed once", i)
			if o.To != o.From {
				moved++
			}
		}
		var err2 error
		reps, err2 = lb.Reports(m)
		inJob.NoError(err2)
		inJob.Len(reps, 1)
		inJob.Equal(moved, reps[0].Migrations)
		// Again: the second step starts from the new placement.
		placed(m, a, true)
		reps, err2 = lb.Reports(m)
		inJob.NoError(err2)
	})
	require.Len(t, reps, 2)
	r := reps[0]
	require.Equal(t, "distributed", r.Strategy)
	require.Greater(t, r.MaxAvgBefore, 1.5)
	require.Less(t, r.MaxAvgAfter, 1.15, "%s", r.LogLine())
	require.Positive(t, r.Migrations)
	// The object loads were set and the background is left out, so the
	// second step sees what the first made; 0.05 leaves room for rounding
	// and is far below the imbalance before the first step (> 1.5).
	require.InDelta(t, r.MaxAvgAfter, reps[1].MaxAvgBefore, 0.05, "the loads were set: the second step sees what the first made")
	require.Less(t, reps[1].MaxAvgBefore, 1.15, "%s", reps[1].LogLine())
}

var onPEs01 = array.NamedMap("lb-test-pes-0-1", array.MapFunc(func(i, _ int) int { return i % 2 }))

// TestEmptyPEsDoNotHoldAtSync: elements live on PEs 0 and 1 of 4; the
// AtSync step runs anyway and may move them to the empty PEs.
func TestEmptyPEsDoNotHoldAtSync(t *testing.T) {
	dir := t.TempDir()
	csv, svg := dir+"/lb.csv", dir+"/lb.svg"
	runLB(t, 4, map[string]string{lb.FlagBalancer: "greedy", lb.FlagCSV: csv, lb.FlagSVG: svg}, func(m *lbMain) {
		a, err := array.NewWith(m, array.Dims(16), (*worker).Init, 1, array.WithMap(onPEs01))
		inJob.NoError(err)
		out := placed(m, a, true)
		on := map[int]int{}
		for _, o := range out {
			inJob.Contains([]int{0, 1}, o.From)
			on[o.To]++
		}
		inJob.Len(on, 4, "greedy spread the elements over the empty PEs too: %v", on)
	})
	for _, f := range []string{csv, svg} {
		b, err := os.ReadFile(f)
		require.NoError(t, err, "-lbcsv and -lbsvg write their files")
		require.NotEmpty(t, b)
	}
	b, _ := os.ReadFile(csv)
	require.Contains(t, string(b), "greedy")
	b, _ = os.ReadFile(svg)
	require.Contains(t, string(b), "<svg")
}

// busyBranch is non-migratable work: a group branch that burns CPU.
type busyBranch struct {
	group.Branch[busyBranch]
	Sink uint64
}

func (b *busyBranch) Burn(cb chare.Callback) {
	if b.PE() == 1 {
		b.Sink = unitWork(b.Sink + 7)
		b.Sink = unitWork(b.Sink + 7)
	}
	inJob.NoError(b.Contribute(nil, reducer.Nop, cb))
}

func init() { chare.Register[busyBranch]() }

// TestBackgroundLoad: work that no element accounts for (a group branch's)
// shows as the PE's background load, and the strategy sees it.
func TestBackgroundLoad(t *testing.T) {
	var r lb.Report
	runLB(t, 2, map[string]string{lb.FlagBalancer: "dummy"}, func(m *lbMain) {
		g, err := group.New[busyBranch](m)
		inJob.NoError(err)
		a, err := array.NewWith(m, array.Dims(4), (*worker).Init, 0)
		inJob.NoError(err)
		f := chare.NewFuture[any](m)
		inJob.NoError(chare.Send(m, g, (*busyBranch).Burn, f.Callback()))
		get(m, f)
		notes := chare.NewFuture[lb.Report](m)
		inJob.NoError(lb.Notify(m, notes.Callback()))
		placed(m, a, true)
		r = get(m, notes)
	})
	require.Len(t, r.Before, 2)
	require.Greater(t, r.Before[1], r.Before[0]+0.002, "PE 1 burnt two units of work outside any element: %v", r.Before)
}

// TestObjOnlyIgnoresBackground: with -lbobjonly the strategy sees each
// PE's load as the sum of its elements' loads alone, exactly, though PE 1
// burnt work outside any element.
func TestObjOnlyIgnoresBackground(t *testing.T) {
	var r lb.Report
	var where map[int]placeOut
	runLB(t, 2, map[string]string{lb.FlagBalancer: "dummy", lb.FlagObjOnly: "true"}, func(m *lbMain) {
		g, err := group.New[busyBranch](m)
		inJob.NoError(err)
		a, err := array.NewWith(m, array.Dims(4), (*worker).Init, 0)
		inJob.NoError(err)
		f := chare.NewFuture[any](m)
		inJob.NoError(chare.Send(m, g, (*busyBranch).Burn, f.Callback()))
		get(m, f)
		notes := chare.NewFuture[lb.Report](m)
		inJob.NoError(lb.Notify(m, notes.Callback()))
		where = placed(m, a, true)
		r = get(m, notes)
	})
	want := make([]float64, 2)
	for i, p := range where {
		want[p.From] += float64(i) * 1e-3 // worker i set its load to i units
	}
	require.Len(t, r.Before, 2)
	require.InDeltaSlice(t, want, r.Before, 1e-12, "no background load: %v", r.Before)
	require.Positive(t, want[1], "PE 1 has elements with a load")
}

// TestPeriodicStepsLeaveAtSyncElements: periodic steps run while elements
// wait in AtSync; they do not move the waiting ones (their AtSync step
// does), so every AtSync step still counts each element once.
func TestPeriodicStepsLeaveAtSyncElements(t *testing.T) {
	runLB(t, 3, map[string]string{lb.FlagBalancer: "rotate", lb.FlagPeriod: "1ms"}, func(m *lbMain) {
		a, err := array.NewWith(m, array.Dims(12), (*worker).Init, 1)
		inJob.NoError(err)
		for round := 1; round <= 4; round++ {
			out := placed(m, a, true)
			inJob.Len(out, 12)
			for i, o := range out {
				inJob.Equal(round, o.Resumed, "element %d resumed once per AtSync step", i)
			}
		}
	})
}

// TestPeriodicOrdersLeaveElementsThatSyncedSinceCollect forces the
// interleaving behind a rare hang of TestPeriodicStepsLeaveAtSyncElements:
// a periodic step takes PE 0's snapshot while element 0 still runs; the
// element then calls AtSync, and PE 0 tells PE 0's manager it waits; only
// then do the step's orders, which move element 0, arrive. Moving it would
// have its new PE count it as waiting a second time, so that its array's
// next AtSync step starts before every element has called AtSync, and the
// late ones never resume. The orders leave it where it waits instead.
func TestPeriodicOrdersLeaveElementsThatSyncedSinceCollect(t *testing.T) {
	runLB(t, 2, map[string]string{lb.FlagBalancer: "rotate"}, func(m *lbMain) {
		a, err := array.NewWith(m, array.Dims(2), (*worker).Init, 1)
		inJob.NoError(err)
		pe := chare.PEOf(m)
		inJob.Equal(0, pe.ID())
		at := func(i int) int {
			f, err := chare.Call(m, a.At(i), (*worker).Where, 0)
			inJob.NoError(err)
			return get(m, f)
		}
		inJob.Equal(0, at(0), "element 0 starts on PE 0")

		lb.CollectHere(m) // element 0 runs: the snapshot has it movable
		f := chare.NewFutureFor(m, placeGather)
		inJob.NoError(chare.Send(m, a.At(0), (*worker).Go, goMsg{Done: f.Callback(), AtSync: true}))
		at(0) // after its AtSync: PE 0 handles messages in order
		waiting := func() bool {
			for _, e := range array.LocalElements(pe, a.Route().Coll) {
				if e.Index == 0 {
					return e.Waiting
				}
			}
			return false
		}
		inJob.True(waiting(), "element 0 waits in AtSync on PE 0 before the orders come")
		inJob.NoError(lb.MoveHere(m, a.Route().Coll, 0, 1))
		inJob.True(waiting(), "the periodic step's orders left element 0 waiting on PE 0")

		// The AtSync step counts element 0 once: it runs when element 1
		// joins, and every later one too.
		inJob.NoError(chare.Send(m, a.At(1), (*worker).Go, goMsg{Done: f.Callback(), AtSync: true}))
		for round := 1; round <= 2; round++ {
			var out map[int]placeOut
			if round == 1 {
				out = map[int]placeOut{}
				for _, it := range get(m, f) {
					out[it.Index] = it.Value
				}
			} else {
				out = placed(m, a, true)
			}
			inJob.Len(out, 2)
			for i, o := range out {
				inJob.Equal(round, o.Resumed, "element %d resumed once per AtSync step", i)
				inJob.Equal((o.From+1)%2, o.To, "element %d: its AtSync step rotated it", i)
			}
		}
	})
}

// TestNotifyEntryAndFuncAreTyped: NotifyEntry and NotifyFunc deliver each
// step's lb.Report to a method or function typed for it; NotifyFunc's
// callback is dropped when the job ends.
func TestNotifyEntryAndFuncAreTyped(t *testing.T) {
	const steps = 2
	before := chare.NumFuncCallbacks()
	defer func() {
		require.Equal(t, before, chare.NumFuncCallbacks(), "NotifyFunc's function callback kept after its job")
	}()
	runLB(t, 4, map[string]string{lb.FlagBalancer: "dummy,greedy"}, func(m *lbMain) {
		a, err := array.NewWith(m, array.Dims(16), (*worker).Init, 1)
		inJob.NoError(err)
		var byFunc []chare.Future[lb.Report]
		for range steps {
			m.noted = append(m.noted, chare.NewFuture[lb.Report](m))
			byFunc = append(byFunc, chare.NewFuture[lb.Report](m))
		}
		inJob.NoError(lb.NotifyEntry(m, m.ThisProxy(), (*lbMain).Noted))
		calls := 0
		inJob.NoError(lb.NotifyFunc(m, func(ctx chare.Context, r lb.Report) {
			inJob.Equal(0, chare.PEOf(ctx).ID(), "NotifyFunc runs on PE 0")
			inJob.NoError(byFunc[calls].Send(ctx, r))
			calls++
		}))
		for range steps {
			placed(m, a, true)
		}
		for k, want := range []string{"dummy", "greedy"} {
			e, f := get(m, m.noted[k]), get(m, byFunc[k])
			inJob.Equal(k, e.Step)
			inJob.Equal(want, e.Strategy)
			inJob.Equal(16, e.Objects)
			inJob.Equal(e.LogLine(), f.LogLine(), "step %d: both targets get the same report", k)
		}
	})
}

// A coordinator's message that reaches another PE than 0 (a damaged or
// misaddressed frame) ends the job with an error naming it, not a panic.
func TestCoordinatorMessageElsewhereIsNamed(t *testing.T) {
	_, err := chare.Run(chare.Config{PEs: 2, Flags: map[string]string{lb.FlagBalancer: "greedy"}, Timeout: 30 * time.Second},
		func(m *lbMain, _ []string) {
			lb.MisaddressReport(m, 1)
			// Wait for what never comes: the abort ends the job.
			_, _ = chare.NewFuture[int](m).Get(m)
			m.Exit(0)
		})
	require.Error(t, err)
	require.Contains(t, err.Error(), "PE 0's load report reached PE 1, but only PE 0 coordinates load balancing")
}
