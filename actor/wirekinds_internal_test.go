package actor

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/internal/wirekind"
)

// The table of wire kinds is as long as the kinds registered need: a
// table with an entry per possible kind (0x8000) was 1.3 MB of pointers
// in the binary's data, scanned by every collection of every program.
func TestWireKindTableIsAsLongAsItsKinds(t *testing.T) {
	highest := -1
	for k := range wireKinds {
		if wireKinds[k].name != "" {
			highest = k
		}
	}
	require.Positive(t, highest, "kinds are registered")
	require.Len(t, wireKinds, highest+1, "entries beyond the highest kind registered")
	beyond := uint16(highest + 1)
	require.Equal(t, wireKind{}, kindOf(beyond))
	require.Equal(t, "", WireKindName(beyond), "a kind beyond the table has no name")
	require.Equal(t, "", WireKindName(0xffff))
	require.Equal(t, "detection wave", WireKindName(wirekind.WaveDown))
}
