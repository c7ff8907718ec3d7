package tune_test

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestTuneIsPure: package tune imports only the standard library — no
// runtime, no other package of this module — so it stays a plain search
// that tests replay exactly and that any package may use.
func TestTuneIsPure(t *testing.T) {
	gobin, err := exec.LookPath("go") // go test puts its own toolchain first on PATH
	require.NoError(t, err, "the go command, to list tune's dependencies")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, gobin, "list", "-deps", "-f", "{{.ImportPath}} {{.Standard}}", ".").CombinedOutput()
	require.NoError(t, err, "go list -deps: %s", out)
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	require.Equal(t, "github.com/charmgo/charm/tune false", lines[len(lines)-1], "go list -deps . lists the package itself last")
	for _, l := range lines[:len(lines)-1] {
		require.True(t, strings.HasSuffix(l, " true"), "tune depends on %s, which is not in the standard library", strings.Fields(l)[0])
	}
}
