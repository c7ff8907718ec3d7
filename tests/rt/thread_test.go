package rt_test

import (
	"fmt"
	"testing"

	"github.com/charmgo/charm/chare"
)

// Threaded entry methods block on futures without stalling their PE: on
// one PE, a threaded method waits for a future that only another message,
// processed on the same PE while it waits, can fulfil.

type waiter struct {
	chare.Chare[waiter]
	pending []chare.Future[int]
	ticks   int
	running int // entry methods running now (suspended threads included)
	log     []string
}

type waitMsg struct {
	Name  string
	Ticks int // Tick messages to send itself before asking to be woken
	Done  chare.Future[[]string]
}

// Wait is threaded: it registers a future, sends itself Ticks ticks and a
// Wake, and blocks until Wake fulfils the future. The ticks must all be
// processed meanwhile, on the same PE.
func (w *waiter) Wait(m waitMsg) {
	w.running++
	f := chare.NewFuture[int](w)
	w.pending = append(w.pending, f)
	before := w.ticks
	for range m.Ticks {
		inJob.NoError(chare.Send0(w, w.ThisProxy(), (*waiter).Tick))
	}
	inJob.NoError(chare.Send0(w, w.ThisProxy(), (*waiter).Wake))
	v := get(w, f)
	inJob.GreaterOrEqual(w.ticks-before, m.Ticks, "%s: ticks processed while it waited", m.Name)
	w.log = append(w.log, fmt.Sprintf("%s woke with %d", m.Name, v))
	w.running--
	if m.Done.ID != 0 {
		inJob.NoError(m.Done.Send(w, w.log))
	}
}

// Tick is a plain entry method.
func (w *waiter) Tick() { w.ticks++ }

// Wake fulfils the oldest pending future.
func (w *waiter) Wake() {
	f := w.pending[0]
	w.pending = w.pending[1:]
	inJob.NoError(f.Send(w, w.ticks))
}

// Running reports how many threaded methods are under way.
func (w *waiter) Running(done chare.Future[int]) { inJob.NoError(done.Send(w, w.running)) }

// Count reports the ticks processed so far.
func (w *waiter) Count(done chare.Future[int]) { inJob.NoError(done.Send(w, w.ticks)) }

func init() {
	chare.Register[waiter](chare.Threaded((*waiter).Wait))
}

func TestThreadedBlocksWithoutStallingPE(t *testing.T) {
	runMain(t, 1, func(m *tmain) {
		w, err := chare.New[waiter](m, 0)
		inJob.NoError(err)
		done := chare.NewFuture[[]string](m)
		inJob.NoError(chare.Send(m, w, (*waiter).Wait, waitMsg{Name: "a", Ticks: 100, Done: done}))
		inJob.Equal([]string{"a woke with 100"}, get(m, done))
	})
}

// TestThreadedSeveralSuspended has three threaded methods suspended at
// once on one PE; they are woken in the order they asked.
func TestThreadedSeveralSuspended(t *testing.T) {
	runMain(t, 1, func(m *tmain) {
		w, err := chare.New[waiter](m, 0)
		inJob.NoError(err)
		done := chare.NewFuture[[]string](m)
		inJob.NoError(chare.Send(m, w, (*waiter).Wait, waitMsg{Name: "a", Ticks: 30}))
		inJob.NoError(chare.Send(m, w, (*waiter).Wait, waitMsg{Name: "b", Ticks: 20}))
		inJob.NoError(chare.Send(m, w, (*waiter).Wait, waitMsg{Name: "c", Ticks: 10, Done: done}))
		// The ticks were queued before any wake-up value.
		inJob.Equal([]string{"a woke with 30", "b woke with 50", "c woke with 60"}, get(m, done))
		running := chare.NewFuture[int](m)
		inJob.NoError(chare.Send(m, w, (*waiter).Running, running))
		inJob.Equal(0, get(m, running))
	})
}

// TestMainThreadDoesNotStallPE0 blocks the main function on a future that
// a chare on PE 0 fulfils: the chare's messages run on PE 0 while the main
// function waits.
func TestMainThreadDoesNotStallPE0(t *testing.T) {
	runMain(t, 2, func(m *tmain) {
		w, err := chare.New[waiter](m, 0)
		inJob.NoError(err)
		for range 50 {
			inJob.NoError(chare.Send0(m, w, (*waiter).Tick))
		}
		f := chare.NewFuture[int](m)
		inJob.NoError(chare.Send(m, w, (*waiter).Count, f))
		inJob.Equal(50, get(m, f))
	})
}
