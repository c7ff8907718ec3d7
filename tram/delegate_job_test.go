package tram_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/array"
	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/tram"
)

// TestDelegateFromAnEarlierJob: a delegate kept from an earlier job of the
// process (in a variable) refuses a send delegated to it, with an error
// that names it and says why; the entry method that job tagged for
// aggregation is sent directly in the next job, and arrives.
func TestDelegateFromAnEarlierJob(t *testing.T) {
	var kept *tram.Delegate
	code, err := chare.Run(chare.Config{PEs: 2, Timeout: 30 * time.Second}, func(m *tmain, _ []string) {
		d, err := tram.NewDelegate(m, tram.Options{})
		if err != nil {
			m.Abort(err)
			return
		}
		if err := tagNote(m, d.Aggregate); err != nil {
			m.Abort(err)
			return
		}
		kept = d // and Note stays tagged when the job ends
		m.Exit(0)
	})
	require.NoError(t, err)
	require.Equal(t, 0, code)
	require.NotNil(t, kept)

	var sendErr error
	var totals []int
	code, err = chare.Run(chare.Config{PEs: 2, Timeout: 30 * time.Second}, func(m *tmain, _ []string) {
		cells, err := array.New[cell](m, array.Dims(64))
		if err != nil {
			m.Abort(err)
			return
		}
		sendErr = chare.Send(m, cells.Delegate(kept).At(3), (*cell).Note, 7)
		if err := chare.Send(m, cells.At(5), (*cell).Note, 9); err != nil {
			m.Abort(err)
			return
		}
		if err := quiet(m); err != nil {
			m.Abort(err)
			return
		}
		if totals, err = cellTotals(m, cells); err != nil {
			m.Abort(err)
			return
		}
		m.Exit(0)
	})
	require.NoError(t, err)
	require.Equal(t, 0, code)
	require.Error(t, sendErr, "a send through a delegate of an earlier job")
	require.ErrorContains(t, sendErr, kept.String())
	require.ErrorContains(t, sendErr, "earlier job")
	require.Equal(t, []int{1, 9}, totals, "the plain send of the tagged entry method arrives, the refused one does not")
}
