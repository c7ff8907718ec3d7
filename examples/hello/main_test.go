package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/internal/extest"
)

// run runs the program in-process with a deadline that fails the test
// loudly, and returns its main chare, exit code and output.
var run = extest.Runner("hello", &out, (*Main).Start, 30*time.Second)

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
	code, output := extest.RunProcesses(t, &out, (*Main).Start, chare.Config{PEs: 4, Nodes: 2, Args: []string{"-n", "12"}, Timeout: 60 * time.Second})
	require.Equal(t, 0, code, output)
	require.Contains(t, output, "hello: ok elements=12 pes=4 sum=66")
}
