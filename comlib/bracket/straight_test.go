package bracket

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// straightPEs is oneHopPEs with Options.Straight.
func straightPEs(t *testing.T, n int) ([]*PE[payload], []Key) {
	t.Helper()
	return oneHopPEsWith(t, n, Options{Straight: true})
}

// TestStraightSendsNoPackets: on a one-hop list that Options.Straight
// accepts, an optimized iteration's messages go straight (the caller
// sends them) and its exchange ends with the source's EndIteration, with
// no packet sent or awaited; where Straight says no, or is not set, the
// same iteration takes packets.
func TestStraightSendsNoPackets(t *testing.T) {
	pes, keys := straightPEs(t, 3)
	p := pes[0]
	for it := 0; it < 3; it++ {
		_, err := p.Begin(keys[0], it)
		require.NoError(t, err)
		for d := 0; d < 3; d++ {
			require.True(t, p.Straight(keys[0]), "iteration %d, message %d", it, d)
		}
		fx, err := p.End(keys[0])
		require.NoError(t, err)
		require.Empty(t, fx.Packets)
		require.Empty(t, fx.Direct)
		require.Equal(t, []int{it}, fx.Exchanges)
		require.Equal(t, []Finished{{Iter: it, Step: 1, Parts: 3}}, fx.Finished)
		require.Zero(t, p.Iterations(), "nothing to wait for")
		require.False(t, p.Straight(keys[0]), "outside the bracket")
		p.Recycle(fx)
	}

	for _, opt := range []Options{{}, {Straight: false}} {
		q := NewPE[payload](0, opt, routers()["direct"])
		_, err := q.NewList(&List{Step: 1, Iter: -1, Where: map[Key]int{"a": 0, "b": 1}})
		require.NoError(t, err)
		q.Release(1)
		_, err = q.Begin("a", 0)
		require.NoError(t, err)
		require.False(t, q.Straight("a"))
		fx, err := q.End("a")
		require.NoError(t, err)
		require.Len(t, fx.Packets, 1, "the exchange takes packets")
		require.Equal(t, 1, q.Iterations(), "and waits for its peer's")
	}
}

// TestStraightOrderAfterPending: a message goes straight, then the
// iteration goes pending (another went into error): the next message is
// queued, and leaves once the list is back, directly and after the
// first; no packet is sent for it.
func TestStraightOrderAfterPending(t *testing.T) {
	pes, keys := straightPEs(t, 2)
	p := pes[0]
	secondIteration(t, p, keys[0])
	require.True(t, p.Straight(keys[0]), "the first message goes straight")
	p.Enter(Enter{Iter: 0, Step: 2}) // iteration 1 goes pending
	require.False(t, p.Straight(keys[0]), "pending: queued, not straight")
	second := payload{src: 0, dst: 1, iter: 2}
	fx, err := p.Send(keys[0], 1, keys[1], second)
	require.NoError(t, err)
	require.Empty(t, fx.Direct)
	_, err = p.End(keys[0])
	require.NoError(t, err)
	_, err = p.NewList(&List{Step: 2, Iter: 0, Where: map[Key]int{keys[0]: 0, keys[1]: 1}})
	require.NoError(t, err)
	fx = p.Release(2)
	require.Empty(t, fx.Packets)
	require.Len(t, fx.Direct, 1)
	require.Equal(t, second, fx.Direct[0].Payload)
	require.Equal(t, []int{1}, fx.Exchanges)
	require.Zero(t, p.Iterations())
}

