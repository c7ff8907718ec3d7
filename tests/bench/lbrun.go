package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/charmgo/charm/array"
	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/chare/reducer"
	"github.com/charmgo/charm/lb"
)

// Load balancing in a running job (the strategies' own speed is in lb.go):
//
//   - lb/greedy: the workload of examples/lbtest in-process: 1,024
//     elements on 8 PEs (always 8, whatever -p), placed by Block, with
//     linear loads (element i's is (i+1) ms, set with SetLoad so that the
//     strategy sees exact loads: the PEs' measured background, a few ms,
//     is noise against 65 s per PE), one AtSync step with Greedy. The
//     value is max/avg of the PE loads after the step, the baseline
//     before it (Block on linear loads: 1.874), both from the step's
//     report; a ratio below 1 is good. A "#" line gives the target
//     (max/avg ≤ 1.05) and the migrations. Best (lowest) of -reps jobs.
//   - lb/refine: the same with Refine; and lb/refine/migrations, the
//     fraction of the elements Refine moved, against 0.25 (the target
//     bound: a ratio below 1 meets it).
//   - lb/jacobi: the time per iteration of examples/jacobi2d after its
//     first load-balancing step, with a balancer (value) and without
//     (baseline), best of -reps runs each; a ratio below 1 is good. The
//     program is built once into a temporary directory and run as
//     "jacobi2d -p 2 -grid G -blocks 8 -iters 400 -tol 0 -imbalance 6
//     -lbevery 50 [-balancer greedyrefine]": the top half of the blocks
//     do 6 times the work, and Block puts them all on PE 0. Two PEs, as
//     the machine this was written on has two cores: balancing cannot
//     help PEs that share a core. G is 256 at -scale 1 (it grows with
//     the square root of -scale, a multiple of 8). GreedyRefine rather
//     than Greedy: the blocks' loads hardly change between steps, and
//     GreedyRefine reaches Greedy's balance (within 3 %) moving a few
//     blocks once, where Greedy reshuffles most of them at every step,
//     each move costing a migration and scattering neighbours. A "#" line
//     gives the times with Greedy, with Refine, and with -balancer dummy,
//     which measures every entry method but never moves anything: the
//     price of the measurement itself.

func init() {
	chare.Register[lbrunElem](chare.Fast((*lbrunElem).Init))
	register("lb/greedy", func(cfg config) ([]result, error) { return benchLBRunStep(cfg, "greedy") })
	register("lb/refine", func(cfg config) ([]result, error) { return benchLBRunStep(cfg, "refine") })
	register("lb/jacobi", benchLBRunJacobi)
}

const (
	lbrunPEs      = 8
	lbrunElems    = 1024
	lbrunLoadUnit = 1e-3 // seconds of load per unit: element i has i+1
	lbrunTarget   = 1.05 // max/avg after Greedy
	lbrunMoves    = 0.25 // the fraction of elements Refine may move
)

// lbrunElem is an element of the lb/greedy and lb/refine workload.
type lbrunElem struct {
	array.Element[lbrunElem, int]
	Done chare.Callback
}

type lbrunSetup struct{ Done chare.Callback }

// Init is the constructor.
func (e *lbrunElem) Init(s lbrunSetup) { e.Done = s.Done }

// Begin sets the element's load for the period and waits at AtSync.
func (e *lbrunElem) Begin() {
	if err := e.SetLoad(float64(e.ThisIndex()+1) * lbrunLoadUnit); err != nil {
		e.Abort(err)
		return
	}
	e.AtSync()
}

// ResumeFromSync ends the job's work: a barrier that fulfils the main
// function's future once every element has resumed, wherever it is.
func (e *lbrunElem) ResumeFromSync() {
	if err := e.Contribute(nil, reducer.Nop, e.Done); err != nil {
		e.Abort(err)
	}
}

// lbrunJob runs body as the main function of a job of pes PEs with the
// runtime flags in flags (-balancer...); the job exits when body returns.
func lbrunJob(pes int, flags map[string]string, body func(m *benchMain) error) error {
	var berr error
	code, err := chare.Run(chare.Config{PEs: pes, Flags: flags, Timeout: 5 * time.Minute}, func(m *benchMain, _ []string) {
		berr = body(m)
		m.Exit(0)
	})
	switch {
	case err != nil:
		return err
	case berr != nil:
		return berr
	case code != 0:
		return fmt.Errorf("job exited with code %d", code)
	}
	return nil
}

