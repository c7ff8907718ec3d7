package rt_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/array"
	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/group"
	"github.com/charmgo/charm/trace"
)

// -trace: the file a small job writes is trace-event JSON with a track per
// PE, slices for entry methods, flow arrows and instants.

// tracee passes a token around a ring of elements and moves on request.
type tracee struct {
	array.Element[tracee, int]
	Seen int
}

type passMsg struct{ Left, N int }

func (e *tracee) Pass(m passMsg) {
	e.Seen++
	if m.Left > 0 {
		inJob.NoError(chare.Send(e, e.ThisProxy().At((e.ThisIndex()+1)%m.N), (*tracee).Pass, passMsg{m.Left - 1, m.N}))
	}
}

func (e *tracee) Move(to int) { inJob.NoError(e.Migrate(to)) }

func init() { chare.Register[tracee]() }

// traceDir is where the nodes of a traced job write: the same directory in
// every process of the job (launched nodes inherit the variable).
func traceDir(t *testing.T) string {
	const env = "CHARMGO_TEST_TRACE_DIR"
	if d := os.Getenv(env); d != "" {
		return d
	}
	d := t.TempDir()
	t.Setenv(env, d)
	return d
}

func TestTraceWritesTimeline(t *testing.T) {
	const pes, n = 4, 8
	path := filepath.Join(traceDir(t), "run.json")
	cfg := jobConfig(t, pes)
	cfg.Trace = path
	code, err := runConfig(t, cfg, func(m *tmain, _ []string) {
		a, err := array.New[tracee](m, array.Dims(n))
		inJob.NoError(err)
		inJob.NoError(chare.Send(m, a.At(0), (*tracee).Pass, passMsg{Left: 3 * n, N: n}))
		quiesce(m)
		inJob.NoError(chare.Send(m, a.At(1), (*tracee).Move, 2))
		quiesce(m)
		m.Exit(0)
	})
	require.NoError(t, err)
	require.Equal(t, 0, code)

	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	var generic map[string]any
	require.NoError(t, json.Unmarshal(raw, &generic), "the trace is JSON")
	f, err := trace.ReadFile(path)
	require.NoError(t, err)
	require.Empty(t, f.OtherData.Missing, "every node's events are merged")

	typ, err := chare.TypeOf[tracee]()
	require.NoError(t, err)
	named := map[int]bool{}     // PEs with a thread_name
	slices := map[int]int{}     // Pass slices per PE
	starts := map[uint64]bool{} // flow starts
	var flowPairs, migrations, quiescences int
	for _, e := range f.TraceEvents {
		switch {
		case e.Ph == "M" && e.Name == "thread_name":
			named[e.TID] = true
			require.Equal(t, e.TID*testNodes/pes, e.PID, "PE %d is grouped under its node", e.TID)
		case e.Ph == "X" && e.Name == typ.Name+".Pass":
			slices[e.TID]++
			require.NotEmpty(t, e.Args["index"], "a slice names its element")
			require.NotNil(t, e.Dur)
		case e.Ph == "s":
			starts[e.ID] = true
		case e.Ph == "i" && e.Name == "migrate":
			migrations++
			require.Equal(t, "migration", e.Cat)
			require.Equal(t, "1", e.Args["index"])
			require.EqualValues(t, 2, e.Args["to"])
		case e.Ph == "i" && e.Name == "quiescence":
			quiescences++
		}
	}
	for _, e := range f.TraceEvents {
		if e.Ph == "f" && starts[e.ID] {
			flowPairs++
		}
	}
	total := 0
	for p := range pes {
		require.True(t, named[p], "PE %d has a named track", p)
		require.Positive(t, slices[p], "PE %d has Pass slices (%v)", p, slices)
		total += slices[p]
	}
	require.Equal(t, 3*n+1, total, "one slice per Pass that ran")
	require.Positive(t, flowPairs, "at least one send is joined to its delivery")
	require.Equal(t, 1, migrations)
	require.Equal(t, 2, quiescences)
	for n := 1; n < testNodes; n++ {
		require.NoFileExists(t, trace.NodePath(path, n), "node 0 removed the node files it merged")
	}
}

func TestTraceFileThatCannotBeWritten(t *testing.T) {
	path := filepath.Join(t.TempDir(), "no-such-dir", "run.json")
	started := false
	code, err := chare.Run(chare.Config{PEs: 2, Trace: path, Timeout: jobDeadline}, func(m *tmain, _ []string) {
		started = true
		m.Exit(0)
	})
	require.Error(t, err)
	require.Equal(t, 1, code)
	require.Contains(t, err.Error(), path)
	require.False(t, started, "the job does not start")
}

