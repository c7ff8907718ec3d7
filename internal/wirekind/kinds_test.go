package wirekind

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestKindNumbersPinned pins every kind's number: frames of one release
// must be read by the next, so a number never changes. The numbers are
// written out here, not taken from the constants.
func TestKindNumbersPinned(t *testing.T) {
	pinned := map[string]uint16{
		"detection wave": 1, "detection wave reply": 2, "quiescence request": 3, "quiescence reached": 4,
		"completion detection start": 5, "completion detection init": 6, "completion detection init ack": 7,
		"completion detection poke": 8, "completion detection callback": 9,
		"quiescence poke": 10,

		"chare envelope": 100, "collection creation": 101, "collection announcement": 102, "future value": 103,
		"reduction": 104, "checkpoint start": 105, "checkpoint collection": 106, "checkpoint part": 107,
		"restart objects": 108, "restart fence": 109, "restart acknowledgement": 110,

		"array location update": 120, "array migration request": 121, "array element migration": 122,
		"array insertion": 123, "array deletion": 124, "array AtSync": 125,

		"lb AtSync ready": 140, "lb collect": 141, "lb PE report": 142, "lb orders": 143, "lb step done": 144,
		"lb step request": 145, "lb report subscription": 146, "lb distributed reduction": 147,
		"lb distributed gossip": 148, "lb distributed round": 149, "lb distributed round end": 150,
	}
	require.Len(t, Table, len(pinned), "a kind added to or removed from the table must be pinned here")
	for _, k := range Table {
		n, ok := pinned[k.Name]
		require.True(t, ok, "kind %d (%s) is not pinned", k.Num, k.Name)
		require.Equal(t, n, k.Num, "the number of %s changed", k.Name)
		require.Equal(t, k.Name, Name(k.Num))
	}
}

func TestTableInNumberOrder(t *testing.T) {
	for i := 1; i < len(Table); i++ {
		require.Less(t, Table[i-1].Num, Table[i].Num, "%s before %s", Table[i-1].Name, Table[i].Name)
	}
}

func TestIndexRejectsBadTables(t *testing.T) {
	for _, tc := range []struct {
		name string
		t    []Kind
		err  string
	}{
		{"same number", []Kind{{5, "a", "x"}, {5, "b", "y"}}, "kind 5 is both x (a) and y (b)"},
		{"same name", []Kind{{5, "a", "x"}, {6, "b", "x"}}, `"x" names both kind 5 and kind 6`},
		{"zero", []Kind{{0, "a", "x"}}, "x (a) has number 0"},
		{"control bit", []Kind{{0x8000, "a", "x"}}, "x (a) has number 32768"},
		{"no owner", []Kind{{7, "", "x"}}, "kind 7 has no name or owner"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := index(tc.t)
			require.ErrorContains(t, err, tc.err)
		})
	}
	m, err := index(Table)
	require.NoError(t, err)
	require.Len(t, m, len(Table))
}

func TestLookupUnknown(t *testing.T) {
	_, ok := Lookup(99)
	require.False(t, ok)
	require.Equal(t, "", Name(99))
}
