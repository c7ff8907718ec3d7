package main

import (
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/internal/extest"
	"github.com/charmgo/charm/lb"
)

const timeout = 60 * time.Second

// run runs the program in-process on pes PEs with the runtime flags in
// flags (-balancer and so on: nil for none) and returns its main chare,
// exit code and output.
func run(t testing.TB, pes int, flags map[string]string, args ...string) (*Main, int, string) {
	t.Helper()
	return extest.Run(t, "lbtest", &out, (*Main).Start, chare.Config{PEs: pes, Args: args, Flags: flags, Timeout: timeout})
}

var okLine = regexp.MustCompile(`^lbtest: ok n=(\d+) pes=(\d+) load=(\w+) comm=(\w+) steps=(\d+) balancer=([\w,]+) ` +
	`maxavg_before=(\d+\.\d{3}) maxavg_after=(\d+\.\d{3}) migrations=(\d+) time=(\d+\.\d{3})s final_maxavg=(\d+\.\d{3})` +
	`( cut=\d\.\d{3})?( iter_ms_before=\d+\.\d{3} iter_ms_after=\d+\.\d{3})?$`)

// summary is the last line of a successful run, parsed.
type summary struct {
	n, pes, steps, migrations   int
	load, comm, balancer        string
	before, after, final, secs  float64
	hasCut, hasIterTimes        bool
	stepLines, otherLinesBefore int
}

// checkOK checks the output of a successful run and returns its summary.
func checkOK(t *testing.T, output string) summary {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(output), "\n")
	last := lines[len(lines)-1]
	mt := okLine.FindStringSubmatch(last)
	require.NotNil(t, mt, "last line %q of\n%s", last, output)
	atoi := func(s string) int { v, err := strconv.Atoi(s); require.NoError(t, err); return v }
	atof := func(s string) float64 { v, err := strconv.ParseFloat(s, 64); require.NoError(t, err); return v }
	s := summary{n: atoi(mt[1]), pes: atoi(mt[2]), load: mt[3], comm: mt[4], steps: atoi(mt[5]), balancer: mt[6],
		before: atof(mt[7]), after: atof(mt[8]), migrations: atoi(mt[9]), secs: atof(mt[10]), final: atof(mt[11]),
		hasCut: mt[12] != "", hasIterTimes: mt[13] != ""}
	for _, l := range lines[:len(lines)-1] {
		require.True(t, strings.HasPrefix(l, "lbtest: lb step="), "a line before the summary: %q", l)
		s.stepLines++
	}
	require.Equal(t, s.steps, s.stepLines, "a report line per step:\n%s", output)
	require.Equal(t, s.comm != "none", s.hasCut, last)
	return s
}

// checkResult checks what the main chare found against the summary line.
func checkResult(t *testing.T, m *Main, s summary, p Params) {
	t.Helper()
	r := m.res
	require.Len(t, r.Reports, s.steps)
	require.Equal(t, s.migrations, r.Migrations)
	require.Equal(t, r.Migrations, r.Departures)
	want := p.N * p.Iters * degree(p.Comm)
	require.Equal(t, want, r.Sent)
	require.Equal(t, want, r.Received)
	require.Len(t, r.FinalPEs, p.N)
	// The imbalance of the loads where the elements end, from scratch.
	loads := make([]float64, s.pes)
	for i, pe := range r.FinalPEs {
		loads[pe] += Weight(p.Load, p.Seed, i, p.N)
	}
	require.InDelta(t, lb.MaxOverAvg(loads), r.FinalMaxAvg, 1e-9)
	for k, rep := range r.Reports {
		require.Equal(t, k, rep.Step)
		require.Equal(t, p.N, rep.Objects)
		require.Empty(t, rep.Error)
		require.Len(t, rep.Before, s.pes)
		if p.SetLoad {
			// The strategies saw the loads the elements set: w(i) × work
			// × the iterations of the period, exactly.
			period := p.Work.Seconds() * float64(p.LBEvery)
			maxW, minW, sumW := 0.0, 1e300, 0.0
			for i := range p.N {
				w := Weight(p.Load, p.Seed, i, p.N)
				maxW, minW, sumW = max(maxW, w), min(minW, w), sumW+w
			}
			require.InEpsilon(t, sumW/float64(p.N)*period, rep.ObjLoad.Mean, 1e-9, "step %d", k)
			require.InEpsilon(t, maxW*period, rep.ObjLoad.Max, 1e-9, "step %d", k)
			require.InEpsilon(t, minW*period, rep.ObjLoad.Min, 1e-9, "step %d", k)
		}
	}
	if s.steps > 0 {
		require.Equal(t, r.Reports[0].MaxAvgBefore, r.MaxAvgBefore)
		require.Equal(t, r.Reports[s.steps-1].MaxAvgAfter, r.MaxAvgAfter)
	} else {
		require.Equal(t, r.FinalMaxAvg, r.MaxAvgBefore)
		require.Equal(t, r.FinalMaxAvg, r.MaxAvgAfter)
	}
}

