// Lbtest is a synthetic load-balancing experiment in the manner of
// Charm++'s lb_test: a chare array whose elements do work in proportion to
// a load chosen by a distribution, exchange messages along a pattern, and
// stop at AtSync every few iterations so that the load balancer
// (-balancer) can move them.
//
// The array has -n elements, placed in contiguous runs on the PEs (the
// Block map). Element i has a load w(i) chosen by -load, normalised so
// that the mean is 1 (one load unit):
//
//	uniform   every element 1
//	linear    proportional to i+1
//	random    uniform in [0.1, 1.9], from -seed
//	hotspot   the first ⌈n/16⌉ elements 16 times the others
//
// Every iteration, an element sends one small message to each of its
// neighbours under -comm, waits for its own neighbours' messages of the
// iteration (a neighbour may already be further on: messages are counted
// by iteration), and then burns w(i) × -work of CPU in a deterministic busy
// loop (a number of steps of a xorshift generator, calibrated once at the
// start, so that the work is exactly proportional to the load). The
// patterns (each element receives as many messages as it sends):
//
//	none     no messages: the elements run on independently
//	ring     to element i+1 (mod n)
//	mesh2d   to the 4 neighbours on an r×c torus (r the largest divisor of
//	         n not above √n)
//	random   to (a_k·i + b_k) mod n for 4 affine permutations drawn from
//	         -seed
//
// After every -lbevery iterations (not after the last), an element calls
// AtSync, having told the runtime its load for the period with SetLoad
// (w(i) × -work × iterations; with -setload=false the measured CPU time is
// used instead, which varies from run to run on a busy machine). With the
// runtime's -balancer flag, each AtSync is a load-balancing step; the
// step's report is printed ("lbtest: lb step=..."). Without it, AtSync
// resumes at once. In ResumeFromSync, wherever the element then is, it
// goes on at once (in an entry method it sends itself). With -barrier it
// first contributes to a barrier (a reduction) and goes on when the
// barrier's broadcast comes back, once every element has resumed.
//
// At the end, every element reports what it sent and received and where it
// is; the job checks that every message of every iteration arrived exactly
// once, that every element ran every iteration, that the elements' own
// count of migrations matches the reports', and that the number of steps is
// the number of AtSyncs. If the job goes quiet before the end (a message
// lost, a step that never finished), quiescence detection notices, and the
// job fails saying where the elements are.
//
// Run it with
//
//	go run ./examples/lbtest -p 8 -balancer greedy
//	go run ./examples/lbtest -p 8 -balancer refine -load hotspot -comm mesh2d
//	go run ./examples/lbtest -p 4 -balancer comm -lbcomm -comm mesh2d -n 256
//	go run ./examples/lbtest -p 4 -nodes 2 -balancer greedy
//
// The runtime takes its flags (-p N, -nodes M, -balancer, -lbcomm,
// -lbdebug, -lbcsv...) anywhere on the line. The last line is
//
//	lbtest: ok n=1024 pes=8 load=linear comm=none steps=3 balancer=greedy maxavg_before=1.874 maxavg_after=1.000 migrations=... time=...s final_maxavg=... [cut=...] [iter_ms_before=... iter_ms_after=...]
//
// or "lbtest: FAILED ..." with a non-zero exit code. maxavg_before is the
// imbalance (maximum over average PE load) before the first step, and
// maxavg_after after the last, from the balancer's reports (with no step:
// both are final_maxavg); migrations add up the steps'. The reports' PE
// loads include each PE's measured background load (its busy time outside
// the elements' entry methods), so they vary from run to run even with
// -setload. final_maxavg is the imbalance of the loads w(i) on the PEs
// where the elements end, computed from the loads themselves; cut is the
// share of the messages that go between PEs there (not with -comm none).
// time is the wall time of the iterations; iter_ms_before is the time per
// iteration before the first step and iter_ms_after after the last (AtSync
// steps are barriers, so these are the job's).
package main

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/charmgo/charm/array"
	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/chare/reducer"
	"github.com/charmgo/charm/internal/exutil"
	"github.com/charmgo/charm/lb"
)

