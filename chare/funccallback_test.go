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

// TestDropFuncCallback: a function callback is held until dropped; a send
// through a dropped one is an error that says so, and dropping another
// kind of callback, or one twice, changes nothing.
func TestDropFuncCallback(t *testing.T) {
	before := chare.NumFuncCallbacks()
	var got []int
	var sendErr error
	code, err := chare.Run(chare.Config{PEs: 2, Timeout: 30 * time.Second}, func(m *fcMain, _ []string) {
		done := chare.NewFuture[any](m)
		cb := chare.FuncCallback(1, func(ctx chare.Context, v any) {
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
		chare.DropFuncCallback(cb)
		chare.DropFuncCallback(cb)
		chare.DropFuncCallback(chare.Callback{Kind: chare.CallbackIgnore})
		sendErr = cb.Send(m, 8)
		m.Exit(0)
	})
	require.NoError(t, err)
	require.Equal(t, 0, code)
	require.Equal(t, []int{7}, got)
	require.ErrorContains(t, sendErr, "unknown in this process")
	require.Equal(t, before, chare.NumFuncCallbacks())
}
