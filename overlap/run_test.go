package overlap_test

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/group"
	"github.com/charmgo/charm/overlap"
)

// sink counts the data sent to it, in every process's branch.
type sink struct{ group.Branch[sink] }

var sunk atomic.Int64

func (s *sink) Take(n int) { sunk.Add(int64(n)) }

func init() { chare.Register[sink]() }

// selfSend is a Body that sends its items, one a push, as messages to
// the sink and waits until they have all arrived there, with comps local
// computations.
type selfSend struct {
	ctx          chare.Context
	to           group.Proxy[sink]
	items, comps int
	pushed       int
}

func (b *selfSend) Arrived() int { return int(sunk.Load()) }
func (b *selfSend) Push() (int, error) {
	if b.pushed == b.items {
		return 0, nil
	}
	b.pushed++
	return 1, chare.Send(b.ctx, b.to.At(0), (*sink).Take, 1)
}
func (b *selfSend) Compute() bool {
	if b.comps == 0 {
		return false
	}
	b.comps--
	return true
}
func (b *selfSend) Finished() bool { return b.pushed == b.items && b.Arrived() == b.items }

// TestRun: Run, with the default options, sends every item of the Body,
// sees them all arrive, does every computation and reports them; without
// a loop or a body it is an error.
func TestRun(t *testing.T) {
	const items, comps = 20, 5
	sunk.Store(0)
	var st overlap.Stats
	var runErr, nilErr error
	var left int
	code, err := chare.Run(chare.Config{PEs: 2, Timeout: 20 * time.Second}, func(m *tmain, _ []string) {
		g, err := group.New[sink](m)
		if err != nil {
			m.Abort(err)
			return
		}
		l, err := overlap.NewLoop(2)
		if err != nil {
			m.Abort(err)
			return
		}
		b := &selfSend{ctx: m, to: g, items: items, comps: comps}
		st, runErr = overlap.Run(m, l, b)
		left = b.comps
		_, nilErr = overlap.Run(m, nil, b)
		m.Exit(0)
	})
	require.NoError(t, err)
	require.Equal(t, 0, code)
	require.NoError(t, runErr)
	require.EqualValues(t, items, sunk.Load(), "items that arrived at the sink")
	require.Zero(t, left, "computations left undone")
	require.Equal(t, comps, st.Computations+st.Remaining, "computations reported: %+v", st)
	require.Equal(t, 2.0, st.P, "the run's p")
	require.Positive(t, st.Tests, "%+v", st)
	require.ErrorContains(t, nilErr, "overlap: Run needs a loop and a body")
}
