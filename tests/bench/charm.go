package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	ossignal "os/signal"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/charmgo/charm/internal/exutil"
)

// The charm/ family compares the project with Charm++ itself: each line
// runs a prebuilt Charm++ 8.0 program and its counterpart under
// tests/charm (written against this project's API to do the same work per
// message) interleaved, Charm++ then ours, at least five pairs, and prints
// ours as the value and Charm++'s as the baseline:
//
//	bench charm/<program>/<figure>/2pe   multicore +p2 against -p 2 (one process)
//	bench charm/<program>/<figure>/2proc charmrun ++local +p2 (netlrts, a process a PE) against -p 2 -nodes 2
//
// A benchmark is registered per program run (charm/<program>/2pe, ...),
// and prints one line per figure of that run: pingpong's run gives its
// array and group round trips. For a time (unit us, ms or s) a ratio below
// 1 means we are faster; for a rate (GUP/s) a ratio above 1 does.
//
// The Charm++ programs are found through the environment variable
// CHARM_ANCHOR: a folder holding charm-bins.tar.xz, an archive of
// multicore/<program> and netlrts/{charmrun,<program>} built with Charm++
// 8.0 (and lib/, lib-fallback/ with the shared libraries they may lack).
// It is unpacked once per run of this program, into a temporary folder;
// the counterparts are built once (go build) into another. Where
// CHARM_ANCHOR is unset or the archive is missing the family prints one
// line saying so and measures nothing.

// charmEnv names the folder of the Charm++ programs.
const charmEnv = "CHARM_ANCHOR"

// charmFigure is one figure of a program run: how to read it from
// Charm++'s output and from our counterpart's final line.
type charmFigure struct {
	name  string         // <figure> in the line's name
	unit  string         // us, ms, s or GUP/s
	charm *regexp.Regexp // its first group is the value
	ours  string         // the key of our final line
}

// charmRun is one program run, for both targets.
type charmRun struct {
	name    string // charm/<name>/...
	prog    string // the Charm++ program
	ours    string // the counterpart, tests/charm/<ours>
	args    func(target string) []string
	oursArg []string // flags of our counterpart before the arguments
	figures []charmFigure
	limit   time.Duration // of one run of either
}

const (
	charmMulticore = "multicore"
	charmNetlrts   = "netlrts"
)

// charmFixed returns args for both targets.
func charmFixed(args ...string) func(string) []string { return func(string) []string { return args } }

// charmByTarget returns one set of args for multicore and another for netlrts.
func charmByTarget(mc, net []string) func(string) []string {
	return func(t string) []string {
		if t == charmMulticore {
			return mc
		}
		return net
	}
}

// charmGUPS is the figure of the random-access programs.
var charmGUPS = charmFigure{"", "GUP/s", regexp.MustCompile(`(?m)^([0-9.]+) Billion\(10\^9\) Updates    per second`), "gups"}

