package actor

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A mailbox's two slices stay in use however its goroutine alternates
// between handling messages and finding none: a message posted while the
// goroutine handles the last batch goes into the other slice, without an
// allocation. (Swapping on an empty take dropped a slice at each idle
// period, and every post during handling allocated.)
func TestMailboxKeepsItsSlices(t *testing.T) {
	mb := newMailbox(nil)
	handle := func(q []any) {
		clear(q)
		mb.spare = q[:0] // what run does after a batch
	}
	var bad []string // what went wrong in a cycle (require would allocate)
	cycle := func() {
		mb.post(1)
		q, closed := mb.take()
		if closed || len(q) != 1 {
			bad = append(bad, "the first take")
		}
		mb.post(2) // while the batch is handled
		handle(q)
		q, _ = mb.take()
		if len(q) != 1 || q[0] != 2 {
			bad = append(bad, "the message posted during handling")
		}
		handle(q)
		if q, _ = mb.take(); len(q) != 0 { // nothing posted: idle
			bad = append(bad, "the idle take")
		}
	}
	cycle()
	require.Zero(t, testing.AllocsPerRun(100, cycle))
	require.Empty(t, bad)
	require.NotNil(t, mb.spare, "the spare slice survives an empty take")
}
