package actor_test

import (
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/actor"
)

// relMulti is a Multi that records its Release: the PE calls it once,
// after it has delivered and counted the message, and never after a
// delivery that panicked.
type relMulti struct {
	n        int
	panics   bool
	released *atomic.Int64
	early    *atomic.Int64 // releases seen before Deliver ran
	ran      bool
}

func (m *relMulti) Deliver(pe *actor.PE) {
	m.ran = true
	if m.panics {
		panic("relMulti")
	}
}
func (m *relMulti) Count() int { return m.n }
func (m *relMulti) Release() {
	if !m.ran {
		m.early.Add(1)
	}
	m.released.Add(1)
}

func TestReleaseAfterDelivery(t *testing.T) {
	var released, early atomic.Int64
	code, err := start(t, 2, func(pe *actor.PE) {
		for i := 0; i < 10; i++ {
			pe.Send(1, &relMulti{n: 1, released: &released, early: &early})
		}
		pe.Send(1, do(func(pe *actor.PE) {
			// Every relMulti before this message was delivered and
			// released.
			check(pe, released.Load() == 10, fmt.Errorf("released %d of 10", released.Load()))
			pe.Runtime().Exit(0)
		}))
	})
	require.NoError(t, err)
	require.Equal(t, 0, code)
	require.Equal(t, int64(10), released.Load())
	require.Zero(t, early.Load(), "released before its delivery")
}

func TestNoReleaseAfterPanic(t *testing.T) {
	var released, early atomic.Int64
	code, err := start(t, 2, func(pe *actor.PE) {
		pe.Send(1, &relMulti{n: 1, panics: true, released: &released, early: &early})
	})
	var pErr *actor.PanicError
	require.True(t, errors.As(err, &pErr), "the panic ends the job: %v", err)
	require.Equal(t, 1, code)
	require.Zero(t, released.Load())
}
