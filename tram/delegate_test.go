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
			marked := chare.NewFuture[any](m)
			if err := d.Aggregate(m, (*cell).Note, marked.Callback()); err != nil {
				m.Abort(err)
				return
			}
			if _, err := marked.Get(m); err != nil {
				m.Abort(err)
				return
			}
			peers = cells // not delegated
		}
		_ = chare.Send(m, cells, (*cell).Chat, chatter{Peers: peers, N: n})
		qd := chare.NewFuture[any](m)
		m.DetectQuiescence(qd.Callback())
		if _, err := qd.Get(m); err != nil {
			m.Abort(err)
			return
		}
		f := chare.NewFuture[[]int](m)
		_ = chare.Send(m, cells, (*cell).Totals, f.Callback())
		if r.totals, err = f.Get(m); err != nil {
			m.Abort(err)
			return
		}
		rep := chare.NewFuture[tram.DelegateReport](m)
		if err := d.Report(m, rep.Callback()); err != nil {
			m.Abort(err)
			return
		}
		if r.report, err = rep.Get(m); err != nil {
			m.Abort(err)
			return
		}
		r.stats = r.report.Job
		if tag {
			unmarked := chare.NewFuture[any](m)
			if err := d.Unaggregate(m, (*cell).Note, unmarked.Callback()); err != nil {
				m.Abort(err)
				return
			}
			if _, err := unmarked.Get(m); err != nil {
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
