package core

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TakeOne and TakeTwo are entry methods of runWorker used only here, so
// that no other test has taught the PE a capacity for their runs.
func (w *runWorker) TakeOne(m runMsg) { w.got = append(w.got, m) }
func (w *runWorker) TakeTwo(m runMsg) { w.got = append(w.got, m) }

// tries bounds the attempts of the tests below: sync.Pool may drop what
// it is given (at a collection, or at random under -race).
const tries = 100

// A delivered run of one message goes back to its entry method's pool,
// cleared, and the next send of the method reuses it.
func TestDeliveredRunOfOneIsReused(t *testing.T) {
	e, err := lookupEntry((*runWorker).TakeOne)
	require.NoError(t, err)
	var cleared, reused bool
	_, err = Run(Config{PEs: 1, Timeout: 30 * time.Second}, func(m *countMain, _ []string) {
		pe := PEOf(m)
		route := Route{Kind: KindBranch}
		for i := 0; i < tries && !reused; i++ {
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
	require.True(t, cleared, "a released run is cleared")
	require.True(t, reused, "a released run of one is reused by the next send")
}

// A run that grew past its first slices goes back with its new ones, and
// a send of the method whose runs now need two messages reuses it.
func TestDeliveredLongerRunIsReused(t *testing.T) {
	e, err := lookupEntry((*runWorker).TakeTwo)
	require.NoError(t, err)
	var reused, cleared bool
	_, err = Run(Config{PEs: 1, Timeout: 30 * time.Second}, func(m *countMain, _ []string) {
		pe := PEOf(m)
		route := Route{Kind: KindElement}
		for i := 0; i < tries && !reused; i++ {
			g := newRun(pe, route, e, (*runWorker).TakeTwo, 0, runMsg{A: 1}, true)
			g.idx[0] = elemKey{index: 5}
			g.grow(pe) // full: the method's runs start at two from now on
			g.msgs = append(g.msgs, runMsg{A: 2})
			g.idx = append(g.idx, elemKey{index: 6})
			msgs, idx := g.msgs, g.idx
			g.Release()
			cleared = msgs[1] == runMsg{} && idx[1] == elemKey{} && !g.one && g.h.Entry == nil
			r := newRun(pe, route, e, (*runWorker).TakeTwo, 0, runMsg{A: 3}, true)
			if reused = r == g; reused {
				require.Equal(t, []runMsg{{A: 3}}, r.msgs)
				require.Len(t, r.idx, 1)
				require.GreaterOrEqual(t, cap(r.msgs), 2)
			}
		}
		m.Exit(0)
	})
	require.NoError(t, err)
	require.True(t, cleared, "a released run's messages and indices are cleared")
	require.True(t, reused, "a released run is reused by a send that needs its capacity")
}

// Ping is a method of runWorker without a message, used only below.
func (w *runWorker) Ping() { w.got = append(w.got, runMsg{A: -1}) }

// A barrier's target (EntryCallback0) gets a typed invoker, so that each
// step's callback does not call the method through reflection; a message
// given to it is still refused, as reflection refused it.
func TestEntryCallback0InstallsATypedInvoker(t *testing.T) {
	e, err := lookupEntry((*runWorker).Ping)
	require.NoError(t, err)
	cb := EntryCallback0(Proxy[runWorker]{}, (*runWorker).Ping)
	require.NoError(t, cb.err)
	require.NotNil(t, e.invoke.Load(), "a typed invoker")
	w := &runWorker{}
	_, err = e.Invoke(w, nil)
	require.NoError(t, err)
	require.Equal(t, []runMsg{{A: -1}}, w.got)
	_, err = e.Invoke(w, 5)
	require.ErrorContains(t, err, "takes no message")
	require.Len(t, w.got, 1)
}
