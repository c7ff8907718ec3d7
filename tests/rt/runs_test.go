package rt_test

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/group"
)

// Sends of one entry method to one group branch travel as runs (a []M
// behind one header, internal/core/run.go). Runs must not reorder a sender's
// messages to one receiver, even when the sender interleaves entry
// methods, the bound method of chare.Bind, and more messages than one
// buffer holds; and they must be counted for quiescence like single
// messages. With load measurement on, the receiver times each message of
// a run in place, in the same order.

type runSeq struct{ From, Seq int }

type runMark struct {
	From, Seq int
	Tag       string
}

type runGo struct {
	M       int
	Measure bool
}

type runBranch struct {
	group.Branch[runBranch]
	next map[int]int // the next sequence number expected from each sender
	got  int
}

var runBound = func() chare.Bound[runBranch, runSeq] {
	chare.Register[runBranch]()
	b, err := chare.Bind("Bound", (*runBranch).Bound)
	if err != nil {
		panic(err)
	}
	return b
}()

func (b *runBranch) take(from, seq int) {
	if b.next == nil {
		b.next = map[int]int{}
	}
	inJob.Equal(b.next[from], seq, "FIFO broken on PE %d: message %d of sender %d", b.PE(), seq, from)
	b.next[from]++
	b.got++
}

func (b *runBranch) Recv(m runSeq)  { b.take(m.From, m.Seq) }
func (b *runBranch) Bound(m runSeq) { b.take(m.From, m.Seq) }
func (b *runBranch) Mark(m runMark) {
	inJob.Equal(fmt.Sprint("mark ", m.Seq), m.Tag)
	b.take(m.From, m.Seq)
}

// Go sends M messages to every branch, this one included: mostly Recv,
// with a Mark every 7th and a bound send every 11th, so that runs are
// broken and started again.
func (b *runBranch) Go(g runGo) {
	chare.PEOf(b).SetMeasure(g.Measure)
	p, me := b.NumPEs(), b.PE()
	seq := make([]int, p)
	for s := 0; s < g.M; s++ {
		for d := 0; d < p; d++ {
			to := b.ThisProxy().At(d)
			m := runSeq{me, seq[d]}
			switch {
			case s%7 == 3:
				inJob.NoError(chare.Send(b, to, (*runBranch).Mark, runMark{me, seq[d], fmt.Sprint("mark ", seq[d])}))
			case s%11 == 5:
				inJob.NoError(runBound.Send(b, to, m))
			default:
				inJob.NoError(chare.Send(b, to, (*runBranch).Recv, m))
			}
			seq[d]++
		}
	}
}

func (b *runBranch) Report(cb chare.Callback) {
	inJob.NoError(b.Contribute(b.got, gather[int, int]{}, cb))
}

func init() { registerReducers(gather[int, int]{}) }

func TestDeliveryGroupRuns(t *testing.T) {
	cases := []struct {
		pes, m  int
		measure bool
	}{
		{1, 700, false},
		{2, 1000, false}, // several buffers' worth to each PE
		{4, 300, false},
		{3, 400, true}, // each message of a run timed in place
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%dPEs_%d_measure=%v", c.pes, c.m, c.measure), func(t *testing.T) {
			runMain(t, c.pes, func(mc *tmain) {
				g, err := group.New[runBranch](mc)
				inJob.NoError(err)
				inJob.NoError(chare.Send(mc, g, (*runBranch).Go, runGo{c.m, c.measure}))
				quiesce(mc) // every run counted as its messages, or this would end early or never
				f := chare.NewFuture[map[int]int](mc)
				inJob.NoError(chare.Send(mc, g, (*runBranch).Report, f.Callback()))
				got := get(mc, f)
				inJob.Len(got, c.pes)
				for pe := range c.pes {
					inJob.Equal(c.pes*c.m, got[pe], "messages received on PE %d", pe)
				}
			})
		})
	}
}

// Sends of an entry method registered with chare.NoRuns each take an
// envelope of their own: the same sends cost several times the memory of
// a run's []M slot. The branch types differ only in the option.
type noRunsGo struct{ M int }

type plainRunBranch struct {
	group.Branch[plainRunBranch]
	got int
}

type noRunBranch struct {
	group.Branch[noRunBranch]
	got int
}

func init() {
	chare.Register[plainRunBranch]()
	chare.Register[noRunBranch](chare.NoRuns((*noRunBranch).Recv))
}

func (b *plainRunBranch) Recv(m runSeq) { b.got++ }
func (b *noRunBranch) Recv(m runSeq)    { b.got++ }

func (b *plainRunBranch) Go(g noRunsGo) {
	for s := range g.M {
		inJob.NoError(chare.Send(b, b.ThisProxy().At(1-b.PE()), (*plainRunBranch).Recv, runSeq{b.PE(), s}))
	}
}

