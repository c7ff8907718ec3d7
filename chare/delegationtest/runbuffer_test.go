package delegationtest_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/actor"
	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/group"
	"github.com/charmgo/charm/internal/core"
)

// runDel is a core.RunDelegate that keeps every send in its PEs' run
// buffers until told to post them, and counts what it was given.
type runDel struct {
	mu        sync.Mutex
	bufs      map[int]*core.RunBuffer // by PE
	buffered  map[int]int             // sends appended, by destination PE
	called    int                     // sends to the sending PE
	envelopes int                     // sends that came to Send
	asked     map[int]int             // calls of RunBuffer, by PE
}

func (d *runDel) RunBuffer(pe *chare.PE) *core.RunBuffer {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.asked != nil {
		d.asked[pe.ID()]++
	}
	return d.bufs[pe.ID()]
}

// renew gives PE pe a fresh run buffer (taking the runs for PE 1) in
// place of the one it had, which it retires, as a delegate that rebuilds
// its buffers does; it aborts the job and reports false if the buffer
// cannot be made.
func (d *runDel) renew(m *rbMain, pe int) (old, fresh *core.RunBuffer, ok bool) {
	fresh, err := core.NewRunBuffer(m, func(int) {}, func() {})
	if err != nil {
		m.Abort(err)
		return nil, nil, false
	}
	fresh.Take(1, true)
	d.mu.Lock()
	old = d.bufs[pe]
	d.bufs[pe] = fresh
	d.mu.Unlock()
	old.Retire()
	return old, fresh, true
}

func (d *runDel) Send(from chare.Context, e chare.Envelope) error {
	d.mu.Lock()
	d.envelopes++
	d.mu.Unlock()
	return chare.Forward(from, e)
}
func (d *runDel) Broadcast(from chare.Context, e chare.Envelope) error { return chare.Forward(from, e) }
func (d *runDel) Multicast(from chare.Context, e chare.Envelope) error { return chare.Forward(from, e) }

// rbBranch records the notes it gets, in order.
type rbBranch struct {
	group.Branch[rbBranch]
	got []int
}

func (b *rbBranch) Note(n int) { b.got = append(b.got, n) }

// Attach makes this PE's run buffer of the delegate, taking the sends
// for every other PE.
func (b *rbBranch) Attach(d *runDel) {
	rb, err := core.NewRunBuffer(b, func(dest int) {
		d.mu.Lock()
		d.buffered[dest]++
		d.mu.Unlock()
	}, func() {
		d.mu.Lock()
		d.called++
		d.mu.Unlock()
	})
	if err != nil {
		b.Abort(err)
		return
	}
	for pe := range b.NumPEs() {
		rb.Take(pe, true)
	}
	d.mu.Lock()
	d.bufs[b.PE()] = rb
	d.mu.Unlock()
}

// Got returns the notes this branch got.
func (b *rbBranch) Got(struct{}) []int { return b.got }

type rbMain struct{ chare.Chare[rbMain] }

func init() {
	chare.Register[rbBranch]()
	chare.Register[rbMain]()
}

