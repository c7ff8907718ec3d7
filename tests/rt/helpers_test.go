package rt_test

import (
	"fmt"
	"maps"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/charmgo/charm/actor"
	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/chare/reducer"
	"github.com/charmgo/charm/internal/jobtest"
)

// jobDeadline bounds every job a test runs: a job that hangs fails the
// test loudly instead of stalling the suite.
const jobDeadline = 30 * time.Second

// Every job of these tests can run as several processes. With
// CHARM_TEST_NODES=M (default 1), runJob makes the test's process node 0
// of a job of M processes, and launches nodes 1..M-1 as this test binary
// re-running only the current test (-test.run anchored to its full name).
// In a launched process the test function runs again up to its first
// job, whose Run joins the job that the environment names (whichever job
// of the test launched it: each job launches its own nodes, and only the
// environment, not the test's code, says which job to join), and the
// process exits with the job's code as soon as Run returns: the main
// function and the test's checks run on node 0 only. (So every chare
// type, the main chare's among them, is registered in an init function:
// the nodes of a job must agree on them.) TestSuiteAcrossProcesses runs
// the suite this way.
const envTestNodes = "CHARM_TEST_NODES"

// envTestWait, set to a wait policy (active, passive), runs the suite's
// jobs that jobConfig makes with it (chare.Config.Wait; by default the
// default, WaitActive); TestWaitPolicyJobs runs a few under each.
const envTestWait = "CHARM_TEST_WAIT"

// testWait is the wait policy every job runs with.
var testWait = func() actor.WaitPolicy {
	v := os.Getenv(envTestWait)
	if v == "" {
		return actor.WaitActive
	}
	w, err := actor.ParseWaitPolicy(v)
	if err != nil {
		panic(fmt.Sprintf("%s: %v", envTestWait, err))
	}
	return w
}()

// testNodes is the number of processes every job runs as.
var testNodes = func() int {
	v := os.Getenv(envTestNodes)
	if v == "" {
		return 1
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		panic(fmt.Sprintf("%s=%q: want a whole number of at least 1", envTestNodes, v))
	}
	return n
}()

