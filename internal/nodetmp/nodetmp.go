// Package nodetmp keeps the processes that a test launches as nodes of
// its job from leaving temporary directories behind.
//
// A test of several processes runs its own test binary again as the
// other nodes; such a process joins the job and ends with os.Exit inside
// the test, so the test's cleanups never run, and every t.TempDir it made
// on the way stays in the system's temporary directory. Setup, called
// from an init function (package jobtest's, which every such test
// imports), points TMPDIR of a launched node at a directory of its own;
// Exit removes it and exits.
package nodetmp

import (
	"os"

	"github.com/charmgo/charm/chare"
)

// dir is the launched node's own temporary directory, "" elsewhere.
var dir string

// Setup gives a launched node a temporary directory of its own; in any
// other process it does nothing. A node that cannot make one keeps the
// system's.
func Setup() {
	if dir != "" || !chare.IsLaunchedNode() {
		return
	}
	d, err := os.MkdirTemp("", "charm-node-")
	if err != nil {
		return
	}
	if err := os.Setenv("TMPDIR", d); err != nil {
		_ = os.Remove(d)
		return
	}
	dir = d
}

// Exit removes the launched node's temporary directory, with everything
// the test made in it, and exits with code.
func Exit(code int) {
	if dir != "" {
		_ = os.RemoveAll(dir)
	}
	os.Exit(code)
}
