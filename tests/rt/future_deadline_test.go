package rt_test

import (
	"testing"
	"time"

	"github.com/charmgo/charm/chare"
)

// Future.GetBefore: Get with a deadline. The delays here come from the
// runtime's own timers (a GetBefore that runs out on a future nobody
// fills), not from sleeps.

// futLate gives a value after a delay, timed by its own GetBefore.
type futLate struct {
	chare.Chare[futLate]
}

type futLateAsk struct {
	F     chare.Future[int]
	Val   int
	Delay time.Duration
}

// Give waits for Delay on a future nobody fills, then sends the value.
func (c *futLate) Give(m futLateAsk) {
	never := chare.NewFuture[int](c)
	_, err := never.GetBefore(c, time.Now().Add(m.Delay))
	inJob.ErrorIs(err, chare.ErrDeadlineExceeded)
	inJob.NoError(m.F.Send(c, m.Val))
}

// NotThreaded calls GetBefore where it may not wait.
func (c *futLate) NotThreaded(done chare.Future[string]) {
	_, err := chare.NewFuture[int](c).GetBefore(c, time.Now().Add(time.Second))
	inJob.ErrorIs(err, chare.ErrNotThreaded)
	inJob.NoError(done.Send(c, err.Error()))
}

func init() { chare.Register[futLate](chare.Threaded((*futLate).Give)) }

func TestFutureGetBefore(t *testing.T) {
	runMain(t, 2, func(m *tmain) {
		w, err := chare.New[futLate](m, 1)
		inJob.NoError(err)

		// A value that comes in time is returned.
		f := chare.NewFuture[int](m)
		inJob.NoError(chare.Send(m, w, (*futLate).Give, futLateAsk{f, 7, 0}))
		v, err := f.GetBefore(m, time.Now().Add(jobDeadline/2))
		inJob.NoError(err)
		inJob.Equal(7, v)

		// None comes: the error names the future and wraps
		// ErrDeadlineExceeded, no sooner than the deadline.
		f = chare.NewFuture[int](m)
		t0 := time.Now()
		_, err = f.GetBefore(m, t0.Add(20*time.Millisecond))
		inJob.ErrorIs(err, chare.ErrDeadlineExceeded)
		inJob.ErrorContains(err, "has no value by its deadline")
		inJob.GreaterOrEqual(time.Since(t0), 20*time.Millisecond)
		// The future stays: a later value is taken by the next Get.
		inJob.NoError(f.Send(m, 8))
		inJob.Equal(8, get(m, f))

		// A deadline already past: the value if it is there, else the error
		// at once.
		f = chare.NewFuture[int](m)
		_, err = f.GetBefore(m, time.Now().Add(-time.Second))
		inJob.ErrorIs(err, chare.ErrDeadlineExceeded)
		inJob.NoError(f.Send(m, 9))
		quiesce(m) // the value is in the slot
		v, err = f.GetBefore(m, time.Now().Add(-time.Second))
		inJob.NoError(err)
		inJob.Equal(9, v)

		// The zero deadline is Get.
		f = chare.NewFuture[int](m)
		inJob.NoError(chare.Send(m, w, (*futLate).Give, futLateAsk{f, 10, 10 * time.Millisecond}))
		v, err = f.GetBefore(m, time.Time{})
		inJob.NoError(err)
		inJob.Equal(10, v)

		// A deadline's timer that fires after its future was taken does not
		// wake a later wait: the value of g comes after f's deadline.
		f, g := chare.NewFuture[int](m), chare.NewFuture[int](m)
		inJob.NoError(f.Send(m, 1))
		inJob.NoError(chare.Send(m, w, (*futLate).Give, futLateAsk{g, 2, 60 * time.Millisecond}))
		v, err = f.GetBefore(m, time.Now().Add(10*time.Millisecond))
		inJob.NoError(err)
		inJob.Equal(1, v)
		i, err := chare.WaitAny(m, g) // woken with g unset, it would fail
		inJob.NoError(err)
		inJob.Equal(0, i)
		v, err = g.Get(m)
		inJob.NoError(err)
		inJob.Equal(2, v, "g's wait ran to its value")

		// Outside a thread.
		e := chare.NewFuture[string](m)
		inJob.NoError(chare.Send(m, w, (*futLate).NotThreaded, e))
		inJob.Equal(chare.ErrNotThreaded.Error(), get(m, e))
	})
}
