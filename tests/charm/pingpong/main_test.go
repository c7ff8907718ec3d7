package main

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/internal/extest"
)

var run = extest.Runner("pingpong", &out, (*Main).Start, 60*time.Second)

var figures = []string{"roundtrip_us_1D_array", "roundtrip_us_group"}

func TestPingpong(t *testing.T) {
	for _, pes := range []int{1, 2} {
		_, code, output := run(t, pes, "100", "300")
		kv := extest.RequireOK(t, "pingpong", code, output, figures...)
		require.Equal(t, "100", kv["payload"])
		require.Equal(t, "300", kv["iterations"])
	}
}

func TestPingpongTwoProcesses(t *testing.T) {
	code, output := extest.RunProcesses(t, &out, (*Main).Start, chare.Config{PEs: 2, Nodes: 2, Args: []string{"100", "50"}, Timeout: 60 * time.Second})
	extest.RequireOK(t, "pingpong", code, output, figures...)
}

func TestPingpongBadArguments(t *testing.T) {
	for _, c := range []struct {
		pes  int
		args []string
	}{{2, []string{"0"}}, {2, []string{"100", "x"}}, {2, []string{"1", "2", "3"}}, {3, nil}} {
		_, code, output := run(t, c.pes, c.args...)
		require.Equal(t, 2, code, "%v", c)
		require.True(t, strings.HasPrefix(output, "pingpong: FAILED bad arguments: "), "%v: %q", c, output)
	}
}
