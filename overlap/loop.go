package overlap

import (
	"fmt"
	"math"

	"github.com/charmgo/charm/tune"
)

// Action is what one turn of the overlap loop does (E04).
type Action int

const (
	// Treat handles a datum that has arrived.
	Treat Action = iota + 1
	// Push moves data into every outgoing buffer that is not full.
	Push
	// Compute does local computations: as many as Loop.Next says.
	Compute
)

func (a Action) String() string {
	switch a {
	case Treat:
		return "treat"
	case Push:
		return "push"
	case Compute:
		return "compute"
	}
	return fmt.Sprintf("Action(%d)", int(a))
}

// Decide is the overlap loop's priority (E04): an arrived datum first, then
// pending data for a buffer that has room, else local computations.
func Decide(arrived, pushable bool) Action {
	switch {
	case arrived:
		return Treat
	case pushable:
		return Push
	}
	return Compute
}

// Loop is the overlap loop's decision with its aggregation parameter p, the
// number of local computations between two communication tests (E05). A
// fixed p is realised by a tune.Spread (E10); with Fast set, p moves within the
// run (E11): it halves after a test that found communication and grows by
// Step after one that found none.
type Loop struct {
	fast   bool
	step   float64 // Fast: growth per idle test
	p      float64
	spread tune.Spread
}

// NewLoop returns a loop doing p local computations per idle test on
// average (p may be any non-negative real, as a tune.Tuner's Value).
func NewLoop(p float64) (*Loop, error) {
	l := &Loop{p: p}
	if err := l.spread.Set(p); err != nil {
		return nil, err
	}
	return l, nil
}

// NewFastLoop returns the fast adaptive loop (E11): p starts at step, grows
// by step after each test that found nothing to do and halves after each
// that found communication. step is the parameter to tune.
func NewFastLoop(step float64) (*Loop, error) {
	if math.IsNaN(step) || math.IsInf(step, 0) || step < 0 {
		return nil, fmt.Errorf("overlap: fast loop step %v, want a finite non-negative number", step)
	}
	l := &Loop{fast: true, step: step, p: step}
	if err := l.spread.Set(step); err != nil {
		return nil, err
	}
	return l, nil
}

// P is the current aggregation parameter.
func (l *Loop) P() float64 { return l.p }

// Next reports what this turn does after a communication test that found
// arrived data (arrived) and data for a non-full outgoing buffer
// (pushable); n is the number of local computations when it is Compute.
// With Fast, the test's outcome also moves p for the turns to come.
func (l *Loop) Next(arrived, pushable bool) (a Action, n int) {
	a = Decide(arrived, pushable)
	if l.fast {
		if a == Compute {
			l.p += l.step // quiet network: test less often
		} else {
			l.p /= 2 // traffic: the same buffers may fill again soon, test early
		}
		_ = l.spread.Set(l.p) // p stays finite and non-negative
	}
	if a == Compute {
		n = l.spread.Next()
	}
	return a, n
}
