// Package launch runs the examples under real launchers — Open MPI's
// mpirun, MPICH's Hydra mpiexec and a one-host Slurm's srun. The tests
// install and start nothing: .ci/install-launchers.sh does, as an
// explicit step (.ci/run takes it before the tests), and a test whose
// launcher is missing skips with a one-line reason.
package launch

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// runTimeout bounds every launch: a job that does not assemble fails the
// test instead of hanging it.
const runTimeout = 90 * time.Second

var (
	buildOnce sync.Once
	binDir    string
	buildErr  error
)

// programs builds hello and jacobi2d once for the package's tests.
func programs(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "charmgo-launch-")
		if buildErr != nil {
			return
		}
		for _, p := range []string{"hello", "jacobi2d"} {
			out, err := exec.Command("go", "build", "-o", filepath.Join(binDir, p), "github.com/charmgo/charm/examples/"+p).CombinedOutput()
			if err != nil {
				buildErr = &buildError{p, err, out}
				return
			}
		}
	})
	require.NoError(t, buildErr)
	return binDir
}

type buildError struct {
	prog string
	err  error
	out  []byte
}

func (e *buildError) Error() string {
	return "building " + e.prog + ": " + e.err.Error() + ": " + string(e.out)
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// testSlurmConf is where .ci/install-launchers.sh configures its one-host
// Slurm.
const testSlurmConf = "/var/tmp/charmgo-launch/slurm.conf"

// setup checks that a launcher ("mpi", "hydra" or "slurm") is installed
// and, for Slurm, that a node takes jobs, and returns the variables the
// launcher needs; otherwise it skips the test with a one-line reason.
func setup(t *testing.T, launcher string) []string {
	t.Helper()
	if testing.Short() {
		t.Skipf("runs %s", launcher)
	}
	cmd := map[string]string{"mpi": "mpirun.openmpi", "hydra": "mpiexec.hydra", "slurm": "srun"}[launcher]
	if _, err := exec.LookPath(cmd); err != nil {
		t.Skipf("%s is not installed: .ci/install-launchers.sh %s installs it (go test installs nothing)", cmd, launcher)
	}
	if launcher != "slurm" {
		return nil
	}
	var env []string
	if _, ok := os.LookupEnv("SLURM_CONF"); !ok {
		if _, err := os.Stat(testSlurmConf); err == nil {
			env = append(env, "SLURM_CONF="+testSlurmConf)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c := exec.CommandContext(ctx, "sinfo", "-h", "-N", "-o", "%t")
	c.Env = append(os.Environ(), env...)
	out, err := c.CombinedOutput()
	state := strings.TrimSpace(string(out))
	if i := strings.IndexByte(state, '\n'); i >= 0 {
		state = state[:i]
	}
	switch {
	case err != nil:
		t.Skipf("no Slurm answers here (sinfo: %v: %.200s); .ci/install-launchers.sh slurm starts a one-host Slurm", err, state)
	case state != "idle" && state != "mix" && state != "alloc":
		t.Skipf("no Slurm node takes jobs here (sinfo says %q); .ci/install-launchers.sh slurm starts a one-host Slurm", state)
	}
	return env
}

func secret(t *testing.T) string {
	b := make([]byte, 16)
	_, err := rand.Read(b)
	require.NoError(t, err)
	return hex.EncodeToString(b)
}

// environ is this process's environment without the variables of a
// launcher that may have started go test itself, plus extra.
func environ(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "OMPI_") || strings.HasPrefix(name, "PMIX_") || strings.HasPrefix(name, "PMI_") ||
			strings.HasPrefix(name, "SLURM_") || strings.HasPrefix(name, "CHARMGO_") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, extra...)
}

// run runs argv with env and returns its combined output and error.
func run(t *testing.T, env []string, argv ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = env
	cmd.Dir = t.TempDir()
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("%v did not end within %v:\n%s", argv, runTimeout, out)
	}
	return string(out), err
}

// checkOneJob checks that the two ranks formed one job of 2 PEs: exactly
// one "ok" line (two jobs of one process each would print two), with 2
// PEs, and, for hello, elements that ran on PE 1 — in the other process.
func checkOneJob(t *testing.T, prog, out string) {
	t.Helper()
	var oks []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, prog+": ") {
			oks = append(oks, l)
		}
	}
	require.Len(t, oks, 1, "one job, one result line:\n%s", out)
	switch prog {
	case "hello":
		require.Equal(t, "hello: ok elements=16 pes=2 sum=120", oks[0], out)
		require.Contains(t, out, "on PE 1\n", out)
	case "jacobi2d":
		require.True(t, strings.HasPrefix(oks[0], "jacobi2d: ok grid=64 blocks=4x4 "), out)
	}
}

func mpirun(np string) []string {
	argv := []string{"mpirun.openmpi", "--oversubscribe", "-np", np}
	if os.Geteuid() == 0 {
		argv = append(argv, "--allow-run-as-root")
	}
	return argv
}

