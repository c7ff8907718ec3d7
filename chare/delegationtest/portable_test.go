// Package delegationtest runs a program's own delegate across processes.
// It is a package of its own because its tests launch copies of the test
// binary as the job's other nodes, and every node must register the same
// chare types: package chare's own tests register some as they run.
package delegationtest_test

import (
	"fmt"
	"math/rand"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/array"
	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/chare/reducer"
	"github.com/charmgo/charm/group"
	"github.com/charmgo/charm/internal/core"
	"github.com/charmgo/charm/internal/jobtest"
)

// A program's own delegate travels with its proxies when it is portable
// (it implements chare.PortableDelegate and its kind is registered): the
// same number of sends go through it as one process, two or four. One
// that is not portable cannot leave its process: the message that would
// carry it fails, and the error names it.

// userDelegate counts the sends made through it in this process and
// forwards them.
type userDelegate struct {
	sends atomic.Int64
}

func (d *userDelegate) Send(from chare.Context, e chare.Envelope) error {
	d.sends.Add(1)
	return chare.Forward(from, e)
}

func (d *userDelegate) Broadcast(from chare.Context, e chare.Envelope) error {
	d.sends.Add(1)
	return chare.Forward(from, e)
}

func (d *userDelegate) Multicast(from chare.Context, e chare.Envelope) error {
	d.sends.Add(1)
	return chare.Forward(from, e)
}

// DelegateRef makes it portable: one per job in every process.
func (d *userDelegate) DelegateRef() (string, uint64) { return "delegationtest.counting", 1 }

// userDelegates holds each job's delegate in this process.
var userDelegates sync.Map // *chare.Job → *userDelegate

func userDelegateOf(j *chare.Job) *userDelegate {
	d, _ := userDelegates.LoadOrStore(j, &userDelegate{})
	return d.(*userDelegate)
}

// plainDelegate is not portable.
type plainDelegate struct{ userDelegate }

func (*plainDelegate) DelegateRef() {} // not PortableDelegate's method

func init() {
	chare.RegisterDelegateKind("delegationtest.counting", func(pe *chare.PE, id uint64) (chare.Delegate, error) {
		if id != 1 {
			return nil, fmt.Errorf("no counting delegate %d", id)
		}
		return userDelegateOf(pe.Job()), nil
	})
	core.OnJobEnd(func(j *chare.Job) { userDelegates.Delete(j) })
	chare.Register[talkElem]()
	chare.Register[talkProbe]()
	chare.Register[talkMain](chare.Threaded((*talkMain).Start))
}

type talkMain struct{ chare.Chare[talkMain] }

func (m *talkMain) Start([]string) {}

const talkElems, talkSends = 16, 25

// talkElem sends through the proxy it gets.
type talkElem struct {
	array.Element[talkElem, int]
	Got int
}

type talkMsg struct{ Peers array.Proxy[talkElem, int] }

func (e *talkElem) Talk(m talkMsg) {
	r := rand.New(rand.NewSource(int64(e.ThisIndex())))
	for i := 0; i < talkSends; i++ {
		if err := chare.Send(e, m.Peers.At(r.Intn(talkElems)), (*talkElem).Note, i); err != nil {
			e.Abort(err)
			return
		}
	}
}

func (e *talkElem) Note(int) { e.Got++ }

func (e *talkElem) Totals(cb chare.Callback) { _ = e.Contribute(e.Got, reducer.SumInt, cb) }

// talkProbe reads the delegate's count of each process, on its first PE.
type talkProbe struct{ group.Branch[talkProbe] }

func (p *talkProbe) Count(cb chare.Callback) {
	rt := p.Here().Job().Runtime()
	per := make([]int64, rt.NumNodes())
	if node := rt.NodeOf(p.PE()); rt.FirstPE(node) == p.PE() {
		per[node] = userDelegateOf(p.Here().Job()).sends.Load()
	}
	_ = p.Contribute(per, reducer.SumInt64, cb)
}

// inProcesses runs a job of 4 PEs as n processes: this test binary
// launches copies of itself, running just this test, as the other nodes.
func inProcesses(t *testing.T, n int, start func(*talkMain, []string)) (int, error) {
	t.Helper()
	return jobtest.Run(t, chare.Config{PEs: 4, Nodes: n, Timeout: 60 * time.Second}, start)
}

// TestPortableUserDelegateInEveryProcess: elements in every process get
// a proxy delegated to the program's portable delegate in a broadcast;
// every one of their sends goes through the delegate's object in their
// process.
func TestPortableUserDelegateInEveryProcess(t *testing.T) {
	for _, nodes := range []int{1, 2, 4} {
		t.Run(fmt.Sprintf("%dproc", nodes), func(t *testing.T) {
			var got int
			var per []int64
			code, err := inProcesses(t, nodes, func(m *talkMain, _ []string) {
				fail := func(err error) { m.Abort(err) }
				a, err := array.New[talkElem](m, array.Dims(talkElems))
				if err != nil {
					fail(err)
					return
				}
				probe, err := group.New[talkProbe](m)
				if err != nil {
					fail(err)
					return
				}
				if err := chare.Send(m, a, (*talkElem).Talk, talkMsg{Peers: a.Delegate(userDelegateOf(m.Here().Job()))}); err != nil {
					fail(err)
					return
				}
				qd := chare.NewFuture[any](m)
				m.DetectQuiescence(qd.Callback())
				if _, err := qd.Get(m); err != nil {
					fail(err)
					return
				}
				f := chare.NewFuture[int](m)
				_ = chare.Send(m, a, (*talkElem).Totals, f.Callback())
				if got, err = f.Get(m); err != nil {
					fail(err)
					return
				}
				pf := chare.NewFuture[[]int64](m)
				_ = chare.Send(m, probe, (*talkProbe).Count, pf.Callback())
				if per, err = pf.Get(m); err != nil {
					fail(err)
					return
				}
				m.Exit(0)
			})
			require.NoError(t, err)
			require.Equal(t, 0, code)
			require.Equal(t, talkElems*talkSends, got, "every note arrived once")
			want := make([]int64, nodes)
			for k := range want {
				want[k] = talkElems * talkSends / int64(nodes)
			}
			require.Equal(t, want, per, "sends through the delegate, by process")
		})
	}
}

// TestNonPortableDelegateCannotLeaveItsProcess: a proxy delegated to a
// delegate that is not portable, sent to an element in another process,
// fails the job with an error that names the delegate; nothing is sent
// directly instead.
func TestNonPortableDelegateCannotLeaveItsProcess(t *testing.T) {
	_, err := inProcesses(t, 2, func(m *talkMain, _ []string) {
		a, err := array.New[talkElem](m, array.Dims(talkElems))
		if err != nil {
			m.Abort(err)
			return
		}
		// Element 15 lives on PE 3, in the other process.
		if err := chare.Send(m, a.At(talkElems-1), (*talkElem).Talk, talkMsg{Peers: a.Delegate(&plainDelegate{})}); err != nil {
			m.Abort(err)
			return
		}
		qd := chare.NewFuture[any](m)
		m.DetectQuiescence(qd.Callback())
		_, _ = qd.Get(m)
		m.Exit(0)
	})
	require.Error(t, err)
	require.ErrorContains(t, err, "*delegationtest_test.plainDelegate")
	require.ErrorContains(t, err, "cannot leave its process")
}
