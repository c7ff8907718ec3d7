package comlib

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A fixed tree's PEs count their sends per iteration in rings of their
// own; Explain and Served merge them, keeping the latest maxExplained
// iterations.
func TestAutoFixedLogsMergeAndWrap(t *testing.T) {
	as := &autoStats{fixedTrace: "comm_size=any", containers: []string{"strategy=direct"}}
	in := &Instance{id: 7, st: &Stats{auto: as}}
	a, b := as.newLog(), as.newLog()

	last := maxExplained + 9
	for it := 0; it <= last; it++ {
		a.addFixed(it, 1)
		if it == 3 {
			a.addFixed(it, 4) // a second flush in one iteration joins the first
		}
	}
	b.addFixed(last, 2)
	b.addFixed(last-1, 5)

	require.Len(t, a.ring, maxExplained, "a ring never grows past maxExplained")
	got := in.Explain()
	require.Len(t, got, maxExplained)
	require.Equal(t, last-maxExplained+1, got[0].Iteration, "the oldest iterations are dropped first")
	for i, c := range got {
		require.Equal(t, last-maxExplained+1+i, c.Iteration)
		require.Equal(t, "strategy=direct", c.Container)
		require.Equal(t, "comm_size=any", c.Trace)
		require.Equal(t, -1, c.MinBytes, "a fixed tree's sends are not sized")
	}
	require.EqualValues(t, 1+5, got[len(got)-2].Messages, "iteration %d: both PEs' sends", last-1)
	require.EqualValues(t, 1+2, got[len(got)-1].Messages, "iteration %d: both PEs' sends", last)
	require.Equal(t, map[string]int64{"strategy=direct": int64(last+1) + 4 + 2 + 5}, in.Served(),
		"Served counts every send, also those of iterations Explain no longer holds")
}

// Sized sends of a walked tree are merged across PEs by iteration, part
// and trace, their sizes widened.
func TestAutoLogsMergeChoices(t *testing.T) {
	as := &autoStats{containers: []string{"strategy=direct", "router=mesh"}}
	in := &Instance{id: 8, st: &Stats{auto: as}}
	a, b := as.newLog(), as.newLog()
	a.add([]Choice{{Iteration: 1, Part: 0, Container: "strategy=direct", Trace: "t0", Messages: 3, MinBytes: 16, MaxBytes: 16},
		{Iteration: 1, Part: 1, Container: "router=mesh", Trace: "t1", Messages: 1, MinBytes: 9000, MaxBytes: 9000}})
	b.add([]Choice{{Iteration: 1, Part: 0, Container: "strategy=direct", Trace: "t0", Messages: 2, MinBytes: 8, MaxBytes: 32}})
	require.Equal(t, []Choice{
		{Iteration: 1, Part: 0, Container: "strategy=direct", Trace: "t0", Messages: 5, MinBytes: 8, MaxBytes: 32},
		{Iteration: 1, Part: 1, Container: "router=mesh", Trace: "t1", Messages: 1, MinBytes: 9000, MaxBytes: 9000},
	}, in.Explain())
	require.Equal(t, map[string]int64{"strategy=direct": 5, "router=mesh": 1}, in.Served())
}
