//go:build unix

package launcher

import (
	"bufio"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/charmgo/charm/actor/internal/procid"
)

// A job whose ranks all run on one host and that was given no secret
// makes its own: rank 0 writes a random secret to a file that only the
// user can read, the other ranks read it, and rank 0 removes it once
// every rank has joined, or when it fails before. A rank 0 killed before
// (a signal runs no deferred code) leaves its file; the next rank 0 that
// writes a secret in the directory removes the files whose writer is
// gone. The file is named after the launcher and its job id, in a
// directory of the user's own (SecretDir), and it records the process
// that wrote it: a file left by an earlier job with the same id names a
// process that is gone, and the other ranks wait for this job's rank 0
// to replace it rather than trust it.

// secretMagic opens a job-secret file.
const secretMagic = "charmgo job secret 1"

// maxSecretFile bounds what is read of a job-secret file.
const maxSecretFile = 4096

// SecretDir returns the directory where jobs on one host keep their
// secrets: charmgo in $XDG_RUNTIME_DIR where that is a directory of this
// user that only the user can enter (a login session's, which nobody
// else can fill first), else charmgo-UID in the temporary directory
// (os.TempDir). JobSecret creates it with mode 0700 and refuses it if it
// is not a directory of this user that only the user can enter.
func SecretDir() string {
	return secretDir(os.Getenv("XDG_RUNTIME_DIR"), os.TempDir())
}

// secretDir is SecretDir with the runtime and temporary directories given.
func secretDir(runtime, tmp string) string {
	if filepath.IsAbs(runtime) {
		if fi, err := os.Stat(runtime); err == nil && fi.IsDir() && private(runtime, fi) == nil {
			return filepath.Join(runtime, "charmgo")
		}
	}
	return filepath.Join(tmp, "charmgo-"+strconv.Itoa(os.Geteuid()))
}

// SecretFile returns the path of the secret of job j in dir.
func SecretFile(dir string, j *Job) string {
	h := sha256.Sum256([]byte(j.Launcher + "\x00" + j.JobID))
	return filepath.Join(dir, "job-"+hex.EncodeToString(h[:12]))
}

// JobSecret returns the secret of job j, whose ranks all run on this host,
// from its file in dir (SecretFile). Rank 0 writes a new random one
// (atomically: a temporary file renamed into place, replacing a file an
// earlier job left) and gets a function that removes it, to call once
// every rank has joined; the other ranks wait up to wait for a file that
// rank 0 of this job wrote, and get a nil function. A file or directory
// that another user owns, that others may read, or that is not a regular
// file is refused with an error naming it; so is a job without a job id,
// which cannot be told from another job of the same launcher.
func JobSecret(dir string, j *Job, wait time.Duration) (string, func(), error) {
	if j.JobID == "" {
		return "", nil, fmt.Errorf("%s gives no job id, so the ranks cannot find a secret of the job's own", j.Launcher)
	}
	if err := privateDir(dir, j.Rank == 0); err != nil {
		return "", nil, err
	}
	path := SecretFile(dir, j)
	if j.Rank == 0 {
		return writeSecret(dir, path, j)
	}
	deadline := time.Now().Add(wait)
	pause := 5 * time.Millisecond
	for {
		if err := privateDir(dir, false); err != nil {
			return "", nil, err
		}
		secret, stale, err := readSecret(path, j)
		if err != nil {
			return "", nil, err
		}
		if stale == "" {
			return secret, nil, nil
		}
		if !time.Now().Before(deadline) {
			return "", nil, fmt.Errorf("%s, rank %d: rank 0 did not write the job's secret within %v: %s (rank 0 writes it when no %s is given and every rank runs on this host)",
				j.Launcher, j.Rank, wait, stale, SecretVar)
		}
		time.Sleep(min(pause, time.Until(deadline)))
		pause = min(2*pause, 100*time.Millisecond)
	}
}

// privateDir checks that dir is a directory of this user that nobody
// else may enter, creating it (mode 0700) if create is set.
func privateDir(dir string, create bool) error {
	if create {
		if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("creating the directory of job secrets: %w", err)
		}
	}
	fi, err := os.Lstat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // not yet: rank 0 creates it, and the file in it is awaited
	}
	if err != nil {
		return fmt.Errorf("the directory of job secrets: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("the directory of job secrets %s is not a directory (%v): remove it, or give %s", dir, fi.Mode().Type(), SecretVar)
	}
	if err := private(dir, fi); err != nil {
		if !procid.OwnedBy(fi, os.Geteuid()) {
			// In a shared /tmp only its owner (or root) can remove it.
			return fmt.Errorf("the directory of job secrets %s %w: another user made it first; set TMPDIR to a directory of your own (or run in a login session with XDG_RUNTIME_DIR), or give %s", dir, err, SecretVar)
		}
		return fmt.Errorf("the directory of job secrets %s %w: remove it, or give %s", dir, err, SecretVar)
	}
	return nil
}

