// Package netns gives tests two network namespaces joined by a veth pair:
// two "hosts" on one machine, for jobs that must cross a real network
// interface. Tests that cannot have them (not root, no iproute2, not
// permitted) are skipped with the reason.
package netns

import (
	"fmt"
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/require"
)

// Pair creates namespaces A and B, with addresses subnet.1 and subnet.2
// (subnet like "10.77.0"), loopback up, and removes them when t ends.
// tag (a few letters) keeps concurrent tests' names apart.
type Pair struct {
	A, B     string // namespace names, for `ip netns exec`
	IPA, IPB string
}

// New sets up a Pair, or skips t saying why it cannot.
func New(t *testing.T, tag, subnet string) Pair {
	t.Helper()
	if testing.Short() {
		t.Skip("creates network namespaces")
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root to create network namespaces (ip netns)")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("needs iproute2's ip command")
	}
	id := os.Getpid() % 100000
	p := Pair{A: fmt.Sprintf("%s%da", tag, id), B: fmt.Sprintf("%s%db", tag, id), IPA: subnet + ".1", IPB: subnet + ".2"}
	if err := ip("netns", "add", p.A); err != nil {
		t.Skipf("network namespaces are not permitted here: %v", err)
	}
	t.Cleanup(func() { _ = ip("netns", "del", p.A) })
	require.NoError(t, ip("netns", "add", p.B))
	t.Cleanup(func() { _ = ip("netns", "del", p.B) })
	va, vb := fmt.Sprintf("v%s%da", tag, id), fmt.Sprintf("v%s%db", tag, id)
	for _, args := range [][]string{
		{"link", "add", va, "type", "veth", "peer", "name", vb},
		{"link", "set", va, "netns", p.A},
		{"link", "set", vb, "netns", p.B},
		{"-n", p.A, "addr", "add", p.IPA + "/24", "dev", va},
		{"-n", p.B, "addr", "add", p.IPB + "/24", "dev", vb},
		{"-n", p.A, "link", "set", va, "up"},
		{"-n", p.B, "link", "set", vb, "up"},
		{"-n", p.A, "link", "set", "lo", "up"},
		{"-n", p.B, "link", "set", "lo", "up"},
	} {
		require.NoError(t, ip(args...))
	}
	return p
}

func ip(args ...string) error {
	out, err := exec.Command("ip", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip %v: %v: %s", args, err, out)
	}
	return nil
}
