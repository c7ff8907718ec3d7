package rt_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/actor"
	"github.com/charmgo/charm/array"
	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/group"
)

// Ending a job: Exit from any PE, Abort, and panics in entry methods,
// which abort the job with an actor.PanicError naming the chare type, the
// entry method and the PE.

type exiter struct {
	array.Element[exiter, int]
}

type exitMsg struct{ Code int }

func (e *exiter) Exit(m exitMsg) { e.Base.Exit(m.Code) }

// Boom panics.
func (e *exiter) Boom(m exitMsg) { panic(fmt.Sprintf("boom %d", m.Code)) }

// BoomThreaded panics in a threaded entry method, at once or (Code > 0)
// after waiting for a future.
func (e *exiter) BoomThreaded(m exitMsg) {
	if m.Code > 0 {
		f := chare.NewFuture[int](e)
		inJob.NoError(f.Send(e, 1))
		get(e, f)
	}
	panic(fmt.Sprintf("boom %d", m.Code))
}

func (e *exiter) Abort(m exitMsg) { e.Base.Abort(fmt.Errorf("gave up with %d", m.Code)) }

type boomBranch struct{ group.Branch[boomBranch] }

func (b *boomBranch) Boom(exitMsg) { panic("branch boom") }

type boomSolo struct{ chare.Chare[boomSolo] }

func (s *boomSolo) Boom(exitMsg) {
	var m map[string]int
	m["x"] = 1 // a runtime error, not a panic of ours
}

func init() {
	chare.Register[exiter](chare.Threaded((*exiter).BoomThreaded))
	chare.Register[boomBranch]()
	chare.Register[boomSolo]()
}

func TestExitFromAnyPE(t *testing.T) {
	for _, c := range []struct{ pes, elem, code int }{{1, 0, 3}, {3, 2, 5}, {4, 3, 0}, {4, 1, 200}} {
		t.Run(fmt.Sprintf("%dPEs_element%d_code%d", c.pes, c.elem, c.code), func(t *testing.T) {
			code := run(t, c.pes, func(m *tmain, _ []string) {
				a, err := array.New[exiter](m, array.Dims(c.pes))
				inJob.NoError(err)
				inJob.NoError(chare.Send(m, a.At(c.elem), (*exiter).Exit, exitMsg{c.code}))
				// The main function may block for ever: Exit ends the job anyway.
				get(m, chare.NewFuture[int](m))
			})
			require.Equal(t, c.code, code)
		})
	}
}

func TestExitFromMain(t *testing.T) {
	require.Equal(t, 9, run(t, 2, func(m *tmain, _ []string) { m.Exit(9) }))
}

func TestAbort(t *testing.T) {
	code, err := runJob(t, 3, func(m *tmain, _ []string) {
		a, err := array.New[exiter](m, array.Dims(3))
		inJob.NoError(err)
		inJob.NoError(chare.Send(m, a.At(1), (*exiter).Abort, exitMsg{8}))
	})
	require.Equal(t, 1, code)
	require.EqualError(t, err, "gave up with 8")
}

func TestPanicAbortsJob(t *testing.T) {
	const pes = 3
	cases := []struct {
		name  string
		start func(m *tmain)
		pe    int
		want  []string // in err.Error()
	}{
		{"array element", func(m *tmain) {
			a, err := array.New[exiter](m, array.Dims(pes))
			inJob.NoError(err)
			inJob.NoError(chare.Send(m, a.At(2), (*exiter).Boom, exitMsg{1}))
		}, 2, []string{"rt_test.exiter", "Boom", "element 2", "PE 2", "boom 1"}},
		{"threaded entry", func(m *tmain) {
			a, err := array.New[exiter](m, array.Dims(pes))
			inJob.NoError(err)
			inJob.NoError(chare.Send(m, a.At(1), (*exiter).BoomThreaded, exitMsg{0}))
		}, 1, []string{"rt_test.exiter", "BoomThreaded", "PE 1", "boom 0"}},
		{"threaded entry after resuming", func(m *tmain) {
			a, err := array.New[exiter](m, array.Dims(pes))
			inJob.NoError(err)
			inJob.NoError(chare.Send(m, a.At(2), (*exiter).BoomThreaded, exitMsg{4}))
		}, 2, []string{"rt_test.exiter", "BoomThreaded", "PE 2", "boom 4"}},
		{"group branch", func(m *tmain) {
			g, err := group.New[boomBranch](m)
			inJob.NoError(err)
			inJob.NoError(chare.Send(m, g.At(1), (*boomBranch).Boom, exitMsg{}))
		}, 1, []string{"rt_test.boomBranch", "Boom", "PE 1", "branch boom"}},
		{"singleton chare", func(m *tmain) {
			s, err := chare.New[boomSolo](m, 2)
			inJob.NoError(err)
			inJob.NoError(chare.Send(m, s, (*boomSolo).Boom, exitMsg{}))
		}, 2, []string{"rt_test.boomSolo", "Boom", "PE 2", "nil map"}},
		{"main function", func(m *tmain) {
			panic("main boom")
		}, 0, []string{"rt_test.tmain", "main function", "PE 0", "main boom"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, err := runJob(t, pes, func(m *tmain, _ []string) {
				c.start(m)
				get(m, chare.NewFuture[int](m)) // wait for the panic to end the job
			})
			require.Equal(t, 1, code)
			var pe *actor.PanicError
			require.True(t, errors.As(err, &pe), "got %T: %v", err, err)
			require.Equal(t, c.pe, pe.PE)
			require.NotEmpty(t, pe.Stack)
			for _, w := range c.want {
				require.Contains(t, err.Error(), w)
			}
		})
	}
}

// A job that never exits is aborted by its timeout with an error that
// says so, rather than hanging.
func TestRunTimeout(t *testing.T) {
	cfg := jobConfig(t, 2)
	cfg.Timeout = 200 * time.Millisecond
	code, err := runConfig(t, cfg, func(m *tmain, _ []string) {})
	require.Equal(t, 1, code)
	require.ErrorContains(t, err, "did not end within 200ms")
}
