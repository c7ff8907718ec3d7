package chare_test

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/chare"
)

type taMain struct{ chare.Chare[taMain] }

func init() { chare.Register[taMain]() }

// traceWriters counts the goroutines of trace writers in the process.
func traceWriters() int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return bytes.Count(buf[:n], []byte("trace.(*Writer).run("))
		}
		buf = make([]byte, 2*len(buf))
	}
}

// TestTraceAbortedWhenRunFailsEarly: a traced job that fails before it
// runs (here its restart directory does not exist) ends its trace writer
// and leaves neither the trace file nor a partial one.
func TestTraceAbortedWhenRunFailsEarly(t *testing.T) {
	before := traceWriters()
	dir := t.TempDir()
	path := filepath.Join(dir, "t.json")
	code, err := chare.Run(chare.Config{PEs: 2, Timeout: 30 * time.Second, Trace: path,
		Restart: filepath.Join(dir, "no-such-checkpoint")}, func(m *taMain, _ []string) {
		m.Exit(0)
	})
	require.Error(t, err)
	require.Equal(t, 1, code)
	require.Eventually(t, func() bool { return traceWriters() <= before }, 10*time.Second, time.Millisecond,
		"a trace writer's goroutine is still running after Run failed")
	left, rerr := os.ReadDir(dir)
	require.NoError(t, rerr)
	for _, e := range left {
		require.NotContains(t, e.Name(), "t.json", "Run left a partial trace file")
	}
}
