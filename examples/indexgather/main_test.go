package main

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/internal/extest"
)

// run runs the program in-process with a deadline that fails the test
// loudly, and returns its main chare, exit code and output.
var run = extest.Runner("indexgather", &out, (*Main).Start, 60*time.Second)

var okLine = regexp.MustCompile(`^indexgather: ok pes=(\d+) verified=(\d+) errors=0 topology=(\S+) rate=\S+ reads/s$`)

func TestIndexGather(t *testing.T) {
	cases := []struct {
		pes      int
		args     []string
		m        int
		topology string
	}{
		{1, []string{"-m", "5000"}, 5000, "1×1"},
		{4, []string{"-m", "20000"}, 20000, "1×4"},
		{4, []string{"-m", "20000", "-dims", "2,2", "-buffer", "64"}, 20000, "2×2"},
		// Buffers that never fill: only periodic flushing moves the items.
		{4, []string{"-m", "3000", "-dims", "2,2", "-buffer", "1000000", "-size", "1000"}, 3000, "2×2"},
		{6, []string{"-m", "5000", "-dims", "3,2", "-size", "777"}, 5000, "3×2"},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("pes=%d/%s", c.pes, strings.Join(c.args, " ")), func(t *testing.T) {
			_, code, output := run(t, c.pes, c.args...)
			require.Equal(t, 0, code, output)
			lines := strings.Split(strings.TrimSpace(output), "\n")
			last := lines[len(lines)-1]
			mt := okLine.FindStringSubmatch(last)
			require.NotNil(t, mt, "last line %q", last)
			require.Equal(t, fmt.Sprint(c.pes), mt[1])
			require.Equal(t, fmt.Sprint(c.pes*c.m), mt[2], "verified = P·M")
			require.Equal(t, c.topology, mt[3])
		})
	}
}

func TestIndexGatherBadArguments(t *testing.T) {
	for _, args := range [][]string{{"-m", "-1"}, {"-size", "0"}, {"-flush", "0s"}, {"-dims", "3"}, {"extra"}} {
		_, code, output := run(t, 4, args...)
		require.NotEqual(t, 0, code, "%v", args)
		require.Contains(t, output, "indexgather: FAILED", "%v", args)
	}
}
