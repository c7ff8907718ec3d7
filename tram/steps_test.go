package tram_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/group"
	"github.com/charmgo/charm/tram"
)

// stepRunner drives several completion steps of one streamer from the
// main function; each PE inserts through its table branch.
type stepMsg struct {
	S         tram.Streamer[table, uint64]
	Items     int
	Broadcast bool
	Closed    bool // after Done this PE must refuse items (staged steps)
}

// Step inserts Items items for the next PE (or broadcasts them), says
// done, and checks that inserting after Done is refused (T20).
func (t *table) Step(m stepMsg) {
	for i := 0; i < m.Items; i++ {
		var err error
		if m.Broadcast {
			err = m.S.Broadcast(t, 1)
		} else {
			err = m.S.Insert(t, 1, (t.PE()+1)%t.NumPEs())
		}
		if err != nil {
			t.Abort(err)
			return
		}
	}
	if err := m.S.Done(t, 1); err != nil {
		t.Abort(err)
		return
	}
	if m.Closed && m.S.Insert(t, 1, t.PE()) == nil {
		t.Abort(errAfterDone)
	}
}

type constErr string

func (e constErr) Error() string { return string(e) }

const errAfterDone = constErr("an insert after Done was accepted (T20)")

// claim T16, claim T18, claim T19, claim T20, claim T27
//
// TestT27_T16_T18_T19_T20_ReinitializedStepsAndBroadcast runs many steps on one instance
// (T27), completion and staged in turn: the counts grow by exactly each
// step's items; a broadcast step reaches every PE (T18); before Start
// nothing is accepted (T16), nor after a staged step's local Done (T20;
// a completion step counts its producers across the job, so a PE stays
// open after one of them is done).
func TestT27_T16_T18_T19_T20_ReinitializedStepsAndBroadcast(t *testing.T) {
	const pes, steps, items = 4, 12, 50
	var counts []int64
	code, err := chare.Run(chare.Config{PEs: pes, Timeout: 30 * time.Second}, func(m *tmain, _ []string) {
		g, err := group.New[table](m)
		if err != nil {
			m.Abort(err)
			return
		}
		s, err := tram.New(m, g, (*table).Add, tram.Options{Sizing: tram.Sizing{TotalCapacity: 40}, FlushPeriod: time.Millisecond})
		if err != nil {
			m.Abort(err)
			return
		}
		if s.Insert(m, 1, 0) == nil {
			m.Abort(constErr("an insert before the first step was accepted (T16)"))
			return
		}
		for k := 0; k < steps; k++ {
			st := tram.Step{Mode: tram.Completion, Producers: pes}
			if k%2 == 1 {
				st.Mode, st.Producers = tram.Staged, 1
			}
			c, err := runStep(m, s, g, st, func() error {
				return chare.Send(m, g, (*table).Step, stepMsg{S: s, Items: items, Broadcast: k == steps-1, Closed: st.Mode == tram.Staged})
			})
			if err != nil {
				m.Abort(err)
				return
			}
			counts = append(counts, c[0])
		}
		m.Exit(0)
	})
	require.NoError(t, err)
	require.Equal(t, 0, code)
	require.Len(t, counts, steps)
	for k := 0; k < steps-1; k++ {
		require.EqualValues(t, (k+1)*pes*items, counts[k], "after step %d", k)
	}
	// The last step broadcast: each of the PEs' items reached all PEs.
	require.EqualValues(t, (steps-1)*pes*items+pes*items*pes, counts[steps-1])
}

// TestT25_StepsThatNeedFlushingRequireIt: a quiescence step, or a
// completion step over intermediate PEs, without periodic flushing is
// refused; a staged step needs none (T21).
func TestT25_StepsThatNeedFlushingRequireIt(t *testing.T) {
	code, err := chare.Run(chare.Config{PEs: 4, Timeout: 30 * time.Second}, func(m *tmain, _ []string) {
		g, _ := group.New[table](m)
		s, err := tram.New(m, g, (*table).Add, tram.Options{Dims: []int{2, 2}})
		if err != nil {
			m.Abort(err)
			return
		}
		for _, st := range []tram.Step{{Mode: tram.Completion, Producers: 4}, {Mode: tram.Quiescence}} {
			if err := s.Start(m, st); err == nil || !strings.Contains(err.Error(), "T25") {
				m.Abort(constErr(fmt.Sprintf("a %v step without flushing: %v", st.Mode, err)))
				return
			}
		}
		if err := s.Start(m, tram.Step{Mode: tram.Staged, Producers: 0}); err != nil {
			m.Abort(err)
			return
		}
		m.Exit(0)
	})
	require.NoError(t, err)
	require.Equal(t, 0, code)
}

// TestLargeItemsGoDirectly: with a cutoff below the item size, items are
// sent straight to their destination and still arrive exactly once.
func TestLargeItemsGoDirectly(t *testing.T) {
	var got []int64
	code, err := chare.Run(chare.Config{PEs: 4, Timeout: 30 * time.Second}, func(m *tmain, _ []string) {
		g, _ := group.New[table](m)
		s, err := tram.New(m, g, (*table).Add, tram.Options{Dims: []int{2, 2}, Cutoff: 4, FlushPeriod: time.Millisecond})
		if err != nil {
			m.Abort(err)
			return
		}
		if got, err = runStep(m, s, g, tram.Step{Mode: tram.Completion, Producers: 4}, feedAll(m, g, feedMsg{S: s, Items: 500, Seed: 3})); err != nil {
			m.Abort(err)
			return
		}
		m.Exit(0)
	})
	require.NoError(t, err)
	require.Equal(t, 0, code)
	n, sum := expected(4, 500, 3)
	require.Equal(t, []int64{n, sum}, got)
}
