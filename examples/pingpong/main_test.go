package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/internal/extest"
)

// run runs the program in-process with a deadline that fails the test
// loudly, and returns its main chare, exit code and output.
var run = extest.Runner("pingpong", &out, (*Main).Start, 60*time.Second)

func TestPingpong(t *testing.T) {
	for _, pes := range []int{1, 3} {
		t.Run(fmt.Sprintf("pes=%d", pes), func(t *testing.T) {
			const rounds, msgs = 500, 5000
			m, code, output := run(t, pes, "-n", fmt.Sprint(rounds), "-warmup", "7", "-m", fmt.Sprint(msgs))
			require.Equal(t, 0, code, output)
			require.Equal(t, rounds, m.lat.Rounds)
			require.Positive(t, m.lat.Elapsed)
			require.Equal(t, msgs, m.thr.Msgs)
			require.Zero(t, m.thr.OutOfOrder)
			require.Positive(t, m.thr.Elapsed)
			require.Equal(t, 0, m.thr.From)
			require.Equal(t, min(1, pes-1), m.thr.To)

			lines := strings.Split(strings.TrimSpace(output), "\n")
			require.Len(t, lines, 1, output)
			var gotRounds, gotMsgs int
			var lat, rate float64
			var between string
			_, err := fmt.Sscanf(lines[0], "pingpong: ok roundtrips=%d latency_us=%g msgs=%d throughput_msgs_per_s=%g between=%s",
				&gotRounds, &lat, &gotMsgs, &rate, &between)
			require.NoError(t, err, lines[0])
			require.Equal(t, rounds, gotRounds)
			require.Equal(t, msgs, gotMsgs)
			require.Positive(t, lat)
			require.Positive(t, rate)
			if pes == 1 {
				require.Equal(t, "PE0,PE0", between)
				require.Contains(t, lines[0], "note=same-PE")
			} else {
				require.Equal(t, "PE0,PE1", between)
			}
		})
	}
}

func TestPingpongNoWarmup(t *testing.T) {
	m, code, output := run(t, 2, "-n", "1", "-warmup", "0", "-m", "1")
	require.Equal(t, 0, code, output)
	require.Equal(t, 1, m.lat.Rounds)
	require.Equal(t, 1, m.thr.Msgs)
}

func TestPingpongBadFlags(t *testing.T) {
	for _, args := range [][]string{{"-n", "0"}, {"-m", "0"}, {"-warmup", "-1"}, {"-n", "5", "-p", "2"}} {
		_, code, output := run(t, 2, args...)
		require.NotEqual(t, 0, code, "%v", args)
		require.True(t, strings.HasPrefix(output, "pingpong: FAILED "), "%v: %q", args, output)
	}
}
