package core

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A PE sizes a new run's slice by what the runs of the same entry method
// reached (PE.runHints): a steady stream of one method allocates each run
// once, at its size, while a method whose runs hold a message or two
// (TRAM's batches, after a flood of small sends) keeps starting small.
// TakeOther is a second entry method with Take's message.
func (w *runWorker) TakeOther(m runMsg) { w.got = append(w.got, m) }

func TestRunHintIsPerEntryMethod(t *testing.T) {
	take := runEntry(t)
	other, err := lookupEntry((*runWorker).TakeOther)
	require.NoError(t, err)
	var flood, otherCap, floodAgain int
	_, err = Run(Config{PEs: 1, Timeout: 30 * time.Second}, func(m *countMain, _ []string) {
		pe := PEOf(m)
		r := newRun(pe, Route{Kind: KindBranch}, take, (*runWorker).Take, 0, runMsg{}, false)
		for range 1000 { // a flood: the run grows from runCap past 1000
			r.grow(pe)
			r.msgs = append(r.msgs, runMsg{})
		}
		flood = cap(newRun(pe, Route{Kind: KindBranch}, take, (*runWorker).Take, 0, runMsg{}, false).msgs)
		otherCap = cap(newRun(pe, Route{Kind: KindBranch}, other, (*runWorker).TakeOther, 0, runMsg{}, false).msgs)
		floodAgain = cap(newRun(pe, Route{Kind: KindBranch}, take, (*runWorker).Take, 0, runMsg{}, false).msgs)
		m.Exit(0)
	})
	require.NoError(t, err)
	require.GreaterOrEqual(t, flood, 1000, "the flooded method's next run starts at the size its runs reached")
	require.LessOrEqual(t, flood*8, runBytes, "but at most runBytes")
	require.Equal(t, runCap, otherCap, "another method's run starts at runCap")
	require.Equal(t, 1, otherCap, "a run of a method whose runs never grew holds one message")
	require.Equal(t, flood, floodAgain)
}
