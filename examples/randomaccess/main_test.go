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
var run = extest.Runner("randomaccess", &out, (*Main).Start, 60*time.Second)

var okLine = regexp.MustCompile(`^randomaccess: ok pes=(\d+) logsize=(\d+) updates=(\d+) errors=0 topology=(\S+) gups=\S+ seconds=\S+ client=(group|array)$`)

func TestRandomAccess(t *testing.T) {
	cases := []struct {
		pes      int
		args     []string
		topology string
	}{
		{1, []string{"-logsize", "14"}, "1×1"},
		{4, []string{"-logsize", "16"}, "1×4"},
		{4, []string{"-logsize", "16", "-dims", "2,2", "-buffer", "64"}, "2×2"},
		{3, []string{"-logsize", "15", "-dims", "3"}, "3"},
		{4, []string{"-logsize", "16", "-client", "array"}, "1×4"},
		{4, []string{"-logsize", "15", "-client", "array", "-blocks", "10", "-dims", "2,2"}, "2×2"},
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
			var logSize int
			_, _ = fmt.Sscan(mt[2], &logSize)
			require.Equal(t, fmt.Sprint(4<<logSize), mt[3], "updates = 4 × table size")
			require.Equal(t, c.topology, mt[4])
			client := "group"
			if strings.Contains(strings.Join(c.args, " "), "-client array") {
				client = "array"
			}
			require.Equal(t, client, mt[5])
		})
	}
}

func TestRandomAccessBadArguments(t *testing.T) {
	for _, args := range [][]string{{"-logsize", "0"}, {"-dims", "3"}, {"-dims", "x"}, {"extra"}} {
		_, code, output := run(t, 4, args...)
		require.NotEqual(t, 0, code, "%v", args)
		require.Contains(t, output, "randomaccess: FAILED", "%v", args)
	}
}
