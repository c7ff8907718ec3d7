package core

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/actor"
	"github.com/charmgo/charm/actor/wire"
)

// A run of sends (run.go) crosses processes as one wire run and is read
// back whole into one run, with the header once and the messages in
// order; runs that need a header per message are left to the per-tail
// decoder, and damaged runs are errors.

// encodeMulti encodes a WireMulti as the transport does.
func encodeMulti(t *testing.T, m actor.WireMulti) wire.Item {
	t.Helper()
	it := wire.Item{Head: m.AppendWireHead(nil)}
	for i := range m.Count() {
		var mark int
		var err error
		it.Body, mark = wire.BeginTail(it.Body)
		it.Body, err = m.AppendWireTailAt(it.Body, i)
		require.NoError(t, err)
		it.Body = wire.EndTail(it.Body, mark)
		it.Tails++
	}
	return it
}

// readWhole decodes it, which must read back whole into a run with src's
// header and messages.
func readWhole(t *testing.T, it wire.Item, src *run1[runWorker, runMsg]) *run1[runWorker, runMsg] {
	t.Helper()
	m, err := decodeEnvRun(nil, it)
	require.NoError(t, err)
	got, ok := m.(*run1[runWorker, runMsg])
	require.True(t, ok, "read whole into a run: %T", m)
	require.Equal(t, src.h, got.h)
	require.Equal(t, src.msgs, got.msgs)
	return got
}

func TestRunRoundTrip(t *testing.T) {
	e := runEntry(t)
	src := &run1[runWorker, runMsg]{fn: (*runWorker).Take}
	src.h = Header{Route: Route{Kind: KindBranch, Coll: 1<<32 | 7, PE: 3}, Entry: e, Src: 2}
	for i := range 300 {
		src.msgs = append(src.msgs, runMsg{A: int32(i*7 - 100), B: [4]byte{byte(i), 1, 2, 3}})
	}
	it := encodeMulti(t, src)
	require.Less(t, len(it.Body), 300*16, "each message costs its own bytes and a tail of 3 bytes, not a 25-byte head")

	got := readWhole(t, it, src)
	require.Equal(t, 300, got.Count())
}

func TestRunDecodeFallsBackOrRejects(t *testing.T) {
	e := runEntry(t)
	plain := &env1[runWorker, runMsg]{fn: (*runWorker).Take, msg: runMsg{A: 1}}
	plain.h = Header{Route: Route{Kind: KindBranch, Coll: 3, PE: 1}, Entry: e}
	withEpoch := &env1[runWorker, runMsg]{fn: (*runWorker).Take, msg: runMsg{A: 2}}
	withEpoch.h = plain.h
	withEpoch.h.Epoch = 9

	tests := []struct {
		name string
		envs []actor.WireRunner
	}{
		{"first has an epoch", []actor.WireRunner{withEpoch, plain}},
		{"a later one has an epoch", []actor.WireRunner{plain, plain, withEpoch}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { requirePerTail(t, tc.envs...) })
	}

	it := encodeRun(t, plain, plain)
	bad := []struct {
		name string
		it   wire.Item
		want string
	}{
		{"more tails than bytes", wire.Item{Head: it.Head, Body: it.Body, Tails: len(it.Body) + 1}, "a run of"},
		{"a tail missing", wire.Item{Head: it.Head, Body: it.Body, Tails: 3}, "ends after 2 of 3 messages"},
		{"a short message", func() wire.Item {
			b := append([]byte{}, it.Body...)
			b[1]-- // the first tail's length: one byte of it now reads as the next tail
			return wire.Item{Head: it.Head, Body: b, Tails: 2}
		}(), "decoding message 0"},
		{"bad head", wire.Item{Head: it.Head[:3], Body: it.Body, Tails: 2}, "an envelope head of 3 bytes"},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			_, err := decodeEnvRun(nil, tc.it)
			require.ErrorContains(t, err, tc.want)
		})
	}
}

// Reading a run whole allocates the run and its slice of messages, however
// many messages it has.
func TestRunDecodeAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts under -race are not the program's")
	}
	e := runEntry(t)
	src := &run1[runWorker, runMsg]{fn: (*runWorker).Take}
	src.h = Header{Route: Route{Kind: KindBranch, Coll: 3, PE: 1}, Entry: e}
	for i := range 200 {
		src.msgs = append(src.msgs, runMsg{A: int32(i)})
	}
	it := encodeMulti(t, src)
	allocs := testing.AllocsPerRun(20, func() {
		if _, err := decodeEnvRun(nil, it); err != nil {
			panic(err)
		}
	})
	require.LessOrEqual(t, allocs, 2.0, "the run and its messages' slice, for 200 messages")
}