func params(n, iters, lbevery int, load, comm string) Params {
	return Params{N: n, Load: load, Comm: comm, Iters: iters, LBEvery: lbevery, Work: 20 * time.Microsecond, Seed: 1, SetLoad: true, Barrier: true}
}

func (p Params) args() []string {
	return []string{"-n", fmt.Sprint(p.N), "-load", p.Load, "-comm", p.Comm, "-iters", fmt.Sprint(p.Iters),
		"-lbevery", fmt.Sprint(p.LBEvery), "-work", p.Work.String(), "-seed", fmt.Sprint(p.Seed),
		"-setload=" + fmt.Sprint(p.SetLoad), "-barrier=" + fmt.Sprint(p.Barrier)}
}

// TestLBTestBalancers runs the experiment with each strategy on a few PE
// counts: 3 AtSyncs, so 3 steps.
func TestLBTestBalancers(t *testing.T) {
	for _, bal := range []string{"greedy", "refine", "greedyrefine", "rotate", "dummy", "random", "distributed", "greedy,refine"} {
		for _, pes := range []int{1, 3, 4} {
			t.Run(fmt.Sprintf("%s/pes=%d", bal, pes), func(t *testing.T) {
				p := params(48, 8, 2, "linear", "ring")
				m, code, output := run(t, pes, map[string]string{"balancer": bal}, p.args()...)
				require.Equal(t, 0, code, output)
				s := checkOK(t, output)
				require.Equal(t, summary{n: 48, pes: pes, load: "linear", comm: "ring", steps: 3, balancer: bal},
					summary{n: s.n, pes: s.pes, load: s.load, comm: s.comm, steps: s.steps, balancer: s.balancer})
				require.True(t, s.hasIterTimes, output)
				checkResult(t, m, s, p)
				names := strings.Split(bal, ",")
				for k, r := range m.res.Reports {
					require.Equal(t, names[min(k, len(names)-1)], r.Strategy)
				}
				switch {
				case pes == 1 || bal == "dummy":
					require.Zero(t, s.migrations, output)
				case bal == "rotate":
					require.Equal(t, 3*48, s.migrations, output) // every element, every step
				case bal == "greedy":
					require.Positive(t, s.migrations, output)
				}
				if bal == "greedy" && pes > 1 {
					// Greedy balances what it sees (the elements' loads
					// and the PEs' background) better than Block does
					// linear loads.
					r := m.res.Reports[0]
					require.Less(t, r.MaxAvgAfter, r.MaxAvgBefore, r.LogLine())
				}
			})
		}
	}
}

// TestLBTestComm runs the Comm strategy on a 2-D mesh with the
// communication graph (-lbcomm): it keeps most neighbours together,
// where Greedy scatters them. The strategies see the elements' loads
// alone (-lbobjonly): those are what the elements set, 20µs to 80µs a
// period, where the PEs' measured background load under -race is a few
// milliseconds, and more on a busy machine, so that with it both
// strategies would pile the elements onto whichever PE was least busy
// and cut nothing. Seeing the set loads alone, they see the same figures
// on every run, and make the same cuts.
func TestLBTestComm(t *testing.T) {
	p := params(64, 8, 2, "linear", "mesh2d")
	cuts := map[string]float64{}
	for _, bal := range []string{"comm", "greedy"} {
		m, code, output := run(t, 4, map[string]string{"balancer": bal, "lbcomm": "true", "lbobjonly": "true"}, p.args()...)
		require.Equal(t, 0, code, output)
		s := checkOK(t, output)
		require.Equal(t, 3, s.steps)
		require.Equal(t, bal, s.balancer)
		checkResult(t, m, s, p)
		for _, r := range m.res.Reports {
			require.InEpsilon(t, r.ObjLoad.Mean*float64(p.N), r.PELoadBefore.Mean*4, 1e-9, "no background: %s", r.LogLine())
		}
		cuts[bal] = m.res.Cut
		t.Logf("%s: cut=%.3f", bal, m.res.Cut)
	}
	// An 8×8 torus on 4 PEs: Block puts two rows on each PE, a quarter of
	// the messages between PEs; Greedy, which ignores the graph, sends
	// more than half between PEs (0.578), Comm about a third (0.352).
	// Without the graph Comm places as Greedy does, and the cuts are
	// equal.
	require.Less(t, cuts["comm"], 0.5, "%v", cuts)
	require.Less(t, cuts["comm"], cuts["greedy"], "%v", cuts)
}

