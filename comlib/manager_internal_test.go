package comlib

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/chare/reducer"
	"github.com/charmgo/charm/group"
)

type imain struct{ chare.Chare[imain] }

func (m *imain) Start([]string) {}

// probe reports, on its PE, what the manager's state there holds.
type probe struct{ group.Branch[probe] }

type probeMsg struct {
	ID uint32
	CB chare.Callback
}

func (p *probe) Check(m probeMsg) {
	s := stateOf(p.Here())
	ok := s.b != nil && s.table[m.ID] != nil && s.table[m.ID].status == stReady && len(s.held[m.ID]) == 0
	v := int64(0)
	if ok {
		v = 1
	}
	_ = p.Contribute(v, reducer.SumInt64, m.CB)
}

func init() {
	chare.Register[imain](chare.Threaded((*imain).Start))
	chare.Register[probe]()
}

// TestC03_ManagerOnEveryPEThenTable: the manager has a branch on every PE,
// the barrier passes before PE 0 broadcasts the table, and every PE ends
// with the instance ready and nothing held.
func TestC03_ManagerOnEveryPEThenTable(t *testing.T) {
	const pes = 5
	var ready int64
	var barrierFirst bool
	code, err := chare.Run(chare.Config{PEs: pes, Timeout: 30 * time.Second}, func(m *imain, _ []string) {
		inst, err := New(m, Direct())
		if err != nil {
			m.Abort(err)
			return
		}
		s := stateOf(chare.PEOf(m))
		// The table cannot have gone out yet: New returned in this entry,
		// and the barrier needs every branch.
		barrierFirst = !s.root.barrier && s.root.version == 0
		qd := chare.NewFuture[any](m)
		m.DetectQuiescence(qd.Callback())
		_, _ = qd.Get(m)
		g, _ := group.New[probe](m)
		f := chare.NewFuture[int64](m)
		_ = chare.Send(m, g, (*probe).Check, probeMsg{ID: inst.id, CB: f.Callback()})
		ready, _ = f.Get(m)
		m.Exit(0)
	})
	require.NoError(t, err)
	require.Equal(t, 0, code)
	require.True(t, barrierFirst, "the table waits for the set-up barrier")
	require.Equal(t, int64(pes), ready, "a branch and a ready entry on every PE")
}

// TestJobStatsDroppedAtJobEnd: the per-process counters of a job's
// instances are dropped when the job ends, so that a process that runs
// job after job (tests, a service) does not keep every ended job alive;
// the instance keeps its own counters.
func TestJobStatsDroppedAtJobEnd(t *testing.T) {
	var job *chare.Job
	var inst *Instance
	code, err := chare.Run(chare.Config{PEs: 2, Timeout: 30 * time.Second}, func(m *imain, _ []string) {
		var err error
		if inst, err = New(m, Direct()); err != nil {
			m.Abort(err)
			return
		}
		job = chare.PEOf(m).Job()
		if _, ok := jobStats.Load(job); !ok {
			m.Abort(errors.New("no counters for the running job"))
			return
		}
		m.Exit(0)
	})
	require.NoError(t, err)
	require.Equal(t, 0, code)
	_, kept := jobStats.Load(job)
	require.False(t, kept, "the ended job's counters are still held")
	require.NotNil(t, inst.st, "the instance keeps its counters")
}
