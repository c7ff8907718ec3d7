package tram_test

import (
	"fmt"
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

type tryStartMsg struct {
	S      tram.Streamer[table, uint64]
	Mode   tram.Mode
	Result chare.Callback // gets the error's text, "" if Start accepted the step
}

// TryStart starts a step of m.S from this PE and reports what Start said.
func (t *table) TryStart(m tryStartMsg) {
	res := ""
	if err := m.S.Start(t, tram.Step{Mode: m.Mode, Producers: t.NumPEs()}); err != nil {
		res = err.Error()
	}
	_ = m.Result.Send(t, res)
}

// TestT25_EveryProcessRefusesAStepThatNeedsFlushing: a step that needs
// periodic flushing on a streamer without it is refused in a process that
// did not create the streamer as in the one that did (issue 14, item 4).
func TestT25_EveryProcessRefusesAStepThatNeedsFlushing(t *testing.T) {
	var said []string
	code, err := twoProcesses(t, func(m *tmain, _ []string) {
		g, _ := group.New[table](m)
		s, err := tram.New(m, g, (*table).Add, tram.Options{Dims: []int{2, 2}})
		if err != nil {
			m.Abort(err)
			return
		}
		for _, mode := range []tram.Mode{tram.Completion, tram.Quiescence} {
			for _, pe := range []int{0, 3} { // node 0, node 1
				f := chare.NewFuture[string](m)
				if err := chare.Send(m, g.At(pe), (*table).TryStart, tryStartMsg{S: s, Mode: mode, Result: f.Callback()}); err != nil {
					m.Abort(err)
					return
				}
				r, err := f.Get(m)
				if err != nil {
					m.Abort(err)
					return
				}
				said = append(said, fmt.Sprintf("%v on PE %d: %s", mode, pe, r))
			}
		}
		m.Exit(0)
	})
	require.NoError(t, err)
	require.Equal(t, 0, code)
	require.Len(t, said, 4)
	for _, s := range said {
		require.Contains(t, s, "needs periodic flushing (Options.FlushPeriod, claim T25)")
	}
}
