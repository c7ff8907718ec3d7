package tram_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/array"
	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/group"
	"github.com/charmgo/charm/internal/core"
	"github.com/charmgo/charm/internal/jobtest"
	"github.com/charmgo/charm/tram"
)

// A delegated proxy stays delegated wherever it goes: the same program
// sends the same number of messages through its TRAM delegate as one
// process, two or four, and the delegate's report counts them on every
// PE of every process.

// inProcesses runs a job of 4 PEs as n processes: this test binary
// launches copies of itself, running just this test, as the other nodes.
func inProcesses(t *testing.T, n int, start func(*tmain, []string)) (int, error) {
	t.Helper()
	return jobtest.Run(t, chare.Config{PEs: 4, Nodes: n, Timeout: 60 * time.Second}, start)
}

// requireEveryPE checks a delegate's report of a chat of n notes per
// cell on 4 PEs in nodes processes: every cell's notes went through the
// delegate, on its own PE (block map: 16 cells per PE).
func requireEveryPE(t *testing.T, r chatResult, n, nodes int) {
	t.Helper()
	require.Equal(t, wantChat(n), r.totals, "messages and the sum of their senders")
	require.EqualValues(t, 64*n, r.report.Job.Items, "sends through the delegate in the whole job")
	require.Len(t, r.report.PE, 4)
	for pe, s := range r.report.PE {
		require.EqualValues(t, 16*n, s.Items, "sends through the delegate on PE %d", pe)
		require.Positive(t, s.Messages, "messages of PE %d's branch", pe)
	}
	require.Len(t, r.report.Process, nodes)
	for k, s := range r.report.Process {
		require.EqualValues(t, 64*n/nodes, s.Items, "sends through the delegate in process %d", k)
	}
	require.Less(t, r.report.Job.Messages, r.report.Job.Items/4, "TRAM must aggregate: %+v", r.report.Job)
}

// TestDelegatedProxyInEveryProcess: the cells get the delegated proxy in
// a broadcast message; in every process their sends go through the
// delegate.
func TestDelegatedProxyInEveryProcess(t *testing.T) { chatInEveryProcess(t, false) }

// TestAggregatedEntryInEveryProcess: Aggregate marks the entry method in
// every process; the cells' sends through plain proxies go through the
// delegate everywhere.
func TestAggregatedEntryInEveryProcess(t *testing.T) { chatInEveryProcess(t, true) }

// chatInEveryProcess runs a chat of 50 notes per cell (tag: through
// plain proxies with Note tagged) as 1, 2 and 4 processes, and checks
// the delegate's report of each with requireEveryPE.
func chatInEveryProcess(t *testing.T, tag bool) {
	for _, nodes := range []int{1, 2, 4} {
		t.Run(fmt.Sprintf("%dproc", nodes), func(t *testing.T) {
			const n = 50
			var r chatResult
			code, err := inProcesses(t, nodes, chat(nil, n, tag, &r))
			require.NoError(t, err)
			require.Equal(t, 0, code)
			requireEveryPE(t, r, n, nodes)
		})
	}
}

// carrier keeps a delegated proxy in its state and a callback made from
// it: both travel when it migrates.
type carrier struct {
	array.Element[carrier, int]
	Peers array.Proxy[cell, int]
	Hit   chare.Callback // Note on cell 0, through the delegate
}

type carrierSetup struct {
	Peers array.Proxy[cell, int]
	To    int // the PE to move to
}

func init() { chare.Register[carrier]() }

// Arm keeps the proxy and a callback made from it, and moves.
func (c *carrier) Arm(m carrierSetup) {
	c.Peers = m.Peers
	c.Hit = chare.EntryCallback(m.Peers.At(0), (*cell).Note)
	if err := c.Migrate(m.To); err != nil {
		c.Abort(err)
	}
}

// Fire sends n notes through the proxy it brought along, and one through
// the callback.
func (c *carrier) Fire(n int) {
	for i := 0; i < n; i++ {
		if err := chare.Send(c, c.Peers.At(i%64), (*cell).Note, 0); err != nil {
			c.Abort(err)
			return
		}
	}
	if err := c.Hit.Send(c, 0); err != nil {
		c.Abort(err)
	}
}

