package wirekind_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/actor"
	_ "github.com/charmgo/charm/array"
	_ "github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/internal/wirekind"
	_ "github.com/charmgo/charm/lb"
)

// TestEveryKindRegistered checks the table against the decoders the
// owning packages register: every kind in the table has its decoder,
// under the table's name, and no kind outside the table is registered by
// the module's packages.
func TestEveryKindRegistered(t *testing.T) {
	for _, k := range wirekind.Table {
		require.Equal(t, k.Name, actor.WireKindName(k.Num), "kind %d (owner %s)", k.Num, k.Owner)
	}
	for n := uint16(1); n < 0x8000; n++ {
		if name := actor.WireKindName(n); name != "" {
			_, ok := wirekind.Lookup(n)
			require.True(t, ok, "kind %d (%s) is registered but not in the table", n, name)
		}
	}
}