// out is where the program prints; the test replaces it.
var out io.Writer = os.Stdout

// dropAt, if not negative, makes element 0 leave out its first message
// of that iteration: the tests lose a message on purpose with it.
var dropAt = -1

// Params are the experiment's parameters.
type Params struct {
	N       int
	Load    string
	Comm    string
	Iters   int
	LBEvery int
	Work    time.Duration // CPU work per iteration of an element of load 1
	Seed    uint64
	SetLoad bool
	Barrier bool
	CSV     string
}

// The load distributions and communication patterns.
var (
	loads = []string{"uniform", "linear", "random", "hotspot"}
	comms = []string{"none", "ring", "mesh2d", "random"}
)

// randomDegree is the number of messages an element sends (and receives)
// per iteration under -comm random.
const randomDegree = 4

// Main is the main chare.
type Main struct {
	chare.Chare[Main]
	p        Params
	balancer string // the -balancer flag, "none" without it
	periodic bool   // -lbperiod is set: steps also come from a timer
	workers  array.Proxy[Worker, int]
	began    time.Time
	reports  []lb.Report
	at       []time.Time // when each report arrived
	finished bool
	statuses []Status // the answers to Status after the job went quiet
	quiet    int      // quiescence detected so often
	res      Result
}

// Result is what the program found, for the test.
type Result struct {
	Reports                   []lb.Report
	Migrations                int // the reports' moves, added up
	Departures                int // the elements' AboutToMigrate calls
	MaxAvgBefore, MaxAvgAfter float64
	FinalMaxAvg               float64
	Cut                       float64 // the share of messages between PEs, at the end
	FinalPEs                  []int   // where each element ended
	Sent, Received            int
	Elapsed                   time.Duration
}

// Worker is an element of the array. Its exported fields are its state
// and travel with it when it migrates.
type Worker struct {
	array.Element[Worker, int]

	P      Params
	Spins  float64 // busy-loop steps per second of work
	Weight float64 // the element's load, in load units
	Out    []int   // where its messages go each iteration
	Expect int     // messages it receives each iteration

	Iter    int         // iterations completed
	SentFor bool        // the messages of iteration Iter were sent
	Syncing bool        // waiting in AtSync (until Go)
	Resumed bool        // ResumeFromSync ran, Go has not yet
	Since   int         // iterations since the last AtSync
	Got     map[int]int // messages received, by iteration (≥ Iter)

	Sent, Received       int
	Departures, Arrivals int
	Errors               int
	FirstError           string
	Sink                 uint64 // the busy loop's result, so that it is not optimised away
	Done, StatusTo       chare.Callback
	HomePE               int
}

// Setup is the constructor's message.
type Setup struct {
	P     Params
	Spins float64
	Done  chare.Callback // the final gather
	// StatusTo receives a Status when the job went quiet.
	StatusTo chare.Callback
}

// Msg is the message of one iteration from one element to another.
type Msg struct{ Iter, From int }

// Final is an element's contribution to the final gather.
type Final struct {
	PE, HomePE           int
	Weight               float64
	Iter                 int
	Sent, Received       int
	Pending              int // messages still counted for later iterations
	Departures, Arrivals int
	Errors               int
	FirstError           string
}

// Status is where an element is, after the job went quiet.
type Status struct {
	Index, PE, Iter, Got, Expect int
	Syncing, Resumed, SentFor    bool
}

func init() {
	chare.Register[Main]()
	chare.Register[Worker](
		chare.Fast((*Worker).Init),
		chare.Fast((*Worker).Recv),
	)
}

func main() { os.Exit(chare.Main((*Main).Start)) }