// A run of element messages that have been forwarded (their hops count)
// cannot be read whole: it is read tail by tail, and its envelopes come
// from slabs: a handful of allocations per run, not one per message.
func TestElementRunDecodeAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts under -race are not the program's")
	}
	e := runEntry(t)
	const n = 256
	var envs []actor.WireRunner
	for i := range n {
		env := &env1[runWorker, runMsg]{fn: (*runWorker).Take, msg: runMsg{A: int32(i)}}
		env.h = Header{Route: Route{Kind: KindElement, Coll: 1<<32 | 5, PE: 2}, Entry: e, Epoch: uint32(i), Hops: 1}
		envs = append(envs, env)
	}
	it := encodeRun(t, envs...)
	whole, err := decodeEnvRun(nil, it)
	require.NoError(t, err)
	require.Nil(t, whole, "forwarded element messages are read tail by tail")

	var got []actor.Message
	allocs := testing.AllocsPerRun(20, func() {
		got = decodeTails(it, got[:0])
	})
	require.Len(t, got, n)
	for i, m := range got {
		env, ok := m.(*env1[runWorker, runMsg])
		require.True(t, ok, "message %d is a %T", i, m)
		require.Equal(t, int32(i), env.msg.A)
		require.Equal(t, uint32(i), env.h.Epoch)
	}
	// The head's closure and its slab, then slabs of 4, 8, ..., 64: 9 for 256.
	require.LessOrEqual(t, allocs, 12.0, "allocations to decode a run of %d element messages", n)
}

// elemRun is a run of n messages to elements i%4 (epoch i%3) of one
// array, as sendElemRun builds it.
func elemRun(t *testing.T, n int) *run1[runWorker, runMsg] {
	e := runEntry(t)
	r := &run1[runWorker, runMsg]{fn: (*runWorker).Take}
	r.h = Header{Route: Route{Kind: KindElement, Coll: 1<<32 | 9, PE: 3}, Entry: e, Src: 1}
	for i := range n {
		r.msgs = append(r.msgs, runMsg{A: int32(i), B: [4]byte{byte(i)}})
		r.idx = append(r.idx, elemKey{index: 1000 + i%4, epoch: uint32(i % 3)})
	}
	return r
}

// An element run crosses processes as one wire run, an index and epoch
// per tail, and is read back whole: the indices as raw bytes (decoded
// with the array's index type when delivered), epochs and messages in
// order, in a handful of allocations whatever its length.
func TestElementRunRoundTrip(t *testing.T) {
	src := elemRun(t, 300)
	it := encodeMulti(t, src)
	require.Less(t, len(it.Body), 300*20, "a tail per message of index, epoch and message, no head")

	got := readWhole(t, it, src)
	require.Len(t, got.idx, 300)
	require.Len(t, got.raw, 300)
	for i, k := range got.idx {
		raw := got.raw[i]
		require.Nil(t, k.index, "index %d is in raw", i)
		want, err := encodeIndex(src.idx[i].index)
		require.NoError(t, err)
		require.Equal(t, rawIndex(want), raw, "index of message %d", i)
		require.Equal(t, src.idx[i].epoch, k.epoch, "epoch of message %d", i)
	}
	require.Equal(t, "a run of 300 messages for core.runWorker.Take to elements of array #1.9", got.Describe())
	got.at, got.cur = 5, 1001
	require.Equal(t, "core.runWorker.Take on element 1001 of array #1.9 (message 5 of a run of 300)", got.Describe())

	if !raceEnabled {
		allocs := testing.AllocsPerRun(20, func() {
			if _, err := decodeEnvRun(nil, it); err != nil {
				panic(err)
			}
		})
		require.LessOrEqual(t, allocs, 5.0, "the run, its messages, its epochs, its indices and one copy of the body, for 300 messages")
	}
}

