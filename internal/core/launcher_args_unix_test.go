//go:build unix

package core

import (
	"os"
	"testing"

	"github.com/charmgo/charm/actor/launcher"
	"github.com/stretchr/testify/require"
)

// mpirun -np 2 on one host with no secret: rank 0 makes the job's secret,
// rank 1 reads it, both compute the same token, and rank 0 removes the
// file once the job has assembled (Run calls dropSecret then).
func TestParseArgsUnderLauncherOwnSecret(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	env := func(rank string) map[string]string {
		return map[string]string{"OMPI_COMM_WORLD_RANK": rank, "OMPI_COMM_WORLD_SIZE": "2", "OMPI_COMM_WORLD_LOCAL_SIZE": "2",
			"OMPI_MCA_ess_base_jobid": "4242"}
	}
	withEnv(t, env("0"))
	cfg0, err := ParseArgs([]string{"-p", "2", "-jobport", "7100"})
	require.NoError(t, err)
	require.NotNil(t, cfg0.Node)
	require.NotNil(t, cfg0.dropSecret, "rank 0 removes the secret's file")
	withEnv(t, env("1"))
	cfg1, err := ParseArgs([]string{"-p", "2", "-jobport", "7100"})
	require.NoError(t, err)
	require.Nil(t, cfg1.dropSecret)
	require.Equal(t, cfg0.Node.Token, cfg1.Node.Token, "one job, one token")
	require.NotEqual(t, launcher.Token("mpirun (Open MPI)", "4242", ""), cfg0.Node.Token, "the token rests on a secret")
	require.Equal(t, "127.0.0.1:7100", cfg1.Node.Join, "on loopback")
	path := launcher.SecretFile(launcher.SecretDir(), &launcher.Job{Launcher: "mpirun (Open MPI)", JobID: "4242"})
	_, err = os.Stat(path)
	require.NoError(t, err)
	cfg0.dropSecret()
	_, err = os.Stat(path)
	require.ErrorIs(t, err, os.ErrNotExist)

	// Across hosts there is no secret of the job's own.
	withEnv(t, map[string]string{"OMPI_COMM_WORLD_RANK": "1", "OMPI_COMM_WORLD_SIZE": "2", "OMPI_COMM_WORLD_LOCAL_SIZE": "1",
		"OMPI_MCA_ess_base_jobid": "4242"})
	_, err = ParseArgs([]string{"-p", "2", "-nodehost", "h0"})
	require.ErrorContains(t, err, "CHARMGO_SECRET is not set, and its ranks run on several hosts")
}