func init() {
	// A test binary built with -race sleeps a second when it exits, for
	// late race reports; every launched node would add that second to its
	// job (node 0 waits for the others to exit). Their reports are printed
	// as they are found anyway.
	if testNodes > 1 && !strings.Contains(os.Getenv("GORACE"), "atexit_sleep_ms") {
		_ = os.Setenv("GORACE", strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	}
}

// runJob runs a job and returns its exit code and error; a job that does
// not end before the deadline is aborted with an error naming it.
func runJob[T any](t *testing.T, pes int, start func(*T, []string)) (int, error) {
	t.Helper()
	return runConfig(t, jobConfig(t, pes), start)
}

// jobConfig is the configuration of a job of pes PEs, split between
// testNodes processes. A job of fewer PEs than that cannot be: the test
// is skipped.
func jobConfig(t *testing.T, pes int) chare.Config {
	t.Helper()
	cfg := chare.Config{PEs: pes, Timeout: jobDeadline, Wait: testWait}
	if testNodes > 1 && !chare.IsLaunchedNode() {
		if pes < testNodes {
			t.Skipf("%d PEs cannot be split between %d processes (%s=%d)", pes, testNodes, envTestNodes, testNodes)
		}
		cfg.Nodes = testNodes
		cfg.Launch = jobtest.Launch(t)
	}
	return cfg
}

// runConfig runs a job. In a process that node 0 launched, it joins the
// job that the environment names (the PEs come from there too), and the
// process ends with the job.
func runConfig[T any](t *testing.T, cfg chare.Config, start func(*T, []string)) (int, error) {
	t.Helper()
	code, err := chare.Run(cfg, start)
	jobtest.EndNode(t, code, err)
	return code, err
}

// inProcessOnly skips a test whose jobs must run in one process, for the
// reason given, when they would run as several.
func inProcessOnly(t *testing.T, why string) {
	t.Helper()
	if testNodes > 1 {
		t.Skipf("in one process only (%s=%d): %s", envTestNodes, testNodes, why)
	}
}

// node0PEs is how many of a job's pes PEs live in the test's own process
// (node 0, PEs 0..node0PEs-1), where the function callbacks it makes work.
func node0PEs(pes int) int {
	_, hi := actor.PERange(0, testNodes, pes)
	return hi
}

// run runs a job that must not abort and returns its exit code.
func run[T any](t *testing.T, pes int, start func(*T, []string)) int {
	t.Helper()
	code, err := runJob(t, pes, start)
	require.NoError(t, err)
	return code
}

// tmain is the main chare of most tests: the test's function drives the
// job from PE 0, in the main thread, where it may wait for futures.
type tmain struct{ chare.Chare[tmain] }

func init() { chare.Register[tmain]() }

// runMain runs fn as the main function of a job on pes PEs and ends the
// job when fn returns; the job must end with code 0 and no error.
func runMain(t *testing.T, pes int, fn func(m *tmain)) {
	t.Helper()
	code := run(t, pes, func(m *tmain, _ []string) {
		fn(m)
		m.Exit(0)
	})
	require.Equal(t, 0, code)
}

// jobT lets testify's require run inside a job, where the test's own *T
// must not be used (FailNow would end a PE's goroutine and hang the job).
// A failed check panics instead: the runtime aborts the job with a
// PanicError that carries the check's message, and the test fails on the
// error that Run returns.
type jobT struct{}

func (jobT) Errorf(format string, args ...any) { panic(fmt.Sprintf(format, args...)) }
func (jobT) FailNow()                          { panic("check failed") }

// inJob is require for code running inside a job.
var inJob = require.New(jobT{})

// get waits in a threaded context (the main function, or a threaded entry
// method) for a future's value; failing to get it fails the job.
func get[T any](ctx chare.Context, f chare.Future[T]) T {
	v, err := f.Get(ctx)
	inJob.NoError(err)
	return v
}

// quiesce waits in a threaded context until the job is quiescent.
func quiesce(ctx interface {
	chare.Context
	DetectQuiescence(chare.Callback)
}) {
	f := chare.NewFuture[any](ctx)
	ctx.DetectQuiescence(f.Callback())
	get(ctx, f)
}

// Reducers of our own, so that these tests do not depend on
// chare/reducer. They have a Codec and are registered in every process,
// so that their reductions cross processes.

func init() {
	registerReducers(sumInt{}, sumFloat{})
}

// registerReducers registers reducers by name, as the process that
// decodes a partial result finds its reducer.
func registerReducers(rs ...reducer.Reducer) {
	for _, r := range rs {
		if err := reducer.Register(r); err != nil {
			panic(err)
		}
	}
}

// withCodec gives a reducer the Codec of partial results of type P.
type withCodec[P any] struct{}

func (withCodec[P]) EncodePartial(enc *msgpack.Encoder, p any) error {
	return reducer.CodecOf[P]().EncodePartial(enc, p)
}

func (withCodec[P]) DecodePartial(dec *msgpack.Decoder) (any, error) {
	return reducer.CodecOf[P]().DecodePartial(dec)
}

// sumInt adds int contributions.
type sumInt struct{ withCodec[int] }

func (sumInt) Name() string                  { return "test_sum_int" }
func (sumInt) Lift(v, _ any) (any, error)    { return v.(int), nil }
func (sumInt) Combine(a, b any) (any, error) { return a.(int) + b.(int), nil }
func (sumInt) Result(p any) (any, error)     { return p, nil }

// sumFloat adds float64 contributions.
type sumFloat struct{ withCodec[float64] }

func (sumFloat) Name() string                  { return "test_sum_float64" }
func (sumFloat) Lift(v, _ any) (any, error)    { return v.(float64), nil }
func (sumFloat) Combine(a, b any) (any, error) { return a.(float64) + b.(float64), nil }
func (sumFloat) Result(p any) (any, error)     { return p, nil }

// gather collects contributions of type T in a map keyed by the
// contributor's index, of type I (an array's index type, or int for the
// PE of a group branch); a contributor that appears twice in one
// reduction is an error. Register every instance that a test uses.
type gather[I comparable, T any] struct{ withCodec[map[I]T] }

func (gather[I, T]) Name() string {
	return "test_gather(" + reflect.TypeFor[I]().String() + "," + reflect.TypeFor[T]().String() + ")"
}

func (g gather[I, T]) Lift(v, index any) (any, error) {
	i, ok := index.(I)
	if !ok {
		return nil, fmt.Errorf("%s: index %v is a %T", g.Name(), index, index)
	}
	x, ok := v.(T)
	if !ok {
		return nil, fmt.Errorf("%s: contribution %v is a %T", g.Name(), v, v)
	}
	return map[I]T{i: x}, nil
}

func (gather[I, T]) Combine(a, b any) (any, error) {
	out := maps.Clone(a.(map[I]T))
	for k, v := range b.(map[I]T) {
		if _, dup := out[k]; dup {
			return nil, fmt.Errorf("gather: %v contributed twice", k)
		}
		out[k] = v
	}
	return out, nil
}

func (gather[I, T]) Result(p any) (any, error) { return p, nil }

// upTo returns 0..n-1.
func upTo(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}
