package actor_test

import (
	"testing"
	"time"

	"github.com/charmgo/charm/actor"
)

// do is a message that runs a function on the destination PE.
type do func(pe *actor.PE)

func (f do) Deliver(pe *actor.PE) { f(pe) }

// named is a message that describes itself, for panic reports.
type named struct {
	name string
	fn   func(pe *actor.PE)
}

func (n named) Deliver(pe *actor.PE) { n.fn(pe) }
func (n named) Describe() string     { return n.name }

const deadline = 30 * time.Second

// start runs a job on pes PEs with boot on PE 0 and returns how it ended,
// failing the test if it does not end before the deadline.
func start(t *testing.T, pes int, boot func(pe *actor.PE)) (int, error) {
	t.Helper()
	rt, err := actor.Start(actor.Config{PEs: pes}, boot)
	if err != nil {
		return 1, err
	}
	type res struct {
		code int
		err  error
	}
	done := make(chan res, 1)
	go func() {
		code, err := rt.Wait()
		done <- res{code, err}
	}()
	select {
	case r := <-done:
		return r.code, r.err
	case <-time.After(deadline):
		rt.Abort(nil)
		t.Fatalf("job on %d PEs did not end within %v", pes, deadline)
	}
	return -1, nil
}

// check ends the job with an error if cond is false: code running on a PE
// must not call t.FailNow.
func check(pe *actor.PE, cond bool, err error) {
	if !cond {
		pe.Runtime().Abort(err)
	}
}
