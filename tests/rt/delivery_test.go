package rt_test

import (
	"fmt"
	"testing"

	"github.com/charmgo/charm/array"
	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/group"
)

// Every sender sends M messages to every receiver (itself included). Each
// receiver counts what it got, sums the payloads and checks that the
// messages of each sender arrive in the order they were sent (Charm++'s
// per sender–receiver FIFO while nothing migrates). After quiescence, the
// receivers report, and every one must have got exactly N×M messages with
// the expected checksum.

type dlvMsg struct {
	From, Seq int
	Val       int64
}

type dlvGo struct{ N, M int }

type dlvReport struct {
	Got int
	Sum int64
}

// dlvVal is the payload from sender i to receiver j in round s.
func dlvVal(i, j, s int) int64 { return int64(i)*1_000_003 + int64(j)*1_009 + int64(s)*7 + 1 }

// dlvState is what a receiver keeps, the same for elements and branches.
type dlvState struct {
	got  int
	sum  int64
	next map[int]int // the next sequence number expected from each sender
}

func (st *dlvState) recv(me int, m dlvMsg) {
	if st.next == nil {
		st.next = map[int]int{}
	}
	inJob.Equal(st.next[m.From], m.Seq, "FIFO broken: %d got message %d of sender %d", me, m.Seq, m.From)
	inJob.Equal(dlvVal(m.From, me, m.Seq), m.Val, "payload from %d to %d", m.From, me)
	st.next[m.From]++
	st.got++
	st.sum += m.Val
}

type dlvElem struct {
	array.Element[dlvElem, int]
	dlvState
}

func (e *dlvElem) Go(g dlvGo) {
	for s := 0; s < g.M; s++ {
		for j := 0; j < g.N; j++ {
			inJob.NoError(chare.Send(e, e.ThisProxy().At(j), (*dlvElem).Recv, dlvMsg{e.ThisIndex(), s, dlvVal(e.ThisIndex(), j, s)}))
		}
	}
}

func (e *dlvElem) Recv(m dlvMsg) { e.recv(e.ThisIndex(), m) }

func (e *dlvElem) Report(cb chare.Callback) {
	inJob.NoError(e.Contribute(dlvReport{e.got, e.sum}, gather[int, dlvReport]{}, cb))
}

type dlvBranch struct {
	group.Branch[dlvBranch]
	dlvState
}

func (b *dlvBranch) Go(g dlvGo) {
	for s := 0; s < g.M; s++ {
		for j := 0; j < g.N; j++ {
			inJob.NoError(chare.Send(b, b.ThisProxy().At(j), (*dlvBranch).Recv, dlvMsg{b.PE(), s, dlvVal(b.PE(), j, s)}))
		}
	}
}

func (b *dlvBranch) Recv(m dlvMsg) { b.recv(b.PE(), m) }

func (b *dlvBranch) Report(cb chare.Callback) {
	inJob.NoError(b.Contribute(dlvReport{b.got, b.sum}, gather[int, dlvReport]{}, cb))
}

func init() {
	chare.Register[dlvElem]()
	chare.Register[dlvBranch]()
	registerReducers(gather[int, dlvReport]{})
}

// dlvCheck checks the receivers' reports.
func dlvCheck(n, m int, got map[int]dlvReport) {
	inJob.Len(got, n)
	for j := 0; j < n; j++ {
		var want int64
		for i := 0; i < n; i++ {
			for s := 0; s < m; s++ {
				want += dlvVal(i, j, s)
			}
		}
		inJob.Equal(dlvReport{Got: n * m, Sum: want}, got[j], "receiver %d", j)
	}
}

func TestDeliveryArrayAllToAll(t *testing.T) {
	cases := []struct{ pes, n, m int }{
		{1, 6, 20},
		{2, 8, 25},
		{3, 10, 20},
		{4, 9, 30},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%dPEs_%dx%d", c.pes, c.n, c.m), func(t *testing.T) {
			runMain(t, c.pes, func(m *tmain) {
				a, err := array.New[dlvElem](m, array.Dims(c.n), array.WithMap(array.RoundRobin))
				inJob.NoError(err)
				inJob.NoError(chare.Send(m, a, (*dlvElem).Go, dlvGo{c.n, c.m}))
				quiesce(m)
				f := chare.NewFuture[map[int]dlvReport](m)
				inJob.NoError(chare.Send(m, a, (*dlvElem).Report, f.Callback()))
				dlvCheck(c.n, c.m, get(m, f))
			})
		})
	}
}

func TestDeliveryGroupAllToAll(t *testing.T) {
	for _, pes := range []int{1, 2, 3, 5} {
		t.Run(fmt.Sprintf("%dPEs", pes), func(t *testing.T) {
			const m = 40
			runMain(t, pes, func(mc *tmain) {
				g, err := group.New[dlvBranch](mc)
				inJob.NoError(err)
				inJob.NoError(chare.Send(mc, g, (*dlvBranch).Go, dlvGo{pes, m}))
				quiesce(mc)
				f := chare.NewFuture[map[int]dlvReport](mc)
				inJob.NoError(chare.Send(mc, g, (*dlvBranch).Report, f.Callback()))
				dlvCheck(pes, m, get(mc, f))
			})
		})
	}
}

// TestDeliveryFIFOFromMain sends a long run of messages from one sender
// (the main function) to one element on another PE: they arrive in order.
func TestDeliveryFIFOFromMain(t *testing.T) {
	const n = 2000
	runMain(t, 2, func(m *tmain) {
		a, err := array.New[dlvElem](m, array.Dims(2))
		inJob.NoError(err)
		for s := 0; s < n; s++ {
			inJob.NoError(chare.Send(m, a.At(1), (*dlvElem).Recv, dlvMsg{0, s, dlvVal(0, 1, s)}))
		}
		f := chare.NewFuture[map[int]dlvReport](m)
		inJob.NoError(chare.Send(m, a, (*dlvElem).Report, f.Callback()))
		got := get(m, f)
		inJob.Equal(n, got[1].Got)
		inJob.Equal(0, got[0].Got)
	})
}
