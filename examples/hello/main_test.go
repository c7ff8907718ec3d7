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

// syncBuffer collects the output of elements printing from several PEs.
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
// loudly, and returns its main chare, exit code and output.
func run(t *testing.T, pes int, args ...string) (*Main, int, string) {
	t.Helper()
	buf := &syncBuffer{}
	out = buf
	var m *Main
	code, err := chare.Run(chare.Config{PEs: pes, Args: args, Timeout: 30 * time.Second}, func(main *Main, args []string) {
		m = main
		main.Start(args)
	})
	require.NoError(t, err, "hello %v on %d PEs; output so far:\n%s", args, pes, buf.String())
	return m, code, buf.String()
}

func TestHello(t *testing.T) {
	for _, pes := range []int{1, 3} {
		for _, n := range []int{1, 16, 37} {
			t.Run(fmt.Sprintf("pes=%d/n=%d", pes, n), func(t *testing.T) {
				m, code, output := run(t, pes, "-n", fmt.Sprint(n))
				require.Equal(t, 0, code, output)
				require.Equal(t, n*(n-1)/2, m.sum)

				lines := strings.Split(strings.TrimSpace(output), "\n")
				require.Len(t, lines, n+1, output)
				require.Equal(t, fmt.Sprintf("hello: ok elements=%d pes=%d sum=%d", n, pes, n*(n-1)/2), lines[n])
				seen := map[string]bool{}
				for _, l := range lines[:n] {
					var i, pe int
					_, err := fmt.Sscanf(l, "hello from element %d on PE %d", &i, &pe)
					require.NoError(t, err, l)
					require.True(t, i >= 0 && i < n && pe >= 0 && pe < pes, l)
					require.False(t, seen[l], "duplicate line %q", l)
					seen[l] = true
				}
			})
		}
	}
}

func TestHelloBadFlag(t *testing.T) {
	_, code, output := run(t, 1, "-n", "0")
	require.NotEqual(t, 0, code)
	require.Contains(t, output, "hello: FAILED")
}

// TestHelloTwoProcesses runs the example as two processes (-nodes 2): the
// test binary launches a copy of itself as node 1.
func TestHelloTwoProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("launches a process")
	}
	buf := &syncBuffer{}
	out = buf
	code, err := chare.Run(chare.Config{PEs: 4, Nodes: 2, Args: []string{"-n", "12"}, Timeout: 60 * time.Second,
		Launch: []string{os.Args[0], "-test.run=^TestHelloTwoProcesses$", "-test.count=1"}}, (*Main).Start)
	if chare.IsLaunchedNode() {
		os.Exit(code)
	}
	require.NoError(t, err, buf.String())
	require.Equal(t, 0, code, buf.String())
	require.Contains(t, buf.String(), "hello: ok elements=12 pes=4 sum=66")
}
