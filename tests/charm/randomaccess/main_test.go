package main

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/internal/extest"
)

var run = extest.Runner("randomaccess", &out, (*Main).Start, 60*time.Second)

func TestOwner(t *testing.T) {
	// Charm++'s rule: the bits above the N of a PE's words, modulo P.
	require.Equal(t, 0, Owner(0x7fff, 15, 2))
	require.Equal(t, 1, Owner(0x8000, 15, 2))
	require.Equal(t, 0, Owner(0x10000, 15, 2))
	require.Equal(t, 3, Owner(3<<10|5, 10, 4))
}

func TestRandomAccess(t *testing.T) {
	for _, pes := range []int{1, 2, 4} {
		for _, mode := range []string{"aggregate", "staged", "direct"} {
			_, code, output := run(t, pes, "-mode", mode, "10")
			kv := extest.RequireOK(t, "randomaccess", code, output, "gups", "update_seconds")
			require.Equal(t, mode, kv["mode"])
			require.Equal(t, "0", kv["errors"])
			require.Equal(t, map[int]string{1: "4096", 2: "8192", 4: "16384"}[pes], kv["updates"])
		}
	}
}

func TestRandomAccessTwoProcesses(t *testing.T) {
	for _, mode := range []string{"aggregate", "staged", "direct"} {
		t.Run(mode, func(t *testing.T) {
			code, output := extest.RunProcesses(t, &out, (*Main).Start, chare.Config{PEs: 2, Nodes: 2, Args: []string{"-mode", mode, "10"}, Timeout: 60 * time.Second})
			kv := extest.RequireOK(t, "randomaccess", code, output, "gups")
			require.Equal(t, "0", kv["errors"])
		})
	}
}

func TestRandomAccessBadArguments(t *testing.T) {
	for _, c := range []struct {
		pes  int
		args []string
	}{{2, nil}, {2, []string{"0"}}, {2, []string{"31"}}, {2, []string{"-mode", "fast", "10"}}, {3, []string{"10"}}, {2, []string{"10", "11"}}} {
		_, code, output := run(t, c.pes, c.args...)
		require.Equal(t, 2, code, "%v", c)
		require.True(t, strings.HasPrefix(output, "randomaccess: FAILED bad arguments: "), "%v: %q", c, output)
	}
}
