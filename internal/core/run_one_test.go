package core

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/actor"
)

// A lone message from another process (a run of one, as a request or a
// reply travels) is read whole in one allocation for a branch (its run
// and its slices together) and two for an element (and the copy of its
// bytes that its index aliases); it was two and five.
func TestRunOfOneDecodeAllocations(t *testing.T) {
	e := runEntry(t)
	for _, tc := range []struct {
		name   string
		h      Header
		allocs float64
	}{
		{"branch", Header{Route: Route{Kind: KindBranch, Coll: 3, PE: 1}, Entry: e}, 1},
		{"element", Header{Route: Route{Kind: KindElement, Coll: 1<<32 | 5, PE: 2, Index: 7}, Entry: e, Epoch: 4}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := &env1[runWorker, runMsg]{fn: (*runWorker).Take, msg: runMsg{A: 42}}
			env.h = tc.h
			it := encodeRun(t, []actor.WireRunner{env}...)
			m, err := decodeEnvRun(nil, it)
			require.NoError(t, err)
			run, ok := m.(*run1[runWorker, runMsg])
			require.True(t, ok, "a run of one read whole, not %T", m)
			require.Equal(t, []runMsg{{A: 42}}, run.msgs)
			if tc.h.Kind == KindElement {
				require.Len(t, run.raw, 1)
				require.Equal(t, uint32(4), run.idx[0].epoch)
			}
			if raceEnabled {
				return
			}
			allocs := testing.AllocsPerRun(50, func() { _, _ = decodeEnvRun(nil, it) })
			require.LessOrEqual(t, allocs, tc.allocs, "allocations to read a %s run of one", tc.name)
		})
	}
}
