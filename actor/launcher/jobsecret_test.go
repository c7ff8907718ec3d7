//go:build unix

package launcher

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/actor/internal/procid"
)

// privDir returns a fresh directory of job secrets (its parent is the
// test's own).
func privDir(t *testing.T) string {
	return filepath.Join(t.TempDir(), "secrets")
}

func jobOf(rank int) *Job {
	return &Job{Launcher: "mpirun (Open MPI)", Rank: rank, Size: 3, JobID: "1737883649"}
}

// writeFile writes a secret file as another process would have.
func writeFile(t *testing.T, path, launcher, job string, pid int, start, secret string, mode os.FileMode) {
	t.Helper()
	body := fmt.Sprintf("%s\nlauncher=%s\njob=%s\npid=%d\nstart=%s\nsecret=%s\n", secretMagic, launcher, job, pid, start, secret)
	require.NoError(t, os.WriteFile(path, []byte(body), mode))
	require.NoError(t, os.Chmod(path, mode))
}

func TestJobSecretOneHost(t *testing.T) {
	dir := privDir(t)
	s0, remove, err := JobSecret(dir, jobOf(0), time.Second)
	require.NoError(t, err)
	require.Len(t, s0, 64)
	require.NotNil(t, remove, "rank 0 removes the file")
	fi, err := os.Stat(dir)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o700), fi.Mode().Perm(), "a private directory")
	fi, err = os.Stat(SecretFile(dir, jobOf(0)))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), "only this user reads the secret")
	for _, r := range []int{1, 2} {
		s, rm, err := JobSecret(dir, jobOf(r), time.Second)
		require.NoError(t, err)
		require.Equal(t, s0, s, "rank %d reads rank 0's secret", r)
		require.Nil(t, rm)
	}
	other := jobOf(0)
	other.JobID = "1737883650"
	s, rmOther, err := JobSecret(dir, other, time.Second)
	require.NoError(t, err)
	require.NotEqual(t, s0, s, "another job, another secret")
	remove()
	_, err = os.Stat(SecretFile(dir, jobOf(0)))
	require.ErrorIs(t, err, os.ErrNotExist, "rank 0 removed its file")
	_, err = os.Stat(SecretFile(dir, other))
	require.NoError(t, err, "and only its own")
	rmOther()
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Empty(t, ents, "no temporary file left")
}

// A file that an earlier job with the same id left (its rank 0 killed) is
// not trusted: the other ranks wait for this job's rank 0 to replace it.
func TestJobSecretStaleFile(t *testing.T) {
	dir := privDir(t)
	require.NoError(t, os.Mkdir(dir, 0o700))
	path := SecretFile(dir, jobOf(0))
	// Its writer is gone: this pid now runs another process (this one,
	// started at another time).
	writeFile(t, path, "mpirun (Open MPI)", "1737883649", os.Getpid(), "1", "0123456789abcdef0123456789abcdef", 0o600)

	_, _, err := JobSecret(dir, jobOf(1), 50*time.Millisecond)
	require.ErrorContains(t, err, "rank 0 did not write the job's secret within 50ms")
	require.ErrorContains(t, err, "was left by an earlier job: its writer, process "+strconv.Itoa(os.Getpid())+", is gone")

	got := make(chan string, 1)
	go func() {
		s, _, err := JobSecret(dir, jobOf(1), 10*time.Second)
		if err != nil {
			s = err.Error()
		}
		got <- s
	}()
	s0, remove, err := JobSecret(dir, jobOf(0), time.Second)
	require.NoError(t, err)
	defer remove()
	select {
	case s := <-got:
		require.Equal(t, s0, s, "rank 1 waited for this job's secret")
	case <-time.After(10 * time.Second):
		t.Fatal("rank 1 did not get the secret within 10 s")
	}
}

// Rank 0 sweeps the files of jobs whose rank 0 is gone.
func TestJobSecretSweep(t *testing.T) {
	dir := privDir(t)
	require.NoError(t, os.Mkdir(dir, 0o700))
	cmd := exec.Command("true")
	require.NoError(t, cmd.Run())
	dead := filepath.Join(dir, "job-dead")
	writeFile(t, dead, "srun (Slurm)", "7.0", cmd.Process.Pid, "1", "0123456789abcdef0123456789abcdef", 0o600)
	live := filepath.Join(dir, "job-live")
	writeFile(t, live, "srun (Slurm)", "8.0", os.Getpid(), procid.StartTime(os.Getpid()), "0123456789abcdef0123456789abcdef", 0o600)
	_, remove, err := JobSecret(dir, jobOf(0), time.Second)
	require.NoError(t, err)
	defer remove()
	_, err = os.Stat(dead)
	require.ErrorIs(t, err, os.ErrNotExist, "the file of a gone writer is removed")
	_, err = os.Stat(live)
	require.NoError(t, err, "a running job's file stays")
}