func parseFlags(args []string) (Params, error) {
	p := Params{}
	fs := exutil.NewFlagSet("lbtest")
	fs.IntVar(&p.N, "n", 1024, "number of array elements")
	fs.StringVar(&p.Load, "load", "linear", "load distribution: "+strings.Join(loads, ", "))
	fs.StringVar(&p.Comm, "comm", "none", "communication pattern: "+strings.Join(comms, ", "))
	fs.IntVar(&p.Iters, "iters", 20, "iterations")
	fs.IntVar(&p.LBEvery, "lbevery", 5, "call AtSync every this many `iterations` (0: never)")
	fs.DurationVar(&p.Work, "work", 100*time.Microsecond, "CPU work per iteration of an element of mean load")
	fs.Uint64Var(&p.Seed, "seed", 1, "seed of the random loads and the random pattern")
	fs.BoolVar(&p.SetLoad, "setload", true, "tell the balancer each element's exact load (SetLoad) instead of the measured one")
	fs.BoolVar(&p.Barrier, "barrier", false, "after a step, wait until every element has resumed before going on")
	fs.StringVar(&p.CSV, "csv", "", "write the steps' reports as CSV to this `file`")
	if err := fs.Parse(args); err != nil {
		return p, err
	}
	switch {
	case fs.NArg() > 0:
		return p, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	case p.N < 1:
		return p, fmt.Errorf("-n %d: want at least 1 element", p.N)
	case !slices.Contains(loads, p.Load):
		return p, fmt.Errorf("-load %q: want one of %s", p.Load, strings.Join(loads, ", "))
	case !slices.Contains(comms, p.Comm):
		return p, fmt.Errorf("-comm %q: want one of %s", p.Comm, strings.Join(comms, ", "))
	case p.Iters < 1:
		return p, fmt.Errorf("-iters %d: want at least 1", p.Iters)
	case p.LBEvery < 0:
		return p, fmt.Errorf("-lbevery %d: want 0 (never) or more", p.LBEvery)
	case p.Work <= 0:
		return p, fmt.Errorf("-work %v: want a positive duration such as 50us", p.Work)
	}
	return p, nil
}

// Start parses the flags, calibrates the busy loop, creates the array and
// starts it; Finish receives the elements' figures.
func (m *Main) Start(args []string) {
	p, err := parseFlags(args)
	if err != nil {
		exutil.FlagError(out, m, "lbtest", err)
		return
	}
	m.p, m.balancer = p, "none"
	job := m.Here().Job()
	if v, ok := job.Flag(lb.FlagBalancer); ok {
		if _, err := lb.ParseBalancer(v); err != nil {
			exutil.Fail(out, m, "lbtest", 2, "bad arguments: -balancer: %v", err)
			return
		}
		m.balancer = strings.ReplaceAll(strings.TrimSpace(v), " ", "")
	}
	_, m.periodic = job.Flag(lb.FlagPeriod)
	if m.balancer != "none" {
		if err := lb.NotifyEntry(m, m.ThisProxy(), (*Main).Report); err != nil {
			m.fail(1, "asking for the reports: %v", err)
			return
		}
	}
	setup := Setup{P: p, Spins: calibrated(),
		Done:     chare.EntryCallbackFor(m.ThisProxy(), finalGather, (*Main).Finish),
		StatusTo: chare.EntryCallback(m.ThisProxy(), (*Main).Status)}
	m.workers, err = array.NewWith(m, array.Dims(p.N), (*Worker).Init, setup, array.WithMap(array.Block))
	if err != nil {
		m.fail(1, "creating the array: %v", err)
		return
	}
	m.began = time.Now()
	if err := chare.Send0(m, m.workers, (*Worker).Begin); err != nil {
		m.fail(1, "starting the elements: %v", err)
		return
	}
	m.DetectQuiescence(chare.EntryCallback0(m.ThisProxy(), (*Main).Quiet))
}

// Report receives the report of a load-balancing step.
func (m *Main) Report(r lb.Report) {
	m.reports = append(m.reports, r)
	m.at = append(m.at, time.Now())
	fmt.Fprintf(out, "lbtest: %s\n", r.LogLine())
}

// syncs returns the number of AtSyncs of a run: after every LBEvery
// iterations but the last.
func (p Params) syncs() int {
	if p.LBEvery == 0 {
		return 0
	}
	return (p.Iters - 1) / p.LBEvery
}

// finalGather gathers the elements' figures at the end. It is made (and
// registered) when the package is initialized, so that every process can
// decode its partial results.
var finalGather = reducer.GatherOf[int, Final]()

