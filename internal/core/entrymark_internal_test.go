package core

import (
	"testing"

	"github.com/stretchr/testify/require"
)

type stubDelegate struct{ name string }

func (stubDelegate) Send(Context, Envelope) error      { return nil }
func (stubDelegate) Broadcast(Context, Envelope) error { return nil }
func (stubDelegate) Multicast(Context, Envelope) error { return nil }

// TestEntryMarkHoldsForItsJob: a mark made for a job takes that job's
// sends only (a later job of the process ignores it); a mark for no job
// takes every job's; nil unmarks.
func TestEntryMarkHoldsForItsJob(t *testing.T) {
	var e Entry
	a, b := &Job{}, &Job{}
	d := stubDelegate{"d"}
	require.Nil(t, e.markFor(a), "unmarked")
	e.mark(a, d)
	require.Equal(t, Delegate(d), e.markFor(a))
	require.Nil(t, e.markFor(b), "a mark left by another job")
	e.mark(nil, d)
	require.Equal(t, Delegate(d), e.markFor(b), "a mark for every job")
	e.mark(a, nil)
	require.Nil(t, e.markFor(a), "unmarked")
}
