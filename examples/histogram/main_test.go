package main

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/chare"
)

// syncBuffer collects the output of a job.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// run runs the program in-process with a deadline that fails the test
// loudly, and returns its exit code and output.
func run(t *testing.T, pes int, args ...string) (int, string) {
	t.Helper()
	buf := &syncBuffer{}
	out = buf
	code, err := chare.Run(chare.Config{PEs: pes, Args: args, Timeout: 60 * time.Second}, (*Main).Start)
	require.NoError(t, err, "histogram %v on %d PEs; output so far:\n%s", args, pes, buf.String())
	return code, buf.String()
}

func TestHistogram(t *testing.T) {
	cases := []struct {
		pes      int
		args     []string
		items    int
		topology string
	}{
		{1, []string{"-m", "20000"}, 20000, "1×1"},
		{4, []string{"-m", "20000"}, 80000, "1×4"},
		{4, []string{"-m", "20000", "-dims", "2,2", "-buffer", "64"}, 80000, "2×2"},
		{4, []string{"-m", "20000", "-dims", "2,2,1", "-buffer", "1"}, 80000, "2×2×1"},
		{4, []string{"-m", "5000", "-dims", "4", "-buffer", "100000", "-size", "7"}, 20000, "4"},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("pes=%d/%s", c.pes, strings.Join(c.args, " ")), func(t *testing.T) {
			code, output := run(t, c.pes, c.args...)
			require.Equal(t, 0, code, output)
			require.Regexp(t, fmt.Sprintf(`^histogram: ok pes=%d items=%d errors=0 topology=%s rate=\S+ items/s\n$`, c.pes, c.items, c.topology), output)
		})
	}
}

func TestHistogramBadArguments(t *testing.T) {
	for _, args := range [][]string{{"-m", "-1"}, {"-dims", "3"}, {"-dims", "2,x"}, {"-buffer", "-2"}, {"-size", "0"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			code, output := run(t, 4, args...)
			require.NotEqual(t, 0, code, output)
			require.True(t, strings.HasPrefix(output, "histogram: FAILED "), output)
		})
	}
}

// TestHistogramTwoProcesses runs the example as two processes (-nodes 2):
// the test binary launches a copy of itself as node 1.
func TestHistogramTwoProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("launches a process")
	}
	buf := &syncBuffer{}
	out = buf
	code, err := chare.Run(chare.Config{PEs: 4, Nodes: 2, Args: []string{"-m", "20000"}, Timeout: 60 * time.Second,
		Launch: []string{os.Args[0], "-test.run=^TestHistogramTwoProcesses$", "-test.count=1"}}, (*Main).Start)
	if chare.IsLaunchedNode() {
		os.Exit(code)
	}
	require.NoError(t, err, buf.String())
	require.Equal(t, 0, code, buf.String())
	require.Regexp(t, `histogram: ok pes=4 items=80000 errors=0 topology=2×2 rate=\S+ items/s\n$`, buf.String())
}
