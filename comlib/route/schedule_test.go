package route

import (
	"fmt"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/comlib/schedule"
)

var scheduleConfigs = []config{
	{name: "shift"}, {name: "pairwise"}, {name: "xor"}, {name: "sync"},
	{name: "group"}, {name: "group", o: Options{Omega: 1}}, {name: "group", o: Options{Omega: 3}},
}

// TestX02_ScheduleRoutersSendDirectly: every message of a schedule router goes from its source
// to its destination in one hop (no store and forward), every pair meets in exactly one stage,
// and the stages are the schedule's rounds (X07's round counts, for k = 1).
func TestX02_ScheduleRoutersSendDirectly(t *testing.T) {
	for _, c := range scheduleConfigs {
		for n := 1; n <= maxN; n++ {
			t.Run(fmt.Sprintf("%v/n%d", c, n), func(t *testing.T) {
				r, err := New(c.name, n, c.o)
				require.NoError(t, err)
				for src := 0; src < n; src++ {
					for dest := 0; dest < n; dest++ {
						p, err := Path(r, src, dest)
						require.NoError(t, err)
						hops := 0
						for s := 1; s < len(p); s++ {
							if p[s] != p[s-1] {
								hops++
								require.Equal(t, dest, p[s], "%d->%d detours through %v", src, dest, p)
							}
						}
						if src != dest {
							require.Equal(t, 1, hops, "%d->%d: path %v", src, dest, p)
						}
					}
				}
				want := 0
				switch {
				case n == 1:
				case c.name == "xor" && n&(n-1) != 0:
					want = 1<<log2ceil(n) - 1 // the next power of two's rounds, some pairs idle
				default:
					s, err := schedule.New(c.name, n, 1, schedule.Options{Omega: c.o.Omega})
					require.NoError(t, err)
					want = schedule.Inspect(s).Rounds
				}
				require.Equal(t, want, r.Stages())
			})
		}
	}
}

func log2ceil(n int) int {
	k := 0
	for 1<<k < n {
		k++
	}
	return k
}

// TestX05_SendOrderIsContentionFree: a schedule router's SendOrder is its SendTo in another
// order, and at every position of that order no two participants send to the same one: a
// runtime that sends a stage's messages in that order keeps the shuffle's packet steps free
// of node contention.
func TestX05_SendOrderIsContentionFree(t *testing.T) {
	for _, c := range scheduleConfigs {
		for n := 1; n <= maxN; n++ {
			r, err := New(c.name, n, c.o)
			require.NoError(t, err)
			o, ok := r.(Ordered)
			if !ok {
				require.Equal(t, "xor", c.name, "only xor for n not a power of two falls back to prefix")
				require.NotZero(t, n&(n-1))
				continue
			}
			for s := 0; s < r.Stages(); s++ {
				at := map[[2]int]int{} // (position, destination) → sender
				for i := 0; i < n; i++ {
					ord := o.SendOrder(i, s)
					sorted := append([]int(nil), ord...)
					sort.Ints(sorted)
					require.Equal(t, r.SendTo(i, s), sorted, "%v n=%d stage %d participant %d", c, n, s, i)
					for j, d := range ord {
						if other, dup := at[[2]int{j, d}]; dup {
							t.Fatalf("%v n=%d stage %d: %d and %d both send to %d at position %d", c, n, s, other, i, d, j)
						}
						at[[2]int{j, d}] = i
					}
				}
			}
		}
	}
}

// The group router's stages follow its fan-out: ⌈(n−1)/ω⌉ stages of at most ω partners each.
func TestX06_GroupRouterFanOut(t *testing.T) {
	for n := 2; n <= maxN; n++ {
		for _, w := range []int{0, 1, 2, 5, 200} {
			r, err := New("group", n, Options{Omega: w})
			require.NoError(t, err)
			eff := w
			if eff == 0 {
				eff = schedule.DefaultOmega(n)
			}
			eff = min(eff, n-1)
			require.Equal(t, (n-1+eff-1)/eff, r.Stages(), "n=%d ω=%d", n, w)
			for s := 0; s < r.Stages(); s++ {
				for i := 0; i < n; i++ {
					require.LessOrEqual(t, len(r.SendTo(i, s)), eff)
				}
			}
		}
	}
}
