package comlib

import (
	"math"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestResolveInstanceRefusesWideIDs: an instance number from the wire
// above 32 bits is an error naming it, not another instance.
func TestResolveInstanceRefusesWideIDs(t *testing.T) {
	for _, id := range []uint64{math.MaxUint32 + 1, 1<<32 | 3, math.MaxUint64} {
		d, err := resolveInstance(nil, id)
		require.Nil(t, d)
		require.ErrorContains(t, err, "comlib instance")
		require.ErrorContains(t, err, strconv.FormatUint(id, 10))
	}
}
