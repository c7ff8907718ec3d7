package comlib_test

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/array"
	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/chare/reducer"
	"github.com/charmgo/charm/comlib"
)

// A proxy delegated to a Comlib instance stays delegated in every
// process: the same program sends the same number of messages through
// the instance as one process, two or four, and the instance's Report
// counts them in every process.

const (
	dlElems  = 16 // elements, 4 per PE (block map on 4 PEs)
	dlSends  = 30 // messages per element per round
	dlRounds = 2  // bracketed rounds (the first teaches EachToMany its sources)
)

// dlElem sends through the delegated proxy it gets in a message.
type dlElem struct {
	array.Element[dlElem, int]
	Got, Sum int
}

type dlRound struct {
	Peers array.Proxy[dlElem, int]
	Round int
}

func init() { chare.Register[dlElem]() }

// Chat sends dlSends notes to random peers, in brackets.
func (e *dlElem) Chat(m dlRound) {
	r := rand.New(rand.NewSource(int64(e.ThisIndex()*100 + m.Round)))
	if err := chare.BeginIteration(e, m.Peers, m.Round); err != nil {
		e.Abort(err)
		return
	}
	for i := 0; i < dlSends; i++ {
		if err := chare.Send(e, m.Peers.At(r.Intn(dlElems)), (*dlElem).Note, e.ThisIndex()); err != nil {
			e.Abort(err)
			return
		}
	}
	if err := chare.EndIteration(e, m.Peers); err != nil {
		e.Abort(err)
	}
}

func (e *dlElem) Note(from int) { e.Got++; e.Sum += from }

func (e *dlElem) Totals(cb chare.Callback) {
	_ = e.Contribute([]int{e.Got, e.Sum}, reducer.SumInt, cb)
}

type dlResult struct {
	totals []int
	report comlib.Report
}

// dlJob delegates the dlElems' proxy to the instance make returns,
// hands it to them in a broadcast, runs the rounds and gathers the
// instance's report.
func dlJob(make func(m *tmain, dlElems array.Proxy[dlElem, int]) (*comlib.Instance, error), r *dlResult) func(*tmain, []string) {
	return func(m *tmain, _ []string) {
		fail := func(err error) { m.Abort(err) }
		a, err := array.New[dlElem](m, array.Dims(dlElems))
		if err != nil {
			fail(err)
			return
		}
		inst, err := make(m, a)
		if err != nil {
			fail(err)
			return
		}
		for round := 0; round < dlRounds; round++ {
			if err := chare.Send(m, a, (*dlElem).Chat, dlRound{Peers: a.Delegate(inst), Round: round}); err != nil {
				fail(err)
				return
			}
			qd := chare.NewFuture[any](m)
			m.DetectQuiescence(qd.Callback())
			if _, err := qd.Get(m); err != nil {
				fail(err)
				return
			}
		}
		f := chare.NewFuture[[]int](m)
		_ = chare.Send(m, a, (*dlElem).Totals, f.Callback())
		if r.totals, err = f.Get(m); err != nil {
			fail(err)
			return
		}
		rf := chare.NewFuture[comlib.Report](m)
		if err := inst.Report(m, rf.Callback()); err != nil {
			fail(err)
			return
		}
		if r.report, err = rf.Get(m); err != nil {
			fail(err)
			return
		}
		m.Exit(0)
	}
}

// dlWant is what the dlElems must count: messages, and the sum of
// their senders.
func dlWant() []int {
	sum := 0
	for i := 0; i < dlElems; i++ {
		sum += i * dlSends * dlRounds
	}
	return []int{dlElems * dlSends * dlRounds, sum}
}

// TestDelegatedToInstanceInEveryProcess: for each kind of instance, as 1,
// 2 and 4 processes, every message of every process goes through the
// instance (Report: Messages per process and over the job).
func TestDelegatedToInstanceInEveryProcess(t *testing.T) {
	for _, tc := range []struct {
		name string
		make func(m *tmain, a array.Proxy[dlElem, int]) (*comlib.Instance, error)
	}{
		{"direct", func(m *tmain, _ array.Proxy[dlElem, int]) (*comlib.Instance, error) {
			return comlib.New(m, comlib.Direct())
		}},
		{"streaming", func(m *tmain, _ array.Proxy[dlElem, int]) (*comlib.Instance, error) {
			return comlib.New(m, comlib.Streaming(comlib.StreamOptions{MaxMsgs: 8}))
		}},
		{"meshstreaming", func(m *tmain, _ array.Proxy[dlElem, int]) (*comlib.Instance, error) {
			return comlib.New(m, comlib.MeshStreaming(comlib.StreamOptions{MaxMsgs: 8}))
		}},
		{"eachtomany", func(m *tmain, a array.Proxy[dlElem, int]) (*comlib.Instance, error) {
			return comlib.New(m, comlib.EachToMany(comlib.EachToManyOptions{Router: "mesh", Sources: a}))
		}},
		{"auto", func(m *tmain, _ array.Proxy[dlElem, int]) (*comlib.Instance, error) {
			tree, err := comlib.ParseSelection([]byte(`{"strategy=streaming": {}}`))
			if err != nil {
				return nil, err
			}
			return comlib.New(m, comlib.Auto(comlib.AutoOptions{Tree: tree}))
		}},
	} {
		for _, nodes := range []int{1, 2, 4} {
			t.Run(fmt.Sprintf("%s/%dproc", tc.name, nodes), func(t *testing.T) {
				var r dlResult
				runJob(t, 4, nodes, dlJob(tc.make, &r))
				require.Equal(t, dlWant(), r.totals, "messages and the sum of their senders")
				require.EqualValues(t, dlElems*dlSends*dlRounds, r.report.Job.Messages, "messages through the instance in the job: %+v", r.report)
				require.EqualValues(t, int64(comlib.MessageSize(0))*dlElems*dlSends*dlRounds, r.report.Job.Bytes, "bytes through the instance in the job: %+v", r.report)
				require.Len(t, r.report.Process, nodes)
				for k, p := range r.report.Process {
					require.EqualValues(t, dlElems*dlSends*dlRounds/nodes, p.Messages, "messages through the instance in process %d", k)
				}
			})
		}
	}
}