// Finish receives every element's figures, checks them and ends the job.
func (m *Main) Finish(items []reducer.Pair[int, Final]) {
	m.finished = true
	elapsed := time.Since(m.began)
	p := m.p
	if len(items) != p.N {
		m.fail(1, "gathered the figures of %d elements, want %d", len(items), p.N)
		return
	}
	var problems []string
	problem := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	pes := make([]int, p.N)
	peLoad := make([]float64, m.NumPEs())
	var sent, received, pending, departures, arrivals, errs int
	firstError := ""
	for k, it := range items {
		f := it.Value
		if it.Index != k {
			m.fail(1, "item %d of the gather is element %d, want element %d", k, it.Index, k)
			return
		}
		if f.Iter != p.Iters {
			problem("element %d stopped after %d iterations, want %d", k, f.Iter, p.Iters)
		}
		if f.PE < 0 || f.PE >= m.NumPEs() {
			problem("element %d says it is on PE %d", k, f.PE)
			continue
		}
		pes[k] = f.PE
		peLoad[f.PE] += f.Weight
		sent += f.Sent
		received += f.Received
		pending += f.Pending
		departures += f.Departures
		arrivals += f.Arrivals
		errs += f.Errors
		if firstError == "" {
			firstError = f.FirstError
		}
	}
	want := p.N * p.Iters * degree(p.Comm)
	if sent != want || received != want {
		problem("%d messages sent and %d received, want %d (lost: %d)", sent, received, want, sent-received)
	}
	if pending != 0 {
		problem("%d messages left over for iterations never run", pending)
	}
	if errs != 0 {
		problem("%d bad messages (the first: %s)", errs, firstError)
	}
	if departures != arrivals {
		problem("%d departures (AboutToMigrate) but %d arrivals (JustMigrated)", departures, arrivals)
	}
	migrations := 0
	for _, r := range m.reports {
		migrations += r.Migrations
		if r.Error != "" {
			problem("step %d: the placement of %s was not used: %s", r.Step, r.Strategy, r.Error)
		}
		if r.Objects != p.N {
			problem("step %d saw %d objects, want %d", r.Step, r.Objects, p.N)
		}
	}
	if migrations != departures {
		problem("the reports move %d elements, the elements moved %d times", migrations, departures)
	}
	steps := len(m.reports)
	switch {
	case m.balancer == "none" && steps != 0:
		problem("%d load-balancing steps without a balancer", steps)
	case m.balancer != "none" && !m.periodic && steps != p.syncs():
		problem("%d load-balancing steps for %d AtSyncs", steps, p.syncs())
	case m.balancer != "none" && steps < p.syncs():
		problem("%d load-balancing steps for %d AtSyncs", steps, p.syncs())
	}
	if m.balancer != "none" {
		kept, err := lb.Reports(m)
		if err != nil {
			problem("reading the reports: %v", err)
		} else if len(kept) != steps {
			problem("lb.Reports has %d reports, lb.Notify sent %d", len(kept), steps)
		}
	}
	final := lb.MaxOverAvg(peLoad)
	cut := 0.0 // the share of the messages that go to another PE
	if d := degree(p.Comm); d > 0 {
		off := 0
		for i := range p.N {
			for _, j := range Neighbours(p.Comm, p.Seed, i, p.N) {
				if pes[i] != pes[j] {
					off++
				}
			}
		}
		cut = float64(off) / float64(p.N*d)
	}
	before, after := final, final
	if steps > 0 {
		before, after = m.reports[0].MaxAvgBefore, m.reports[steps-1].MaxAvgAfter
	}
	m.res = Result{Reports: m.reports, Migrations: migrations, Departures: departures, MaxAvgBefore: before,
		MaxAvgAfter: after, FinalMaxAvg: final, Cut: cut, FinalPEs: pes, Sent: sent, Received: received, Elapsed: elapsed}
	if p.CSV != "" {
		if err := writeCSV(p.CSV, m.reports); err != nil {
			problem("writing %s: %v", p.CSV, err)
		}
	}
	if len(problems) > 0 {
		m.fail(1, "n=%d pes=%d load=%s comm=%s balancer=%s: %s", p.N, m.NumPEs(), p.Load, p.Comm, m.balancer, strings.Join(problems, "; "))
		return
	}
	extra := ""
	if p.Comm != "none" {
		extra = fmt.Sprintf(" cut=%.3f", cut)
	}
	if steps > 0 && !m.periodic {
		first := m.at[0].Sub(m.began) / time.Duration(p.LBEvery)
		last := time.Since(m.at[steps-1]) / time.Duration(p.Iters-steps*p.LBEvery)
		extra += fmt.Sprintf(" iter_ms_before=%.3f iter_ms_after=%.3f", float64(first)/1e6, float64(last)/1e6)
	}
	fmt.Fprintf(out, "lbtest: ok n=%d pes=%d load=%s comm=%s steps=%d balancer=%s maxavg_before=%.3f maxavg_after=%.3f migrations=%d time=%.3fs final_maxavg=%.3f%s\n",
		p.N, m.NumPEs(), p.Load, p.Comm, steps, m.balancer, before, after, migrations, elapsed.Seconds(), final, extra)
	m.Exit(0)
}