// Files and directories that are not this user's private ones are
// refused, naming them; so is a job without an id.
func TestJobSecretRefused(t *testing.T) {
	good := func(t *testing.T) (string, string) {
		dir := privDir(t)
		require.NoError(t, os.Mkdir(dir, 0o700))
		return dir, SecretFile(dir, jobOf(0))
	}
	cases := []struct {
		name string
		make func(t *testing.T) string // returns the directory
		says []string
	}{
		{"file others may read", func(t *testing.T) string {
			dir, p := good(t)
			writeFile(t, p, "mpirun (Open MPI)", "1737883649", os.Getpid(), procid.StartTime(os.Getpid()), "0123456789abcdef0123456789abcdef", 0o644)
			return dir
		}, []string{"has mode 0644", "job secret", "remove it, or give CHARMGO_SECRET"}},
		{"symbolic link", func(t *testing.T) string {
			dir, p := good(t)
			target := filepath.Join(dir, "elsewhere")
			writeFile(t, target, "mpirun (Open MPI)", "1737883649", os.Getpid(), procid.StartTime(os.Getpid()), "0123456789abcdef0123456789abcdef", 0o600)
			require.NoError(t, os.Symlink(target, p))
			return dir
		}, []string{"is a symbolic link"}},
		{"directory others may enter", func(t *testing.T) string {
			dir := privDir(t)
			require.NoError(t, os.Mkdir(dir, 0o755))
			require.NoError(t, os.Chmod(dir, 0o755))
			return dir
		}, []string{"directory of job secrets", "has mode 0755"}},
		{"not a directory", func(t *testing.T) string {
			dir := privDir(t)
			require.NoError(t, os.WriteFile(dir, nil, 0o600))
			return dir
		}, []string{"is not a directory"}},
		{"another job's file under this name", func(t *testing.T) string {
			dir, p := good(t)
			writeFile(t, p, "srun (Slurm)", "1.0", os.Getpid(), procid.StartTime(os.Getpid()), "0123456789abcdef0123456789abcdef", 0o600)
			return dir
		}, []string{`is for srun (Slurm) job "1.0", not mpirun (Open MPI) job "1737883649"`}},
		{"garbage", func(t *testing.T) string {
			dir, p := good(t)
			require.NoError(t, os.WriteFile(p, []byte("hello\n"), 0o600))
			return dir
		}, []string{"does not begin with"}},
		{"too long", func(t *testing.T) string {
			dir, p := good(t)
			require.NoError(t, os.WriteFile(p, make([]byte, 1<<20), 0o600))
			return dir
		}, []string{"1048576 bytes"}},
	}
	if os.Geteuid() == 0 {
		cases = append(cases, struct {
			name string
			make func(t *testing.T) string
			says []string
		}{"another user's file", func(t *testing.T) string {
			dir, p := good(t)
			writeFile(t, p, "mpirun (Open MPI)", "1737883649", os.Getpid(), procid.StartTime(os.Getpid()), "0123456789abcdef0123456789abcdef", 0o600)
			require.NoError(t, os.Chown(p, 65534, 65534))
			return dir
		}, []string{"belongs to user 65534"}})
	}
	if os.Geteuid() == 0 {
		cases = append(cases, struct {
			name string
			make func(t *testing.T) string
			says []string
		}{"another user's directory", func(t *testing.T) string {
			dir := privDir(t)
			require.NoError(t, os.Mkdir(dir, 0o700))
			require.NoError(t, os.Chown(dir, 65534, 65534))
			return dir
		}, []string{"directory of job secrets", "belongs to user 65534", "another user made it first", "set TMPDIR", "give CHARMGO_SECRET"}})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := c.make(t)
			_, _, err := JobSecret(dir, jobOf(1), time.Second)
			require.Error(t, err)
			for _, s := range c.says {
				require.ErrorContains(t, err, s)
			}
		})
	}
	t.Run("no job id", func(t *testing.T) {
		j := jobOf(0)
		j.JobID = ""
		_, _, err := JobSecret(privDir(t), j, time.Second)
		require.ErrorContains(t, err, "gives no job id")
	})
}

// TestSecretDirPrefersXDGRuntimeDir: the secrets go to $XDG_RUNTIME_DIR
// when it is a private directory of this user (nobody else can make it
// first), else to charmgo-UID in the temporary directory.
func TestSecretDirPrefersXDGRuntimeDir(t *testing.T) {
	tmp := t.TempDir()
	inTmp := filepath.Join(tmp, "charmgo-"+strconv.Itoa(os.Geteuid()))
	run := filepath.Join(t.TempDir(), "run")
	require.NoError(t, os.Mkdir(run, 0o700))
	require.Equal(t, filepath.Join(run, "charmgo"), secretDir(run, tmp))

	open := filepath.Join(t.TempDir(), "open")
	require.NoError(t, os.Mkdir(open, 0o755))
	require.NoError(t, os.Chmod(open, 0o755))
	file := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(file, nil, 0o600))
	for _, r := range []string{"", "relative/run", filepath.Join(run, "missing"), open, file} {
		require.Equal(t, inTmp, secretDir(r, tmp), "XDG_RUNTIME_DIR=%q", r)
	}

	t.Setenv("XDG_RUNTIME_DIR", run)
	t.Setenv("TMPDIR", tmp)
	require.Equal(t, filepath.Join(run, "charmgo"), SecretDir())
	// A job's ranks find each other's secret there.
	s0, remove, err := JobSecret(SecretDir(), jobOf(0), time.Second)
	require.NoError(t, err)
	s1, _, err := JobSecret(SecretDir(), jobOf(1), time.Second)
	require.NoError(t, err)
	require.Equal(t, s0, s1)
	remove()
	_, err = os.Stat(SecretFile(SecretDir(), jobOf(0)))
	require.True(t, os.IsNotExist(err), "%v", err)
}
