package chare

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TakeOne is an entry method of runWorker used only here: its runs hold
// one message, so newRun makes them from the entry's pool.
func (w *runWorker) TakeOne(m runMsg) { w.got = append(w.got, m) }

// A delivered run of one message goes back to its entry method's pool,
// cleared, and the next send of the method reuses it; a run whose slices
// grew is not the pool's.
func TestDeliveredRunOfOneIsReused(t *testing.T) {
	Register[runWorker]()
	e, err := lookupEntry((*runWorker).TakeOne)
	require.NoError(t, err)
	var grownPooled, cleared, reused bool
	_, err = Run(Config{PEs: 1, Timeout: 30 * time.Second}, func(m *countMain, _ []string) {
		pe := PEOf(m)
		route := Route{Kind: KindBranch}
		g := newRun(pe, route, e, (*runWorker).TakeOne, 0, runMsg{A: 1}, false)
		g.msgs = append(g.msgs, runMsg{A: 2})
		g.Release()
		grownPooled = e.runs.Get() != nil
		// sync.Pool may drop what it is given (a collection, or at random
		// under -race): a few tries.
		for i := 0; i < 100 && !reused; i++ {
			r := newRun(pe, route, e, (*runWorker).TakeOne, 0, runMsg{A: 7}, false)
			require.True(t, r.one)
			r.Release()
			cleared = r.msgs == nil && r.h.Entry == nil && !r.one
			r2 := newRun(pe, route, e, (*runWorker).TakeOne, 0, runMsg{A: 8}, false)
			reused = r2 == r
			if reused {
				require.Equal(t, []runMsg{{A: 8}}, r2.msgs)
				require.Equal(t, e, r2.h.Entry)
			}
		}
		m.Exit(0)
	})
	require.NoError(t, err)
	require.False(t, grownPooled, "a run whose slices were reallocated is not pooled")
	require.True(t, cleared, "a released run is cleared")
	require.True(t, reused, "a released run of one is reused by the next send")
}
