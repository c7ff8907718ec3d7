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
var run = extest.Runner("multicast", &out, (*Main).Start, 60*time.Second)

var okLine = regexp.MustCompile(`^multicast: ok pes=(\d+) elements=(\d+) members=(\d+) strategies=(\d+) msgs=(\d+) small=(\d+) large=(\d+) chunk=(\d+) delivered=(\d+) lost=0 duplicated=0 bad=0((?: \S+_ms=\S+)+)$`)

func lastOK(t *testing.T, output string) []string {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(output), "\n")
	mt := okLine.FindStringSubmatch(lines[len(lines)-1])
	require.NotNil(t, mt, "last line of:\n%s", output)
	return mt
}

func TestPayloadTellsMessagesApart(t *testing.T) {
	seen := map[string]string{}
	for strat := 0; strat < 7; strat++ {
		for root := 0; root < Roots; root++ {
			for seq := 0; seq < 8; seq++ {
				b := Payload(strat, root, seq, 24)
				require.Len(t, b, 24)
				what := fmt.Sprint(strat, root, seq)
				require.NotContains(t, seen, string(b), "%s and %s", what, seen[string(b)])
				seen[string(b)] = what
			}
		}
	}
	require.Equal(t, Payload(3, 1, 2, 1000), Payload(3, 1, 2, 1000), "repeatable")
	require.Len(t, Payload(0, 0, 0, 13), 13)
}

// TestMulticast runs every strategy on several PE counts: every member
// gets each message once, with the right content, and only members do.
func TestMulticast(t *testing.T) {
	for _, pes := range []int{1, 3, 4} {
		t.Run(fmt.Sprintf("pes=%d", pes), func(t *testing.T) {
			m, code, output := run(t, pes, "-n", "20", "-msgs", "3", "-large", "20000", "-chunk", "1024")
			require.Equal(t, 0, code, output)
			mt := lastOK(t, output)
			// Members: indices 0..19 not 1 mod 3: 20 − 7 = 13.
			require.Equal(t, []string{fmt.Sprint(pes), "20", "13", "7", "3", "16", "20000", "1024", fmt.Sprint(13 * Roots * 2 * 3 * 7)}, mt[1:10])
			for _, s := range Strategies(1024) {
				require.Contains(t, mt[10], " "+s.Name+"_ms=")
			}
			require.Len(t, m.stats, 7)
			if pes > 1 {
				for k, s := range m.p.Strategies {
					require.Positive(t, m.stats[k].Packets, "%s forwards copies between PEs", s.Name)
				}
				tree, chunked := m.stats[3], m.stats[6]
				require.Equal(t, "tree-chunk", m.p.Strategies[6].Name)
				require.Greater(t, chunked.Packets, 10*tree.Packets, "tree-chunk cuts the large messages into ~20 fragments")
			}
		})
	}
}

func TestMulticastSomeStrategies(t *testing.T) {
	_, code, output := run(t, 2, "-strategies", "ring,tree-chunk", "-msgs", "1")
	require.Equal(t, 0, code, output)
	mt := lastOK(t, output)
	require.Equal(t, "2", mt[4])
	require.Equal(t, " ring_ms=", mt[10][:9])
	require.Contains(t, mt[10], " tree-chunk_ms=")
}

func TestMulticastBadArguments(t *testing.T) {
	for _, args := range [][]string{{"-n", "1"}, {"-msgs", "0"}, {"-small", "-1"}, {"-chunk", "0"}, {"-strategies", "ring,bogus"}, {"extra"}} {
		_, code, output := run(t, 2, args...)
		require.NotEqual(t, 0, code, "%v", args)
		require.True(t, strings.HasPrefix(output, "multicast: FAILED bad arguments: "), "%v: %q", args, output)
	}
	_, _, output := run(t, 2, "-strategies", "bogus")
	require.Contains(t, output, "valid: direct, ring, multiring, tree, dim, node, tree-chunk")
}

// TestMulticastTwoProcesses runs every strategy as two processes
// (-nodes 2): the node strategy sends one copy per process, and the
// second root is in the other process.
func TestMulticastTwoProcesses(t *testing.T) {
	code, output := extest.RunProcesses(t, &out, (*Main).Start, chare.Config{PEs: 4, Nodes: 2,
		Args: []string{"-n", "20", "-msgs", "2", "-large", "30000", "-chunk", "2048"}, Timeout: 60 * time.Second})
	require.Equal(t, 0, code, output)
	mt := lastOK(t, output)
	require.Equal(t, []string{"4", "13", "7", fmt.Sprint(13 * Roots * 2 * 2 * 7)}, []string{mt[1], mt[3], mt[4], mt[9]})
}
