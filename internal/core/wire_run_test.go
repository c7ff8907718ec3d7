package core

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/actor"
	"github.com/charmgo/charm/actor/wire"
)

// Envelopes on the wire as runs: the head once, a tail per message; every
// field of the header survives, and damaged tails are errors, never
// panics.

type runWorker struct {
	Chare[runWorker]
	got []runMsg
}

type runMsg struct {
	A int32
	B [4]byte
}

func (w *runWorker) Take(m runMsg) { w.got = append(w.got, m) }

func init() { Register[runWorker]() }

func runEntry(t *testing.T) *Entry {
	t.Helper()
	e, err := lookupEntry((*runWorker).Take)
	require.NoError(t, err)
	(&env1[runWorker, runMsg]{fn: (*runWorker).Take}).installWire(e)
	return e
}

// encodeRun encodes envs as the transport does and returns the run item.
func encodeRun(t *testing.T, envs ...actor.WireRunner) wire.Item {
	t.Helper()
	it := wire.Item{Head: envs[0].AppendWireHead(nil)}
	for _, e := range envs {
		require.Equal(t, it.Head, e.AppendWireHead(nil), "one run shares one head")
		var mark int
		var err error
		it.Body, mark = wire.BeginTail(it.Body)
		it.Body, err = e.AppendWireTail(it.Body)
		require.NoError(t, err)
		it.Body = wire.EndTail(it.Body, mark)
		it.Tails++
	}
	return it
}

func decodeRun(it wire.Item) ([]actor.Message, error) { return appendTails(nil, it) }

// appendTails appends the messages of a run item, read with the tail
// decoder, to into.
func appendTails(into []actor.Message, it wire.Item) ([]actor.Message, error) {
	next, err := decodeEnvHead(nil, it.Head, it.Tails)
	if err != nil {
		return into, err
	}
	rest := it.Body
	for range it.Tails {
		tail, r, _ := wire.NextTail(rest)
		rest = r
		m, err := next(tail)
		if err != nil {
			return into, err
		}
		into = append(into, m)
	}
	return into, nil
}

func TestEnvelopeRun(t *testing.T) {
	e := runEntry(t)
	route := Route{Kind: KindElement, Coll: 1<<32 | 5, PE: 2}
	var envs []actor.WireRunner
	for i := range 5 {
		env := &env1[runWorker, runMsg]{fn: (*runWorker).Take, msg: runMsg{A: int32(i - 2), B: [4]byte{byte(i)}}}
		env.h = Header{Route: route, Entry: e, Src: 3, Root: 1, Epoch: uint32(i * 1000), Hops: uint8(i), Flow: uint32(i) * 70000}
		env.h.Index = rawIndex{0x01, byte(i)} // different elements, one run
		envs = append(envs, env)
	}
	it := encodeRun(t, envs...)
	require.Less(t, len(it.Body)+len(it.Head), 5*envHeadLen, "five envelopes take less than five heads")
	ms, err := decodeRun(it)
	require.NoError(t, err)
	require.Len(t, ms, 5)
	for i, m := range ms {
		want := envs[i].(*env1[runWorker, runMsg])
		got, ok := m.(*env1[runWorker, runMsg])
		require.True(t, ok, "decoded by the typed decoder: %T", m)
		raw, ok := rawOf(got.h.Index)
		require.True(t, ok, "the index stays in its wire form: %T", got.h.Index)
		require.Equal(t, want.h.Index, raw)
		gh := got.h
		gh.Index = want.h.Index
		require.Equal(t, want.h, gh)
		require.Equal(t, want.msg, got.msg)
	}

	// A multicast hop's members, from an envelope of the dynamic kind.
	sec := &envDyn{msg: runMsg{A: 7}}
	sec.h = Header{Route: Route{Kind: KindSection, Coll: 9, PE: 1, Index: []any{rawIndex{1}, rawIndex{2, 3}}}, Entry: e}
	it = encodeRun(t, sec)
	ms, err = decodeRun(it)
	require.NoError(t, err)
	got := ms[0].(Envelope)
	require.Equal(t, sec.h, *got.Header())
	require.Equal(t, runMsg{A: 7}, got.Payload())
}

