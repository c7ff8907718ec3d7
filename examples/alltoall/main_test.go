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
var run = extest.Runner("alltoall", &out, (*Main).Start, 60*time.Second)

var okLine = regexp.MustCompile(`^alltoall: ok pes=(\d+) items=(\d+) tram_rate=(\S+) direct_rate=(\S+) ratio=(\S+) errors=0 topology=(\S+)$`)

func TestPayloadTellsItemsApart(t *testing.T) {
	seen := map[uint64]string{}
	for src := 0; src < 8; src++ {
		for dst := 0; dst < 8; dst++ {
			for seq := 0; seq < 100; seq++ {
				p, what := Payload(src, dst, seq), fmt.Sprint(src, dst, seq)
				if other, ok := seen[p]; ok {
					t.Fatalf("items %s and %s have the same payload", what, other)
				}
				seen[p] = what
			}
		}
	}
}

func TestAllToAll(t *testing.T) {
	cases := []struct {
		pes, n   int
		args     []string
		topology string
	}{
		{1, 100, nil, "1×1"},
		{4, 5000, nil, "1×4"},
		{4, 5000, []string{"-dims", "2,2", "-buffer", "64"}, "2×2"},
		{4, 2000, []string{"-dims", "4", "-flush", "0"}, "4"},
		{6, 1000, []string{"-dims", "3,2", "-buffer", "100000"}, "3×2"},
	}
	for _, c := range cases {
		args := append([]string{"-n", fmt.Sprint(c.n)}, c.args...)
		t.Run(fmt.Sprintf("pes=%d/%s", c.pes, strings.Join(args, " ")), func(t *testing.T) {
			_, code, output := run(t, c.pes, args...)
			require.Equal(t, 0, code, output)
			lines := strings.Split(strings.TrimSpace(output), "\n")
			last := lines[len(lines)-1]
			mt := okLine.FindStringSubmatch(last)
			require.NotNil(t, mt, "last line %q", last)
			require.Equal(t, fmt.Sprint(c.pes), mt[1])
			require.Equal(t, fmt.Sprint(c.n*c.pes*(c.pes-1)), mt[2], "items = n·P·(P−1)")
			require.Equal(t, c.topology, mt[6])
			if c.pes > 1 {
				for _, r := range mt[3:6] {
					var v float64
					_, err := fmt.Sscan(r, &v)
					require.NoError(t, err, r)
					require.Greater(t, v, 0.0, "rates and ratio in %q", last)
				}
			}
		})
	}
}

func TestAllToAllBadArguments(t *testing.T) {
	for _, args := range [][]string{{"-n", "-1"}, {"-dims", "3"}, {"-dims", "2,2", "-flush", "0"}, {"-buffer", "-2"}, {"extra"}} {
		_, code, output := run(t, 4, args...)
		require.NotEqual(t, 0, code, "%v", args)
		require.Contains(t, output, "alltoall: FAILED", "%v", args)
	}
}
