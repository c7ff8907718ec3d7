package tram_test

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/chare/reducer"
	"github.com/charmgo/charm/group"
	"github.com/charmgo/charm/tram"
)

// relay is a client whose deliveries submit further items: delivering A
// causes B (the pattern of claim T25).
type relay struct {
	group.Branch[relay]
	s    tram.Streamer[relay, int]
	got  int
	rand *rand.Rand
}

// Hop receives an item with the number of hops it has left.
func (r *relay) Hop(left int) {
	r.got++
	if left > 0 {
		if err := r.s.Insert(r, left-1, r.rand.Intn(r.NumPEs())); err != nil {
			r.Abort(err)
		}
	}
}

// Set gives every branch the streamer before the step: a branch may get
// an item (and so need the streamer) before its own Go.
func (r *relay) Set(m relaySet) {
	r.s, r.rand = m.S, rand.New(rand.NewSource(int64(r.PE())))
	_ = r.Contribute(nil, reducer.Nop, m.Ready)
}

type relaySet struct {
	S     tram.Streamer[relay, int]
	Ready chare.Callback
}

// setRelays runs Set on every branch and waits until all have run it.
func setRelays(m *tmain, g group.Proxy[relay], s tram.Streamer[relay, int]) error {
	ready := chare.NewFuture[any](m)
	if err := chare.Send(m, g, (*relay).Set, relaySet{S: s, Ready: ready.Callback()}); err != nil {
		return err
	}
	_, err := ready.Get(m)
	return err
}

// Go submits n chains of the given length (after Set).
func (r *relay) Go(m relayStart) {
	for i := 0; i < m.Chains; i++ {
		if err := r.s.Insert(r, m.Length, r.rand.Intn(r.NumPEs())); err != nil {
			r.Abort(err)
			return
		}
	}
}

func (r *relay) Count(cb chare.Callback) { _ = r.Contribute(r.got, reducer.SumInt, cb) }

type relayStart struct {
	S      tram.Streamer[relay, int]
	Chains int
	Length int
}

func init() {
	chare.Register[relay]()
	tram.Register((*relay).Hop)
}

// runChains runs chains of dependent items in a quiescence step and
// returns the deliveries counted once quiescence was declared.
func runChains(t *testing.T, period, timeout time.Duration) (int, error) {
	const pes, chains, length = 4, 50, 20
	delivered := -1
	_, err := chare.Run(chare.Config{PEs: pes, Timeout: timeout}, func(m *tmain, _ []string) {
		g, err := group.New[relay](m)
		if err != nil {
			m.Abort(err)
			return
		}
		// Buffers far larger than the traffic: they never fill.
		s, err := tram.New(m, g, (*relay).Hop, tram.Options{Dims: []int{2, 2}, Sizing: tram.Sizing{BufferItems: 100000}, FlushPeriod: period})
		if err != nil {
			m.Abort(err)
			return
		}
		if err := setRelays(m, g, s); err != nil {
			m.Abort(err)
			return
		}
		started := chare.NewFuture[any](m)
		if err := s.Start(m, tram.Step{Mode: tram.Quiescence, Started: started.Callback()}); err != nil {
			m.Abort(err)
			return
		}
		if _, err := started.Get(m); err != nil {
			m.Abort(err)
			return
		}
		// T15: a quiescence step has no Done.
		if err := s.Done(m, 1); err == nil || !strings.Contains(err.Error(), "a quiescence step has no Done") {
			m.Abort(fmt.Errorf("Done in a quiescence step gave %v, want a refusal (T15)", err))
			return
		}
		_ = chare.Send(m, g, (*relay).Go, relayStart{S: s, Chains: chains, Length: length})
		qd := chare.NewFuture[any](m)
		m.DetectQuiescence(qd.Callback())
		if _, err := qd.Get(m); err != nil {
			m.Abort(err)
			return
		}
		n := chare.NewFuture[int](m)
		_ = chare.Send(m, g, (*relay).Count, n.Callback())
		delivered, err = n.Get(m)
		if err != nil {
			m.Abort(err)
			return
		}
		m.Exit(0)
	})
	if delivered >= 0 && delivered != pes*chains*(length+1) {
		t.Errorf("quiescence was declared after %d deliveries, want %d (T23)", delivered, pes*chains*(length+1))
	}
	return delivered, err
}

// claim T15, claim T23, claim T24
//
// TestT23_T15_T24_QuiescenceWaitsForEveryItem: items waiting in buffers count as
// work, so quiescence comes only after every chain ended (T15, T23). The
// buffers never fill: every item moves because idle PEs flush their buffers
// at the period (claim T24), which is what keeps dependent items from
// deadlocking (claim T25).
func TestT23_T15_T24_QuiescenceWaitsForEveryItem(t *testing.T) {
	n, err := runChains(t, time.Millisecond, 30*time.Second)
	require.NoError(t, err)
	require.Equal(t, 4*50*21, n)
}

// GoDone submits n chains like Go, then says this PE's producer is done:
// the chains go on in deliveries after Done.
func (r *relay) GoDone(m relayStart) {
	r.Go(m)
	if err := r.s.Done(r, 1); err != nil {
		r.Abort(err)
	}
}

// TestCompletionChainsOn1DGridWithoutFlushing: on a 1-D grid every item
// goes straight to its destination, so a completion step needs no
// periodic flushing even when deliveries insert further items after their
// PE's Done (a chain A→B→C): what a delivered run inserts leaves at its
// end, and the step finishes only after the last link (issue 14, item 3).
func TestCompletionChainsOn1DGridWithoutFlushing(t *testing.T) {
	const pes, chains, length = 4, 50, 20
	delivered := -1
	code, err := chare.Run(chare.Config{PEs: pes, Timeout: 20 * time.Second}, func(m *tmain, _ []string) {
		g, err := group.New[relay](m)
		if err != nil {
			m.Abort(err)
			return
		}
		// Buffers larger than the traffic (at most 200 items are on
		// their way at once), no flush period.
		s, err := tram.New(m, g, (*relay).Hop, tram.Options{Dims: []int{pes}, Sizing: tram.Sizing{BufferItems: 1000}})
		if err != nil {
			m.Abort(err)
			return
		}
		if err := setRelays(m, g, s); err != nil {
			m.Abort(err)
			return
		}
		started, finished := chare.NewFuture[any](m), chare.NewFuture[any](m)
		if err := s.Start(m, tram.Step{Mode: tram.Completion, Producers: pes, Started: started.Callback(), Finished: finished.Callback()}); err != nil {
			m.Abort(err)
			return
		}
		if _, err := started.Get(m); err != nil {
			m.Abort(err)
			return
		}
		_ = chare.Send(m, g, (*relay).GoDone, relayStart{S: s, Chains: chains, Length: length})
		if _, err := finished.Get(m); err != nil {
			m.Abort(err)
			return
		}
		n := chare.NewFuture[int](m)
		_ = chare.Send(m, g, (*relay).Count, n.Callback())
		if delivered, err = n.Get(m); err != nil {
			m.Abort(err)
			return
		}
		m.Exit(0)
	})
	require.NoError(t, err)
	require.Equal(t, 0, code)
	require.Equal(t, pes*chains*(length+1), delivered, "deliveries counted when the step finished")
}
