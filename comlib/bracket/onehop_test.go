package bracket

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// oneHopPEs returns n PEs with sources "s0".."s<n-1>", one each, that
// know the list (step 1) and run the direct router, and the keys.
func oneHopPEs(t *testing.T, n int) ([]*PE[payload], []Key) {
	t.Helper()
	return oneHopPEsWith(t, n, Options{})
}

// oneHopPEsWith is oneHopPEs with the PEs' options.
func oneHopPEsWith(t *testing.T, n int, opt Options) ([]*PE[payload], []Key) {
	t.Helper()
	where := map[Key]int{}
	keys := make([]Key, n)
	for i := range keys {
		keys[i] = Key(string(rune('a' + i)))
		where[keys[i]] = i
	}
	pes := make([]*PE[payload], n)
	for i := range pes {
		pes[i] = NewPE[payload](i, opt, routers()["direct"])
		_, err := pes[i].NewList(&List{Step: 1, Iter: -1, Where: where})
		require.NoError(t, err)
		pes[i].Release(1)
	}
	return pes, keys
}

// secondIteration ends p's iteration 0 of key and begins its iteration 1.
func secondIteration(t *testing.T, p *PE[payload], key Key) {
	t.Helper()
	_, err := p.Begin(key, 0)
	require.NoError(t, err)
	_, err = p.End(key)
	require.NoError(t, err)
	_, err = p.Begin(key, 1)
	require.NoError(t, err)
}

// TestOneHopPacketsKeepSendOrder: on a one-hop router the messages are
// queued by destination as they are sent; each packet carries its
// destination's messages in the order the source sent them (FIFO per
// pair), interleaved sends to several PEs included, and its messages for
// its own PE are delivered when the exchange starts.
func TestOneHopPacketsKeepSendOrder(t *testing.T) {
	pes, keys := oneHopPEs(t, 3)
	p := pes[0]
	for it := 0; it < 3; it++ { // iteration after iteration on the same PE
		_, err := p.Begin(keys[0], it)
		require.NoError(t, err)
		var want [3][]payload
		for i := 0; i < 7+it; i++ {
			dst := (i*2 + it) % 3
			m := payload{src: 0, dst: dst, iter: it*100 + i}
			want[dst] = append(want[dst], m)
			fx, err := p.Send(keys[0], dst, keys[dst], m)
			require.NoError(t, err)
			require.Empty(t, fx.Packets, "nothing leaves before the source ends")
			require.Empty(t, fx.Deliver)
		}
		fx, err := p.End(keys[0])
		require.NoError(t, err)
		require.Len(t, fx.Packets, 2, "one packet to each other participant")
		for _, pk := range fx.Packets {
			var got []payload
			for _, m := range pk.Msgs {
				require.Equal(t, pk.To, m.Dest)
				got = append(got, m.Payload)
			}
			require.Equal(t, want[pk.To], got, "iteration %d, packet to PE %d", it, pk.To)
		}
		var self []payload
		for _, m := range fx.Deliver {
			self = append(self, m.Payload)
		}
		require.Equal(t, want[0], self, "iteration %d: the messages for PE 0 itself", it)
		p.Recycle(fx)
		for from := 1; from < 3; from++ { // the others' (empty) packets end it
			fx = p.Packet(Packet[payload]{From: from, To: 0, Iter: it, Step: 1})
			require.Empty(t, fx.Errors)
		}
		require.Len(t, fx.Finished, 1, "iteration %d ends with the last packet", it)
		require.Zero(t, p.Iterations())
	}
}

// TestLastStageDeliveredFromPackets: the last stage's messages are
// delivered as runs of the packets' own arrays (Effects.Runs), not copied,
// and a message of a run whose destination source has moved on to a later
// iteration is still reported (C07).
func TestLastStageDeliveredFromPackets(t *testing.T) {
	pes, keys := oneHopPEs(t, 2)
	p := pes[1]
	_, err := p.Begin(keys[1], 0)
	require.NoError(t, err)
	fx, err := p.End(keys[1])
	require.NoError(t, err)
	require.Len(t, fx.Packets, 1)
	pk := Packet[payload]{From: 0, To: 1, Iter: 0, Step: 1, Msgs: []Msg[payload]{
		{Dest: 1, Src: keys[0], DestKey: keys[1], Iter: 0, Payload: payload{0, 1, 0}},
		{Dest: 1, Src: keys[0], DestKey: keys[1], Iter: 0, Payload: payload{0, 1, 1}},
	}}
	fx = p.Packet(pk)
	require.Empty(t, fx.Errors)
	require.Empty(t, fx.Deliver)
	require.Len(t, fx.Runs, 1)
	require.Len(t, fx.Runs[0], 2)
	require.Same(t, &pk.Msgs[0], &fx.Runs[0][0], "the packet's array, not a copy")

	// Iteration 1: the source begins 2 before iteration 1's messages are in.
	_, err = p.Begin(keys[1], 1)
	require.NoError(t, err)
	_, err = p.End(keys[1])
	require.NoError(t, err)
	_, err = p.Begin(keys[1], 2)
	require.NoError(t, err)
	fx = p.Packet(Packet[payload]{From: 0, To: 1, Iter: 1, Step: 1, Msgs: []Msg[payload]{
		{Dest: 1, Src: keys[0], DestKey: keys[1], Iter: 1, Payload: payload{0, 1, 1}},
	}})
	require.Len(t, fx.Runs, 1, "delivered all the same")
	require.Len(t, fx.Errors, 1)
	require.ErrorContains(t, fx.Errors[0], "C07")
}

// TestOneHopOrderAfterPending: messages queued by destination, then an
// iteration that goes pending (another went into error) before more are
// sent: when it is released, each pair's messages still leave in the
// order they were sent.
func TestOneHopOrderAfterPending(t *testing.T) {
	pes, keys := oneHopPEs(t, 2)
	p := pes[0]
	secondIteration(t, p, keys[0])
	first := payload{src: 0, dst: 1, iter: 1}
	_, err := p.Send(keys[0], 1, keys[1], first)
	require.NoError(t, err)
	p.Enter(Enter{Iter: 0, Step: 2}) // iteration 1 goes pending
	second := payload{src: 0, dst: 1, iter: 2}
	_, err = p.Send(keys[0], 1, keys[1], second)
	require.NoError(t, err)
	_, err = p.End(keys[0])
	require.NoError(t, err)
	_, err = p.NewList(&List{Step: 2, Iter: 0, Where: map[Key]int{keys[0]: 0, keys[1]: 1}})
	require.NoError(t, err)
	fx := p.Release(2)
	var got []payload
	for _, pk := range fx.Packets {
		for _, m := range pk.Msgs {
			got = append(got, m.Payload)
		}
	}
	for _, m := range fx.Direct {
		got = append(got, m.Payload)
	}
	require.Equal(t, []payload{first, second}, got)
}

// A list must begin at step 1: step 0 means "no list" inside the PE.
func TestListStepZeroRefused(t *testing.T) {
	p := NewPE[payload](0, Options{}, routers()["direct"])
	_, err := p.NewList(&List{Step: 0, Where: map[Key]int{"a": 0}})
	require.ErrorContains(t, err, "step 0")
}
