// Command bench runs the project's benchmark suite and prints one line per
// figure:
//
//	bench <name> value=<number> unit=<unit> baseline=<number> ratio=<value/baseline>
//
// Every benchmark measures its baseline in the same run, on the same data:
// raw protoactor-go sends for the runtime. For rates (unit ending in /s) a
// higher ratio is better; for times (unit us) a lower one is.
//
// Paired benchmarks (runtime/manytomany, tram/histogram) run the figure and
// its baseline interleaved, A B A B …, at least five pairs (-reps), and
// print the median and the minimum of each and of the pairs' ratios, and
// an interval that holds the median ratio with probability ci (0.95 or
// more from 6 pairs; a sign test, see medianCI):
//
//	bench <name> value=<median> unit=<unit> baseline=<median> ratio=<median of value/baseline per pair> min=<min> baseline_min=<min> ratio_min=<min> pairs=<n> ratio_ci=<lo>..<hi> ci=<level>
//
//	go run ./tests/bench              # everything
//	go run ./tests/bench -run runtime/ -p 4
//
// The charm/ family (charm.go) runs Charm++ 8.0's own programs against
// their counterparts under tests/charm; it needs CHARM_ANCHOR, the folder
// of the Charm++ programs, and otherwise says it is skipped (see
// docs/benchmarks.md):
//
//	CHARM_ANCHOR=/path/to/charm-anchor go run ./tests/bench -run charm/ -reps 5
package main

import (
	"flag"
	"fmt"
	"os"
	"regexp"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"sort"

	"github.com/charmgo/charm/actor"
	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/chare/progress"
)

// result is one printed figure.
type result struct {
	name     string
	value    float64
	unit     string
	baseline float64
}

type benchmark struct {
	name   string
	run    func(cfg config) ([]result, error)
	paired func(cfg config) ([]figure, error)
}

type config struct {
	pes   int
	scale float64 // multiplies the amount of work
	reps  int     // repetitions; the best is reported
}

var benchmarks []benchmark

// atExit holds what to clean up when the suite ends, such as the charm/
// family's temporary folders.
var atExit []func()

func cleanUp() {
	for _, f := range atExit {
		f()
	}
}

// benchReps is -reps, passed on to the nodes a benchmark launches: they
// must run the same number of jobs.
var benchReps = 3

// benchWait is -wait: the wait policy of our PEs, passed on to launched
// nodes and to the charm/ counterparts.
var benchWait = actor.WaitActive

func register(name string, run func(cfg config) ([]result, error)) {
	benchmarks = append(benchmarks, benchmark{name: name, run: run})
}

// registerPaired adds a benchmark whose figures are measured in pairs.
func registerPaired(name string, run func(cfg config) ([]figure, error)) {
	benchmarks = append(benchmarks, benchmark{name: name, paired: run})
}

func main() {
	if os.Getenv(peerEnv) != "" {
		rawPeer()
		return
	}
	pattern := flag.String("run", ".", "run the benchmarks whose names match this regular expression")
	pes := flag.Int("p", 4, "PEs (and raw actors for the baselines)")
	scale := flag.Float64("scale", 1, "multiply the amount of work by this")
	reps := flag.Int("reps", 3, "repetitions of each measurement; the best is kept (paired benchmarks: pairs, at least 5)")
	list := flag.Bool("list", false, "list the benchmarks and exit")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile to this file")
	traceFile := flag.String("trace", "", "write an execution trace (go tool trace) to this file")
	memprofile := flag.String("memprofile", "", "write an allocation profile (every 4 KiB allocated sampled) to this file at the end")
	wait := flag.String("wait", "active", "the wait policy of our PEs in every benchmark (chare.Config.Wait; the charm/ counterparts get -wait): active or passive")
	flag.Parse()
	if w, err := actor.ParseWaitPolicy(*wait); err != nil {
		fmt.Fprintln(os.Stderr, "bench: -wait:", err)
		os.Exit(2)
	} else {
		benchWait = w
	}
	if p := os.Getenv("CHARM_BENCH_NODE_PROFILE"); p != "" && chare.IsLaunchedNode() {
		*cpuprofile = p // profile a launched node (node 1) instead
	}
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(2)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(2)
		}
		defer pprof.StopCPUProfile()
	}
	if *traceFile != "" {
		f, err := os.Create(*traceFile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(2)
		}
		if err := trace.Start(f); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(2)
		}
		defer trace.Stop()
	}
	if *memprofile != "" {
		runtime.MemProfileRate = 4096
		defer func() {
			f, err := os.Create(*memprofile)
			if err == nil {
				err = pprof.Lookup("allocs").WriteTo(f, 0)
				f.Close()
			}
			if err != nil {
				fmt.Fprintln(os.Stderr, "bench:", err)
			}
		}()
	}
	re, err := regexp.Compile(*pattern)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench: bad -run pattern:", err)
		os.Exit(2)
	}
	sort.SliceStable(benchmarks, func(i, j int) bool { return benchmarks[i].name < benchmarks[j].name })
	if !chare.IsLaunchedNode() {
		fmt.Printf("# %s %s/%s, %d CPUs, GOMAXPROCS=%d, %d PEs\n", runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.GOMAXPROCS(0), *pes)
	}
	failed := false
	benchReps = max(*reps, 1)
	ran := 0
	// Progress on a terminal (stderr), erased before each figure is printed.
	var bar *progress.Bar
	if !*list && !chare.IsLaunchedNode() {
		n := 0
		for _, b := range benchmarks {
			if re.MatchString(b.name) {
				n++
			}
		}
		bar = progress.New("bench", n, "benchmarks")
	}
	for _, b := range benchmarks {
		if *list {
			fmt.Println(b.name)
			continue
		}
		if !re.MatchString(b.name) {
			continue
		}
		bar.Set(ran) // the benchmarks done so far, while this one runs
		ran++
		cfg := config{pes: *pes, scale: *scale, reps: max(*reps, 1)}
		if b.paired != nil {
			fs, err := b.paired(cfg)
			bar.Clear()
			if err != nil {
				fmt.Fprintf(os.Stderr, "bench %s: FAILED: %v\n", b.name, err)
				failed = true
				continue
			}
			for _, f := range fs {
				fmt.Println(f)
			}
			continue
		}
		rs, err := b.run(cfg)
		bar.Clear()
		if err != nil {
			fmt.Fprintf(os.Stderr, "bench %s: FAILED: %v\n", b.name, err)
			failed = true
			continue
		}
		for _, r := range rs {
			fmt.Printf("bench %s value=%.4g unit=%s baseline=%.4g ratio=%.3f\n", r.name, r.value, r.unit, r.baseline, r.value/r.baseline)
		}
	}
	if !*list && ran == 0 {
		fmt.Fprintf(os.Stderr, "bench: no benchmark matches %q (try -list)\n", *pattern)
		os.Exit(2)
	}
	cleanUp()
	if failed {
		pprof.StopCPUProfile()
		os.Exit(1)
	}
}

// best runs f reps times and keeps the best figure: the highest rate, or
// the lowest time.
func best(reps int, higherIsBetter bool, f func() (float64, error)) (float64, error) {
	var b float64
	for i := 0; i < reps; i++ {
		v, err := f()
		if err != nil {
			return 0, err
		}
		if i == 0 || (higherIsBetter && v > b) || (!higherIsBetter && v < b) {
			b = v
		}
	}
	return b, nil
}
