package rt_test

import (
	"fmt"
	"maps"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/chare"
)

// jobDeadline bounds every job a test runs: a job that hangs fails the
// test loudly instead of stalling the suite.
const jobDeadline = 30 * time.Second

// runJob runs a job and returns its exit code and error; a job that does
// not end before the deadline is aborted with an error naming it.
func runJob[T any](t *testing.T, pes int, start func(*T, []string)) (int, error) {
	t.Helper()
	return chare.Run(chare.Config{PEs: pes, Timeout: jobDeadline}, start)
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

// Reducers of our own, so that these tests do not depend on chare/reducer.

// sumInt adds int contributions.
type sumInt struct{}

func (sumInt) Name() string                  { return "test_sum_int" }
func (sumInt) Lift(v, _ any) (any, error)    { return v.(int), nil }
func (sumInt) Combine(a, b any) (any, error) { return a.(int) + b.(int), nil }
func (sumInt) Result(p any) (any, error)     { return p, nil }

// sumFloat adds float64 contributions.
type sumFloat struct{}

func (sumFloat) Name() string                  { return "test_sum_float64" }
func (sumFloat) Lift(v, _ any) (any, error)    { return v.(float64), nil }
func (sumFloat) Combine(a, b any) (any, error) { return a.(float64) + b.(float64), nil }
func (sumFloat) Result(p any) (any, error)     { return p, nil }

// gather collects the contributions in a map keyed by the contributor's
// index; a contributor that appears twice in one reduction is an error.
type gather struct{}

func (gather) Name() string { return "test_gather" }
func (gather) Lift(v, index any) (any, error) {
	return map[any]any{index: v}, nil
}
func (gather) Combine(a, b any) (any, error) {
	out := maps.Clone(a.(map[any]any))
	for k, v := range b.(map[any]any) {
		if _, dup := out[k]; dup {
			return nil, fmt.Errorf("gather: %v contributed twice", k)
		}
		out[k] = v
	}
	return out, nil
}
func (gather) Result(p any) (any, error) { return p, nil }

// upTo returns 0..n-1.
func upTo(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}