// A traced send's flow number crosses with the envelope: out of range, or
// 0 with the flag that says one follows, it is an error.
func TestEnvelopeFlowNumber(t *testing.T) {
	e := runEntry(t)
	env := &env1[runWorker, runMsg]{fn: (*runWorker).Take, msg: runMsg{A: 1}}
	env.h = Header{Route: Route{Kind: KindBranch, Coll: 3, PE: 1}, Entry: e, Src: 2, Flow: 300}
	it := encodeRun(t, env)
	ms, err := decodeRun(it)
	require.NoError(t, err)
	require.Equal(t, uint32(300), ms[0].(Envelope).Header().Flow)

	untraced := *env
	untraced.h.Flow = 0
	plain := encodeRun(t, &untraced)
	require.Equal(t, len(it.Body)-2, len(plain.Body), "an untraced send carries no flow bytes")

	tail, _, ok := wire.NextTail(it.Body)
	require.True(t, ok)
	require.Equal(t, byte(tailFlow), tail[0])
	tests := []struct {
		name string
		flow []byte
		want string
	}{
		{"zero", []byte{0}, "flow number 0 is out of range"},
		{"above 2^32-1", []byte{0x80, 0x80, 0x80, 0x80, 0x10}, "flow number 4294967296 is out of range"},
		{"truncated", []byte{0x80}, "flow number is truncated"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			bad := append([]byte{tailFlow}, tc.flow...)
			next, err := decodeEnvHead(nil, it.Head, it.Tails)
			require.NoError(t, err)
			_, err = next(bad)
			require.ErrorContains(t, err, tc.want)
		})
	}
}

func TestEnvelopeRunRejects(t *testing.T) {
	e := runEntry(t)
	env := &env1[runWorker, runMsg]{fn: (*runWorker).Take, msg: runMsg{A: 1}}
	env.h = Header{Route: Route{Kind: KindBranch, Coll: 3, PE: 1}, Entry: e, Epoch: 5}
	it := encodeRun(t, env)
	tail, _, ok := wire.NextTail(it.Body)
	require.True(t, ok)
	bad := func(mutate func(head, tail []byte) ([]byte, []byte)) error {
		h, tl := mutate(append([]byte{}, it.Head...), append([]byte{}, tail...))
		next, err := decodeEnvHead(nil, h, 1)
		if err != nil {
			return err
		}
		_, err = next(tl)
		return err
	}
	tests := []struct {
		name   string
		mutate func(head, tail []byte) ([]byte, []byte)
		want   string
	}{
		{"short head", func(h, tl []byte) ([]byte, []byte) { return h[:10], tl }, "an envelope head of 10 bytes, not 25"},
		{"route kind 0", func(h, tl []byte) ([]byte, []byte) { h[0] = 0; return h, tl }, "an envelope of route kind 0"},
		{"unknown entry", func(h, tl []byte) ([]byte, []byte) { h[21], h[22] = 0xff, 0xff; return h, tl }, "has no entry method"},
		{"empty tail", func(h, tl []byte) ([]byte, []byte) { return h, nil }, "an envelope without a tail"},
		{"unknown flags", func(h, tl []byte) ([]byte, []byte) { tl[0] |= 0x40; return h, tl }, "tail flags 0x42"},
		{"members on a branch", func(h, tl []byte) ([]byte, []byte) { tl[0] |= tailMembers; return h, tl }, "route kind 2 with tail flags"},
		{"truncated epoch", func(h, tl []byte) ([]byte, []byte) { return h, tl[:1] }, "epoch is truncated"},
		{"short message", func(h, tl []byte) ([]byte, []byte) { return h, tl[:len(tl)-1] }, "decoding the message of core.runWorker.Take: codec: decoding core.runMsg: field B"},
		{"trailing byte", func(h, tl []byte) ([]byte, []byte) { return h, append(tl, 0) }, "core.runMsg: 1 trailing bytes"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.ErrorContains(t, bad(tc.mutate), tc.want)
		})
	}

	// Random damage: an error or an envelope, never a panic.
	r := rand.New(rand.NewPCG(1, 2))
	for range 3000 {
		_ = bad(func(h, tl []byte) ([]byte, []byte) {
			for range 1 + r.IntN(3) {
				if r.IntN(4) == 0 {
					h[r.IntN(len(h))] = byte(r.Uint32())
				} else {
					tl[r.IntN(len(tl))] = byte(r.Uint32())
				}
			}
			return h, tl[:r.IntN(len(tl)+1)]
		})
	}
}

// Decoding a run carves the envelopes it delivers from slabs, and
// allocates nothing else per message.
func TestEnvelopeRunAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts under -race are not the program's")
	}
	e := runEntry(t)
	var envs []actor.WireRunner
	for i := range 100 {
		env := &env1[runWorker, runMsg]{fn: (*runWorker).Take, msg: runMsg{A: int32(i)}}
		env.h = Header{Route: Route{Kind: KindBranch, Coll: 3, PE: 1}, Entry: e}
		envs = append(envs, env)
	}
	it := encodeRun(t, envs...)
	next, err := decodeEnvHead(nil, it.Head, it.Tails)
	require.NoError(t, err)
	allocs := testing.AllocsPerRun(20, func() {
		rest := it.Body
		for range it.Tails {
			tail, r, _ := wire.NextTail(rest)
			rest = r
			if _, err := next(tail); err != nil {
				panic(err)
			}
		}
	})
	require.LessOrEqual(t, allocs/100, 0.1, "allocations per message (slabs of up to 64 envelopes)")
}