func TestTraceFlagNeedsAFile(t *testing.T) {
	cfg, err := chare.ParseArgs([]string{"-trace", "out.json", "-p", "2"})
	require.NoError(t, err)
	require.Equal(t, "out.json", cfg.Flags["trace"])
	_, err = chare.ParseArgs([]string{"-trace"})
	require.ErrorContains(t, err, "-trace")
}

// TestTraceFlowsCrossProcesses: a sampled send from a PE of node 0 to a
// PE of node 1 (and back) is one flow arrow in the merged file, its start
// on the sender's track and its end on the receiver's, under one id.
func TestTraceFlowsCrossProcesses(t *testing.T) {
	const pes, n = 4, 8
	path := filepath.Join(traceDir(t), "cross.json")
	cfg := asTwoProcesses(t, pes)
	cfg.Trace = path
	code, err := runConfig(t, cfg, func(m *tmain, _ []string) {
		a, err := array.New[tracee](m, array.Dims(n))
		inJob.NoError(err)
		inJob.NoError(chare.Send(m, a.At(0), (*tracee).Pass, passMsg{Left: 2 * n, N: n}))
		quiesce(m)
		m.Exit(0)
	})
	require.NoError(t, err)
	require.Equal(t, 0, code)

	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	var generic struct {
		TraceEvents []map[string]any `json:"traceEvents"`
	}
	require.NoError(t, json.Unmarshal(raw, &generic), "the merged trace is JSON")
	require.NotEmpty(t, generic.TraceEvents)
	f, err := trace.ReadFile(path)
	require.NoError(t, err)
	require.Empty(t, f.OtherData.Missing, "node 1's events are merged")

	nodeOf := map[int]int{}          // PE → node, from the tracks' metadata
	sliceAt := map[[2]float64]bool{} // [PE, start] of every slice
	type end struct {
		pid, tid int
		ts       float64
	}
	starts := map[uint64]end{}
	var ends []struct {
		id uint64
		end
	}
	for _, e := range f.TraceEvents {
		switch e.Ph {
		case "M":
			if e.Name == "thread_name" {
				nodeOf[e.TID] = e.PID
			}
		case "X":
			sliceAt[[2]float64{float64(e.TID), e.TS}] = true
		case "s":
			_, dup := starts[e.ID]
			require.False(t, dup, "flow id %#x is drawn twice", e.ID)
			starts[e.ID] = end{e.PID, e.TID, e.TS}
		case "f":
			require.Equal(t, "e", e.BP, "a flow end binds to the slice that runs the message")
			_, started := starts[e.ID]
			require.True(t, started, "flow %#x ends on PE %d before it starts in the file, or never starts (DevTools reads flows in file order)", e.ID, e.TID)
			ends = append(ends, struct {
				id uint64
				end
			}{e.ID, end{e.PID, e.TID, e.TS}})
		}
	}
	require.Equal(t, map[int]int{0: 0, 1: 0, 2: 1, 3: 1}, nodeOf, "two PEs per node")
	across := map[[2]int]int{} // [from node, to node] → arrows
	for _, e := range ends {
		s := starts[e.id]
		require.Equal(t, nodeOf[s.tid], s.pid, "a flow starts on its PE's node")
		require.Equal(t, nodeOf[e.tid], e.pid, "a flow ends on its PE's node")
		require.GreaterOrEqual(t, e.ts, s.ts, "flow %#x ends (PE %d) before it starts (PE %d)", e.id, e.tid, s.tid)
		// DevTools joins a flow only to a slice that starts when it does.
		require.True(t, sliceAt[[2]float64{float64(e.tid), e.ts}], "flow %#x ends where no slice of PE %d starts", e.id, e.tid)
		if s.pid != e.pid {
			require.True(t, sliceAt[[2]float64{float64(s.tid), s.ts}], "flow %#x starts where no slice of PE %d starts", e.id, s.tid)
		}
		across[[2]int{s.pid, e.pid}]++
	}
	require.Positive(t, across[[2]int{0, 1}], "an arrow from node 0 to node 1 (%v)", across)
	require.Positive(t, across[[2]int{1, 0}], "an arrow from node 1 to node 0 (%v)", across)
}

// A traced PE sends in runs too (the sends that draw a flow arrow go in
// envelopes of their own): every message of a run is recorded as a slice
// of its own, naming its branch or element.
type traceHit struct {
	array.Element[traceHit, int]
	Got int
}

func init() { chare.Register[traceHit]() }

func (e *traceHit) Hit(k int) { e.Got++ }

