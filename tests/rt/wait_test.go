package rt_test

import (
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/actor"
	"github.com/charmgo/charm/array"
	"github.com/charmgo/charm/chare"
)

// Under either wait policy — WaitActive (the default: PEs that keep
// their cores while messages come fast) and WaitPassive — a job does the
// same: barriers back to back with one PE per P (GOMAXPROCS of them,
// where the PEs spin), the main thread waiting on futures and napping on
// timers meanwhile, and quiescence once they stop; and the same with
// more PEs than Ps, where a PE spins only while the others sleep.
// CHARM_TEST_WAIT=passive runs the suite's jobs that jobConfig makes
// under WaitPassive.
func TestWaitPolicyJobs(t *testing.T) {
	for _, c := range []struct {
		wait actor.WaitPolicy
		pes  int
	}{
		{actor.WaitActive, runtime.GOMAXPROCS(0)}, {actor.WaitActive, runtime.GOMAXPROCS(0) + 3},
		{actor.WaitPassive, runtime.GOMAXPROCS(0)}, {actor.WaitPassive, runtime.GOMAXPROCS(0) + 3},
	} {
		pes := c.pes
		cfg := jobConfig(t, pes)
		cfg.Wait = c.wait
		var rounds, naps int
		code, err := runConfig(t, cfg, func(m *tmain, _ []string) {
			inJob.Equal(c.wait, chare.PEOf(m).Actor().Runtime().WaitPolicy())
			a, err := array.New[baElem](m, array.Dims(pes))
			inJob.NoError(err)
			for range 20 {
				f := chare.NewFuture[any](m)
				inJob.NoError(chare.Send(m, a, (*baElem).Go, baGo{Rounds: 100, Done: f.Callback()}))
				get(m, f)
				rounds += 100
				if _, err := chare.Nap(m, time.Now().Add(200*time.Microsecond)); err != nil {
					inJob.NoError(err)
				}
				naps++
			}
			quiesce(m)
			m.Exit(0)
		})
		require.NoError(t, err, "%v, %d PEs", c.wait, pes)
		require.Equal(t, 0, code)
		require.Equal(t, 2000, rounds, "%v, %d PEs: every barrier round ended", c.wait, pes)
		require.Equal(t, 20, naps)
	}
}