// TestDelegationTravelsWithMigratedState: an element keeps a delegated
// proxy and a callback made from it in its state and migrates to the
// last PE (another process with 2 or 4); there, its sends and the
// callback still go through the delegate.
func TestDelegationTravelsWithMigratedState(t *testing.T) {
	for _, nodes := range []int{1, 2, 4} {
		t.Run(fmt.Sprintf("%dproc", nodes), func(t *testing.T) {
			const n = 40
			var rep tram.DelegateReport
			var got []int
			code, err := inProcesses(t, nodes, func(m *tmain, _ []string) {
				fail := func(err error) { m.Abort(err) }
				cells, err := array.New[cell](m, array.Dims(64))
				if err != nil {
					fail(err)
					return
				}
				carriers, err := array.New[carrier](m, array.Dims(1)) // on PE 0
				if err != nil {
					fail(err)
					return
				}
				d, err := tram.NewDelegate(m, tram.Options{Sizing: tram.Sizing{BufferItems: 8}})
				if err != nil {
					fail(err)
					return
				}
				if err := chare.Send(m, carriers.At(0), (*carrier).Arm, carrierSetup{Peers: cells.Delegate(d), To: 3}); err != nil {
					fail(err)
					return
				}
				if err := quiet(m); err != nil {
					fail(err)
					return
				}
				if err := chare.Send(m, carriers.At(0), (*carrier).Fire, n); err != nil {
					fail(err)
					return
				}
				if got, rep, err = settle(m, cells, d); err != nil {
					fail(err)
					return
				}
				m.Exit(0)
			})
			require.NoError(t, err)
			require.Equal(t, 0, code)
			require.Equal(t, []int{n + 1, 0}, got, "every note arrived once")
			require.EqualValues(t, n+1, rep.Job.Items, "the sends and the callback went through the delegate")
			require.EqualValues(t, n+1, rep.PE[3].Items, "on PE 3, where the carrier moved")
		})
	}
}

// TestDelegateZeroOptionsReachesQuiescence: a delegate made with the zero
// Options (no flush period given) flushes at DefaultDelegateFlush, so the
// items of buffers that never fill leave and quiescence comes; a negative
// period is refused, naming what to set.
func TestDelegateZeroOptionsReachesQuiescence(t *testing.T) {
	const n = 3 // far fewer items per peer than a buffer holds
	var rep tram.DelegateReport
	var got []int
	var negErr error
	code, err := chare.Run(chare.Config{PEs: 4, Timeout: 30 * time.Second}, func(m *tmain, _ []string) {
		fail := func(err error) { m.Abort(err) }
		cells, err := array.New[cell](m, array.Dims(64))
		if err != nil {
			fail(err)
			return
		}
		_, negErr = tram.NewDelegate(m, tram.Options{FlushPeriod: -time.Millisecond})
		d, err := tram.NewDelegate(m, tram.Options{})
		if err != nil {
			fail(err)
			return
		}
		_ = chare.Send(m, cells, (*cell).Chat, chatter{Peers: cells.Delegate(d), N: n})
		if got, rep, err = settle(m, cells, d); err != nil {
			fail(err)
			return
		}
		m.Exit(0)
	})
	require.NoError(t, err, "a delegate with the zero options must reach quiescence")
	require.Equal(t, 0, code)
	require.Equal(t, wantChat(n), got)
	require.EqualValues(t, 64*n, rep.Job.Items)
	require.ErrorContains(t, negErr, "FlushPeriod -1ms")
	require.ErrorContains(t, negErr, "a period > 0")
}

// ckptMain keeps, in its checkpointed state, the cells' proxy delegated
// to a TRAM delegate; the carrier keeps one too, and a callback made
// from it.
type ckptMain struct {
	chare.Chare[ckptMain]
	Cells    array.Proxy[cell, int]
	Carriers array.Proxy[carrier, int]
}

// ckptResult is what the restarted job found.
var ckptResult struct {
	restarting bool
	got        []int
	rep        tram.DelegateReport
	direct     int64
}

func init() { chare.Register[ckptMain](chare.Threaded((*ckptMain).Resumed)) }

// Resumed runs after the checkpoint, and again after a restart: then the
// carrier (on PE 3) sends through the proxy it brought back, and the main
// chare through its own.
func (m *ckptMain) Resumed() {
	if !ckptResult.restarting {
		m.Exit(0)
		return
	}
	fail := func(err error) { m.Abort(err) }
	d, err := core.Resolve(m, m.Cells.Delegated())
	if err != nil {
		fail(err)
		return
	}
	td, ok := d.(*tram.Delegate)
	if !ok {
		fail(fmt.Errorf("the restored proxy is delegated to %v", chare.DelegateName(d)))
		return
	}
	const n = 30
	if err := chare.Send(m, m.Carriers.At(0), (*carrier).Fire, n); err != nil {
		fail(err)
		return
	}
	for i := 0; i < n; i++ {
		if err := chare.Send(m, m.Cells.At(i), (*cell).Note, 0); err != nil {
			fail(err)
			return
		}
	}
	if ckptResult.got, ckptResult.rep, err = settle(m, m.Cells.Undelegate(), td); err != nil {
		fail(err)
		return
	}
	m.Exit(0)
}

