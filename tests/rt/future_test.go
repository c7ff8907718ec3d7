package rt_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/chare"
)

// Futures: NewFuture, Send and Get in the main function and in threaded
// entry methods; WaitAll and WaitAny; sync calls (chare.Call) of entry
// methods that return a value; and the errors: Get outside a threaded
// method, Get on another PE's future, a second Get, a second value.

// futWorker answers requests for values, on whatever PE it lives.
type futWorker struct {
	chare.Chare[futWorker]
	calls int
}

type futAsk struct {
	F   chare.Future[int]
	Val int
}

type futAskMany struct {
	Fs   []chare.Future[int]
	Vals []int
}

// Give sends the value to the future.
func (w *futWorker) Give(m futAsk) { inJob.NoError(m.F.Send(w, m.Val)) }

// GiveMany sends each value to its future, in order.
func (w *futWorker) GiveMany(m futAskMany) {
	for i, f := range m.Fs {
		inJob.NoError(f.Send(w, m.Vals[i]))
	}
}

// Square is a sync entry method: its result goes back to the caller.
func (w *futWorker) Square(x int) int {
	w.calls++
	return x * x
}

// Where is a sync entry method without a useful message.
func (w *futWorker) Where(struct{}) int { return w.PE() }

// futThreaded waits in threaded entry methods.
type futThreaded struct {
	chare.Chare[futThreaded]
}

type futRound struct {
	Worker chare.Proxy[futWorker]
	Done   chare.Future[[]int]
}

// Round makes futures on its own PE, has the worker fill them, and waits
// with Get, WaitAll, WaitAny and Call.
func (c *futThreaded) Round(m futRound) {
	var out []int
	f := chare.NewFuture[int](c)
	inJob.NoError(chare.Send(c, m.Worker, (*futWorker).Give, futAsk{f, 5}))
	out = append(out, get(c, f))

	fs := []chare.Future[int]{chare.NewFuture[int](c), chare.NewFuture[int](c), chare.NewFuture[int](c)}
	inJob.NoError(chare.Send(c, m.Worker, (*futWorker).GiveMany, futAskMany{fs, []int{1, 2, 3}}))
	inJob.NoError(chare.WaitAll(c, fs[0], fs[1], fs[2]))
	for _, f := range fs {
		out = append(out, get(c, f))
	}

	sq, err := chare.Call(c, m.Worker, (*futWorker).Square, 12)
	inJob.NoError(err)
	out = append(out, get(c, sq))
	inJob.NoError(m.Done.Send(c, out))
}

// NotThreaded tries to wait where it may not, and reports the error (as
// text: an error value cannot cross processes).
func (c *futThreaded) NotThreaded(done chare.Future[string]) {
	f := chare.NewFuture[int](c)
	_, err := f.Get(c)
	inJob.ErrorIs(err, chare.ErrNotThreaded)
	inJob.NoError(done.Send(c, err.Error()))
}

// GetOther tries to wait for a future that belongs to another PE.
func (c *futThreaded) GetOther(m futGetOther) {
	_, err := m.Foreign.Get(c)
	inJob.Error(err)
	inJob.NoError(m.Done.Send(c, err.Error()))
}

type futGetOther struct {
	Foreign chare.Future[int]
	Done    chare.Future[string]
}

func init() {
	chare.Register[futWorker]()
	chare.Register[futThreaded](chare.Threaded((*futThreaded).Round, (*futThreaded).GetOther))
}

func TestFutureInMain(t *testing.T) {
	runMain(t, 3, func(m *tmain) {
		w, err := chare.New[futWorker](m, 2)
		inJob.NoError(err)
		f := chare.NewFuture[int](m)
		inJob.False(f.IsZero())
		inJob.Equal(0, f.PE)
		inJob.NoError(chare.Send(m, w, (*futWorker).Give, futAsk{f, 42}))
		inJob.Equal(42, get(m, f))

		// A future filled by the main function itself.
		own := chare.NewFuture[string](m)
		inJob.NoError(own.Send(m, "self"))
		inJob.Equal("self", get(m, own))

		// WaitAny returns the one that is set; WaitAll then waits for the rest.
		fs := []chare.Future[int]{chare.NewFuture[int](m), chare.NewFuture[int](m), chare.NewFuture[int](m)}
		inJob.NoError(chare.Send(m, w, (*futWorker).Give, futAsk{fs[1], 11}))
		i, err := chare.WaitAny(m, fs[0], fs[1], fs[2])
		inJob.NoError(err)
		inJob.Equal(1, i)
		i, err = chare.WaitAny(m, fs[0], fs[1], fs[2])
		inJob.NoError(err)
		inJob.Equal(1, i, "WaitAny does not take the value")
		inJob.NoError(chare.Send(m, w, (*futWorker).GiveMany, futAskMany{[]chare.Future[int]{fs[2], fs[0]}, []int{12, 10}}))
		inJob.NoError(chare.WaitAll(m, fs[0], fs[1], fs[2]))
		for k, f := range fs {
			inJob.Equal(10+k, get(m, f))
		}
		_, err = chare.WaitAny(m)
		inJob.Error(err)

		// Sync calls from the main function.
		for x := 0; x < 5; x++ {
			f, err := chare.Call(m, w, (*futWorker).Square, x)
			inJob.NoError(err)
			inJob.Equal(x*x, get(m, f))
		}
		where, err := chare.Call(m, w, (*futWorker).Where, struct{}{})
		inJob.NoError(err)
		inJob.Equal(2, get(m, where))
	})
}