// charmRuns are the runs of the family, with the arguments of the
// script that comes with the Charm++ programs (fewer iterations across processes, where each
// takes longer).
var charmRuns = []charmRun{
	{name: "kneighbor/64B", prog: "kNeighbor", ours: "kneighbor",
		args:    charmByTarget([]string{"2", "50", "64"}, []string{"2", "10", "64"}),
		figures: []charmFigure{{"", "us", regexp.MustCompile(`iteration with msg size \d+ is ([0-9.]+) \(us\)`), "us_per_iteration_avg"}}},
	{name: "kneighbor/16KiB", prog: "kNeighbor", ours: "kneighbor",
		args:    charmByTarget([]string{"2", "50", "16384"}, []string{"2", "10", "16384"}),
		figures: []charmFigure{{"", "us", regexp.MustCompile(`iteration with msg size \d+ is ([0-9.]+) \(us\)`), "us_per_iteration_avg"}}},
	{name: "pingpong", prog: "pingpong", ours: "pingpong",
		args: charmByTarget([]string{"100", "10000"}, []string{"100", "2000"}),
		figures: []charmFigure{
			{"array", "us", regexp.MustCompile(`(?m)^Roundtrip time for 1D Arrays is ([0-9.]+) us`), "roundtrip_us_1D_array"},
			{"group", "us", regexp.MustCompile(`(?m)^Roundtrip time for Groups is ([0-9.]+) us`), "roundtrip_us_group"},
		}},
	{name: "randomaccess/aggregate", prog: "aggregateRandomAccessGroup", ours: "randomaccess", oursArg: []string{"-mode", "aggregate"},
		args: charmFixed("15"), figures: []charmFigure{charmGUPS}},
	{name: "randomaccess/staged", prog: "randomAccessGroup-ported", ours: "randomaccess", oursArg: []string{"-mode", "staged"},
		args: charmFixed("15"), figures: []charmFigure{charmGUPS}},
	{name: "randomaccess/direct", prog: "directRandomAccessGroup", ours: "randomaccess", oursArg: []string{"-mode", "direct"},
		args: charmFixed("15"), figures: []charmFigure{charmGUPS}},
	{name: "streamingalltoall", prog: "streamingAllToAll-ported", ours: "streamingalltoall", args: charmFixed("32", "16384"),
		figures: []charmFigure{
			{"tram16KiB", "s", regexp.MustCompile(`(?m)^Elapsed time for all-to-all of +16384 bytes.*\( +using TRAM\): ([0-9.]+) seconds`), "seconds_tram_16384B"},
			{"direct16KiB", "s", regexp.MustCompile(`(?m)^Elapsed time for all-to-all of +16384 bytes.*\(not using TRAM\): ([0-9.]+) seconds`), "seconds_direct_16384B"},
		}},
	{name: "alltoall/1KiB", prog: "allToAll", ours: "alltoall", args: charmFixed("1024", "1", "300"),
		figures: []charmFigure{{"", "ms", regexp.MustCompile(`(?m)^ iteration\(ms\):\d+\s+([0-9.]+)`), "ms_per_iteration"}}},
	{name: "alltoall/16KiB", prog: "allToAll", ours: "alltoall", args: charmFixed("16384", "1", "300"),
		figures: []charmFigure{{"", "ms", regexp.MustCompile(`(?m)^ iteration\(ms\):\d+\s+([0-9.]+)`), "ms_per_iteration"}}},
}

func init() {
	for _, r := range charmRuns {
		for _, target := range []string{charmMulticore, charmNetlrts} {
			name := "charm/" + r.name + "/" + charmSuffix(target)
			registerPaired(name, func(cfg config) ([]figure, error) { return benchCharm(cfg, r, target) })
		}
	}
}

func charmSuffix(target string) string {
	if target == charmMulticore {
		return "2pe"
	}
	return "2proc"
}

// charmKit is what the family needs once per run of this program: the
// unpacked Charm++ programs and our counterparts, built.
type charmKit struct {
	dir     string // temporary: charm/ (unpacked) and ours/ (built)
	env     []string
	skipped bool // CHARM_ANCHOR unset or missing; said once
}

var (
	charmOnce     sync.Once
	charmKitState charmKit
	charmKitErr   error
)

// charmSetup unpacks the Charm++ programs and builds the counterparts, the
// first time it is called; it returns a nil kit when the family is to be
// skipped, after printing why (once).
func charmSetup() (*charmKit, error) {
	charmOnce.Do(func() {
		anchor := os.Getenv(charmEnv)
		archive := filepath.Join(anchor, "charm-bins.tar.xz")
		if anchor == "" {
			fmt.Printf("# charm/: skipped: %s is not set (a folder holding charm-bins.tar.xz, the Charm++ 8.0 programs)\n", charmEnv)
			charmKitState.skipped = true
			return
		}
		if _, err := os.Stat(archive); err != nil {
			fmt.Printf("# charm/: skipped: %s=%s has no charm-bins.tar.xz (%v)\n", charmEnv, anchor, err)
			charmKitState.skipped = true
			return
		}
		charmKitState.dir, charmKitErr = os.MkdirTemp("", "charm-bench-")
		if charmKitErr != nil {
			return
		}
		atExit = append(atExit, func() { os.RemoveAll(charmKitState.dir) })
		charmOnInterrupt(charmKitState.dir)
		if charmKitErr = unpackCharm(archive, filepath.Join(charmKitState.dir, "charm")); charmKitErr != nil {
			return
		}
		charmKitState.env = charmLibEnv(filepath.Join(charmKitState.dir, "charm"))
		charmKitErr = buildOurs(filepath.Join(charmKitState.dir, "ours"))
	})
	if charmKitState.skipped {
		return nil, nil
	}
	return &charmKitState, charmKitErr
}

