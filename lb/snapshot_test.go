package lb_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/lb"
)

// TestSnapshotRefusesBadFigures: a load, time or speed that would turn
// the step's figures into NaN is refused by Check and by every strategy,
// with an error naming the object or PE.
func TestSnapshotRefusesBadFigures(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	good := func() *lb.Snapshot {
		s := &lb.Snapshot{PEs: []lb.PEStats{{Speed: 1, Available: true}, {Speed: 1, Available: true}}}
		for i := 0; i < 4; i++ {
			s.Objects = append(s.Objects, lb.Object{ID: i, Load: float64(i + 1), PE: i % 2, Migratable: true, Coll: 3, Index: string(rune('a' + i))})
		}
		return s
	}
	for _, tc := range []struct {
		name  string
		spoil func(s *lb.Snapshot)
		want  string
	}{
		{"NaN load", func(s *lb.Snapshot) { s.Objects[2].Load = nan }, `object 2 \(index c of collection 3\) on PE 0 has a load of NaN`},
		{"+Inf load", func(s *lb.Snapshot) { s.Objects[1].Load = inf }, `object 1 .* has a load of \+Inf`},
		{"negative load", func(s *lb.Snapshot) { s.Objects[3].Load = -1 }, `object 3 .* has a load of -1`},
		{"NaN CPU time", func(s *lb.Snapshot) { s.Objects[0].CPU = nan }, `object 0 .* has a CPU time of NaN`},
		{"NaN background", func(s *lb.Snapshot) { s.PEs[1].Background = nan }, `PE 1 has a background load of NaN`},
		{"+Inf background", func(s *lb.Snapshot) { s.PEs[0].Background = inf }, `PE 0 has a background load of \+Inf`},
		{"NaN idle", func(s *lb.Snapshot) { s.PEs[0].Idle = nan }, `PE 0 has an idle time of NaN`},
		{"zero speed", func(s *lb.Snapshot) { s.PEs[1].Speed = 0 }, `PE 1 has speed 0`},
		{"NaN speed", func(s *lb.Snapshot) { s.PEs[0].Speed = nan }, `PE 0 has speed NaN`},
		{"negative speed", func(s *lb.Snapshot) { s.PEs[1].Speed = -2 }, `PE 1 has speed -2`},
		{"+Inf speed", func(s *lb.Snapshot) { s.PEs[1].Speed = inf }, `PE 1 has speed \+Inf`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := good()
			require.NoError(t, s.Check())
			tc.spoil(s)
			err := s.Check()
			require.Error(t, err)
			require.Regexp(t, tc.want, err.Error())
			for _, name := range strategyNames {
				st, err := lb.Lookup(name)
				require.NoError(t, err)
				_, err = st.Place(s)
				require.Error(t, err, "strategy %s accepted the snapshot", name)
				require.Regexp(t, tc.want, err.Error(), "strategy %s", name)
			}
		})
	}
}

// TestNilSnapshotIsAnError: a nil *Snapshot gives errors, not panics.
func TestNilSnapshotIsAnError(t *testing.T) {
	var s *lb.Snapshot
	require.ErrorContains(t, s.Check(), "nil snapshot")
	require.ErrorContains(t, lb.Validate(nil, lb.Placement{}), "nil snapshot")
	for _, name := range strategyNames {
		st, err := lb.Lookup(name)
		require.NoError(t, err)
		_, err = st.Place(nil)
		require.ErrorContains(t, err, "nil snapshot", "strategy %s", name)
	}
	require.Nil(t, s.PELoads(nil))
	require.Zero(t, s.Migrations(lb.Placement{}))
	r := lb.NewReport(nil, nil, "greedy", 0)
	require.Contains(t, r.Error, "nil snapshot")
	require.NotContains(t, r.LogLine(), "NaN")
}