// Element runs whose tails carry more than a run keeps are left to the
// per-tail decoder; damaged ones are errors that say what is wrong, and
// random damage never panics.
func TestElementRunDecodeRejects(t *testing.T) {
	e := runEntry(t)
	plain := func(i int) *env1[runWorker, runMsg] {
		env := &env1[runWorker, runMsg]{fn: (*runWorker).Take, msg: runMsg{A: int32(i)}}
		env.h = Header{Route: Route{Kind: KindElement, Coll: 7, PE: 1, Index: i}, Entry: e, Epoch: 2}
		return env
	}
	forwarded := plain(5)
	forwarded.h.Hops = 2
	traced := plain(6)
	traced.h.Flow = 9
	noIndex := plain(7)
	noIndex.h.Index = nil
	for _, tc := range []struct {
		name string
		envs []actor.WireRunner
	}{
		{"a later one was forwarded", []actor.WireRunner{plain(1), plain(2), forwarded}},
		{"a later one is traced", []actor.WireRunner{plain(1), traced}},
		{"the first has no index", []actor.WireRunner{noIndex, plain(1)}},
	} {
		t.Run(tc.name, func(t *testing.T) { requirePerTail(t, tc.envs...) })
	}

	it := encodeMulti(t, elemRun(t, 3))
	first, _, ok := wire.NextTail(it.Body)
	require.True(t, ok)
	// first: flags, epoch 0 is absent; a later tail: flags, epoch, hops.
	require.Equal(t, byte(tailIndex), first[0])
	withTail := func(tail []byte, tails int) wire.Item {
		b, mark := wire.BeginTail(nil)
		b = wire.EndTail(append(b, tail...), mark)
		return wire.Item{Head: it.Head, Body: append(append([]byte{}, it.Body...), b...), Tails: tails}
	}
	bad := []struct {
		name string
		it   wire.Item
		want string
	}{
		{"a tail missing", wire.Item{Head: it.Head, Body: it.Body, Tails: 4}, "ends after 3 of 4 messages"},
		{"empty body", wire.Item{Head: it.Head, Body: nil, Tails: 0 + 1}, "a run of 1 messages in 0 bytes"},
		{"index longer than the tail", withTail([]byte{tailIndex, 40, 1}, 4), "message 3 of a run of core.runWorker.Take: an envelope's index of 40 bytes, but 1 are left"},
		{"index length truncated", withTail([]byte{tailIndex, 0x80}, 4), "index's length is truncated"},
		{"epoch truncated", withTail([]byte{tailIndex | tailEpoch, 0x80}, 4), "epoch is truncated"},
		{"hops missing", withTail([]byte{tailIndex | tailEpoch, 5}, 4), "its hops are missing"},
		{"empty tail", withTail(nil, 4), "an envelope without a tail"},
		{"a short message", withTail([]byte{tailIndex, 1, 7, 0x92}, 4), "decoding message 3 of a run of core.runWorker.Take"},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			_, err := decodeEnvRun(nil, tc.it)
			require.ErrorContains(t, err, tc.want)
		})
	}

	// Random damage: an error, nil (read tail by tail) or a run, never a
	// panic.
	r := rand.New(rand.NewPCG(3, 4))
	long := encodeMulti(t, elemRun(t, 20))
	for range 3000 {
		b := append([]byte{}, long.Body...)
		for range 1 + r.IntN(4) {
			b[r.IntN(len(b))] = byte(r.Uint32())
		}
		_, _ = decodeEnvRun(nil, wire.Item{Head: long.Head, Body: b[:r.IntN(len(b)+1)], Tails: long.Tails})
	}
}

// An element run's indices are encoded without reflection (package
// indexcodec): encoding a run allocates nothing per message (msgpack.Marshal
// allocated per index), and the bytes are msgpack's shortest form. An
// index that came from another process (a proxy in a message) is carried
// on as its bytes, whatever form they are in.
func TestElementRunEncodesIndicesWithoutReflection(t *testing.T) {
	src := elemRun(t, 300)
	for i := range 10 { // sent through proxies from another process
		old := []byte{0xd3, 0, 0, 0, 0, 0, 0, 0x03, 0xe8 + byte(i%4)} // a longer form, as another encoder may write
		src.idx[290+i].index = rawIndex(old)
	}
	it := encodeMulti(t, src)
	require.Less(t, len(it.Body), 300*18, "a tail of length, flags, epoch, hops, index (4 bytes with its length) and message")
	m, err := decodeEnvRun(nil, it)
	require.NoError(t, err)
	got := m.(*run1[runWorker, runMsg])
	for i := range got.raw {
		want := []byte{0xcd, 0x03, 0xe8 + byte(i%4)}
		if i >= 290 {
			want = []byte(src.idx[i].index.(rawIndex))
		}
		require.Equal(t, want, []byte(got.raw[i]), "index of message %d", i)
	}
	if raceEnabled {
		return
	}
	buf := make([]byte, 0, 64<<10)
	allocs := testing.AllocsPerRun(20, func() {
		b := buf[:0]
		for i := range src.Count() {
			var err error
			if b, err = src.AppendWireTailAt(b, i); err != nil {
				panic(err)
			}
		}
	})
	require.LessOrEqual(t, allocs, 0.0, "allocations to encode the tails of a run of 300 element messages")
}

// requirePerTail: a run of envs is left by the whole-run decoder to the
// per-tail one, which reads every message.
func requirePerTail(t *testing.T, envs ...actor.WireRunner) {
	t.Helper()
	it := encodeRun(t, envs...)
	m, err := decodeEnvRun(nil, it)
	require.NoError(t, err)
	require.Nil(t, m, "left to the per-tail decoder")
	ms, err := decodeRun(it)
	require.NoError(t, err)
	require.Len(t, ms, len(envs))
}