// A run from the wire whose count of messages times their size exceeds
// what a decoded run may hold is refused before anything is allocated: a
// message of a few bytes on the wire may decode into a large M.
type bigRunMsg struct{ B [1 << 16]byte }

func (w *runWorker) TakeBig(m bigRunMsg) { w.got = append(w.got, runMsg{A: int32(m.B[0])}) }

func TestEnvelopeRunRefusesAHugeDecode(t *testing.T) {
	e, err := lookupEntry((*runWorker).TakeBig)
	require.NoError(t, err)
	env := &env1[runWorker, bigRunMsg]{fn: (*runWorker).TakeBig}
	env.installWire(e)
	env.h = Header{Route: Route{Kind: KindBranch, Coll: 3, PE: 1}, Entry: e}
	it := encodeRun(t, env, env)
	_, err = decodeEnvRun(nil, it)
	require.NoError(t, err, "a run of two is read")
	it.Tails = 2000 // 2000 × 64 KiB: 125 MiB
	it.Body = append(it.Body, make([]byte, 4000)...)
	_, err = decodeEnvRun(nil, it)
	require.ErrorContains(t, err, "a run of 2000 messages of core.runWorker.TakeBig, 65536 bytes each, is more than the 64 MiB")
}

// decodeTails reads every tail of a run item with the tail decoder.
func decodeTails(it wire.Item, into []actor.Message) []actor.Message {
	into, err := appendTails(into, it)
	if err != nil {
		panic(err)
	}
	return into
}

// Element envelopes from another process that are read tail by tail (here
// forwarded ones) keep their index in its wire form in a wireIndex from a
// slab: no allocation per message for a built-in index (a copy of the
// bytes and the boxed slice took two each before), and the index still
// names its element as the index itself would.
func TestElementEnvelopeIndexDecodeAllocations(t *testing.T) {
	e := runEntry(t)
	const n = 256
	for _, tc := range []struct {
		name  string
		index func(i int) any
	}{
		{"int", func(i int) any { return 1000 + i }},
		{"[2]int", func(i int) any { return [2]int{i, -300} }},
		{"[6]int", func(i int) any { return [6]int{i, 1 << 20, 3, 4, 5, 6} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var envs []actor.WireRunner
			for i := range n {
				env := &env1[runWorker, runMsg]{fn: (*runWorker).Take, msg: runMsg{A: int32(i)}}
				env.h = Header{Route: Route{Kind: KindElement, Coll: 1<<32 | 5, PE: 2, Index: tc.index(i)}, Entry: e, Epoch: 7, Hops: 1}
				envs = append(envs, env)
			}
			it := encodeRun(t, envs...)
			got := decodeTails(it, nil)
			require.Len(t, got, n)
			for i, m := range got {
				h := m.(*env1[runWorker, runMsg]).h
				require.IsType(t, &wireIndex{}, h.Index, "message %d", i)
				want, err := encodeIndex(tc.index(i))
				require.NoError(t, err)
				raw, _ := rawOf(h.Index)
				require.Equal(t, rawIndex(want), raw, "index of message %d", i)
				require.Equal(t, fmt.Sprint(tc.index(i)), fmt.Sprint(h.Index), "message %d", i)
			}
			if raceEnabled {
				return
			}
			allocs := testing.AllocsPerRun(20, func() { got = decodeTails(it, got[:0]) })
			// The head's closure and its slabs, then slabs of envelopes
			// (4, 8, ..., 64: 9 for 256) and of indices (1, 2, ..., 64: 10).
			t.Logf("%d element envelopes with %s indices: %.0f allocations", n, tc.name, allocs)
			require.LessOrEqual(t, allocs, 24.0, "allocations to decode %d element envelopes with %s indices", n, tc.name)
		})
	}

	// An index too long for a wireIndex keeps its own copy of the bytes.
	long := &env1[runWorker, runMsg]{fn: (*runWorker).Take}
	long.h = Header{Route: Route{Kind: KindElement, Coll: 5, PE: 2, Index: [6]int{-1 << 40, 1 << 40, 3, 4, 5, 6}}, Entry: e}
	got := decodeTails(encodeRun(t, long), nil)
	h := got[0].(*env1[runWorker, runMsg]).h
	require.IsType(t, rawIndex{}, h.Index)
	require.Equal(t, "[-1099511627776 1099511627776 3 4 5 6]", fmt.Sprint(h.Index))
}
