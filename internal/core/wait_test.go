package core

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/actor"
)

// -wait sets Config.Wait; a policy the runtime does not know is refused,
// naming the flag and the value.
func TestParseArgsWait(t *testing.T) {
	for _, c := range []struct {
		in   []string
		want actor.WaitPolicy
		err  string
	}{
		{in: nil, want: actor.WaitActive}, // the default
		{in: []string{"-wait", "passive", "x"}, want: actor.WaitPassive},
		{in: []string{"-wait=active"}, want: actor.WaitActive},
		{in: []string{"-wait=passive"}, want: actor.WaitPassive},
		{in: []string{"-wait"}, err: "flag -wait needs a value"},
		{in: []string{"-wait", "spin"}, err: `flag -wait: unknown wait policy "spin": want active or passive`},
		{in: []string{"-wiat", "active"}, err: "-wait"}, // a near miss names the flag
	} {
		cfg, err := ParseArgs(c.in)
		if c.err != "" {
			require.ErrorContains(t, err, c.err, "%q", c.in)
			continue
		}
		require.NoError(t, err, "%q", c.in)
		require.Equal(t, c.want, cfg.Wait, "%q", c.in)
	}
}

// Config.Wait is the policy of the job's runtime.
func TestWaitReachesTheRuntime(t *testing.T) {
	for _, w := range []actor.WaitPolicy{actor.WaitPassive, actor.WaitActive} {
		var got actor.WaitPolicy
		_, err := Run(Config{PEs: 2, Timeout: 30 * time.Second, Wait: w}, func(m *countMain, _ []string) {
			got = PEOf(m).Actor().Runtime().WaitPolicy()
			m.Exit(0)
		})
		require.NoError(t, err)
		require.Equal(t, w, got)
	}
}
