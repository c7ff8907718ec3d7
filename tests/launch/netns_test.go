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
)

// TestSrunAcrossHostsNetns runs hello as a Slurm step of 4 ranks on two
// "hosts" — two network namespaces joined by a veth pair, named by their
// addresses — with the environment srun gives each task (2 per host).
// One real Slurm cannot make two hosts here, so the environment is
// written by hand; what this checks is the path across hosts: every rank
// listens on its own host (SLURMD_NODENAME) and joins rank 0 on the first
// host of SLURM_STEP_NODELIST. It needs root and iproute2; elsewhere it
// is skipped with the reason.
func TestSrunAcrossHostsNetns(t *testing.T) {
	if testing.Short() {
		t.Skip("creates network namespaces")
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root to create network namespaces (ip netns)")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("needs iproute2's ip command")
	}
	bin := programs(t)
	id := os.Getpid() % 100000
	a, b := fmt.Sprintf("cgl%da", id), fmt.Sprintf("cgl%db", id)
	ip := func(args ...string) error {
		out, err := exec.Command("ip", args...).CombinedOutput()
		if err != nil {
			return fmt.Errorf("ip %v: %v: %s", args, err, out)
		}
		return nil
	}
	if err := ip("netns", "add", a); err != nil {
		t.Skipf("network namespaces are not permitted here: %v", err)
	}
	t.Cleanup(func() { _ = ip("netns", "del", a) })
	require.NoError(t, ip("netns", "add", b))
	t.Cleanup(func() { _ = ip("netns", "del", b) })
	va, vb := fmt.Sprintf("cl%da", id), fmt.Sprintf("cl%db", id)
	for _, args := range [][]string{
		{"link", "add", va, "type", "veth", "peer", "name", vb},
		{"link", "set", va, "netns", a},
		{"link", "set", vb, "netns", b},
		{"-n", a, "addr", "add", "10.78.0.1/24", "dev", va},
		{"-n", b, "addr", "add", "10.78.0.2/24", "dev", vb},
		{"-n", a, "link", "set", va, "up"},
		{"-n", b, "link", "set", vb, "up"},
		{"-n", a, "link", "set", "lo", "up"},
		{"-n", b, "link", "set", "lo", "up"},
	} {
		require.NoError(t, ip(args...))
	}
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	sec := secret(t)
	type rank struct {
		cmd *exec.Cmd
		out *bytes.Buffer
	}
	var ranks []rank
	// Ranks on the second host first: they must wait for rank 0.
	for _, r := range []int{3, 2, 1, 0} {
		ns, host := a, "10.78.0.1"
		if r >= 2 {
			ns, host = b, "10.78.0.2"
		}
		cmd := exec.CommandContext(ctx, "ip", "netns", "exec", ns, filepath.Join(bin, "hello"), "-p", "4")
		cmd.Env = environ("SLURM_PROCID="+strconv.Itoa(r), "SLURM_STEP_NUM_TASKS=4", "SLURM_NTASKS=4",
			"SLURM_STEP_NODELIST=10.78.0.[1-2]", "SLURM_STEP_NUM_NODES=2", "SLURM_STEP_TASKS_PER_NODE=2(x2)",
			"SLURM_JOB_ID="+strconv.Itoa(os.Getpid()), "SLURM_STEP_ID=0", "SLURMD_NODENAME="+host, "CHARMGO_SECRET="+sec)
		cmd.WaitDelay = 5 * time.Second
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		require.NoError(t, cmd.Start())
		ranks = append(ranks, rank{cmd, &out})
	}
	all := ""
	for i, rk := range ranks {
		err := rk.cmd.Wait()
		all += rk.out.String()
		require.NoError(t, err, "rank %d:\n%s", 3-i, rk.out)
	}
	require.Equal(t, 1, strings.Count(all, "hello: ok"), all)
	require.Contains(t, all, "hello: ok elements=16 pes=4 sum=120")
	for pe := 0; pe < 4; pe++ {
		require.Contains(t, all, fmt.Sprintf("on PE %d\n", pe), "every rank ran elements:\n%s", all)
	}
}