func (b *noRunBranch) Go(g noRunsGo) {
	for s := range g.M {
		inJob.NoError(chare.Send(b, b.ThisProxy().At(1-b.PE()), (*noRunBranch).Recv, runSeq{b.PE(), s}))
	}
}

func (b *plainRunBranch) Report(cb chare.Callback) {
	inJob.NoError(b.Contribute(b.got, gather[int, int]{}, cb))
}
func (b *noRunBranch) Report(cb chare.Callback) {
	inJob.NoError(b.Contribute(b.got, gather[int, int]{}, cb))
}

func TestNoRunsSendsEnvelopes(t *testing.T) {
	inProcessOnly(t, "it compares the allocations of sends within one process")
	const m = 20000
	runMain(t, 2, func(mc *tmain) {
		pg, err := group.New[plainRunBranch](mc)
		inJob.NoError(err)
		ng, err := group.New[noRunBranch](mc)
		inJob.NoError(err)
		quiesce(mc)
		// perMsg runs start, waits for quiescence, checks what report
		// counted, and returns the bytes allocated per message meanwhile.
		perMsg := func(start func(), report func(chare.Callback)) float64 {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			start()
			quiesce(mc)
			runtime.ReadMemStats(&after)
			f := chare.NewFuture[map[int]int](mc)
			report(f.Callback())
			inJob.Equal(map[int]int{0: m, 1: m}, get(mc, f), "messages received per PE")
			return float64(after.TotalAlloc-before.TotalAlloc) / (2 * m)
		}
		runs := perMsg(func() { inJob.NoError(chare.Send(mc, pg, (*plainRunBranch).Go, noRunsGo{m})) },
			func(cb chare.Callback) { inJob.NoError(chare.Send(mc, pg, (*plainRunBranch).Report, cb)) })
		alone := perMsg(func() { inJob.NoError(chare.Send(mc, ng, (*noRunBranch).Go, noRunsGo{m})) },
			func(cb chare.Callback) { inJob.NoError(chare.Send(mc, ng, (*noRunBranch).Report, cb)) })
		t.Logf("bytes per message: %.0f with NoRuns, %.0f in runs", alone, runs)
		inJob.Greater(alone, 3*runs, "bytes allocated per message: %.0f with NoRuns, %.0f in runs", alone, runs)
	})
}

// With load measurement on, a branch's run is timed message by message in
// place (internal/core/run.go, runClock), not unrolled into an envelope each.
type measRunBranch struct {
	group.Branch[measRunBranch]
	got int
}

func init() { chare.Register[measRunBranch]() }

func (b *measRunBranch) Measure(on bool) { chare.PEOf(b).SetMeasure(on) }
func (b *measRunBranch) Recv(m runSeq)   { b.got++ }
func (b *measRunBranch) Go(g noRunsGo) {
	for s := range g.M {
		inJob.NoError(chare.Send(b, b.ThisProxy().At(1-b.PE()), (*measRunBranch).Recv, runSeq{b.PE(), s}))
	}
}
func (b *measRunBranch) Measured(cb chare.Callback) {
	inJob.NoError(b.Contribute(int(b.Load().Wall), gather[int, int]{}, cb))
}

func TestBranchRunMeasuredInPlace(t *testing.T) {
	inProcessOnly(t, "it counts the process's allocations")
	if raceOn {
		t.Skip("allocation counts under -race are not the program's")
	}
	const m = 20000
	runMain(t, 2, func(mc *tmain) {
		g, err := group.New[measRunBranch](mc)
		inJob.NoError(err)
		perMsg := func(measure bool) float64 {
			inJob.NoError(chare.Send(mc, g, (*measRunBranch).Measure, measure))
			quiesce(mc)
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			inJob.NoError(chare.Send(mc, g, (*measRunBranch).Go, noRunsGo{m}))
			quiesce(mc)
			runtime.ReadMemStats(&after)
			objs := float64(after.Mallocs-before.Mallocs) / (2 * m)
			t.Logf("measure=%v: %.1f bytes and %.4f objects per message", measure, float64(after.TotalAlloc-before.TotalAlloc)/(2*m), objs)
			return objs
		}
		plain := perMsg(false)
		measured := perMsg(true)
		inJob.LessOrEqual(measured-plain, 0.3, "objects that measurement adds per branch message (an envelope each when unrolled)")
		f := chare.NewFuture[map[int]int](mc)
		inJob.NoError(chare.Send(mc, g, (*measRunBranch).Measured, f.Callback()))
		for pe, wall := range get(mc, f) {
			inJob.Positive(wall, "branch %d's measured wall time", pe)
		}
	})
}
