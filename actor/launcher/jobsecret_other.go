//go:build !unix

package launcher

import (
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// SecretDir returns the directory where jobs on one host keep their
// secrets (see the Unix version); JobSecret is not available here.
func SecretDir() string { return filepath.Join(os.TempDir(), "charmgo") }

// JobSecret is available on Unix only: elsewhere a job under a launcher
// needs SecretVar.
func JobSecret(dir string, j *Job, wait time.Duration) (string, func(), error) {
	return "", nil, fmt.Errorf("%s: a secret of the job's own needs a Unix system here", j.Launcher)
}
