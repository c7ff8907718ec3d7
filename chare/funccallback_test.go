package chare_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/chare"
)

type fcMain struct{ chare.Chare[fcMain] }

func init() { chare.Register[fcMain]() }

// TestFuncCallbackLivesWithItsJob: a function callback is held while its
// job runs and called on its PE; when the job ends the process forgets it
// (a later send through it, from another job, is an error that says why),
// so that it keeps nothing of the ended job; one made without a context
// is an error.
func TestFuncCallbackLivesWithItsJob(t *testing.T) {
	before := chare.NumFuncCallbacks()
	var got []int
	var cb chare.Callback
	code, err := chare.Run(chare.Config{PEs: 2, Timeout: 30 * time.Second}, func(m *fcMain, _ []string) {
		done := chare.NewFuture[any](m)
		cb = chare.FuncCallback(m, 1, func(ctx chare.Context, v any) {
			got = append(got, v.(int))
			_ = done.Callback().Send(ctx, nil)
		})
		if n := chare.NumFuncCallbacks(); n != before+1 {
			m.Abort(fmt.Errorf("%d function callbacks held after making one, want %d", n, before+1))
			return
		}
		if err := cb.Send(m, 7); err != nil {
			m.Abort(err)
			return
		}
		if _, err := done.Get(m); err != nil {
			m.Abort(err)
			return
		}
		m.Exit(0)
	})
	require.NoError(t, err)
	require.Equal(t, 0, code)
	require.Equal(t, []int{7}, got)
	require.Equal(t, before, chare.NumFuncCallbacks(), "function callbacks held after their job ended")

	var late, noCtx error
	code, err = chare.Run(chare.Config{PEs: 2, Timeout: 30 * time.Second}, func(m *fcMain, _ []string) {
		late = cb.Send(m, 8)
		noCtx = chare.FuncCallback(nil, 0, func(chare.Context, any) {}).Send(m, nil)
		m.Exit(0)
	})
	require.NoError(t, err)
	require.Equal(t, 0, code)
	require.ErrorContains(t, late, "by a job that ended")
	require.ErrorIs(t, noCtx, chare.ErrNoContext)
	require.Equal(t, []int{7}, got)
}
