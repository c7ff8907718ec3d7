package route

import (
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// The mesh and grid routers build each participant's lists once: asking
// again (as a bracketed exchange does per stage and per packet received)
// allocates nothing and returns the same list as the first time.
func TestDimsListsBuiltOnce(t *testing.T) {
	for _, name := range []string{"mesh", "grid"} {
		for _, n := range []int{1, 7, 64, 100} {
			t.Run(fmt.Sprintf("%s/%d", name, n), func(t *testing.T) {
				r, err := New(name, n, Options{})
				require.NoError(t, err)
				d := r.(dims)
				for s := 0; s < r.Stages(); s++ {
					for i := 0; i < n; i++ {
						send, recv := r.SendTo(i, s), r.RecvFrom(i, s)
						require.Equal(t, d.sendTo(i, s), send, "SendTo(%d, %d)", i, s)
						require.Equal(t, d.recvFrom(i, s), recv, "RecvFrom(%d, %d)", i, s)
						allocs := testing.AllocsPerRun(10, func() {
							send, recv = r.SendTo(i, s), r.RecvFrom(i, s)
						})
						require.Zero(t, allocs, "allocations of SendTo and RecvFrom(%d, %d) asked again", i, s)
						require.Equal(t, d.sendTo(i, s), send, "SendTo(%d, %d) asked again", i, s)
						require.Equal(t, d.recvFrom(i, s), recv, "RecvFrom(%d, %d) asked again", i, s)
					}
				}
				// Out of range: no list, no panic.
				for _, c := range [][2]int{{-1, 0}, {n, 0}, {0, -1}, {0, r.Stages()}} {
					require.Nil(t, r.SendTo(c[0], c[1]), "SendTo(%d, %d)", c[0], c[1])
					require.Nil(t, r.RecvFrom(c[0], c[1]), "RecvFrom(%d, %d)", c[0], c[1])
				}
			})
		}
	}
}

// Routers are safe for concurrent use: participants asking for the same
// lists at once (run under -race) all get the list built once.
func TestDimsListsConcurrent(t *testing.T) {
	r, err := New("grid", 100, Options{})
	require.NoError(t, err)
	d := r.(dims)
	const workers = 4
	got := make([][][]int, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for s := 0; s < r.Stages(); s++ {
				for i := 0; i < 100; i++ {
					got[w] = append(got[w], r.SendTo(i, s), r.RecvFrom(i, s))
				}
			}
		}()
	}
	wg.Wait()
	k := 0
	for s := 0; s < r.Stages(); s++ {
		for i := 0; i < 100; i++ {
			for w := range workers {
				require.Equal(t, d.sendTo(i, s), got[w][k], "worker %d: SendTo(%d, %d)", w, i, s)
				require.Equal(t, d.recvFrom(i, s), got[w][k+1], "worker %d: RecvFrom(%d, %d)", w, i, s)
			}
			k += 2
		}
	}
}
