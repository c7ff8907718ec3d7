package actor

import "fmt"

// WaitPolicy is what a PE does when its mailbox runs empty, as OpenMP's
// OMP_WAIT_POLICY says what an idle thread does.
type WaitPolicy int8

const (
	// WaitPassive, the default: a PE looks for a message for a few
	// microseconds, yielding its core between looks, and then parks; an
	// idle PE costs nothing, and PEs may outnumber the cores.
	WaitPassive WaitPolicy = iota
	// WaitActive: a PE whose messages come less than 50 µs apart keeps
	// its core while it waits, polling its mailbox for up to 50 µs
	// before it parks, as Charm++'s PEs poll theirs; one that waited
	// longer parks after the short look of WaitPassive. Collective
	// patterns (all-to-all, reductions every iteration, neighbour
	// exchanges) gain on a machine where a parked thread is slow to wake,
	// at the price of the cores' time while the PEs wait; use it with no
	// more PEs than cores, and nothing else busy on them.
	WaitActive
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

// ParseWaitPolicy returns the policy named s ("passive" or "active").
func ParseWaitPolicy(s string) (WaitPolicy, error) {
	switch s {
	case "passive":
		return WaitPassive, nil
	case "active":
		return WaitActive, nil
	}
	return 0, fmt.Errorf("unknown wait policy %q: want passive or active", s)
}