// TestRunDelegateBuffersUntilPosted: sends through a proxy delegated to a
// core.RunDelegate are appended to the sending PE's run buffer for their
// destination (none comes to the delegate's Send), a send to the sending
// PE's own branch is delivered there as an undelegated send is, and the
// buffered sends count as work: quiescence waits until the delegate posts
// them (20 ms later, from a timer), and then each is delivered once, in
// the order sent.
func TestRunDelegateBuffersUntilPosted(t *testing.T) {
	const n = 700 // more than one run holds (a buffer's runs hold 512 messages)
	d := &runDel{bufs: map[int]*core.RunBuffer{}, buffered: map[int]int{}}
	var got1, got0 []int
	var postedAtQuiet bool
	var lenBefore, lenAfter, posted int
	code, err := chare.Run(chare.Config{PEs: 2, Timeout: 30 * time.Second}, func(m *rbMain, _ []string) {
		g, ok := attachedGroup(m, d)
		if !ok {
			return
		}
		p := g.Delegate(d)
		for i := range n {
			if err := chare.Send(m, p.At(1), (*rbBranch).Note, i); err != nil {
				m.Abort(err)
				return
			}
		}
		if err := chare.Send(m, p.At(0), (*rbBranch).Note, -1); err != nil {
			m.Abort(err)
			return
		}
		rb := d.RunBuffer(chare.PEOf(m))
		lenBefore = rb.Len(1)
		var mu sync.Mutex
		chare.PEOf(m).Actor().After(20*time.Millisecond, func(*actor.PE) {
			mu.Lock()
			defer mu.Unlock()
			posted = rb.Post(1)
			lenAfter = rb.Len(1)
		})
		if !quiesced(m) {
			return
		}
		mu.Lock()
		postedAtQuiet = posted > 0
		mu.Unlock()
		for pe, dst := range []*[]int{&got0, &got1} {
			f, err := chare.Call(m, g.At(pe), (*rbBranch).Got, struct{}{})
			if err != nil {
				m.Abort(err)
				return
			}
			if *dst, err = f.Get(m); err != nil {
				m.Abort(fmt.Errorf("notes of PE %d: %w", pe, err))
				return
			}
		}
		m.Exit(0)
	})
	require.NoError(t, err)
	require.Equal(t, 0, code)
	require.Equal(t, n, lenBefore, "the sends to PE 1 wait in the run buffer")
	require.True(t, postedAtQuiet, "quiescence came before the buffered sends were posted")
	require.Equal(t, n, posted)
	require.Zero(t, lenAfter)
	want := make([]int, n)
	for i := range want {
		want[i] = i
	}
	require.Equal(t, want, got1, "PE 1 gets every note once, in order")
	require.Equal(t, []int{-1}, got0, "the note to the sending PE's branch")
	require.Equal(t, map[int]int{1: n}, d.buffered)
	require.Equal(t, 1, d.called)
	require.Zero(t, d.envelopes, "no send came to the delegate's Send in an envelope")
}

// TestMarkedEntryTakesRunsWithoutAllocating: sends of an entry method
// marked for a core.RunDelegate (core.MarkEntry, as TRAM's Aggregate
// does), made through a plain group proxy's At, are appended to the
// sending PE's run buffer (none comes to the delegate's Send), and such a
// send allocates nothing once its run is there: a run holds 512 messages,
// so 100 sends make no allocation on average.
func TestMarkedEntryTakesRunsWithoutAllocating(t *testing.T) {
	d := &runDel{bufs: map[int]*core.RunBuffer{}, buffered: map[int]int{}}
	require.NoError(t, core.MarkEntry((*rbBranch).Note, d))
	defer func() { require.NoError(t, core.MarkEntry((*rbBranch).Note, nil)) }()
	var allocs float64
	var buffered int
	code, err := chare.Run(chare.Config{PEs: 2, Timeout: 30 * time.Second}, func(m *rbMain, _ []string) {
		g, ok := attachedGroup(m, d)
		if !ok {
			return
		}
		if err := chare.Send(m, g.At(1), (*rbBranch).Note, 0); err != nil { // the run
			m.Abort(err)
			return
		}
		i := 0
		allocs = testing.AllocsPerRun(100, func() {
			i++
			if err := chare.Send(m, g.At(1), (*rbBranch).Note, i); err != nil {
				m.Abort(err)
			}
		})
		rb := d.RunBuffer(chare.PEOf(m))
		buffered = rb.Len(1)
		rb.Post(1)
		if !quiesced(m) {
			return
		}
		m.Exit(0)
	})
	require.NoError(t, err)
	require.Equal(t, 0, code)
	require.Equal(t, 102, buffered, "every send waits in the run buffer (AllocsPerRun runs once more to warm up)")
	require.Zero(t, d.envelopes, "no send came to the delegate's Send in an envelope")
	require.Zero(t, allocs, "allocations a send")
}

