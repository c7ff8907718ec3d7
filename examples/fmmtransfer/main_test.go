package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/internal/extest"
)

var run = extest.Runner("fmmtransfer", &out, (*Main).Start, 120*time.Second)

func TestFmmTransfer(t *testing.T) {
	cases := []struct {
		pes  int
		args []string
		re   string
	}{
		{1, []string{"-iters", "4"}, `size=small pes=1 cells=576 transfers=56448 remote=0 wrong=0`},
		{4, []string{"-iters", "12"}, `size=small pes=4 cells=576 transfers=56448 remote=23904 wrong=0`},
		{3, []string{"-iters", "8", "-fast", "-work", "2"}, `size=small pes=3 cells=576 transfers=56448 remote=\d+ wrong=0`},
		{4, []string{"-size", "medium", "-iters", "3"}, `size=medium pes=4 cells=1968 transfers=170792 remote=47208 wrong=0`},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("pes=%d/%s", c.pes, strings.Join(c.args, " ")), func(t *testing.T) {
			_, code, output := run(t, c.pes, c.args...)
			require.Equal(t, 0, code, output)
			require.Regexp(t, `^fmmtransfer: ok `+c.re+` p=\S+ tuned_ms=\S+ static_ms=\S+ ratio=\S+\n$`, output)
		})
	}
}

func TestFmmTransferBadArguments(t *testing.T) {
	for _, args := range [][]string{{"-size", "huge"}, {"-iters", "0"}, {"-work", "0"}, {"extra"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			_, code, output := run(t, 2, args...)
			require.NotEqual(t, 0, code, output)
			require.True(t, strings.HasPrefix(output, "fmmtransfer: FAILED "), output)
		})
	}
}
