package tram_test

import (
	"context"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestTramDoesNotDependOnComlib: package tram builds without comlib (its
// strategies, routers and their init side effects), and still registers
// -tunedebug through package tune/tunedebug. go list -deps lists what a
// program importing tram links, tests excluded.
func TestTramDoesNotDependOnComlib(t *testing.T) {
	gobin, err := exec.LookPath("go") // go test puts its own toolchain first on PATH
	require.NoError(t, err, "the go command, to list tram's dependencies")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, gobin, "list", "-deps", ".").CombinedOutput()
	require.NoError(t, err, "go list -deps: %s", out)
	deps := strings.Fields(string(out))
	require.Contains(t, deps, "github.com/charmgo/charm/tram", "go list -deps . lists the package itself last")
	const comlib = "github.com/charmgo/charm/comlib"
	for _, d := range deps {
		require.False(t, d == comlib || strings.HasPrefix(d, comlib+"/"), "tram depends on %s", d)
	}
	require.True(t, slices.Contains(deps, "github.com/charmgo/charm/tune/tunedebug"), "tram does not import tune/tunedebug, so -tunedebug is not registered: %v", deps)
}
