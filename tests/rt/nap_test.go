package rt_test

import (
	"testing"
	"time"

	"github.com/charmgo/charm/chare"
)

// chare.Nap: a threaded entry method sleeps until its PE has handled
// another message, or its deadline. The delays come from the runtime's own
// timers (futLate.Give), not from sleeps.

// napper calls Nap where it may not wait.
type napper struct {
	chare.Chare[napper]
}

func (c *napper) NotThreaded(done chare.Future[string]) {
	_, err := chare.Nap(c, time.Now().Add(time.Second))
	inJob.ErrorIs(err, chare.ErrNotThreaded)
	inJob.NoError(done.Send(c, err.Error()))
}

func init() { chare.Register[napper]() }

func TestNap(t *testing.T) {
	runMain(t, 2, func(m *tmain) {
		w, err := chare.New[futLate](m, 1)
		inJob.NoError(err)
		pending := chare.PEOf(m).PendingFutures()

		// A message wakes the nap long before its deadline: here the value
		// of a future, sent from PE 1 after 30 ms. Other messages may wake
		// it sooner; each nap is then a look at what changed.
		f := chare.NewFuture[int](m)
		t0 := time.Now()
		inJob.NoError(chare.Send(m, w, (*futLate).Give, futLateAsk{f, 7, 30 * time.Millisecond}))
		naps := 0
		for {
			woken, err := chare.Nap(m, t0.Add(jobDeadline/2))
			inJob.NoError(err)
			inJob.True(woken, "nap %d ended by its deadline, not a message", naps)
			naps++
			if v, err := f.GetBefore(m, time.Now()); err == nil { // a past deadline: no wait
				inJob.Equal(7, v)
				break
			}
		}
		inJob.GreaterOrEqual(time.Since(t0), 30*time.Millisecond)
		inJob.Less(time.Since(t0), jobDeadline/4)
		inJob.Less(naps, 20, "the nap waited for messages instead of returning at once")

		// Nothing comes: the nap ends by its deadline, not sooner (a stray
		// message may wake it, then the next nap has the rest).
		t0 = time.Now()
		woken, naps := true, 0
		for time.Since(t0) < 20*time.Millisecond {
			woken, err = chare.Nap(m, t0.Add(20*time.Millisecond))
			inJob.NoError(err)
			naps++
		}
		inJob.False(woken, "the last nap ended by its deadline")
		inJob.Less(naps, 10)

		// A deadline already past yields once.
		woken, err = chare.Nap(m, time.Now().Add(-time.Second))
		inJob.NoError(err)
		inJob.False(woken)

		// Naps leave nothing behind on the PE.
		inJob.Equal(pending, chare.PEOf(m).PendingFutures())

		// Outside a thread.
		n, err := chare.New[napper](m, 1)
		inJob.NoError(err)
		e := chare.NewFuture[string](m)
		inJob.NoError(chare.Send(m, n, (*napper).NotThreaded, e))
		inJob.Equal(chare.ErrNotThreaded.Error(), get(m, e))
	})
}
