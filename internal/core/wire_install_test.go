package core

import (
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// wireLessWorker's entry method is sent to only by
// TestOneProcessJobBuildsNoWireDecoder.
type wireLessWorker struct {
	Chare[wireLessWorker]
	sum int
}

type wireLessMsg struct{ A int }

func (w *wireLessWorker) Put(m wireLessMsg) { w.sum += m.A }

func init() { Register[wireLessWorker]() }

// A job of one process receives nothing from other processes, so the
// first send of an entry method there builds no typed decoder for it
// (building one compiles the message's codec: microseconds, paid inside
// whatever the program times first).
func TestOneProcessJobBuildsNoWireDecoder(t *testing.T) {
	var installed, cached bool
	var entryErr error
	_, err := Run(Config{PEs: 2, Timeout: 30 * time.Second}, func(m *countMain, _ []string) {
		pe := PEOf(m)
		var e *Entry
		e, entryErr = pe.entry((*wireLessWorker).Put, &env1[wireLessWorker, wireLessMsg]{fn: (*wireLessWorker).Put})
		if entryErr == nil {
			installed = e.wireEnv.Load() != nil || e.wireRun.Load() != nil
			cached = pe.ents.get(reflect.ValueOf((*wireLessWorker).Put).Pointer()) == e
		}
		m.Exit(0)
	})
	require.NoError(t, err)
	require.NoError(t, entryErr)
	require.False(t, installed, "a job of one process installs no wire decoder at a send")
	require.True(t, cached, "the entry is cached for the next send")
}
