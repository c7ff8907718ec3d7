package main

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/internal/extest"
)

// run runs the program in-process with a deadline that fails the test
// loudly, and returns its main chare, exit code and output.
var run = extest.Runner("delegation", &out, (*Main).Start, 60*time.Second)

var (
	delegateLine = regexp.MustCompile(`^(tram|comlib): delegated=(\d+) direct=0 processes=([\d,]+)$`)
	okLine       = regexp.MustCompile(`^delegation: ok pes=(\d+) nodes=(\d+) elements=(\d+) sends=(\d+) tram=(\d+) comlib=(\d+)$`)
)

// checkOutput checks the last three lines: each delegate took every send
// of every process (an equal share per process: the elements are spread
// evenly), and the ok line.
func checkOutput(t *testing.T, output string, pes, nodes, n, sends int) {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(output), "\n")
	require.GreaterOrEqual(t, len(lines), 3, output)
	lines = lines[len(lines)-3:]
	for i, name := range []string{"tram", "comlib"} {
		mt := delegateLine.FindStringSubmatch(lines[i])
		require.NotNil(t, mt, "line %q of:\n%s", lines[i], output)
		require.Equal(t, name, mt[1])
		require.Equal(t, fmt.Sprint(n*sends), mt[2], "%s: delegated", name)
		per := strings.Split(mt[3], ",")
		require.Len(t, per, nodes, "%s: processes", name)
		for k, p := range per {
			require.Equal(t, fmt.Sprint(n*sends/nodes), p, "%s: process %d", name, k)
		}
	}
	mt := okLine.FindStringSubmatch(lines[2])
	require.NotNil(t, mt, output)
	require.Equal(t, []string{fmt.Sprint(pes), fmt.Sprint(nodes), fmt.Sprint(n), fmt.Sprint(2 * n * sends), fmt.Sprint(n * sends), fmt.Sprint(n * sends)}, mt[1:])
}

func TestDelegationOneProcess(t *testing.T) {
	_, code, output := run(t, 4, "-n", "16", "-sends", "50")
	require.Equal(t, 0, code, output)
	checkOutput(t, output, 4, 1, 16, 50)
}

// TestDelegationTwoProcesses runs the example as two processes (-nodes
// 2): the elements of node 1 send through both delegates too.
func TestDelegationTwoProcesses(t *testing.T) {
	code, output := extest.RunProcesses(t, &out, (*Main).Start, chare.Config{PEs: 4, Nodes: 2, Args: []string{"-n", "32", "-sends", "50"}, Timeout: 60 * time.Second})
	require.Equal(t, 0, code, output)
	checkOutput(t, output, 4, 2, 32, 50)
}

func TestDelegationBadFlag(t *testing.T) {
	_, code, output := run(t, 1, "-n", "0")
	require.NotEqual(t, 0, code)
	require.Contains(t, output, "delegation: FAILED bad arguments: -n 0")
}
