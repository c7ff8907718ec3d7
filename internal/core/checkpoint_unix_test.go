//go:build unix

package core

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestReadCheckpointOnlyRegularFiles: a checkpoint file that is a FIFO
// (reading it waits for a writer forever), a device such as /dev/zero
// (endless), or a directory is refused with an error naming it, at once;
// a symbolic link to a regular checkpoint file is read.
func TestReadCheckpointOnlyRegularFiles(t *testing.T) {
	good := &ckptFile{Program: Fingerprint(), PEs: 1, Nodes: 1, Seqs: []uint32{1}, Resume: ExitCallback(0)}
	real := filepath.Join(writeCkpt(t, good), CheckpointFile)
	cases := []struct {
		name string
		make func(path string) error
		want string // "" if the file is accepted
	}{
		{"fifo", func(p string) error { return syscall.Mkfifo(p, 0o644) }, "not a regular file"},
		{"link to /dev/zero", func(p string) error { return os.Symlink("/dev/zero", p) }, "not a regular file"},
		{"directory", func(p string) error { return os.Mkdir(p, 0o755) }, "not a regular file"},
		{"link to a checkpoint", func(p string) error { return os.Symlink(real, p) }, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, CheckpointFile)
			require.NoError(t, c.make(path))
			done := make(chan error, 1)
			go func() {
				_, err := readCheckpoint(dir)
				done <- err
			}()
			select {
			case err := <-done:
				if c.want == "" {
					require.NoError(t, err)
					return
				}
				require.ErrorContains(t, err, c.want)
				require.ErrorContains(t, err, path, "the error names the file")
			case <-time.After(5 * time.Second):
				t.Fatalf("reading a checkpoint that is a %s did not end within 5 s", c.name)
			}
		})
	}
}