// private checks that fi is owned by this user and closed to others.
func private(path string, fi fs.FileInfo) error {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return errors.New("has no owner to check")
	}
	if uid := os.Geteuid(); int(st.Uid) != uid {
		return fmt.Errorf("belongs to user %d, not to this user (%d)", st.Uid, uid)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return fmt.Errorf("has mode %04o: others may use it (want 0700 for a directory, 0600 for a file)", perm)
	}
	return nil
}

// writeSecret writes a new secret for j to path, through a temporary file
// in dir, and cleans up the files of jobs whose rank 0 is gone.
func writeSecret(dir, path string, j *Job) (string, func(), error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", nil, fmt.Errorf("making the job's secret: %w", err)
	}
	secret := hex.EncodeToString(b)
	pid := os.Getpid()
	body := fmt.Sprintf("%s\nlauncher=%s\njob=%s\npid=%d\nstart=%s\nsecret=%s\n", secretMagic, oneLine(j.Launcher), oneLine(j.JobID), pid, procid.StartTime(pid), secret)
	sweep(dir, path)
	f, err := os.CreateTemp(dir, ".new-") // O_EXCL, mode 0600
	if err != nil {
		return "", nil, fmt.Errorf("writing the job's secret: %w", err)
	}
	_, err = f.WriteString(body)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
		return "", nil, fmt.Errorf("writing the job's secret to %s: %w", path, err)
	}
	remove := func() {
		// Only this job's file: compare before removing.
		if s, stale, err := readSecret(path, j); err == nil && stale == "" && s == secret {
			os.Remove(path)
		}
	}
	return secret, remove, nil
}

// sweep removes the secret files in dir, other than keep, whose writer is
// gone (a rank 0 that was killed before it could remove its own), and
// temporary files of such writers.
func sweep(dir, keep string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	const most = 256 // bounded work at each start
	for i, e := range ents {
		if i == most {
			break
		}
		name := e.Name()
		p := filepath.Join(dir, name)
		if p == keep || !e.Type().IsRegular() || !(strings.HasPrefix(name, "job-") || strings.HasPrefix(name, ".new-")) {
			continue
		}
		m, err := parseSecretFile(p)
		if err != nil {
			if fi, serr := e.Info(); serr == nil && time.Since(fi.ModTime()) > time.Hour {
				os.Remove(p) // unreadable and old: not being written
			}
			continue
		}
		if procid.Alive(m["pid"], m["start"]) != "" {
			os.Remove(p)
		}
	}
}

// readSecret reads j's secret from path. stale says why the file is not
// (yet) this job's — missing, or written by a process that is gone — and
// err is set for a file that must not be trusted at all.
func readSecret(path string, j *Job) (secret, stale string, err error) {
	m, err := parseSecretFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", fmt.Sprintf("there is no %s", path), nil
	case err != nil:
		return "", "", err
	}
	if m["launcher"] != oneLine(j.Launcher) || m["job"] != oneLine(j.JobID) {
		return "", "", fmt.Errorf("job secret %s is for %s job %q, not %s job %q", path, m["launcher"], m["job"], j.Launcher, j.JobID)
	}
	if why := procid.Alive(m["pid"], m["start"]); why != "" {
		return "", fmt.Sprintf("%s was left by an earlier job: %s", path, why), nil
	}
	if s := m["secret"]; len(s) >= 32 {
		return s, "", nil
	}
	return "", "", fmt.Errorf("job secret %s holds no secret of at least 32 characters", path)
}

// parseSecretFile reads a secret file: it must be a regular file of this
// user that only the user can read.
func parseSecretFile(path string) (map[string]string, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return nil, fmt.Errorf("job secret %s is a symbolic link: remove it, or give %s", path, SecretVar)
		}
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("job secret %s is not a regular file (%v): remove it, or give %s", path, fi.Mode().Type(), SecretVar)
	}
	if err := private(path, fi); err != nil {
		return nil, fmt.Errorf("job secret %s %w: remove it, or give %s", path, err, SecretVar)
	}
	if fi.Size() > maxSecretFile {
		return nil, fmt.Errorf("job secret %s has %d bytes, more than a secret file's %d", path, fi.Size(), maxSecretFile)
	}
	sc := bufio.NewScanner(io.LimitReader(f, maxSecretFile))
	if !sc.Scan() || sc.Text() != secretMagic {
		return nil, fmt.Errorf("job secret %s does not begin with %q", path, secretMagic)
	}
	m := map[string]string{}
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), "=")
		if !ok {
			return nil, fmt.Errorf("job secret %s: line %q is not key=value", path, sc.Text())
		}
		m[k] = v
	}
	return m, sc.Err()
}

// oneLine keeps a value on one line of the file.
func oneLine(s string) string { return strings.NewReplacer("\n", " ", "\r", " ").Replace(s) }
