package tram_test

import (
	"os"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/array"
	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/group"
	"github.com/charmgo/charm/tram"
)

// twoProcesses runs a job as two processes: this test binary launches a
// copy of itself, running just this test, as node 1.
func twoProcesses(t *testing.T, start func(*tmain, []string)) (int, error) {
	t.Helper()
	if testing.Short() {
		t.Skip("launches a process")
	}
	code, err := chare.Run(chare.Config{PEs: 4, Nodes: 2, Timeout: 60 * time.Second,
		Launch: []string{os.Args[0], "-test.run=^" + regexp.QuoteMeta(t.Name()) + "$", "-test.count=1"}}, start)
	if chare.IsLaunchedNode() {
		os.Exit(code)
	}
	return code, err
}

// TestStreamerAcrossProcesses: a completion step on a 2 × 2 grid whose
// second dimension stays inside each process; items cross the processes
// as msgpack in TRAM's batches.
func TestStreamerAcrossProcesses(t *testing.T) {
	const items = 2000
	var got []int64
	code, err := twoProcesses(t, func(m *tmain, _ []string) {
		g, _ := group.New[table](m)
		s, err := tram.New(m, g, (*table).Add, tram.Options{Sizing: tram.Sizing{BufferItems: 64}, FlushPeriod: time.Millisecond})
		if err != nil {
			m.Abort(err)
			return
		}
		started, finished := chare.NewFuture[any](m), chare.NewFuture[any](m)
		if err := s.Start(m, tram.Step{Mode: tram.Completion, Producers: 4, Started: started.Callback(), Finished: finished.Callback()}); err != nil {
			m.Abort(err)
			return
		}
		if err := chare.WaitAll(m, started); err != nil {
			m.Abort(err)
			return
		}
		_ = chare.Send(m, g, (*table).Feed, feedMsg{S: s, Items: items, Seed: 11})
		if err := chare.WaitAll(m, finished); err != nil {
			m.Abort(err)
			return
		}
		tot := chare.NewFuture[[]int64](m)
		_ = chare.Send(m, g, (*table).Totals, tot.Callback())
		if got, err = tot.Get(m); err != nil {
			m.Abort(err)
			return
		}
		m.Exit(0)
	})
	require.NoError(t, err)
	require.Equal(t, 0, code)
	n, sum := expected(4, items, 11)
	require.Equal(t, []int64{n, sum}, got)
}

// TestDelegateAcrossProcesses: sends of the elements in node 0 go over a
// TRAM delegate whose batches cross to node 1 (the delegation itself stays
// in node 0); every message arrives once.
func TestDelegateAcrossProcesses(t *testing.T) {
	const n = 100
	var totals []int
	var stats tram.DelegateStats
	code, err := twoProcesses(t, func(m *tmain, _ []string) {
		cells, err := array.New[cell](m, array.Dims(64))
		if err != nil {
			m.Abort(err)
			return
		}
		d, err := tram.NewDelegate(m, tram.Options{Sizing: tram.Sizing{BufferItems: 32}, FlushPeriod: time.Millisecond})
		if err != nil {
			m.Abort(err)
			return
		}
		_ = chare.Send(m, cells, (*cell).Chat, chatter{Peers: cells.Delegate(d), N: n})
		qd := chare.NewFuture[any](m)
		m.DetectQuiescence(qd.Callback())
		if _, err := qd.Get(m); err != nil {
			m.Abort(err)
			return
		}
		f := chare.NewFuture[[]int](m)
		_ = chare.Send(m, cells, (*cell).Totals, f.Callback())
		if totals, err = f.Get(m); err != nil {
			m.Abort(err)
			return
		}
		stats = d.Stats()
		m.Exit(0)
	})
	require.NoError(t, err)
	require.Equal(t, 0, code)
	want := 0
	for i := 0; i < 64; i++ {
		want += i * n
	}
	require.Equal(t, []int{64 * n, want}, totals)
	// The 32 elements of node 0 (block map: PEs 0 and 1) used the delegate.
	require.EqualValues(t, 32*n, stats.Items)
}