// TestLBTestNoBalancer: without -balancer, AtSync resumes at once, no
// step runs, nothing moves.
func TestLBTestNoBalancer(t *testing.T) {
	for _, pes := range []int{1, 2, 5} {
		p := params(40, 7, 3, "hotspot", "mesh2d")
		m, code, output := run(t, pes, nil, p.args()...)
		require.Equal(t, 0, code, output)
		s := checkOK(t, output)
		require.Equal(t, "none", s.balancer)
		require.Zero(t, s.steps)
		require.Zero(t, s.migrations)
		require.False(t, s.hasIterTimes)
		checkResult(t, m, s, p)
		for i, pe := range m.res.FinalPEs {
			require.Equal(t, i*pes/40, pe, "element %d stays where Block put it", i)
		}
	}
}

// TestLBTestPatterns runs every load distribution and communication
// pattern, with and without a balancer, with AtSync every iteration and
// never, and with measured loads.
func TestLBTestPatterns(t *testing.T) {
	for _, load := range loads {
		for _, comm := range comms {
			for _, bal := range []string{"", "refine"} {
				t.Run(fmt.Sprintf("%s/%s/%s", load, comm, bal), func(t *testing.T) {
					p := params(30, 5, 1, load, comm)
					p.Seed = 7
					var flags map[string]string
					if bal != "" {
						flags = map[string]string{"balancer": bal}
					}
					m, code, output := run(t, 3, flags, p.args()...)
					require.Equal(t, 0, code, output)
					s := checkOK(t, output)
					checkResult(t, m, s, p)
					if bal != "" {
						require.Equal(t, 4, s.steps)
					}
				})
			}
		}
	}
	for _, c := range []struct {
		name string
		edit func(*Params)
	}{
		{"never", func(p *Params) { p.LBEvery = 0 }},
		{"every-iteration-but-the-last", func(p *Params) { p.LBEvery = p.Iters - 1 }},
		{"measured", func(p *Params) { p.SetLoad = false }},
		{"no-barrier-and-no-balancer", func(p *Params) { p.Barrier = false }},
		{"one-element", func(p *Params) { p.N = 1 }},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := params(20, 6, 2, "random", "random")
			c.edit(&p)
			var flags map[string]string
			if c.name != "no-barrier-and-no-balancer" {
				flags = map[string]string{"balancer": "greedy"}
			}
			m, code, output := run(t, 2, flags, p.args()...)
			require.Equal(t, 0, code, output)
			s := checkOK(t, output)
			checkResult(t, m, s, p)
			if flags != nil {
				require.Equal(t, p.syncs(), s.steps)
			}
		})
	}
}

// TestLBTestNoBarrier goes on right after ResumeFromSync, without waiting
// for the other elements: an element that arrives on a PE after the PE has
// started its next AtSync step joins that step late, and is counted.
func TestLBTestNoBarrier(t *testing.T) {
	p := params(1024, 20, 5, "linear", "none")
	p.Barrier = false
	m, code, output := run(t, 8, map[string]string{"balancer": "greedy"}, p.args()...)
	require.Equal(t, 0, code, output)
	checkResult(t, m, checkOK(t, output), p)
}

func TestLBTestCSV(t *testing.T) {
	file := filepath.Join(t.TempDir(), "steps.csv")
	p := params(32, 9, 4, "linear", "none")
	_, code, output := run(t, 2, map[string]string{"balancer": "refine"}, append(p.args(), "-csv", file)...)
	require.Equal(t, 0, code, output)
	require.Equal(t, 2, checkOK(t, output).steps)
	f, err := os.Open(file)
	require.NoError(t, err)
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	require.NoError(t, err)
	require.Len(t, rows, 3)
	require.Equal(t, lb.CSVHeader, rows[0])
	require.Equal(t, []string{"0", "refine", "2", "32"}, rows[1][:4])
	require.Equal(t, []string{"1", "refine", "2", "32"}, rows[2][:4])
}

func TestLBTestBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"-n", "0"}, {"-load", "gaussian"}, {"-comm", "tree"}, {"-iters", "0"}, {"-lbevery", "-1"},
		{"-work", "0s"}, {"-work", "5"}, {"-n", "8", "extra"}, {"-n", "8", "-p", "2"}, {"-balancer", "greedy"},
	} {
		_, code, output := run(t, 2, nil, args...)
		require.Equal(t, 2, code, "%v: %s", args, output)
		require.True(t, strings.HasPrefix(output, "lbtest: FAILED bad arguments: "), "%v: %q", args, output)
		require.Equal(t, 1, strings.Count(output, "\n"), "%v: %q", args, output)
	}
	// A strategy the lb package does not know, given in code (on the
	// command line, the runtime refuses it before the job starts).
	_, code, output := run(t, 2, map[string]string{"balancer": "nosuch"}, "-n", "8")
	require.Equal(t, 2, code, output)
	require.True(t, strings.HasPrefix(output, `lbtest: FAILED bad arguments: -balancer: lb: unknown strategy "nosuch"`), output)
}

// TestLBTestLostMessage loses a message on purpose: the job goes quiet
// before the end, and fails saying which element waits for what.
func TestLBTestLostMessage(t *testing.T) {
	dropAt = 3
	defer func() { dropAt = -1 }()
	for _, bal := range []string{"", "greedy"} {
		var flags map[string]string
		if bal != "" {
			flags = map[string]string{"balancer": bal}
		}
		p := params(16, 6, 2, "uniform", "ring")
		_, code, output := run(t, 2, flags, p.args()...)
		require.Equal(t, 1, code, output)
		lines := strings.Split(strings.TrimSpace(output), "\n")
		last := lines[len(lines)-1]
		require.True(t, strings.HasPrefix(last, "lbtest: FAILED the job went quiet before the end"), last)
		require.Regexp(t, `; element 1 \(PE \d\) has 0 of 1 messages of iteration 3`, last)
	}
}

// TestLBTestTwoProcesses runs the experiment as two processes with a
// balancer: elements move between the processes.
func TestLBTestTwoProcesses(t *testing.T) {
	p := params(64, 8, 2, "linear", "mesh2d")
	code, output := extest.RunProcesses(t, &out, (*Main).Start, chare.Config{PEs: 4, Nodes: 2, Args: p.args(),
		Flags: map[string]string{"balancer": "greedy"}, Timeout: timeout})
	require.Equal(t, 0, code, output)
	s := checkOK(t, output)
	require.Equal(t, 3, s.steps)
	require.Equal(t, 4, s.pes)
	require.Positive(t, s.migrations)
}

// TestWeights checks the load distributions: a mean of 1, and their shape.
func TestWeights(t *testing.T) {
	for _, n := range []int{1, 2, 15, 16, 17, 1024} {
		for _, load := range loads {
			sum := 0.0
			for i := range n {
				w := Weight(load, 3, i, n)
				require.Positive(t, w, "%s n=%d i=%d", load, n, i)
				sum += w
			}
			if load != "random" {
				require.InDelta(t, 1, sum/float64(n), 1e-12, "%s n=%d", load, n)
			}
		}
		require.InDelta(t, float64(n), Weight("linear", 0, n-1, n)/Weight("linear", 0, 0, n), 1e-9)
		if n >= 16 {
			require.InDelta(t, 16, Weight("hotspot", 0, 0, n)/Weight("hotspot", 0, n-1, n), 1e-9)
		}
	}
	sum := 0.0
	for i := range 100000 {
		w := Weight("random", 5, i, 100000)
		require.True(t, w >= 0.1 && w <= 1.9, w)
		sum += w
	}
	require.InDelta(t, 1, sum/100000, 0.01)
}

// TestNeighbours checks that under every pattern each element receives
// as many messages per iteration as it sends, and none to itself where
// the array is large enough.
func TestNeighbours(t *testing.T) {
	for _, n := range []int{1, 2, 3, 12, 30, 49, 97, 1024} {
		for _, comm := range comms {
			in := make([]int, n)
			for i := range n {
				out := Neighbours(comm, 9, i, n)
				require.Len(t, out, degree(comm))
				for _, j := range out {
					require.True(t, j >= 0 && j < n, "%s n=%d: %d → %d", comm, n, i, j)
					in[j]++
				}
			}
			for j, c := range in {
				require.Equal(t, degree(comm), c, "%s n=%d: element %d receives %d", comm, n, j, c)
			}
		}
	}
	rows, cols := meshShape(30)
	require.Equal(t, [2]int{5, 6}, [2]int{rows, cols})
	require.Equal(t, []int{1, 13, 6, 8}, Neighbours("mesh2d", 0, 7, 30)) // up, down, left, right of (1, 1)
	require.Equal(t, []int{24, 6, 5, 1}, Neighbours("mesh2d", 0, 0, 30)) // around the torus from (0, 0)
}