// unpackCharm unpacks archive into dir, with xz (through tar) or else
// Python's lzma module.
func unpackCharm(archive, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var out []byte
	var err error
	if _, e := exec.LookPath("xz"); e == nil {
		out, err = exec.Command("tar", "-xJf", archive, "-C", dir).CombinedOutput()
	} else {
		out, err = exec.Command("python3", "-c", `import lzma,sys,tarfile; tarfile.open(fileobj=lzma.open(sys.argv[1])).extractall(sys.argv[2])`, archive, dir).CombinedOutput()
	}
	if err != nil {
		return fmt.Errorf("unpacking %s (needs xz or python3): %v: %s", archive, err, bytes.TrimSpace(out))
	}
	return nil
}

// charmLibEnv is the environment of the Charm++ programs: their lib/ on
// the library path, and lib-fallback/ (libstdc++, libgcc_s) when this
// machine lacks those.
func charmLibEnv(dir string) []string {
	path := filepath.Join(dir, "lib")
	const ldso = "/lib64/ld-linux-x86-64.so.2"
	if out, err := exec.Command(ldso, "--list", filepath.Join(dir, charmMulticore, "kNeighbor")).CombinedOutput(); err == nil || len(out) > 0 {
		if bytes.Contains(out, []byte("not found")) {
			path += ":" + filepath.Join(dir, "lib-fallback")
		}
	}
	if old := os.Getenv("LD_LIBRARY_PATH"); old != "" {
		path += ":" + old
	}
	return append(os.Environ(), "LD_LIBRARY_PATH="+path)
}

