package main

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/internal/extest"
)

var run = extest.Runner("alltoall", &out, (*Main).Start, 60*time.Second)

func TestAlltoall(t *testing.T) {
	for _, c := range []struct {
		pes  int
		args []string
	}{{2, []string{"1024", "1", "20"}}, {2, []string{"16384", "1", "5"}}, {3, []string{"8", "4", "30"}}, {1, nil}} {
		m, code, output := run(t, c.pes, c.args...)
		kv := extest.RequireOK(t, "alltoall", code, output, "ms_per_iteration")
		require.Equal(t, m.iterations, m.iter, "every iteration ended")
		if len(c.args) > 0 {
			require.Equal(t, c.args[0], kv["msgbytes"])
			require.Equal(t, c.args[2], kv["iterations"])
		}
	}
}

func TestAlltoallTwoProcesses(t *testing.T) {
	code, output := extest.RunProcesses(t, &out, (*Main).Start, chare.Config{PEs: 2, Nodes: 2, Args: []string{"16384", "1", "10"}, Timeout: 60 * time.Second})
	extest.RequireOK(t, "alltoall", code, output, "ms_per_iteration")
}

func TestAlltoallBadArguments(t *testing.T) {
	for _, args := range [][]string{{"0"}, {"8", "x"}, {"8", "1", "1", "1"}} {
		_, code, output := run(t, 2, args...)
		require.Equal(t, 2, code, "%v", args)
		require.True(t, strings.HasPrefix(output, "alltoall: FAILED bad arguments: "), "%v: %q", args, output)
	}
}
