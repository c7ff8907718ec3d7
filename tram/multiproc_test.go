package tram_test

import (
	"os"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

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
		if got, err = runStep(m, s, g, tram.Step{Mode: tram.Completion, Producers: 4}, feedAll(m, g, feedMsg{S: s, Items: items, Seed: 11})); err != nil {
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
	var r chatResult
	code, err := twoProcesses(t, chat(nil, n, false, &r))
	require.NoError(t, err)
	require.Equal(t, 0, code)
	require.Equal(t, wantChat(n), r.totals)
	// The 32 elements of node 0 (block map: PEs 0 and 1) used the delegate.
	require.EqualValues(t, 32*n, r.stats.Items)
}
