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
var run = extest.Runner("histogram", &out, (*Main).Start, 60*time.Second)

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
			_, code, output := run(t, c.pes, c.args...)
			require.Equal(t, 0, code, output)
			require.Regexp(t, fmt.Sprintf(`^histogram: ok pes=%d items=%d errors=0 topology=%s rate=\S+ items/s\n$`, c.pes, c.items, c.topology), output)
		})
	}
}

func TestHistogramBadArguments(t *testing.T) {
	for _, args := range [][]string{{"-m", "-1"}, {"-dims", "3"}, {"-dims", "2,x"}, {"-buffer", "-2"}, {"-size", "0"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			_, code, output := run(t, 4, args...)
			require.NotEqual(t, 0, code, output)
			require.True(t, strings.HasPrefix(output, "histogram: FAILED "), output)
		})
	}
}

// TestHistogramTwoProcesses runs the example as two processes (-nodes 2):
// the test binary launches a copy of itself as node 1.
func TestHistogramTwoProcesses(t *testing.T) {
	code, output := extest.RunProcesses(t, &out, (*Main).Start, chare.Config{PEs: 4, Nodes: 2, Args: []string{"-m", "20000"}, Timeout: 60 * time.Second})
	require.Equal(t, 0, code, output)
	require.Regexp(t, `histogram: ok pes=4 items=80000 errors=0 topology=2×2 rate=\S+ items/s\n$`, output)
}