func TestMpirun(t *testing.T) {
	env := environ(setup(t, "mpi")...)
	bin := programs(t)
	for _, prog := range []string{"hello", "jacobi2d"} {
		t.Run(prog, func(t *testing.T) {
			out, err := run(t, append(env, "CHARMGO_SECRET="+secret(t)), append(mpirun("2"), filepath.Join(bin, prog), "-p", "2")...)
			require.NoError(t, err, out)
			checkOneJob(t, prog, out)
		})
	}
	t.Run("no secret on one host", func(t *testing.T) {
		tmp := t.TempDir()
		out, err := run(t, append(env, "TMPDIR="+tmp), append(mpirun("2"), filepath.Join(bin, "hello"), "-p", "2")...)
		require.NoError(t, err, out)
		checkOneJob(t, "hello", out)
		noSecretLeft(t, tmp)
	})
}

func TestMpiexecHydra(t *testing.T) {
	env := environ(setup(t, "hydra")...)
	bin := programs(t)
	for _, prog := range []string{"hello", "jacobi2d"} {
		t.Run(prog, func(t *testing.T) {
			out, err := run(t, append(env, "CHARMGO_SECRET="+secret(t)), "mpiexec.hydra", "-np", "2", filepath.Join(bin, prog), "-p", "2")
			require.NoError(t, err, out)
			checkOneJob(t, prog, out)
		})
	}
	t.Run("no secret on one host", func(t *testing.T) {
		tmp := t.TempDir()
		out, err := run(t, append(env, "TMPDIR="+tmp), "mpiexec.hydra", "-np", "2", filepath.Join(bin, "hello"), "-p", "2")
		require.NoError(t, err, out)
		checkOneJob(t, "hello", out)
		noSecretLeft(t, tmp)
	})
}

// Hydra gives its ranks no job id in the environment; they ask its PMI
// server for the job's name, so that two jobs started at once with one
// secret get two tokens and two ports. (With the secret alone both chose
// the same port, and the second failed: "address already in use".)
// Without a secret, each job makes its own, under its own name.
func TestMpiexecHydraTwoJobsOneSecret(t *testing.T) {
	base := slices.Clip(environ(setup(t, "hydra")...)) // appends copy it
	bin := programs(t)
	for name, env := range map[string][]string{"one secret": append(base, "CHARMGO_SECRET="+secret(t)), "no secret": base} {
		t.Run(name, func(t *testing.T) {
			tmp := t.TempDir()
			ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
			defer cancel()
			type job struct {
				cmd *exec.Cmd
				out bytes.Buffer
			}
			jobs := make([]*job, 2)
			for i := range jobs {
				j := &job{cmd: exec.CommandContext(ctx, "mpiexec.hydra", "-np", "2", filepath.Join(bin, "jacobi2d"), "-p", "2", "-iters", "2000")}
				j.cmd.Env, j.cmd.Dir, j.cmd.WaitDelay = append(env, "TMPDIR="+tmp), t.TempDir(), 5*time.Second
				j.cmd.Stdout, j.cmd.Stderr = &j.out, &j.out
				require.NoError(t, j.cmd.Start())
				jobs[i] = j
			}
			for i, j := range jobs {
				err := j.cmd.Wait()
				require.NoError(t, ctx.Err(), "the jobs did not end within %v", runTimeout)
				require.NoError(t, err, "job %d:\n%s", i, j.out.String())
				checkOneJob(t, "jacobi2d", j.out.String())
			}
			if name == "no secret" {
				noSecretLeft(t, tmp)
			}
		})
	}
}

func srun(extra ...string) []string {
	return append([]string{"srun", "-n", "2", "--time=2", "--kill-on-bad-exit=1"}, extra...)
}

func TestSrun(t *testing.T) {
	env := environ(setup(t, "slurm")...)
	bin := programs(t)
	for _, prog := range []string{"hello", "jacobi2d"} {
		t.Run(prog, func(t *testing.T) {
			out, err := run(t, append(env, "CHARMGO_SECRET="+secret(t)), srun(filepath.Join(bin, prog), "-p", "2")...)
			require.NoError(t, err, out)
			checkOneJob(t, prog, out)
		})
	}
	t.Run("secret from -token, one PE per rank without -p", func(t *testing.T) {
		out, err := run(t, env, srun(filepath.Join(bin, "hello"), "-token", secret(t))...)
		require.NoError(t, err, out)
		checkOneJob(t, "hello", out)
	})
	t.Run("no secret on one host", func(t *testing.T) {
		tmp := t.TempDir()
		out, err := run(t, append(env, "TMPDIR="+tmp), srun(filepath.Join(bin, "hello"), "-p", "2")...)
		require.NoError(t, err, out)
		checkOneJob(t, "hello", out)
		noSecretLeft(t, tmp)
	})
}

