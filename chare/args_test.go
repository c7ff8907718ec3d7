package chare

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseArgs(t *testing.T) {
	cases := []struct {
		in   []string
		pes  int
		args []string
		err  string
	}{
		{in: nil, pes: 0, args: nil},
		{in: []string{"-p", "4"}, pes: 4},
		{in: []string{"-p=3", "-n", "5"}, pes: 3, args: []string{"-n", "5"}},
		{in: []string{"-n", "5", "-p", "2"}, pes: 2, args: []string{"-n", "5"}},
		{in: []string{"--p=2", "x"}, pes: 2, args: []string{"x"}},
		{in: []string{"-n", "5", "--", "-p", "2"}, pes: 0, args: []string{"-n", "5", "--", "-p", "2"}},
		{in: []string{"-p"}, err: "flag -p needs a value"},
		{in: []string{"-p", "0"}, err: `bad number of PEs "0"`},
		{in: []string{"-p=x"}, err: `bad number of PEs "x"`},
	}
	for _, c := range cases {
		cfg, err := ParseArgs(c.in)
		if c.err != "" {
			require.ErrorContains(t, err, c.err, "%q", c.in)
			continue
		}
		require.NoError(t, err, "%q", c.in)
		require.Equal(t, c.pes, cfg.PEs, "%q", c.in)
		require.Equal(t, c.args, cfg.Args, "%q", c.in)
	}
}
