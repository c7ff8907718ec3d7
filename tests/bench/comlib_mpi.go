package main

import (
	_ "embed"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/charmgo/charm/comlib"
)

// comlib/alltoall/mpi/<bytes>B: Open MPI's MPI_Alltoall on 16 ranks (mpi/alltoall.c, built with
// mpicc and run by mpirun --oversubscribe) as a peer figure. The value is ours: the same
// exchange of <bytes>-byte blocks among 16 elements, one per PE, in one process, through
// EachToMany with the synchronous shuffle ("sync": every block directly, in a contention-free
// order); the baseline is Open MPI's time per MPI_Alltoall, the slowest rank's, measured in the
// same run, interleaved (one mpirun, then one timed run of ours). The ratio is ours over Open
// MPI's.
//
// What the peer does that we do not: 16 OS processes exchanging through shared memory, no
// bracket, no per-element delivery; with 16 ranks on 2 cores its ranks spin or yield while
// waiting (mpi_yield_when_idle is set). Ours is 16 actors in one process.
//
// The benchmark installs Debian's openmpi-bin and libopenmpi-dev when mpicc or mpi.h is
// missing (apt-get, as root or through sudo -n), and prints a note and skips when it cannot.

//go:embed mpi/alltoall.c
var mpiSource []byte

const mpiRanks = 16

func init() {
	for _, size := range clSizes {
		name := fmt.Sprintf("comlib/alltoall/mpi/%dB", size)
		registerPaired(name, func(cfg config) ([]figure, error) { return benchMPI(cfg, name, size) })
	}
}

var (
	mpiOnce sync.Once
	mpiExe  string
	mpiErr  error
)

// mpiProgram installs Open MPI if needed and builds the program, once per run.
func mpiProgram() (string, error) {
	mpiOnce.Do(func() { mpiExe, mpiErr = buildMPI() })
	return mpiExe, mpiErr
}

func buildMPI() (string, error) {
	// One directory per version of the program, reused by later runs,
	// rather than a new temporary directory left behind by every run.
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("charm-bench-mpi-%08x", crc32.ChecksumIEEE(mpiSource)))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	src, exe := filepath.Join(dir, "alltoall.c"), filepath.Join(dir, "alltoall")
	if err := os.WriteFile(src, mpiSource, 0o644); err != nil {
		return "", err
	}
	build := func() error {
		out, err := exec.Command("mpicc", "-O2", "-o", exe, src).CombinedOutput()
		if err != nil {
			return fmt.Errorf("mpicc: %v: %s", err, strings.TrimSpace(string(out)))
		}
		if _, err := exec.LookPath("mpirun"); err != nil {
			return err
		}
		return nil
	}
	if err := build(); err == nil {
		return exe, nil
	}
	if err := installMPI(); err != nil {
		return "", err
	}
	if err := build(); err != nil {
		return "", fmt.Errorf("after installing Open MPI: %w", err)
	}
	return exe, nil
}

// installMPI installs Open MPI and its compiler wrapper with the script
// that installs the launchers (.ci/install-launchers.sh mpicc: apt-get,
// as root or through sudo -n, once per machine).
func installMPI() error {
	_, self, _, ok := runtime.Caller(0)
	if !ok {
		return errors.New("Open MPI is missing, and the benchmark cannot find .ci/install-launchers.sh to install it")
	}
	script := filepath.Join(filepath.Dir(self), "..", "..", ".ci", "install-launchers.sh")
	fmt.Fprintln(os.Stderr, "# comlib/alltoall/mpi: installing Open MPI with", script, "mpicc")
	out, err := exec.Command("bash", script, "mpicc").CombinedOutput()
	if err != nil {
		tail := strings.TrimSpace(string(out))
		if len(tail) > 400 {
			tail = tail[len(tail)-400:]
		}
		return fmt.Errorf("%s mpicc: %v: %s", script, err, tail)
	}
	return nil
}

// runMPI runs one mpirun of iters all-to-alls and returns the slowest rank's time per
// all-to-all in microseconds.
func runMPI(exe string, bytes, iters int) (float64, error) {
	args := []string{"--oversubscribe", "--mca", "mpi_yield_when_idle", "1", "-np", strconv.Itoa(mpiRanks)}
	if os.Geteuid() == 0 {
		args = append([]string{"--allow-run-as-root"}, args...)
	}
	args = append(args, exe, strconv.Itoa(bytes), strconv.Itoa(iters), "1")
	cmd := exec.Command("mpirun", args...)
	// Open MPI refuses to run as root without these when the flag is not enough.
	cmd.Env = append(os.Environ(), "OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1")
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return 0, fmt.Errorf("mpirun: %v: %s", err, strings.TrimSpace(string(ee.Stderr)))
		}
		return 0, fmt.Errorf("mpirun: %w", err)
	}
	f := strings.Fields(string(out))
	if len(f) == 0 {
		return 0, fmt.Errorf("mpirun printed nothing")
	}
	v, err := strconv.ParseFloat(f[len(f)-1], 64)
	if err != nil || v <= 0 {
		return 0, fmt.Errorf("mpirun printed %q, not a time", strings.TrimSpace(string(out)))
	}
	return v, nil
}

func benchMPI(cfg config, name string, size int) ([]figure, error) {
	exe, err := mpiProgram()
	if err != nil {
		fmt.Printf("# %s: skipped: %v\n", name, err)
		return nil, nil
	}
	fig := figure{name: name, unit: "us"}
	iters := clIters(cfg, size, 1)
	err = runNodes(mpiRanks, 1, name, func(m *benchMain) error {
		x, err := newExchange(m, mpiRanks, size)
		if err != nil {
			return err
		}
		slot, err := x.add(comlib.EachToMany(comlib.EachToManyOptions{Router: "sync", Sources: x.arr}))
		if err != nil {
			return err
		}
		if _, err := x.run(slot, 2); err != nil {
			return err
		}
		for i := 0; i < pairsOf(cfg); i++ {
			peer, err := runMPI(exe, size, max(iters, 20))
			if err != nil {
				return err
			}
			t0 := time.Now()
			ours, err := x.run(slot, iters)
			if err != nil {
				return fmt.Errorf("after %v: %w", time.Since(t0), err)
			}
			fig.value, fig.baseline = append(fig.value, ours), append(fig.baseline, peer)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return []figure{fig}, nil
}
