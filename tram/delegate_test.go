package tram_test

import (
	"math/rand"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/array"
	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/chare/reducer"
	"github.com/charmgo/charm/tram"
)

// cell sends ordinary entry-method messages through a proxy delegated to
// TRAM; the code is the code of an undelegated send.
type cell struct {
	array.Element[cell, int]
	got, sum int
}

type chatter struct {
	Peers array.Proxy[cell, int]
	N     int
}

func (c *cell) Chat(m chatter) {
	r := rand.New(rand.NewSource(int64(c.ThisIndex())))
	for i := 0; i < m.N; i++ {
		if err := chare.Send(c, m.Peers.At(r.Intn(64)), (*cell).Note, c.ThisIndex()); err != nil {
			c.Abort(err)
			return
		}
	}
}

func (c *cell) Note(from int) { c.got++; c.sum += from }

func (c *cell) Totals(cb chare.Callback) {
	_ = c.Contribute([]int{c.got, c.sum}, reducer.SumInt, cb)
}

func init() { chare.Register[cell](chare.Transient("got", "sum")) } // the cells never move

// quiescer is a main chare that can wait for quiescence.
type quiescer interface {
	chare.Context
	DetectQuiescence(chare.Callback)
}

// quiet waits until no message is left in the job.
func quiet(m quiescer) error {
	qd := chare.NewFuture[any](m)
	m.DetectQuiescence(qd.Callback())
	_, err := qd.Get(m)
	return err
}

// settle waits until the job is quiet, then collects the totals of cells
// and the report of d.
func settle(m quiescer, cells array.Proxy[cell, int], d *tram.Delegate) ([]int, tram.DelegateReport, error) {
	var rep tram.DelegateReport
	if err := quiet(m); err != nil {
		return nil, rep, err
	}
	totals, err := cellTotals(m, cells)
	if err != nil {
		return nil, rep, err
	}
	rf := chare.NewFuture[tram.DelegateReport](m)
	if err := d.Report(m, rf.Callback()); err != nil {
		return nil, rep, err
	}
	rep, err = rf.Get(m)
	return totals, rep, err
}

// cellTotals collects the totals of cells.
func cellTotals(m chare.Context, cells array.Proxy[cell, int]) ([]int, error) {
	f := chare.NewFuture[[]int](m)
	if err := chare.Send(m, cells, (*cell).Totals, f.Callback()); err != nil {
		return nil, err
	}
	return f.Get(m)
}

// tagNote runs tag (a delegate's Aggregate or Unaggregate) on cell.Note
// and waits until every PE has done it.
func tagNote(m chare.Context, tag func(chare.Context, any, chare.Callback) error) error {
	done := chare.NewFuture[any](m)
	if err := tag(m, (*cell).Note, done.Callback()); err != nil {
		return err
	}
	_, err := done.Get(m)
	return err
}

// chatResult is what a chat job reports.
type chatResult struct {
	totals []int // messages received, and the sum of their senders
	stats  tram.DelegateStats
	report tram.DelegateReport
}

// chat returns the main function of a job in which 64 cells each send n
// notes over a TRAM delegate: through a delegated proxy, or (tag) through
// plain proxies with Note tagged for aggregation. It fills r in.
func chat(dims []int, n int, tag bool, r *chatResult) func(*tmain, []string) {
	return func(m *tmain, _ []string) {
		cells, err := array.New[cell](m, array.Dims(64))
		if err != nil {
			m.Abort(err)
			return
		}
		d, err := tram.NewDelegate(m, tram.Options{Dims: dims, Sizing: tram.Sizing{BufferItems: 32}, FlushPeriod: time.Millisecond})
		if err != nil {
			m.Abort(err)
			return
		}
		peers := cells.Delegate(d)
		if tag {
			if err := tagNote(m, d.Aggregate); err != nil {
				m.Abort(err)
				return
			}
			peers = cells // not delegated
		}
		_ = chare.Send(m, cells, (*cell).Chat, chatter{Peers: peers, N: n})
		if r.totals, r.report, err = settle(m, cells, d); err != nil {
			m.Abort(err)
			return
		}
		r.stats = r.report.Job
		if tag {
			if err := tagNote(m, d.Unaggregate); err != nil {
				m.Abort(err)
				return
			}
		}
		m.Exit(0)
	}
}

// wantChat is what a chat job of n notes per cell must count.
func wantChat(n int) []int {
	want := 0
	for i := 0; i < 64; i++ {
		want += i * n
	}
	return []int{64 * n, want}
}

// TestT28_DelegatedProxyAggregatesSends: sends through a proxy delegated to
// a TRAM delegate arrive exactly once, in fewer messages than items.
func TestT28_DelegatedProxyAggregatesSends(t *testing.T) {
	const n = 200
	var r chatResult
	code, err := chare.Run(chare.Config{PEs: 4, Timeout: 30 * time.Second}, chat([]int{2, 2}, n, false, &r))
	require.NoError(t, err)
	require.Equal(t, 0, code)
	require.Equal(t, wantChat(n), r.totals, "messages and the sum of their senders")
	require.EqualValues(t, 64*n, r.stats.Items)
	require.Less(t, r.stats.Messages, r.stats.Items/4, "TRAM must aggregate: %+v", r.stats)
}

// TestT28_EntryTaggedForAggregation: an entry method tagged with
// Delegate.Aggregate is aggregated through plain, undelegated proxies.
func TestT28_EntryTaggedForAggregation(t *testing.T) {
	const n = 100
	var r chatResult
	code, err := chare.Run(chare.Config{PEs: 4, Timeout: 30 * time.Second}, chat([]int{2, 2}, n, true, &r))
	require.NoError(t, err)
	require.Equal(t, 0, code)
	require.Equal(t, wantChat(n), r.totals)
	require.EqualValues(t, 64*n, r.stats.Items, "every Note went through TRAM")
	require.Less(t, r.stats.Messages, r.stats.Items/4, "%+v", r.stats)
}
