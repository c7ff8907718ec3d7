package actor

import "fmt"

// WaitPolicy is what a PE does when its mailbox runs empty, as OpenMP's
// OMP_WAIT_POLICY says what an idle thread does.
type WaitPolicy int8

const (
	// WaitActive, the default: a PE whose messages come less than 50 µs
	// apart keeps its core while it waits, as Charm++'s PEs poll their
	// queues: after the short look of WaitPassive it polls its mailbox
	// for up to 50 µs more before it parks; one that waited longer, or
	// whose last long look found nothing, parks after the short look, so
	// an idle PE costs nothing. Latency-bound patterns (a ping-pong, an
	// all-to-all, a reduction every iteration, neighbour exchanges) gain
	// on a machine where a parked thread is slow to wake, at the price
	// of the cores' time while the PEs wait.
	//
	// A PE spins only while exactly GOMAXPROCS of its process's PEs are
	// awake (as under WaitPassive): a process with fewer PEs than
	// GOMAXPROCS never spins, and one with more spins only while the
	// others sleep. Several processes on one host, or other busy programs,
	// can still crowd the cores: choose WaitPassive there. In a job of
	// several processes, PEs wait as under WaitPassive (a spinning P would
	// not poll the network, where the other processes' messages arrive);
	// there the goroutine that reads another process of the host polls
	// its socket instead, as long, while a P is free of PEs.
	WaitActive WaitPolicy = iota
	// WaitPassive: a PE looks for a message for a few microseconds,
	// yielding its core between looks, and then parks: the cores' time
	// is spent only on messages.
	WaitPassive
)

// String returns the policy's name, as ParseWaitPolicy takes it.
func (w WaitPolicy) String() string {
	switch w {
	case WaitPassive:
		return "passive"
	case WaitActive:
		return "active"
	}
	return fmt.Sprintf("WaitPolicy(%d)", int8(w))
}

// ParseWaitPolicy returns the policy named s ("active" or "passive").
func ParseWaitPolicy(s string) (WaitPolicy, error) {
	switch s {
	case "passive":
		return WaitPassive, nil
	case "active":
		return WaitActive, nil
	}
	return 0, fmt.Errorf("unknown wait policy %q: want active or passive", s)
}
