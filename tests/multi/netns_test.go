package multi

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/tests/internal/netns"

	"github.com/charmgo/charm/actor"
	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/internal/jobtest"
)

// TestAcrossHostsNetns runs one job on two "hosts": two network namespaces
// joined by a veth pair, each node started by hand with a node list, as a
// user would on two machines. It needs root and iproute2; elsewhere it is
// skipped with the reason.
func TestAcrossHostsNetns(t *testing.T) {
	if node := os.Getenv("CHARM_NETNS_NODE"); node != "" {
		netnsNode(t, node)
		return
	}
	ns := netns.New(t, "chm", "10.77.0")
	a, b := ns.A, ns.B
	list := filepath.Join(t.TempDir(), "nodes")
	require.NoError(t, os.WriteFile(list, []byte("# two hosts\n10.77.0.1:7701\n10.77.0.2:7702\n"), 0o644))
	token := actor.NewToken()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	start := func(ns string, node int) (*exec.Cmd, *bytes.Buffer) {
		cmd := exec.CommandContext(ctx, "ip", append([]string{"netns", "exec", ns}, append(jobtest.Launch(t), "-test.v")...)...)
		cmd.Env = append(os.Environ(), "CHARM_NETNS_NODE="+strconv.Itoa(node), "CHARM_NETNS_LIST="+list, "CHARMGO_TOKEN="+token)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		require.NoError(t, cmd.Start())
		return cmd, &out
	}
	// Node 1 first: it must wait for node 0, as on real hosts started in
	// any order.
	c1, out1 := start(b, 1)
	c0, out0 := start(a, 0)
	err0, err1 := c0.Wait(), c1.Wait()
	require.NoError(t, err0, "node 0:\n%s", out0)
	require.NoError(t, err1, "node 1:\n%s", out1)
	require.Contains(t, out0.String(), "netns: ok nodes=2 sum=4950", "node 0:\n%s", out0)
}

// netnsNode runs one node of the job inside its namespace.
func netnsNode(t *testing.T, node string) {
	cfg, err := chare.ParseArgs([]string{"-p", "4", "-nodelist", os.Getenv("CHARM_NETNS_LIST"), "-node", node})
	require.NoError(t, err)
	cfg.Timeout = 60 * time.Second
	code, err := chare.Run(cfg, func(m *sumMain, _ []string) {
		sum, err := sumIndices(m, 100)
		if err != nil {
			m.Abort(err)
			return
		}
		fmt.Printf("netns: ok nodes=%d sum=%d\n", chare.PEOf(m).Job().Runtime().NumNodes(), sum)
		m.Exit(0)
	})
	require.NoError(t, err)
	require.Equal(t, 0, code)
}