// noSecretLeft checks that a job without a secret made its own in the
// user's private directory under tmp, and that rank 0 removed it.
func noSecretLeft(t *testing.T, tmp string) {
	t.Helper()
	dir := filepath.Join(tmp, "charmgo-"+strconv.Itoa(os.Geteuid()))
	fi, err := os.Stat(dir)
	require.NoError(t, err, "the job made its secret in a directory of its own")
	require.Equal(t, os.FileMode(0o700), fi.Mode().Perm())
	left, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Empty(t, left, "rank 0 removed the job's secret")
}

// TestOwnSecretOnOneHost starts the two ranks of an Open MPI job on this
// host by hand, with the environment mpirun -np 2 gives them and no
// secret: the job makes its own (rank 1 starts first and waits for rank
// 0's file), forms one job, and leaves no file behind. It needs no
// launcher installed.
func TestOwnSecretOnOneHost(t *testing.T) {
	bin := programs(t)
	tmp := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	job := "own-" + secret(t)
	outs := make([]*bytes.Buffer, 2)
	cmds := make([]*exec.Cmd, 2)
	for _, r := range []int{1, 0} {
		cmd := exec.CommandContext(ctx, filepath.Join(bin, "hello"), "-p", "2")
		cmd.Env = environ("TMPDIR="+tmp, "OMPI_COMM_WORLD_RANK="+strconv.Itoa(r), "OMPI_COMM_WORLD_SIZE=2",
			"OMPI_COMM_WORLD_LOCAL_SIZE=2", "OMPI_MCA_ess_base_jobid="+job)
		cmd.WaitDelay = 5 * time.Second
		outs[r] = &bytes.Buffer{}
		cmd.Stdout, cmd.Stderr = outs[r], outs[r]
		require.NoError(t, cmd.Start())
		cmds[r] = cmd
	}
	all := ""
	for r, cmd := range cmds {
		err := cmd.Wait()
		require.NoError(t, ctx.Err(), "the ranks did not end within %v", runTimeout)
		require.NoError(t, err, "rank %d:\n%s", r, outs[r])
		all += outs[r].String()
	}
	checkOneJob(t, "hello", all)
	noSecretLeft(t, tmp)
}

// TestHalfThere starts hello by hand with a launcher's environment that is
// half there: it must refuse to start, naming the variable, with no job
// (no "hello" line at all). It needs no launcher installed.
func TestHalfThere(t *testing.T) {
	bin := programs(t)
	cases := []struct {
		name string
		env  []string
		says string
	}{
		{"rank without size", []string{"OMPI_COMM_WORLD_RANK=0", "CHARMGO_SECRET=x"}, "OMPI_COMM_WORLD_RANK is set (\"0\") but OMPI_COMM_WORLD_SIZE is not"},
		{"node list that does not parse", []string{"SLURM_PROCID=0", "SLURM_STEP_NUM_TASKS=2", "SLURM_STEP_NODELIST=node[1-", "SLURM_JOB_ID=7", "SLURM_STEP_ID=0", "CHARMGO_SECRET=x"},
			"SLURM_STEP_NODELIST: host list \"node[1-\": a bracket is never closed"},
		{"fewer hosts than the step has", []string{"SLURM_PROCID=0", "SLURM_STEP_NUM_TASKS=4", "SLURM_STEP_NODELIST=node1", "SLURM_STEP_NUM_NODES=2", "SLURM_JOB_ID=7", "SLURM_STEP_ID=0", "CHARMGO_SECRET=x"},
			"SLURM_STEP_NUM_NODES=\"2\" but SLURM_STEP_NODELIST=\"node1\" names 1 hosts"},
		{"ranks across hosts without a secret", []string{"OMPI_COMM_WORLD_RANK=1", "OMPI_COMM_WORLD_SIZE=2", "OMPI_COMM_WORLD_LOCAL_SIZE=1", "OMPI_MCA_ess_base_jobid=7"},
			"CHARMGO_SECRET is not set, and its ranks run on several hosts: a job across hosts needs the same secret"},
		{"more ranks than the tasks per node place", []string{"SLURM_PROCID=0", "SLURM_STEP_NUM_TASKS=4", "SLURM_STEP_NODELIST=node[1-2]", "SLURM_STEP_TASKS_PER_NODE=1(x2)",
			"SLURM_JOB_ID=7", "SLURM_STEP_ID=0", "CHARMGO_SECRET=x"}, "SLURM_STEP_TASKS_PER_NODE=\"1(x2)\" places 2 ranks on 2 hosts, but SLURM_STEP_NUM_TASKS=4"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, err := run(t, environ(c.env...), filepath.Join(bin, "hello"), "-p", "2")
			var exit *exec.ExitError
			require.ErrorAs(t, err, &exit, out)
			require.Equal(t, 2, exit.ExitCode(), out)
			require.Contains(t, out, c.says)
			require.NotContains(t, out, "hello", "no job started:\n%s", out)
		})
	}
}
