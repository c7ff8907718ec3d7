package comlib_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/comlib"
)

// TestC06_OneParticipantEveryRouter: when the sources are all on one PE —
// a one-PE job, or every element gathered on one PE of four — the routers
// with no stage for one participant (tree, hypercube, prefix) still end
// each iteration's exchange. They used to loop for ever.
func TestC06_OneParticipantEveryRouter(t *testing.T) {
	const n, iters = 6, 5
	gather := map[int]map[int]int{2: {0: 1, 1: 1, 2: 1, 3: 1, 4: 1, 5: 1}}
	for _, rt := range comlib.Routers() {
		t.Run(rt+"/1pe", func(t *testing.T) {
			var r a2aResult
			runJob(t, 1, 1, a2a(n, iters, comlib.EachToManyOptions{Router: rt}, nil, &r))
			checkA2A(t, n, iters, r)
			for it := 1; it < iters; it++ {
				require.Equal(t, 1, r.exchanges[it], "iteration %d through the router", it)
			}
		})
		t.Run(rt+"/gathered", func(t *testing.T) {
			var r a2aResult
			runJob(t, 4, 1, a2a(n, iters, comlib.EachToManyOptions{Router: rt}, gather, &r))
			checkA2A(t, n, iters, r)
			require.Contains(t, r.recovered, 2)
			require.Equal(t, 1, r.exchanges[iters-1], "the last iteration exchanged on the one PE with sources")
		})
	}
}