// TestStraightWaitsForEarlierIteration: an iteration that begins while
// an earlier one is under way on the PE queues its messages (anything
// the earlier one queued must leave first), and sends them directly, in
// order, when its exchange starts; once no earlier one is under way,
// messages go straight again.
func TestStraightWaitsForEarlierIteration(t *testing.T) {
	where := map[Key]int{"a": 0, "b": 0, "c": 1}
	p := NewPE[payload](0, Options{Straight: true}, routers()["direct"])
	_, err := p.NewList(&List{Step: 1, Iter: -1, Where: where})
	require.NoError(t, err)
	p.Release(1)
	_, err = p.Begin("a", 1)
	require.NoError(t, err)
	require.True(t, p.Straight("a"))
	_, err = p.End("a")
	require.NoError(t, err)
	_, err = p.Begin("a", 2) // b has not ended 1: iteration 1 is under way
	require.NoError(t, err)
	require.False(t, p.Straight("a"))
	var want []payload
	for i := 0; i < 3; i++ {
		m := payload{src: 0, dst: 2, iter: 20 + i}
		want = append(want, m)
		fx, err := p.Send("a", 1, "c", m)
		require.NoError(t, err)
		require.Empty(t, fx.Direct, "queued")
	}
	_, err = p.End("a")
	require.NoError(t, err)
	_, err = p.Begin("b", 1)
	require.NoError(t, err)
	require.True(t, p.Straight("b"), "iteration 1 began with nothing before it")
	fx, err := p.End("b")
	require.NoError(t, err)
	require.Equal(t, []int{1}, fx.Exchanges)
	require.Empty(t, fx.Packets)
	_, err = p.Begin("b", 2)
	require.NoError(t, err)
	require.False(t, p.Straight("b"), "iteration 2 queues")
	m := payload{src: 1, dst: 2, iter: 23}
	want = append(want, m)
	_, err = p.Send("b", 1, "c", m)
	require.NoError(t, err)
	fx, err = p.End("b")
	require.NoError(t, err)
	require.Empty(t, fx.Packets)
	var got []payload
	for _, m := range fx.Direct {
		got = append(got, m.Payload)
	}
	require.Equal(t, want, got, "sent directly, in order")
	require.Zero(t, p.Iterations())
	_, err = p.Begin("a", 3)
	require.NoError(t, err)
	require.True(t, p.Straight("a"), "nothing earlier under way: straight again")
}

// TestStraightSimulated: the seeded simulation with Options.Straight on
// the direct router. With migrations and swaps every message still
// arrives exactly once and every recovery ends; without them each
// pair's messages arrive in the order sent, nothing takes a packet (the
// first iteration, which teaches the list, goes directly), and from the
// third iteration on every message goes straight.
func TestStraightSimulated(t *testing.T) {
	opt := Options{Straight: true}
	for _, c := range []struct{ p, n int }{{1, 3}, {2, 2}, {3, 7}, {4, 4}, {5, 12}, {8, 6}} {
		for seed := int64(1); seed <= 25; seed++ {
			t.Run(fmt.Sprintf("p%d/n%d/seed%d", c.p, c.n, seed), func(t *testing.T) {
				s := newSim(t, seed, c.p, c.n, 12, routers()["direct"], opt)
				s.straight = true
				s.migr, s.swapP = 0.08, 0.4
				s.run()
				s.check()
				require.NotEmpty(t, s.straightN)

				s = newSim(t, seed, c.p, c.n, 12, routers()["direct"], opt)
				s.straight, s.order = true, map[[2]int]int{}
				s.run()
				s.check()
				require.Zero(t, s.packets, "no packets: iteration 0 goes directly, the others straight or directly")
				// Iteration 1 may begin on a PE before the recovery of 0
				// ends there (then it queues); by iteration 2 it has.
				for it := 2; it < 12; it++ {
					require.Equal(t, c.n*(c.n-1), s.straightN[it], "iteration %d: every message went straight", it)
				}
			})
		}
	}
}

// TestStraightQueuedFollowsStraight: a message queued by an iteration
// that began while an earlier one was under way leaves in Effects.Direct
// even for a destination on this PE (here z, not a source), not in
// Deliver: the earlier iteration's messages went straight, the caller's
// way (its mailbox), and a delivery at once would overtake them.
func TestStraightQueuedFollowsStraight(t *testing.T) {
	p := NewPE[payload](0, Options{Straight: true}, routers()["direct"])
	_, err := p.NewList(&List{Step: 1, Iter: -1, Where: map[Key]int{"a": 0, "b": 0, "c": 1}})
	require.NoError(t, err)
	_, err = p.Begin("a", 1)
	require.NoError(t, err)
	require.True(t, p.Straight("a"), "m1 goes straight")
	_, err = p.End("a")
	require.NoError(t, err)
	_, err = p.Begin("a", 2) // b has not ended iteration 1 here
	require.NoError(t, err)
	require.False(t, p.Straight("a"), "iteration 1 under way: m2 is queued")
	m2 := payload{0, 9, 2}
	_, err = p.Send("a", 0, "", m2)
	require.NoError(t, err)
	_, err = p.End("a")
	require.NoError(t, err)
	for n := 1; n <= 2; n++ {
		_, err = p.Begin("b", n)
		require.NoError(t, err)
		fx, err := p.End("b")
		require.NoError(t, err)
		require.Empty(t, fx.Deliver, "iteration %d", n)
		require.Empty(t, fx.Runs, "iteration %d", n)
		if n == 2 {
			require.Len(t, fx.Direct, 1)
			require.Equal(t, m2, fx.Direct[0].Payload)
			require.Equal(t, 0, fx.Direct[0].Dest)
		}
	}
	require.Zero(t, p.Iterations())
}
