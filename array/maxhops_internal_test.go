package array

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/location"
)

// TestWithMaxHops: the bound that WithMaxHops sets is the one the array's
// forwarding table keeps (location.DefaultMaxHops without the option), and
// the one its spec carries to the other processes; a negative bound is
// refused with an error that names it.
func TestWithMaxHops(t *testing.T) {
	type got struct{ table, spec int }
	var hops []got
	var negErr error
	_, err := chare.Run(chare.Config{PEs: 1, Timeout: 30 * time.Second}, func(m *ptMain, _ []string) {
		for _, opts := range [][]Option{nil, {WithMaxHops(1)}, {WithMaxHops(7)}} {
			a, err := New[ptElem](m, Dims(4), opts...)
			must(err)
			l, err := localPart[int](m, a.Route().Coll)
			must(err)
			b, err := encodeSpec(l.shape, l.info)
			must(err)
			var sp arraySpec
			must(msgpack.Unmarshal(b, &sp))
			hops = append(hops, got{l.tab.MaxHops(), sp.MaxHops})
		}
		_, negErr = New[ptElem](m, Dims(4), WithMaxHops(-1))
		m.Exit(0)
	})
	require.NoError(t, err)
	require.Equal(t, []got{{location.DefaultMaxHops, 0}, {1, 1}, {7, 7}}, hops, "the bound in the table and in the spec")
	require.ErrorContains(t, negErr, "array: WithMaxHops(-1) for array.ptElem: the bound cannot be negative")
}