// TestMarkedEntryLeavesARetiredBuffer: the buffer a RunDelegate gave a PE
// serves later sends of a marked method only until it is retired; after
// the delegate gives the PE another buffer and retires the first, sends go
// to the new one, and what the first holds is still delivered.
func TestMarkedEntryLeavesARetiredBuffer(t *testing.T) {
	d := &runDel{bufs: map[int]*core.RunBuffer{}, buffered: map[int]int{}}
	require.NoError(t, core.MarkEntry((*rbBranch).Note, d))
	defer func() { require.NoError(t, core.MarkEntry((*rbBranch).Note, nil)) }()
	var lenOld, lenNew int
	var got []int
	code, err := chare.Run(chare.Config{PEs: 2, Timeout: 30 * time.Second}, func(m *rbMain, _ []string) {
		g, ok := attachedGroup(m, d)
		if !ok {
			return
		}
		if err := chare.Send(m, g.At(1), (*rbBranch).Note, 1); err != nil {
			m.Abort(err)
			return
		}
		old, fresh, ok := d.renew(m, 0)
		if !ok {
			return
		}
		if err := chare.Send(m, g.At(1), (*rbBranch).Note, 2); err != nil {
			m.Abort(err)
			return
		}
		lenOld, lenNew = old.Len(1), fresh.Len(1)
		old.Post(1)
		fresh.Post(1)
		if !quiesced(m) {
			return
		}
		f, err := chare.Call(m, g.At(1), (*rbBranch).Got, struct{}{})
		if err != nil {
			m.Abort(err)
			return
		}
		if got, err = f.Get(m); err != nil {
			m.Abort(err)
			return
		}
		m.Exit(0)
	})
	require.NoError(t, err)
	require.Equal(t, 0, code)
	require.Equal(t, 1, lenOld, "the send before the retirement stays in the old buffer")
	require.Equal(t, 1, lenNew, "the send after it goes to the new buffer")
	require.Equal(t, []int{1, 2}, got)
	require.Zero(t, d.envelopes)
}

// TestMarkedEntryKeepsItsRunBuffer: a PE asks the delegate of a marked
// method for its run buffer at the first send and keeps the buffer it got:
// later sends of the method use it without asking again, until the buffer
// is retired; then the next send asks once for the new one, which is kept
// in turn.
func TestMarkedEntryKeepsItsRunBuffer(t *testing.T) {
	const n = 50
	d := &runDel{bufs: map[int]*core.RunBuffer{}, buffered: map[int]int{}, asked: map[int]int{}}
	require.NoError(t, core.MarkEntry((*rbBranch).Note, d))
	defer func() { require.NoError(t, core.MarkEntry((*rbBranch).Note, nil)) }()
	var askedBefore, askedKept, askedAfter int
	var lenOld, lenNew int
	code, err := chare.Run(chare.Config{PEs: 2, Timeout: 30 * time.Second}, func(m *rbMain, _ []string) {
		g, ok := attachedGroup(m, d)
		if !ok {
			return
		}
		send := func(from, to int) bool {
			for i := from; i < to; i++ {
				if err := chare.Send(m, g.At(1), (*rbBranch).Note, i); err != nil {
					m.Abort(err)
					return false
				}
			}
			return true
		}
		asked := func() int {
			d.mu.Lock()
			defer d.mu.Unlock()
			return d.asked[0]
		}
		askedBefore = asked()
		if !send(0, n) {
			return
		}
		askedKept = asked()
		old, fresh, ok := d.renew(m, 0)
		if !ok {
			return
		}
		if !send(n, 2*n) {
			return
		}
		askedAfter = asked()
		lenOld, lenNew = old.Len(1), fresh.Len(1)
		old.Post(1)
		fresh.Post(1)
		if !quiesced(m) {
			return
		}
		m.Exit(0)
	})
	require.NoError(t, err)
	require.Equal(t, 0, code)
	require.Zero(t, askedBefore)
	require.Equal(t, 1, askedKept, "%d sends of the marked method asked for the run buffer once", n)
	require.Equal(t, 2, askedAfter, "after the retirement, %d sends asked once more", n)
	require.Equal(t, n, lenOld)
	require.Equal(t, n, lenNew)
	require.Zero(t, d.envelopes)
}

// attachedGroup makes a group of rbBranch and attaches d to every branch
// (waiting for quiescence); on an error it aborts the job and reports
// false.
func attachedGroup(m *rbMain, d *runDel) (group.Proxy[rbBranch], bool) {
	g, err := group.New[rbBranch](m)
	if err != nil {
		m.Abort(err)
		return g, false
	}
	if err := chare.Send(m, g, (*rbBranch).Attach, d); err != nil {
		m.Abort(err)
		return g, false
	}
	return g, quiesced(m)
}

// quiesced waits for quiescence; on an error it aborts the job and
// reports false.
func quiesced(m *rbMain) bool {
	quiet := chare.NewFuture[any](m)
	m.DetectQuiescence(quiet.Callback())
	if _, err := quiet.Get(m); err != nil {
		m.Abort(err)
		return false
	}
	return true
}