// TestDelegationSurvivesACheckpoint: after a restart, the proxies kept in
// the main chare's and an element's state, and a callback made from one,
// send through the restored TRAM delegate, as 1 and 2 processes.
func TestDelegationSurvivesACheckpoint(t *testing.T) {
	for _, nodes := range []int{1, 2} {
		t.Run(fmt.Sprintf("%dproc", nodes), func(t *testing.T) {
			dir := t.TempDir()
			ckptResult.restarting = false
			run := func(restart string) (int, error) {
				cfg := chare.Config{PEs: 4, Nodes: nodes, Timeout: 60 * time.Second, Restart: restart}
				code, err := jobtest.Run(t, cfg, func(m *ckptMain, _ []string) {
					fail := func(err error) { m.Abort(err) }
					cells, err := array.New[cell](m, array.Dims(64))
					if err != nil {
						fail(err)
						return
					}
					if m.Carriers, err = array.New[carrier](m, array.Dims(1)); err != nil {
						fail(err)
						return
					}
					d, err := tram.NewDelegate(m, tram.Options{Sizing: tram.Sizing{BufferItems: 8}})
					if err != nil {
						fail(err)
						return
					}
					m.Cells = cells.Delegate(d)
					if err := chare.Send(m, m.Carriers.At(0), (*carrier).Arm, carrierSetup{Peers: m.Cells, To: 3}); err != nil {
						fail(err)
						return
					}
					if err := chare.Checkpoint(m, dir, chare.EntryCallback0(m.ThisProxy(), (*ckptMain).Resumed)); err != nil {
						fail(err)
					}
				})
				return code, err
			}
			code, err := run("") // each job launches its own nodes
			require.NoError(t, err)
			require.Equal(t, 0, code)
			ckptResult.restarting = true
			code, err = run(dir)
			require.NoError(t, err)
			require.Equal(t, 0, code)
			const n = 30
			require.Equal(t, []int{2*n + 1, 0}, ckptResult.got, "every note arrived once")
			require.EqualValues(t, 2*n+1, ckptResult.rep.Job.Items, "the main chare's sends, the carrier's and its callback went through the restored delegate")
			var perPE int64
			for _, s := range ckptResult.rep.PE {
				perPE += s.Items
			}
			require.Equal(t, ckptResult.rep.Job.Items, perPE)
		})
	}
}

// TestStreamerReportInEveryProcess: a streamer's report gathers every
// PE's figures, in every process: after a completion step every PE
// inserted and flushed, nothing is left buffered, and the sums per
// process and over the job are those of the PEs.
func TestStreamerReportInEveryProcess(t *testing.T) {
	for _, nodes := range []int{1, 2, 4} {
		t.Run(fmt.Sprintf("%dproc", nodes), func(t *testing.T) {
			const items = 500
			var rep tram.StreamerReport
			var got []int64
			code, err := inProcesses(t, nodes, func(m *tmain, _ []string) {
				g, _ := group.New[table](m)
				s, err := tram.New(m, g, (*table).Add, tram.Options{Sizing: tram.Sizing{BufferItems: 16}, FlushPeriod: time.Millisecond})
				if err != nil {
					m.Abort(err)
					return
				}
				if got, err = runStep(m, s, g, tram.Step{Mode: tram.Completion, Producers: 4}, feedAll(m, g, feedMsg{S: s, Items: items, Seed: 5})); err != nil {
					m.Abort(err)
					return
				}
				rf := chare.NewFuture[tram.StreamerReport](m)
				if err := s.Report(m, rf.Callback()); err != nil {
					m.Abort(err)
					return
				}
				if rep, err = rf.Get(m); err != nil {
					m.Abort(err)
					return
				}
				m.Exit(0)
			})
			require.NoError(t, err)
			require.Equal(t, 0, code)
			n, sum := expected(4, items, 5)
			require.Equal(t, []int64{n, sum}, got)
			require.Len(t, rep.PE, 4)
			require.Len(t, rep.Process, nodes)
			var inserted, flushes int
			for pe, st := range rep.PE {
				require.Positive(t, st.Inserted, "PE %d inserted", pe)
				require.Positive(t, st.Flushes, "PE %d flushed", pe)
				require.Zero(t, st.Buffered, "PE %d still buffers", pe)
				inserted, flushes = inserted+st.Inserted, flushes+st.Flushes
			}
			require.Equal(t, inserted, rep.Job.Inserted)
			require.Equal(t, flushes, rep.Job.Flushes)
			require.LessOrEqual(t, rep.Job.Inserted, 4*items)
			perProc := 0
			for _, st := range rep.Process {
				require.Positive(t, st.Inserted)
				perProc += st.Inserted
			}
			require.Equal(t, inserted, perProc)
		})
	}
}
