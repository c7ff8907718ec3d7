package core

import (
	"testing"

	"github.com/charmgo/charm/actor/launcher"
	"github.com/stretchr/testify/require"
)

// withEnv makes ParseArgs see env instead of the process's environment.
func withEnv(t *testing.T, env map[string]string) {
	old := lookupEnv
	lookupEnv = launcher.MapEnv(env)
	t.Cleanup(func() { lookupEnv = old })
}

func TestParseArgsUnderLauncher(t *testing.T) {
	ompi := map[string]string{"OMPI_COMM_WORLD_RANK": "1", "OMPI_COMM_WORLD_SIZE": "2", "OMPI_COMM_WORLD_LOCAL_SIZE": "2",
		"OMPI_MCA_ess_base_jobid": "99", launcher.SecretVar: "s"}
	cases := []struct {
		name string
		env  map[string]string
		args []string
		node *nodeWant
		pes  int // PEs expected when not 4
		err  string
	}{
		{name: "mpirun", env: ompi, args: []string{"-p", "4", "-jobport", "7100", "x"},
			node: &nodeWant{1, 2, "127.0.0.1:0", "127.0.0.1:7100", launcher.Token("mpirun (Open MPI)", "99", "s")}},
		{name: "mpirun, -token as the secret", env: map[string]string{"OMPI_COMM_WORLD_RANK": "0", "OMPI_COMM_WORLD_SIZE": "2", "OMPI_COMM_WORLD_LOCAL_SIZE": "2",
			"OMPI_MCA_ess_base_jobid": "99"}, args: []string{"-p", "4", "-jobport=7100", "-token", "t"},
			node: &nodeWant{0, 2, "127.0.0.1:7100", "127.0.0.1:7100", launcher.Token("mpirun (Open MPI)", "99", "t")}},
		{name: "without -p: one PE per rank", env: ompi, args: []string{"-jobport", "7100"}, pes: 2,
			node: &nodeWant{1, 2, "127.0.0.1:0", "127.0.0.1:7100", launcher.Token("mpirun (Open MPI)", "99", "s")}},
		{name: "no launcher", env: map[string]string{}, args: []string{"-p", "4"}},
		{name: "one rank", env: map[string]string{"OMPI_COMM_WORLD_RANK": "0", "OMPI_COMM_WORLD_SIZE": "1"}, args: []string{"-p", "4", "-jobport", "7100"}},
		{name: "a local launch's child", env: map[string]string{"CHARMGO_NODE": "1", "OMPI_COMM_WORLD_RANK": "0"}, args: []string{"-p", "4"}},
		{name: "half there", env: map[string]string{"SLURM_STEP_NODELIST": "n[1-2]", "SLURM_PROCID": "1"}, args: []string{"-p", "4"}, err: `SLURM_PROCID is set ("1") but SLURM_NTASKS is not`},
		{name: "-nodes too", env: ompi, args: []string{"-p", "4", "-nodes", "2"}, err: "flag -nodes 2: mpirun (Open MPI) already started this process as rank 1 of 2"},
		{name: "-jobport without launcher", env: map[string]string{}, args: []string{"-jobport", "7100"}, err: "no launcher started this process"},
		{name: "-nodehost without launcher", env: map[string]string{}, args: []string{"-nodehost", "h"}, err: "no launcher started this process"},
		{name: "bad -jobport", env: ompi, args: []string{"-jobport", "0"}, err: `flag -jobport: bad port "0"`},
		{name: "-jobport with -nodelist", env: map[string]string{}, args: []string{"-nodelist", "f", "-jobport", "1"}, err: "not with -nodelist"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			withEnv(t, c.env)
			cfg, err := ParseArgs(c.args)
			if c.err != "" {
				require.ErrorContains(t, err, c.err)
				return
			}
			require.NoError(t, err)
			if c.pes == 0 {
				c.pes = 4
			}
			require.Equal(t, c.pes, cfg.PEs)
			if c.node == nil {
				require.Nil(t, cfg.Node)
				return
			}
			require.NotNil(t, cfg.Node)
			require.Equal(t, *c.node, nodeWant{cfg.Node.Node, cfg.Node.Nodes, cfg.Node.Listen, cfg.Node.Join, cfg.Node.Token})
		})
	}
}

type nodeWant struct {
	Node, Nodes         int
	Listen, Join, Token string
}