// lbStep runs one AtSync step of strategy over the workload and returns
// its report.
func lbrunStep(strategy string) (lb.Report, error) {
	var rep lb.Report
	err := lbrunJob(lbrunPEs, map[string]string{lb.FlagBalancer: strategy}, func(m *benchMain) error {
		done := chare.NewFuture[any](m)
		a, err := array.NewWith(m, array.Dims(lbrunElems), (*lbrunElem).Init, lbrunSetup{Done: done.Callback()},
			array.WithMap(array.Block))
		if err != nil {
			return err
		}
		if err := chare.Send0(m, a, (*lbrunElem).Begin); err != nil {
			return err
		}
		if _, err := done.Get(m); err != nil {
			return err
		}
		reps, err := lb.Reports(m)
		if err != nil {
			return err
		}
		if len(reps) != 1 {
			return fmt.Errorf("%d load-balancing steps, want 1", len(reps))
		}
		rep = reps[0]
		switch {
		case rep.Error != "":
			return fmt.Errorf("the placement of %s was not used: %s", strategy, rep.Error)
		case rep.Objects != lbrunElems || len(rep.Before) != lbrunPEs:
			return fmt.Errorf("the step saw %d objects on %d PEs, want %d on %d", rep.Objects, len(rep.Before), lbrunElems, lbrunPEs)
		}
		return nil
	})
	return rep, err
}

func benchLBRunStep(cfg config, strategy string) ([]result, error) {
	var best lb.Report
	for i := range cfg.reps {
		r, err := lbrunStep(strategy)
		if err != nil {
			return nil, err
		}
		if i == 0 || r.MaxAvgAfter < best.MaxAvgAfter {
			best = r
		}
	}
	name := "lb/" + strategy
	frac := float64(best.Migrations) / float64(lbrunElems)
	fmt.Printf("# %s: %d elements on %d PEs, linear loads, Block: max/avg %.4f before, %.4f after (target ≤ %.2f); migrations=%d (%.1f %%) strategy_time=%v\n",
		name, lbrunElems, lbrunPEs, best.MaxAvgBefore, best.MaxAvgAfter, lbrunTarget, best.Migrations, 100*frac, best.StrategyTime.Round(time.Microsecond))
	out := []result{{name, best.MaxAvgAfter, "max/avg", best.MaxAvgBefore}}
	if strategy == "refine" {
		out = append(out, result{name + "/migrations", frac, "fraction", lbrunMoves})
	}
	return out, nil
}

// ---- lb/jacobi ----

var lbrunIterMs = regexp.MustCompile(`^jacobi2d: ok .* iter_ms_after_lb=([0-9.]+)`)

// lbrunModuleDir returns the root of this module: where this file was compiled
// from, else the working directory's module.
func lbrunModuleDir() (string, error) {
	if _, file, _, ok := runtime.Caller(0); ok {
		dir := filepath.Join(filepath.Dir(file), "..", "..")
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
	}
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("finding the module: go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", errors.New("finding the module: run the benchmarks from inside it")
	}
	return filepath.Dir(gomod), nil
}

// lbrunJacobi runs the jacobi2d program with args and returns its time per
// iteration after the first load-balancing step, in ms.
func lbrunJacobi(exe string, args ...string) (float64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, exe, args...).CombinedOutput()
	if err != nil {
		return 0, fmt.Errorf("jacobi2d %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	mt := lbrunIterMs.FindStringSubmatch(lines[len(lines)-1])
	if mt == nil {
		return 0, fmt.Errorf("jacobi2d %s: no iter_ms_after_lb in its last line:\n%s", strings.Join(args, " "), out)
	}
	return strconv.ParseFloat(mt[1], 64)
}

func benchLBRunJacobi(cfg config) ([]result, error) {
	dir, err := lbrunModuleDir()
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "lbjacobi")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	exe := filepath.Join(tmp, "jacobi2d")
	build := exec.Command("go", "build", "-o", exe, "./examples/jacobi2d")
	build.Dir = dir
	if out, err := build.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("building jacobi2d: %w\n%s", err, out)
	}
	grid := max(8, int(math.Round(256*math.Sqrt(cfg.scale)/8))*8)
	args := []string{"-p", "2", "-grid", strconv.Itoa(grid), "-blocks", "8", "-iters", "400", "-tol", "0", "-imbalance", "6", "-lbevery", "50"}
	times := map[string]float64{}
	// Interleaved, so that a busy moment of the machine hits every
	// configuration alike.
	confs := []string{"", "greedyrefine", "greedy", "refine", "dummy"}
	for i := range cfg.reps {
		for _, bal := range confs {
			a := args
			if bal != "" {
				a = append(append([]string(nil), args...), "-balancer", bal)
			}
			ms, err := lbrunJacobi(exe, a...)
			if err != nil {
				return nil, err
			}
			if t, ok := times[bal]; i == 0 || !ok || ms < t {
				times[bal] = ms
			}
		}
	}
	fmt.Printf("# lb/jacobi: jacobi2d %s: ms per iteration after the first step: none %.3f, greedyrefine %.3f, greedy %.3f, refine %.3f, dummy (measuring only) %.3f\n",
		strings.Join(args, " "), times[""], times["greedyrefine"], times["greedy"], times["refine"], times["dummy"])
	return []result{{"lb/jacobi", times["greedyrefine"], "ms", times[""]}}, nil
}
