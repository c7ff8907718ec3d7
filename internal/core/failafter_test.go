package core

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/actor"
)

// Config.FailAfter (and -failafter) is the heartbeat bound of the node
// config that the job's runtime gets, however the process is a node: node
// 0 of a local launch, a node that one launched, a node started by hand.

func TestParseArgsFailAfter(t *testing.T) {
	for _, c := range []struct {
		in   []string
		want time.Duration
		err  string
	}{
		{in: nil, want: 0},
		{in: []string{"-failafter", "10s", "x"}, want: 10 * time.Second},
		{in: []string{"-failafter=1m30s"}, want: 90 * time.Second},
		{in: []string{"-failafter"}, err: "flag -failafter needs a value"},
		{in: []string{"-failafter", "0"}, err: `flag -failafter: bad duration "0": want a positive duration`},
		{in: []string{"-failafter=-2s"}, err: `flag -failafter: bad duration "-2s"`},
		{in: []string{"-failafter", "10"}, err: `flag -failafter: bad duration "10"`},
		{in: []string{"-failafer", "10s"}, err: "-failafter"}, // a near miss names the flag
	} {
		cfg, err := ParseArgs(c.in)
		if c.err != "" {
			require.ErrorContains(t, err, c.err, "%q", c.in)
			continue
		}
		require.NoError(t, err, "%q", c.in)
		require.Equal(t, c.want, cfg.FailAfter, "%q", c.in)
	}
}

func TestFailAfterReachesTheNodeConfig(t *testing.T) {
	byHand := func(failAfter time.Duration) *actor.NodeConfig {
		return &actor.NodeConfig{Node: 1, Nodes: 2, Join: "127.0.0.1:9", Token: "t", FailAfter: failAfter}
	}
	for _, c := range []struct {
		name  string
		cfg   Config
		child bool // a node that a local launch started (its environment says so)
		want  time.Duration
		err   string
	}{
		{name: "node 0 of a local launch", cfg: Config{PEs: 2, Nodes: 2, Launch: []string{"prog"}, FailAfter: 10 * time.Second}, want: 10 * time.Second},
		{name: "node 0, the default", cfg: Config{PEs: 2, Nodes: 2, Launch: []string{"prog"}}, want: 0},
		{name: "a launched node", cfg: Config{FailAfter: 9 * time.Second}, child: true, want: 9 * time.Second},
		{name: "a node by hand", cfg: Config{PEs: 2, Node: byHand(0), FailAfter: 7 * time.Second}, want: 7 * time.Second},
		{name: "a node by hand, set in Node", cfg: Config{PEs: 2, Node: byHand(7 * time.Second)}, want: 7 * time.Second},
		{name: "a node by hand, set the same twice", cfg: Config{PEs: 2, Node: byHand(7 * time.Second), FailAfter: 7 * time.Second}, want: 7 * time.Second},
		{name: "a node by hand, set twice", cfg: Config{PEs: 2, Node: byHand(5 * time.Second), FailAfter: 7 * time.Second}, err: "chare: FailAfter 7s and Node.FailAfter 5s disagree"},
		{name: "negative", cfg: Config{PEs: 2, Nodes: 2, Launch: []string{"prog"}, FailAfter: -time.Second}, err: "chare: FailAfter -1s is negative"},
		{name: "negative, one process", cfg: Config{PEs: 2, FailAfter: -time.Second}, err: "chare: FailAfter -1s is negative"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.child {
				for k, v := range map[string]string{"CHARMGO_NODE": "1", "CHARMGO_NODES": "2", "CHARMGO_PES": "2", "CHARMGO_JOIN": "127.0.0.1:9", "CHARMGO_TOKEN": "t"} {
					t.Setenv(k, v)
				}
			}
			nc, _, err := nodeConfig(c.cfg)
			if c.err != "" {
				require.ErrorContains(t, err, c.err)
				return
			}
			require.NoError(t, err)
			require.NotNil(t, nc)
			require.Equal(t, c.want, nc.FailAfter)
			if c.cfg.Node != nil {
				require.Equal(t, byHand(0).Join, nc.Join, "the rest of the node config is kept")
			}
		})
	}
	// In one process there is no node config, and nothing to be silent.
	nc, _, err := nodeConfig(Config{PEs: 2, FailAfter: time.Second})
	require.NoError(t, err)
	require.Nil(t, nc)
}
