package core

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSetLoadRefusesBadValues: SetLoad refuses a load that is negative,
// NaN or infinite, naming the object, and keeps the load it had.
func TestSetLoadRefusesBadValues(t *testing.T) {
	b := &Base{coll: &Collection{ID: 7, Kind: KindElement, Type: &Type{Name: "main.Worker"}}, index: 3}
	require.NoError(t, b.SetLoad(0.25))
	for _, v := range []float64{math.NaN(), math.Inf(1), math.Inf(-1), -0.5} {
		err := b.SetLoad(v)
		require.Error(t, err, "SetLoad(%g)", v)
		require.ErrorContains(t, err, "element 3 of main.Worker (collection 7)")
		require.Equal(t, ObjLoad{User: 0.25, HasUser: true}, b.Load(), "SetLoad(%g) changed the load", v)
	}
	require.NoError(t, b.SetLoad(0))
	require.Equal(t, 0.0, b.Load().Seconds())
}