func TestTraceRecordsEveryMessageOfARun(t *testing.T) {
	const pes, m, elems, hits = 2, 5000, 4, 3000
	path := filepath.Join(traceDir(t), "runs.json")
	cfg := jobConfig(t, pes)
	cfg.Trace = path
	code, err := runConfig(t, cfg, func(mc *tmain, _ []string) {
		g, err := group.New[plainRunBranch](mc)
		inJob.NoError(err)
		a, err := array.New[traceHit](mc, array.Dims(elems))
		inJob.NoError(err)
		quiesce(mc)
		inJob.NoError(chare.Send(mc, g, (*plainRunBranch).Go, noRunsGo{m}))
		for i := range elems {
			for k := range hits {
				inJob.NoError(chare.Send(mc, a.At(i), (*traceHit).Hit, k))
			}
		}
		quiesce(mc)
		f := chare.NewFuture[map[int]int](mc)
		inJob.NoError(chare.Send(mc, g, (*plainRunBranch).Report, f.Callback()))
		inJob.Equal(map[int]int{0: m, 1: m}, get(mc, f), "messages received per PE")
		mc.Exit(0)
	})
	require.NoError(t, err)
	require.Equal(t, 0, code)

	f, err := trace.ReadFile(path)
	require.NoError(t, err)
	br, err := chare.TypeOf[plainRunBranch]()
	require.NoError(t, err)
	el, err := chare.TypeOf[traceHit]()
	require.NoError(t, err)
	recv := map[int]int{}   // Recv slices per PE
	hit := map[string]int{} // Hit slices per element
	for _, e := range f.TraceEvents {
		switch {
		case e.Ph == "X" && e.Name == br.Name+".Recv":
			recv[e.TID]++
			require.Equal(t, fmt.Sprint(e.TID), e.Args["index"], "a branch's slice names its PE")
		case e.Ph == "X" && e.Name == el.Name+".Hit":
			hit[fmt.Sprint(e.Args["index"])]++
		}
	}
	require.Equal(t, map[int]int{0: m, 1: m}, recv, "one slice per message to a branch")
	want := map[string]int{}
	for i := range elems {
		want[fmt.Sprint(i)] = hits
	}
	require.Equal(t, want, hit, "one slice per message to an element")
}

// TestTraceMaxStopsRecording: with Config.TraceMax (-tracemax N), a job
// that sends more messages than that records at most N events per
// process, and the file says that recording stopped and how many events
// it did not record; the job itself runs to its end.
func TestTraceMaxStopsRecording(t *testing.T) {
	const pes, m, max = 2, 20000, 1000
	path := filepath.Join(traceDir(t), "max.json")
	cfg := jobConfig(t, pes)
	cfg.Trace, cfg.TraceMax = path, max
	code, err := runConfig(t, cfg, func(mc *tmain, _ []string) {
		g, err := group.New[plainRunBranch](mc)
		inJob.NoError(err)
		quiesce(mc)
		inJob.NoError(chare.Send(mc, g, (*plainRunBranch).Go, noRunsGo{m}))
		quiesce(mc)
		f := chare.NewFuture[map[int]int](mc)
		inJob.NoError(chare.Send(mc, g, (*plainRunBranch).Report, f.Callback()))
		inJob.Equal(map[int]int{0: m, 1: m}, get(mc, f), "messages received per PE")
		mc.Exit(0)
	})
	require.NoError(t, err)
	require.Equal(t, 0, code)
	f, err := trace.ReadFile(path)
	require.NoError(t, err)
	events, notes := 0, 0
	for _, e := range f.TraceEvents {
		switch {
		case e.Ph == "i" && e.Cat == "trace":
			notes++
			require.Contains(t, e.Name, fmt.Sprintf("trace stopped: -tracemax %d events reached", max))
		case e.Ph != "M":
			events++
		}
	}
	nodes := 1 + len(f.OtherData.Missing)
	if testNodes > 1 {
		nodes = testNodes
	}
	require.LessOrEqual(t, events, nodes*max, "events recorded by %d processes", nodes)
	require.GreaterOrEqual(t, notes, 1, "the trace says that recording stopped")
	require.Greater(t, f.OtherData.Dropped, 2*m-nodes*max-1, "the messages not recorded are counted")
	require.Equal(t, max, f.OtherData.Max)

	_, err = chare.ParseArgs([]string{"-trace", "x.json", "-tracemax", "0"})
	require.ErrorContains(t, err, `flag -tracemax: bad number of events "0"`)
	cfg2, err := chare.ParseArgs([]string{"-trace", "x.json", "-tracemax", "5"})
	require.NoError(t, err)
	require.Equal(t, "5", cfg2.Flags["tracemax"])
}