func TestFutureInThreadedEntry(t *testing.T) {
	for _, pes := range []int{1, 2, 4} {
		t.Run(fmt.Sprintf("%dPEs", pes), func(t *testing.T) { testFutureInThreadedEntry(t, pes) })
	}
}

func testFutureInThreadedEntry(t *testing.T, pes int) {
	runMain(t, pes, func(m *tmain) {
		// The waiting chare and the worker on each pair of PEs.
		for a := 0; a < pes; a++ {
			b := (a + 1) % pes
			w, err := chare.New[futWorker](m, b)
			inJob.NoError(err)
			c, err := chare.New[futThreaded](m, a)
			inJob.NoError(err)
			done := chare.NewFuture[[]int](m)
			inJob.NoError(chare.Send(m, c, (*futThreaded).Round, futRound{w, done}))
			inJob.Equal([]int{5, 1, 2, 3, 144}, get(m, done), "waiting on PE %d, worker on PE %d", a, b)
		}
	})
}

func TestFutureErrors(t *testing.T) {
	runMain(t, 2, func(m *tmain) {
		c, err := chare.New[futThreaded](m, 1)
		inJob.NoError(err)

		// Get in an entry method that is not threaded.
		e := chare.NewFuture[string](m)
		inJob.NoError(chare.Send(m, c, (*futThreaded).NotThreaded, e))
		inJob.Equal(chare.ErrNotThreaded.Error(), get(m, e))

		// Get on a future of another PE, from a threaded method.
		foreign := chare.NewFuture[int](m)
		e = chare.NewFuture[string](m)
		inJob.NoError(chare.Send(m, c, (*futThreaded).GetOther, futGetOther{foreign, e}))
		msg := get(m, e)
		inJob.Contains(msg, "belongs to PE 0")
		inJob.Contains(msg, "not on PE 1")

		// A second Get.
		f := chare.NewFuture[int](m)
		inJob.NoError(f.Send(m, 1))
		inJob.Equal(1, get(m, f))
		_, err = f.Get(m)
		inJob.ErrorContains(err, "already taken")

		// The zero future.
		var zero chare.Future[int]
		inJob.True(zero.IsZero())
		_, err = zero.Get(m)
		inJob.Error(err)
		inJob.Error(zero.Send(m, 1))

		// Without a context.
		inJob.True(chare.NewFuture[int](nil).IsZero())
		_, err = f.Get(nil)
		inJob.ErrorIs(err, chare.ErrNoContext)

		// Call needs one target.
		_, err = chare.Call(m, chare.NewProxy[futWorker](chare.Route{Kind: chare.KindArrayAll}), (*futWorker).Square, 1)
		inJob.ErrorContains(err, "not a array broadcast")
	})
}

// TestFutureSecondValue checks that a value for a future that already has
// one, or whose value was taken, aborts the job with an error saying so.
func TestFutureSecondValue(t *testing.T) {
	cases := []struct {
		name, want string
		take       bool
	}{
		{"second value", "a second value (int) arrived for future", false},
		{"value after Get", "which was already taken", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := runJob(t, 1, func(m *tmain, _ []string) {
				f := chare.NewFuture[int](m)
				inJob.NoError(f.Send(m, 1))
				inJob.NoError(f.Send(m, 2))
				if c.take {
					get(m, f)
				}
				quiesce(m)
				m.Exit(0)
			})
			require.ErrorContains(t, err, c.want)
		})
	}
}

// TestFutureGetOutsideThread checks ErrNotThreaded from code that runs on
// a PE but in no thread: a function callback, on the last PE of the
// test's own process (a Go function cannot be called in another).
func TestFutureGetOutsideThread(t *testing.T) {
	const pes = 2
	runMain(t, pes, func(m *tmain) {
		out := chare.NewFuture[error](m)
		cb := chare.FuncCallback(m, node0PEs(pes)-1, func(ctx chare.Context, _ any) {
			f := chare.NewFuture[int](ctx)
			_, err := f.Get(ctx)
			if err == nil {
				err = errors.New("Get returned without a value")
			}
			inJob.NoError(out.Send(ctx, err))
		})
		inJob.NoError(cb.Send(m, nil))
		inJob.ErrorIs(get(m, out), chare.ErrNotThreaded)
	})
}

// TestFutureDrop: Drop removes a future nobody will send to from its PE's
// table, and refuses a future already dropped, one taken by Get, and one
// of another PE, naming it.
func TestFutureDrop(t *testing.T) {
	runMain(t, 2, func(m *tmain) {
		pe := chare.PEOf(m)
		before := pe.PendingFutures()
		f := chare.NewFuture[int](m)
		inJob.Equal(before+1, pe.PendingFutures())
		inJob.NoError(f.Drop(m))
		inJob.Equal(before, pe.PendingFutures())
		err := f.Drop(m)
		inJob.ErrorContains(err, fmt.Sprintf("chare: dropping future %d on PE 0: it was already taken by Get or dropped", f.ID))

		g := chare.NewFuture[int](m)
		inJob.NoError(g.Send(m, 3))
		inJob.Equal(3, get(m, g))
		inJob.ErrorContains(g.Drop(m), "already taken")

		other := chare.Future[int]{PE: 1, ID: f.ID}
		inJob.ErrorContains(other.Drop(m), "belongs to PE 1")
		inJob.ErrorContains(chare.Future[int]{}.Drop(m), "never created")
		inJob.Equal(before, pe.PendingFutures())
	})
}