// buildOurs builds every counterpart into dir.
func buildOurs(dir string) error {
	seen := map[string]bool{}
	args := []string{"build", "-o", dir + string(filepath.Separator)}
	for _, r := range charmRuns {
		if !seen[r.ours] {
			seen[r.ours] = true
			args = append(args, "github.com/charmgo/charm/tests/charm/"+r.ours)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	out, err := exec.Command("go", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("building the counterparts (go %s): %v: %s", strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
	return nil
}

// benchCharm measures a run's figures in pairs, Charm++ first.
func benchCharm(cfg config, r charmRun, target string) ([]figure, error) {
	k, err := charmSetup()
	if k == nil || err != nil {
		return nil, err
	}
	figs := make([]figure, len(r.figures))
	for i, f := range r.figures {
		name := "charm/" + r.name
		if f.name != "" {
			name += "/" + f.name
		}
		figs[i] = figure{name: name + "/" + charmSuffix(target), unit: f.unit}
	}
	limit := r.limit
	if limit == 0 {
		limit = 60 * time.Second
	}
	for range pairsOf(cfg) {
		theirs, err := k.runCharm(r, target, limit)
		if err != nil {
			return nil, err
		}
		ours, err := k.runOurs(r, target, limit)
		if err != nil {
			return nil, err
		}
		for i := range figs {
			figs[i].baseline = append(figs[i].baseline, theirs[i])
			figs[i].value = append(figs[i].value, ours[i])
		}
	}
	return figs, nil
}

// runCharm runs the Charm++ program once and reads its figures.
func (k *charmKit) runCharm(r charmRun, target string, limit time.Duration) ([]float64, error) {
	dir := filepath.Join(k.dir, "charm", target)
	var argv []string
	if target == charmMulticore {
		argv = append(append([]string{"./" + r.prog}, r.args(target)...), "+p2")
	} else {
		argv = append([]string{"./charmrun", "++local", "+p2", "./" + r.prog}, r.args(target)...)
	}
	// Charm++'s pingpong goes on with tests that are not compared: the
	// run stops once every figure was printed.
	found := func(out []byte) bool {
		_, err := charmFigures(r.figures, string(out))
		return err == nil
	}
	out, err := charmExec(dir, k.env, limit, argv, found)
	if err != nil {
		return nil, fmt.Errorf("Charm++ %s: %w", strings.Join(argv, " "), err)
	}
	return charmFigures(r.figures, out)
}

// charmFigures reads figures from a Charm++ program's output.
func charmFigures(figs []charmFigure, out string) ([]float64, error) {
	v := make([]float64, len(figs))
	for i, f := range figs {
		m := f.charm.FindStringSubmatch(out)
		if m == nil {
			return nil, fmt.Errorf("no figure matching %q in the output:\n%s", f.charm, out)
		}
		x, err := strconv.ParseFloat(m[1], 64)
		if err != nil || !(x > 0) {
			return nil, fmt.Errorf("figure %q is not a positive number in the output:\n%s", m[0], out)
		}
		v[i] = x
	}
	return v, nil
}

// runOurs runs our counterpart once and reads its figures from its final
// line.
func (k *charmKit) runOurs(r charmRun, target string, limit time.Duration) ([]float64, error) {
	argv := []string{filepath.Join(k.dir, "ours", r.ours), "-p", "2", "-wait", benchWait.String()}
	if target == charmNetlrts {
		argv = append(argv, "-nodes", "2")
	}
	argv = append(append(argv, r.oursArg...), r.args(target)...)
	out, err := charmExec("", nil, limit, argv, nil)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", strings.Join(argv, " "), err)
	}
	return oursFigures(r.ours, r.figures, out)
}

// oursFigures reads figures from our counterpart's final line.
func oursFigures(name string, figs []charmFigure, out string) ([]float64, error) {
	kv, err := exutil.ParseOK(name, out)
	if err != nil {
		return nil, err
	}
	v := make([]float64, len(figs))
	for i, f := range figs {
		if v[i], err = exutil.Figure(kv, f.ours); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	return v, nil
}

// errCharmTimeout is the error of a run that did not end in its time.
var errCharmTimeout = errors.New("timed out")

// charmExec runs argv in dir (env nil: this process's) and returns its
// standard output. A run still going after limit is killed, with its
// children (its process group), and is an error that says so. If enough
// is set, the run is killed as soon as enough(output so far) holds, and
// that is a success.
func charmExec(dir string, env []string, limit time.Duration, argv []string, enough func([]byte) bool) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	stop, stopped := context.WithCancel(ctx)
	defer stopped()
	cmd := exec.CommandContext(stop, argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = dir, env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	stdout := &charmOutput{enough: enough, stop: stopped}
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = stdout, &stderr
	err := cmd.Start()
	if err == nil {
		charmChild.Store(int64(cmd.Process.Pid))
		err = cmd.Wait()
		charmChild.Store(0)
	}
	if charmStopping.Load() {
		select {} // killed by charmOnInterrupt, which ends the program
	}
	switch {
	case stdout.done():
		return stdout.String(), nil
	case ctx.Err() != nil:
		return "", fmt.Errorf("%w after %v; output so far:\n%s%s", errCharmTimeout, limit, stdout.String(), stderr.String())
	case err != nil:
		return "", fmt.Errorf("%v; output:\n%s%s", err, stdout.String(), stderr.String())
	}
	return stdout.String(), nil
}

// charmChild is the process group of the program charmExec runs, or 0;
// charmStopping is set once an interrupt is being handled.
var (
	charmChild    atomic.Int64
	charmStopping atomic.Bool
)

// charmOnInterrupt makes an interrupt (SIGINT, SIGTERM) of this program
// kill the program charmExec runs, which has a process group of its own
// and so does not get the terminal's signal, and remove dir.
func charmOnInterrupt(dir string) {
	sig := make(chan os.Signal, 1)
	ossignal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		s := <-sig
		charmStopping.Store(true)
		if pg := charmChild.Load(); pg > 0 {
			syscall.Kill(-int(pg), syscall.SIGKILL)
		}
		os.RemoveAll(dir)
		fmt.Fprintf(os.Stderr, "bench: %v: stopped\n", s)
		os.Exit(130)
	}()
}

// charmOutput collects a program's output and calls stop once enough of it
// came.
type charmOutput struct {
	mu     sync.Mutex
	b      bytes.Buffer
	enough func([]byte) bool
	stop   func()
	met    bool
}

func (w *charmOutput) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.b.Write(p)
	if w.enough != nil && !w.met && w.enough(w.b.Bytes()) {
		w.met = true
		w.stop()
	}
	return len(p), nil
}

func (w *charmOutput) done() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.met
}

func (w *charmOutput) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}
