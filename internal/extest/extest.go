// Package extest holds what the tests of the examples (and of the Charm++
// counterparts under tests/charm) share: a buffer for the
// output of a job and helpers that run an example's job in-process, on one
// process or on several.
package extest

import (
	"bytes"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/internal/exutil"
	"github.com/charmgo/charm/internal/jobtest"
)

// Buffer collects the output of code running on several PEs: a
// bytes.Buffer that is safe for concurrent use.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Run runs the example called name in-process: a job of cfg (PEs, Args
// and a Timeout, the deadline that fails the test loudly) with start as
// the main chare's start method, and with the example's output, *out,
// captured. It returns the main chare, the job's exit code and the output.
func Run[M any](t testing.TB, name string, out *io.Writer, start func(*M, []string), cfg chare.Config) (*M, int, string) {
	t.Helper()
	buf := &Buffer{}
	*out = buf
	var m *M
	code, err := chare.Run(cfg, func(main *M, args []string) {
		m = main
		start(main, args)
	})
	require.NoError(t, err, "%s %v on %d PEs; output so far:\n%s", name, cfg.Args, cfg.PEs, buf.String())
	return m, code, buf.String()
}

// Runner returns run, which runs the example called name in-process as
// Run does: a job on pes PEs with args and a deadline of timeout, with
// start as the main chare's start method and the output, *out, captured.
// run returns the main chare, the job's exit code and the output.
func Runner[M any](name string, out *io.Writer, start func(*M, []string), timeout time.Duration) func(t testing.TB, pes int, args ...string) (*M, int, string) {
	return func(t testing.TB, pes int, args ...string) (*M, int, string) {
		t.Helper()
		return Run(t, name, out, start, chare.Config{PEs: pes, Args: args, Timeout: timeout})
	}
}

// RunProcesses runs a job of cfg, which has Nodes > 1, as several
// processes: the test binary launches copies of itself that run just the
// test t, whose call of RunProcesses joins them to the job as the launched
// nodes and exits with the job's code. In the test's own process it
// returns the job's exit code and output, *out, captured. It skips the
// test with -short.
func RunProcesses[M any](t testing.TB, out *io.Writer, start func(*M, []string), cfg chare.Config) (int, string) {
	t.Helper()
	buf := &Buffer{}
	*out = buf
	code, err := jobtest.Run(t, cfg, start)
	require.NoError(t, err, buf.String())
	return code, buf.String()
}

// RequireOK checks that the program called name ended with code 0 and
// the final line "<name>: ok ...", and that each of figures is a positive
// finite number there; it returns the line's values by key.
func RequireOK(t testing.TB, name string, code int, output string, figures ...string) map[string]string {
	t.Helper()
	require.Equal(t, 0, code, output)
	kv, err := exutil.ParseOK(name, output)
	require.NoError(t, err)
	for _, f := range figures {
		_, err := exutil.Figure(kv, f)
		require.NoError(t, err, output)
	}
	return kv
}