func writeCSV(path string, reports []lb.Report) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	err = lb.WriteCSV(f, reports)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// Quiet runs when the job has gone quiet. Before the end, something was
// lost: the elements are asked where they are, and quiescence is
// detected again in case they cannot answer.
func (m *Main) Quiet() {
	if m.finished {
		return
	}
	m.quiet++
	if m.quiet > 1 {
		m.fail(1, "the job went quiet before the end, and %d of %d elements said where they are", len(m.statuses), m.p.N)
		return
	}
	if err := chare.Send0(m, m.workers, (*Worker).Status); err != nil {
		m.fail(1, "the job went quiet before the end; asking the elements where they are: %v", err)
		return
	}
	m.DetectQuiescence(chare.EntryCallback0(m.ThisProxy(), (*Main).Quiet))
}

// Status receives where an element is, after the job went quiet.
func (m *Main) Status(s Status) {
	if m.finished {
		return
	}
	m.statuses = append(m.statuses, s)
	if len(m.statuses) < m.p.N {
		return
	}
	slices.SortFunc(m.statuses, func(a, b Status) int { return a.Index - b.Index })
	minIt, maxIt, syncing, resumed := m.p.Iters, 0, 0, 0
	var waiting []string
	for _, s := range m.statuses {
		minIt, maxIt = min(minIt, s.Iter), max(maxIt, s.Iter)
		switch {
		case s.Resumed:
			resumed++
		case s.Syncing:
			syncing++
		case s.Iter < m.p.Iters && len(waiting) < 5:
			waiting = append(waiting, fmt.Sprintf("; element %d (PE %d) has %d of %d messages of iteration %d", s.Index, s.PE, s.Got, s.Expect, s.Iter))
		}
	}
	m.fail(1, "the job went quiet before the end (a message lost or a load-balancing step that never finished): elements at iterations %d..%d of %d, %d waiting in AtSync, %d resumed but waiting for the others, %d load-balancing steps done%s",
		minIt, maxIt, m.p.Iters, syncing, resumed, len(m.reports), strings.Join(waiting, ""))
}

// fail prints the final FAILED line and ends the job with code.
func (m *Main) fail(code int, format string, args ...any) {
	m.finished = true
	exutil.Fail(out, m, "lbtest", code, format, args...)
}

// ---- loads, patterns and work ----

// unit returns a number in [0, 1) from a hash of the seed and i.
func unit(seed uint64, i int) float64 {
	return float64(exutil.Mix(exutil.Mix(seed)^uint64(i))>>11) / (1 << 53)
}

// Weight is the load of element i of n under distribution dist, in load
// units (the mean over the elements is 1).
func Weight(dist string, seed uint64, i, n int) float64 {
	switch dist {
	case "linear":
		return float64(i+1) / (float64(n+1) / 2)
	case "random":
		return 0.1 + 1.8*unit(seed, i)
	case "hotspot":
		hot := (n + 15) / 16
		sum := float64(16*hot + n - hot)
		if i < hot {
			return 16 * float64(n) / sum
		}
		return float64(n) / sum
	}
	return 1
}

