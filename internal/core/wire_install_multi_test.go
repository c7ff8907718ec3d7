package core_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/internal/core"
	"github.com/charmgo/charm/internal/jobtest"
)

// wireManyMain's entry method is sent to only by
// TestSeveralProcessJobBuildsWireDecoderAtFirstSend.
type wireManyMain struct {
	core.Chare[wireManyMain]
	sum int
}

type wireManyMsg struct{ A int }

func (m *wireManyMain) Put(msg wireManyMsg) { m.sum += msg.A }

func init() { core.Register[wireManyMain]() }

// The converse of TestOneProcessJobBuildsNoWireDecoder: in a job of
// several processes, the first send of an entry method gives the method
// its typed decoders, so that its messages from other processes are
// decoded without reflection.
//
// The job's other process is this test binary running just this test
// (jobtest), and a job's processes must have the same chare types: so
// every chare type of this package's tests is registered in an init
// function, never by a test as it runs.
func TestSeveralProcessJobBuildsWireDecoderAtFirstSend(t *testing.T) {
	require.NoError(t, core.DropWireDecoders((*wireManyMain).Put))
	var envBefore, runBefore, envAfter, runAfter bool
	var checkErr error
	code, err := jobtest.Run(t, core.Config{PEs: 2, Nodes: 2, Timeout: 30 * time.Second}, func(m *wireManyMain, _ []string) {
		if envBefore, runBefore, checkErr = core.WireDecoders((*wireManyMain).Put); checkErr != nil {
			m.Abort(checkErr)
			return
		}
		if checkErr = core.Send(m, m.ThisProxy(), (*wireManyMain).Put, wireManyMsg{A: 1}); checkErr != nil {
			m.Abort(checkErr)
			return
		}
		if envAfter, runAfter, checkErr = core.WireDecoders((*wireManyMain).Put); checkErr != nil {
			m.Abort(checkErr)
			return
		}
		m.Exit(0)
	})
	require.NoError(t, err)
	require.Equal(t, 0, code)
	require.NoError(t, checkErr)
	require.False(t, envBefore || runBefore, "no decoder before the first send")
	require.True(t, envAfter, "the first send built the envelope decoder")
	require.True(t, runAfter, "the first send built the run decoder")
}
