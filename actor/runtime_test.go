package actor_test

import (
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/actor"
)

// The runtime alone: starting PEs, sending between them, ending the job.

func TestStartAndExit(t *testing.T) {
	for _, pes := range []int{0, 1, 4} {
		t.Run(fmt.Sprintf("%dPEs", pes), func(t *testing.T) {
			var booted atomic.Int64
			code, err := start(t, pes, func(pe *actor.PE) {
				booted.Add(1)
				want := max(pes, 1)
				check(pe, pe.ID() == 0, fmt.Errorf("boot ran on PE %d", pe.ID()))
				check(pe, pe.NumPEs() == want, fmt.Errorf("NumPEs = %d, want %d", pe.NumPEs(), want))
				rt := pe.Runtime()
				check(pe, rt.NumPEs() == want && rt.PE(want-1) != nil && rt.PE(want) == nil && rt.PE(-1) == nil,
					errors.New("Runtime.PE out of range"))
				check(pe, rt.NumNodes() == 1 && rt.NodeOf(want-1) == 0 && rt.FirstPE(0) == 0, errors.New("one node"))
				check(pe, !rt.Stopped(), errors.New("stopped while running"))
				rt.Exit(3)
				check(pe, rt.Stopped(), errors.New("not stopped after Exit"))
			})
			require.NoError(t, err)
			require.Equal(t, 3, code)
			require.Equal(t, int64(1), booted.Load())
		})
	}
}

func TestStartBadConfig(t *testing.T) {
	_, err := actor.Start(actor.Config{PEs: -1}, func(*actor.PE) {})
	require.ErrorContains(t, err, "-1")
	// A bound on frames between processes below a frame's own size
	// would refuse a frame of many small messages.
	for _, bad := range []int{-1, 1 << 20} {
		_, err = actor.Start(actor.Config{PEs: 2, MaxRemoteMessage: bad}, func(*actor.PE) {})
		require.ErrorContains(t, err, fmt.Sprintf("bad MaxRemoteMessage %d", bad))
		require.ErrorContains(t, err, "wire.MaxFrame")
	}
}

func TestSetupRunsOnEveryPEFirst(t *testing.T) {
	const pes = 5
	rt, err := actor.Start(actor.Config{PEs: pes, Setup: func(pe *actor.PE) { pe.Ext = pe.ID() * 10 }}, func(pe *actor.PE) {
		for p := 0; p < pes; p++ {
			pe.Send(p, do(func(pe *actor.PE) {
				check(pe, pe.Ext == pe.ID()*10, fmt.Errorf("PE %d: Ext = %v", pe.ID(), pe.Ext))
				if pe.ID() == pes-1 {
					pe.Runtime().Exit(0)
				}
			}))
		}
	})
	require.NoError(t, err)
	code, err := rt.Wait()
	require.NoError(t, err)
	require.Equal(t, 0, code)
}

// TestSendFIFO sends runs of numbered messages from every PE to every PE:
// each pair keeps its order, and every message arrives once.
func TestSendFIFO(t *testing.T) {
	const pes, n = 4, 500
	var got atomic.Int64
	next := make([][]int, pes) // next[to][from], touched only on PE to
	for i := range next {
		next[i] = make([]int, pes)
	}
	code, err := start(t, pes, func(pe *actor.PE) {
		for from := 0; from < pes; from++ {
			pe.Send(from, do(func(pe *actor.PE) {
				for s := 0; s < n; s++ {
					for to := 0; to < pes; to++ {
						pe.Send(to, do(func(pe *actor.PE) {
							check(pe, next[to][from] == s, fmt.Errorf("PE %d got message %d of PE %d, want %d", to, s, from, next[to][from]))
							next[to][from]++
							if got.Add(1) == pes*pes*n {
								pe.Runtime().Exit(0)
							}
						}))
					}
				}
			}))
		}
	})
	require.NoError(t, err)
	require.Equal(t, 0, code)
	require.Equal(t, int64(pes*pes*n), got.Load())
}

func TestAbort(t *testing.T) {
	boom := errors.New("boom")
	code, err := start(t, 2, func(pe *actor.PE) {
		pe.Send(1, do(func(pe *actor.PE) {
			pe.Runtime().Abort(boom)
			pe.Runtime().Exit(0) // too late: the first end wins
		}))
	})
	require.Equal(t, 1, code)
	require.ErrorIs(t, err, boom)
}

func TestPanicInMessage(t *testing.T) {
	cases := []struct {
		name string
		msg  actor.Message
		want []string
	}{
		{"described", named{"Worker.Step on element 3", func(*actor.PE) { panic("bad step") }},
			[]string{"panic on PE 2", "Worker.Step on element 3", "bad step"}},
		{"plain", do(func(*actor.PE) { panic(fmt.Errorf("bad %d", 7)) }),
			[]string{"panic on PE 2", "actor_test.do", "bad 7"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, err := start(t, 3, func(pe *actor.PE) { pe.Send(2, c.msg) })
			require.Equal(t, 1, code)
			var pe *actor.PanicError
			require.ErrorAs(t, err, &pe)
			require.Equal(t, 2, pe.PE)
			require.NotEmpty(t, pe.Stack)
			for _, w := range c.want {
				require.Contains(t, err.Error(), w)
			}
		})
	}
}

// TestNoDeliveryAfterExit checks that once the job ended, PEs stop
// delivering messages.
func TestNoDeliveryAfterExit(t *testing.T) {
	var after atomic.Int64
	code, err := start(t, 2, func(pe *actor.PE) {
		pe.Runtime().Exit(5)
		for range 100 {
			pe.Send(1, do(func(*actor.PE) { after.Add(1) }))
		}
	})
	require.NoError(t, err)
	require.Equal(t, 5, code)
	require.Zero(t, after.Load())
}
