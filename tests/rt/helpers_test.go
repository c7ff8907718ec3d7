package rt_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/chare"
)

// sumInt is a local reducer so these tests do not depend on the built-ins.
type sumInt struct{}

func (sumInt) Name() string                 { return "test_sum_int" }
func (sumInt) Lift(v, _ any) (any, error)   { return v.(int), nil }
func (sumInt) Combine(a, b any) (any, error) { return a.(int) + b.(int), nil }
func (sumInt) Result(p any) (any, error)    { return p, nil }

// run runs a job with a deadline that fails the test loudly.
func run[T any](t *testing.T, pes int, start func(*T, []string)) int {
	t.Helper()
	type res struct {
		code int
		err  error
	}
	done := make(chan res, 1)
	go func() {
		code, err := chare.Run(chare.Config{PEs: pes}, start)
		done <- res{code, err}
	}()
	select {
	case r := <-done:
		require.NoError(t, r.err)
		return r.code
	case <-time.After(20 * time.Second):
		t.Fatalf("job on %d PEs did not end within 20 s", pes)
	}
	return -1
}

var _ = fmt.Sprint
