package launch

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/tests/internal/netns"
)

// TestAcrossHostsNetns runs hello on two "hosts" — two network
// namespaces joined by a veth pair, named by their addresses — with the
// environment a launcher gives each process: a Slurm step of 4 ranks (2
// per host) and an Open MPI job of 2 ranks with -nodehost. One real Slurm
// or mpirun cannot make two hosts here, so the environment is written by
// hand; what this checks is the path across hosts: rank 0 listens on its
// host's address, and the other ranks listen on the address their host
// reaches it from. It needs root and iproute2; elsewhere it is skipped
// with the reason.
func TestAcrossHostsNetns(t *testing.T) {
	ns := netns.New(t, "cgl", "10.78.0")
	a, b := ns.A, ns.B
	bin := programs(t)
	// hosts runs one process per rank, rank r in namespace nsOf(r), with
	// env(r) added to its environment, and returns their output.
	hosts := func(t *testing.T, n int, nsOf func(int) string, env func(int) []string, args ...string) string {
		ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
		defer cancel()
		type rank struct {
			r   int
			cmd *exec.Cmd
			out *bytes.Buffer
		}
		var ranks []rank
		// The highest ranks first: they must wait for rank 0.
		for r := n - 1; r >= 0; r-- {
			cmd := exec.CommandContext(ctx, "ip", append([]string{"netns", "exec", nsOf(r), filepath.Join(bin, "hello")}, args...)...)
			cmd.Env = environ(env(r)...)
			cmd.WaitDelay = 5 * time.Second
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			require.NoError(t, cmd.Start())
			ranks = append(ranks, rank{r, cmd, &out})
		}
		all := ""
		for _, rk := range ranks {
			err := rk.cmd.Wait()
			all += rk.out.String()
			require.NoError(t, err, "rank %d:\n%s", rk.r, rk.out)
		}
		return all
	}
	sec := secret(t)

	t.Run("srun", func(t *testing.T) {
		all := hosts(t, 4, func(r int) string {
			if r < 2 {
				return a
			}
			return b
		}, func(r int) []string {
			host := "10.78.0.1"
			if r >= 2 {
				host = "10.78.0.2"
			}
			return []string{"SLURM_PROCID=" + strconv.Itoa(r), "SLURM_STEP_NUM_TASKS=4", "SLURM_NTASKS=4",
				"SLURM_STEP_NODELIST=10.78.0.[1-2]", "SLURM_STEP_NUM_NODES=2", "SLURM_STEP_TASKS_PER_NODE=2(x2)",
				"SLURM_JOB_ID=" + strconv.Itoa(os.Getpid()), "SLURM_STEP_ID=0", "SLURMD_NODENAME=" + host, "CHARMGO_SECRET=" + sec}
		}, "-p", "4")
		require.Equal(t, 1, strings.Count(all, "hello: ok"), all)
		require.Contains(t, all, "hello: ok elements=16 pes=4 sum=120")
		for pe := 0; pe < 4; pe++ {
			require.Contains(t, all, fmt.Sprintf("on PE %d\n", pe), "every rank ran elements:\n%s", all)
		}
	})

	t.Run("mpirun with -nodehost", func(t *testing.T) {
		all := hosts(t, 2, func(r int) string { return []string{a, b}[r] }, func(r int) []string {
			return []string{"OMPI_COMM_WORLD_RANK=" + strconv.Itoa(r), "OMPI_COMM_WORLD_SIZE=2", "OMPI_COMM_WORLD_LOCAL_SIZE=1",
				"OMPI_MCA_ess_base_jobid=" + strconv.Itoa(os.Getpid()), "CHARMGO_SECRET=" + sec}
		}, "-p", "2", "-nodehost", "10.78.0.1")
		require.Equal(t, 1, strings.Count(all, "hello: ok"), all)
		require.Contains(t, all, "hello: ok elements=16 pes=2 sum=120")
		require.Contains(t, all, "on PE 1\n", all)
	})
}
