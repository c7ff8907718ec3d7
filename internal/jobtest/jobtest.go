// Package jobtest runs the job of a test in one process or as several:
// the test binary launches copies of itself, each running just that test
// (or subtest), as the other nodes of the job.
//
// A launched copy runs the test function again up to its job, whose run
// joins the job that the environment names (chare.IsLaunchedNode), and
// the process ends with the job's code as soon as the run returns: the
// test's own checks run in the test's process (node 0) only. So every
// chare type of such a test, the main chare's among them, must be
// registered in an init function, in the same order in every process.
//
// Importing jobtest gives a launched node a temporary directory of its
// own that goes with it when it exits (package nodetmp).
package jobtest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/internal/nodetmp"
)

func init() { nodetmp.Setup() }

// Pattern is the -test.run pattern that selects exactly the test or
// subtest called name: "^TestX$" for a top-level test, "^TestX$/^sub$"
// for a subtest (go test splits both the name and the pattern at '/', and
// matches each part of the pattern against the name's part at its level).
func Pattern(name string) string {
	parts := strings.Split(name, "/")
	for i, p := range parts {
		parts[i] = "^" + regexp.QuoteMeta(p) + "$"
	}
	return strings.Join(parts, "/")
}

// Launch is the command line that runs this test binary again for
// exactly the test t, once: the Launch of a chare.Config whose other
// nodes run t.
func Launch(t testing.TB) []string {
	return append([]string{os.Args[0]}, testArgs(t)...)
}

func testArgs(t testing.TB) []string {
	return []string{"-test.run=" + Pattern(t.Name()), "-test.count=1"}
}

// Command is a command that runs this test binary again for exactly the
// test t, once, with the extra test flags args; ctx, if not nil, kills it
// as exec.CommandContext does.
func Command(ctx context.Context, t testing.TB, args ...string) *exec.Cmd {
	args = append(testArgs(t), args...)
	if ctx == nil {
		return exec.Command(os.Args[0], args...)
	}
	return exec.CommandContext(ctx, os.Args[0], args...)
}

// Run runs a job of cfg with start as the main chare's start method and
// returns its exit code and error. A job of more than one node (Nodes >
// 1) skips the test with -short, and unless cfg.Launch is set, launches
// its nodes with Launch(t). In a launched node, Run does not return: the
// process ends with the job (EndNode).
func Run[M any](t testing.TB, cfg chare.Config, start func(*M, []string)) (int, error) {
	t.Helper()
	if cfg.Nodes > 1 {
		if testing.Short() && !chare.IsLaunchedNode() {
			t.Skip("launches processes")
		}
		if cfg.Launch == nil {
			cfg.Launch = Launch(t)
		}
	}
	code, err := chare.Run(cfg, start)
	EndNode(t, code, err)
	return code, err
}

// EndNode ends a launched node's process with its job's exit code,
// after writing the job's error, if any, to standard error with the
// test's name and the node's number; in any other process it does
// nothing.
func EndNode(t testing.TB, code int, err error) {
	if !chare.IsLaunchedNode() {
		return
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s (node %s of %s): %v\n", t.Name(), os.Getenv("CHARMGO_NODE"), os.Getenv("CHARMGO_NODES"), err)
	}
	nodetmp.Exit(code)
}

// ExitNode ends a launched node's process with its job's exit code,
// writing nothing (for a test that reads what its nodes print); in any
// other process it does nothing.
func ExitNode(code int) {
	if chare.IsLaunchedNode() {
		nodetmp.Exit(code)
	}
}
