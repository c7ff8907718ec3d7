package core

import (
	"reflect"
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

// stubRunDelegate is a RunDelegate without buffers.
type stubRunDelegate struct{ stubDelegate }

func (stubRunDelegate) RunBuffer(*PE) *RunBuffer { return nil }

// TestEntryMarkKeepsItsRunDelegate: a mark converts its delegate to a
// RunDelegate once, when it is made (the send path reads it from the mark),
// and keeps none for a delegate that is not one.
func TestEntryMarkKeepsItsRunDelegate(t *testing.T) {
	var e Entry
	job := &Job{}
	rd := stubRunDelegate{stubDelegate{"rd"}}
	e.mark(job, rd)
	m := e.markIn(job)
	require.NotNil(t, m)
	require.Equal(t, RunDelegate(rd), m.rd)
	require.Equal(t, Delegate(rd), m.d)
	e.mark(job, stubDelegate{"plain"})
	m = e.markIn(job)
	require.NotNil(t, m)
	require.Nil(t, m.rd, "a delegate that takes no runs")
	require.Nil(t, e.markIn(&Job{}), "another job's mark")
}

type codeT struct{}

func (*codeT) A(int) {}
func (*codeT) B(int) {}

// TestFuncCodeIsReflectPointer: funcCode gives the send path's entry
// cache the key that reflect gives (PE.entry fills the cache with it), for
// method expressions, closures and nil.
func TestFuncCodeIsReflectPointer(t *testing.T) {
	x := 0
	for _, f := range []func(*codeT, int){(*codeT).A, (*codeT).B, func(*codeT, int) { x++ }, nil} {
		want := uintptr(0)
		if f != nil {
			want = reflect.ValueOf(f).Pointer()
		}
		require.Equal(t, want, funcCode(&f))
	}
	a, b := (*codeT).A, (*codeT).B
	require.NotEqual(t, funcCode(&a), funcCode(&b))
}

// TestBranchAtKeepsCollectionAndDelegate: BranchAt addresses one branch of
// the group, delegated as the group proxy is.
func TestBranchAtKeepsCollectionAndDelegate(t *testing.T) {
	d := stubDelegate{"d"}
	g := NewProxy[codeT](Route{Kind: KindGroupAll, Coll: 7}).Delegate(d)
	p := BranchAt(&g, 3)
	require.Equal(t, Route{Kind: KindBranch, Coll: 7, PE: 3}, p.Route())
	require.Equal(t, Delegate(d), p.Delegated())
	u := NewProxy[codeT](Route{Kind: KindGroupAll, Coll: 9})
	require.Nil(t, BranchAt(&u, 0).Delegated())
}