// degree is the number of messages an element sends, and receives, per
// iteration under pattern comm.
func degree(comm string) int {
	switch comm {
	case "ring":
		return 1
	case "mesh2d":
		return 4
	case "random":
		return randomDegree
	}
	return 0
}

// meshShape returns the rows and columns of the torus of n elements: the
// rows are the largest divisor of n not above √n.
func meshShape(n int) (rows, cols int) {
	rows = 1
	for r := 1; r*r <= n; r++ {
		if n%r == 0 {
			rows = r
		}
	}
	return rows, n / rows
}

// Neighbours returns where element i of n sends its messages under
// pattern comm; every element receives as many as it sends.
func Neighbours(comm string, seed uint64, i, n int) []int {
	switch comm {
	case "ring":
		return []int{(i + 1) % n}
	case "mesh2d":
		rows, cols := meshShape(n)
		r, c := i/cols, i%cols
		return []int{
			(r+rows-1)%rows*cols + c, (r+1)%rows*cols + c,
			r*cols + (c+cols-1)%cols, r*cols + (c+1)%cols,
		}
	case "random":
		// Affine permutations i → a·i + b (mod n), a prime to n: each
		// element is the image of exactly one element under each.
		out := make([]int, randomDegree)
		state := exutil.Mix(seed ^ 0x5eed)
		for k := range out {
			a := 1
			if n > 1 {
				for {
					a = 1 + int(exutil.SplitMix64(&state)%uint64(n-1))
					if gcd(a, n) == 1 {
						break
					}
				}
			}
			b := int(exutil.SplitMix64(&state) % uint64(n))
			out[k] = int((int64(a)*int64(i) + int64(b)) % int64(n))
		}
		return out
	}
	return nil
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// spin runs n steps of a xorshift generator from x: the busy loop.
func spin(x uint64, n int64) uint64 {
	x |= 1
	for ; n > 0; n-- {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	return x
}

var (
	calibrationSink uint64
	calibrated      = sync.OnceValue(calibrate)
)

// calibrate returns the busy loop's steps per second on this machine: the
// best of a few runs, so that a busy moment does not count. A process
// calibrates once (calibrated), so that the time it takes does not add to
// PE 0's background load in every job of a test.
func calibrate() float64 {
	const steps = 1 << 18
	best := 0.0
	for range 5 {
		t0 := time.Now()
		calibrationSink ^= spin(calibrationSink, steps)
		if d := time.Since(t0).Seconds(); d > 0 {
			best = max(best, steps/d)
		}
	}
	return best
}

// ---- the elements ----

// Init is the constructor: it runs on the element's first PE.
func (w *Worker) Init(s Setup) {
	i := w.ThisIndex()
	w.P, w.Spins, w.Done, w.StatusTo = s.P, s.Spins, s.Done, s.StatusTo
	w.Weight = Weight(s.P.Load, s.P.Seed, i, s.P.N)
	w.Out = Neighbours(s.P.Comm, s.P.Seed, i, s.P.N)
	w.Expect = len(w.Out)
	w.Got = map[int]int{}
	w.HomePE = w.PE()
	w.Sink = exutil.Mix(uint64(i) + 1)
}

// Begin starts the first iteration.
func (w *Worker) Begin() { w.advance() }

// Recv counts a neighbour's message.
func (w *Worker) Recv(m Msg) {
	if m.Iter < w.Iter || m.Iter >= w.P.Iters {
		w.bad(fmt.Sprintf("element %d got a message from %d for iteration %d while at %d", w.ThisIndex(), m.From, m.Iter, w.Iter))
		return
	}
	w.Received++
	if w.Got == nil { // a map emptied by msgpack comes back nil
		w.Got = map[int]int{}
	}
	w.Got[m.Iter]++
	if w.Got[m.Iter] > w.Expect {
		w.bad(fmt.Sprintf("element %d got %d messages for iteration %d, want %d", w.ThisIndex(), w.Got[m.Iter], m.Iter, w.Expect))
	}
	w.advance()
}

func (w *Worker) bad(what string) {
	if w.Errors == 0 {
		w.FirstError = what
	}
	w.Errors++
}

// advance runs the iterations whose messages are all here.
func (w *Worker) advance() {
	for w.Iter < w.P.Iters && !w.Syncing {
		if !w.SentFor {
			w.send()
		}
		if w.Got[w.Iter] < w.Expect {
			return
		}
		delete(w.Got, w.Iter)
		w.Sink = spin(w.Sink, int64(w.Weight*w.P.Work.Seconds()*w.Spins))
		w.Iter++
		w.Since++
		w.SentFor = false
		if w.Iter == w.P.Iters {
			w.finish()
			return
		}
		if w.P.LBEvery > 0 && w.Iter%w.P.LBEvery == 0 {
			if w.P.SetLoad {
				if err := w.SetLoad(w.Weight * w.P.Work.Seconds() * float64(w.Since)); err != nil {
					w.Abort(err)
					return
				}
			}
			w.Syncing = true
			w.AtSync() // ResumeFromSync goes on, wherever the element then is
			return
		}
	}
}

// send sends the messages of iteration w.Iter.
func (w *Worker) send() {
	w.SentFor = true
	for k, to := range w.Out {
		if k == 0 && w.Iter == dropAt && w.ThisIndex() == 0 {
			continue // lost on purpose (tests)
		}
		if err := chare.Send(w, w.ThisProxy().At(to), (*Worker).Recv, Msg{Iter: w.Iter, From: w.ThisIndex()}); err != nil {
			w.Abort(err)
			return
		}
		w.Sent++
	}
}

// ResumeFromSync runs after a load-balancing step, wherever the element
// then is. The iterations go on in Go, an entry method of their own: the
// runtime calls ResumeFromSync outside the timing of entry methods, so
// work done here would count as the PE's background load, not the
// element's. With -barrier, Go comes once every element has resumed (a
// reduction's broadcast), as Charm++ resumes its elements after the
// step's migrations; without, at once.
func (w *Worker) ResumeFromSync() {
	if !w.Syncing || w.Resumed {
		w.bad(fmt.Sprintf("element %d resumed from AtSync at iteration %d without waiting there", w.ThisIndex(), w.Iter))
		return
	}
	w.Resumed = true
	var err error
	if w.P.Barrier {
		err = w.Contribute(nil, reducer.Nop, chare.EntryCallback0(w.ThisProxy(), (*Worker).Go))
	} else {
		err = chare.Send0(w, w.ThisProxy().At(w.ThisIndex()), (*Worker).Go)
	}
	if err != nil {
		w.Abort(err)
	}
}

// Go goes on after ResumeFromSync.
func (w *Worker) Go() {
	if !w.Resumed {
		w.bad(fmt.Sprintf("element %d told to go on at iteration %d without having resumed", w.ThisIndex(), w.Iter))
		return
	}
	w.Syncing, w.Resumed, w.Since = false, false, 0
	w.advance()
}

// finish contributes the element's figures to the final gather.
func (w *Worker) finish() {
	f := Final{PE: w.PE(), HomePE: w.HomePE, Weight: w.Weight, Iter: w.Iter, Sent: w.Sent, Received: w.Received,
		Departures: w.Departures, Arrivals: w.Arrivals, Errors: w.Errors, FirstError: w.FirstError}
	for _, c := range w.Got {
		f.Pending += c
	}
	if err := w.Contribute(f, finalGather, w.Done); err != nil {
		w.Abort(err)
	}
}

// Status tells the main chare where the element is.
func (w *Worker) Status() {
	s := Status{Index: w.ThisIndex(), PE: w.PE(), Iter: w.Iter, Got: w.Got[w.Iter], Expect: w.Expect, Syncing: w.Syncing, Resumed: w.Resumed, SentFor: w.SentFor}
	if err := w.StatusTo.Send(w, s); err != nil {
		w.Abort(err)
	}
}

// AboutToMigrate runs on the PE the element leaves.
func (w *Worker) AboutToMigrate() { w.Departures++ }

// JustMigrated runs on the PE the element reaches.
func (w *Worker) JustMigrated() {
	w.Arrivals++
	if w.Got == nil {
		w.Got = map[int]int{}
	}
}
