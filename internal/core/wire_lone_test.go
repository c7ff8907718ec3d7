package core

import (
	"bytes"
	"fmt"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/charmgo/charm/actor"
)

// A lone envelope from another process (one inside a TRAM delegate's
// batch, or a run of one) is one allocation with its index, not a slab
// of envelopes and a slab of indices made for a run that has one
// message.

// loneEnvelope is an element (or branch, for a nil index) envelope for
// runWorker.Take with index.
func loneEnvelope(e *Entry, index any, a int32) *env1[runWorker, runMsg] {
	env := &env1[runWorker, runMsg]{fn: (*runWorker).Take, msg: runMsg{A: a, B: [4]byte{1, 2, 3, 4}}}
	env.h = Header{Route: Route{Kind: KindElement, Coll: 1<<32 | 5, PE: 2, Index: index}, Entry: e, Epoch: 3, Hops: 1}
	if index == nil {
		env.h.Kind, env.h.Epoch, env.h.Hops = KindBranch, 0, 0
	}
	return env
}

// checkLone checks that m is env with its index in its wire form.
func checkLone(t *testing.T, env *env1[runWorker, runMsg], m actor.Message) {
	t.Helper()
	got, ok := m.(*env1[runWorker, runMsg])
	require.True(t, ok, "decoded a %T", m)
	require.Equal(t, env.msg, got.msg)
	require.Equal(t, env.h.Epoch, got.h.Epoch)
	require.Equal(t, env.h.Hops, got.h.Hops)
	require.Equal(t, env.h.Route.Kind, got.h.Route.Kind)
	if env.h.Index == nil {
		require.Nil(t, got.h.Index)
		return
	}
	want, err := encodeIndex(env.h.Index)
	require.NoError(t, err)
	raw, ok := rawOf(got.h.Index)
	require.True(t, ok, "index %T is in its wire form", got.h.Index)
	require.Equal(t, rawIndex(want), raw)
	require.Equal(t, fmt.Sprint(env.h.Index), fmt.Sprint(got.h.Index))
}

var loneIndexCases = []struct {
	name  string
	index any
	// allocs is the most allocations the decoding may make: the envelope
	// with its index, two more for an index too long for a wireIndex
	// (a rawIndex: its own copy and the slice boxed).
	allocs float64
}{
	{"branch", nil, 1},
	{"int", 1000, 1},
	{"[2]int", [2]int{7, -300}, 1},
	{"long [6]int", [6]int{-1 << 40, 1 << 40, 3, 4, 5, 6}, 3}, // its bytes and their box
}

func TestWireEnvelopeDecodeAllocations(t *testing.T) {
	e := runEntry(t)
	for _, tc := range loneIndexCases {
		t.Run(tc.name, func(t *testing.T) {
			env := loneEnvelope(e, tc.index, 42)
			b, err := msgpack.Marshal(WireEnvelope{E: env})
			require.NoError(t, err)
			r := bytes.NewReader(b)
			dec := msgpack.NewDecoder(r)
			var w WireEnvelope
			decode := func() {
				r.Reset(b)
				dec.Reset(r)
				if err := w.DecodeMsgpack(dec); err != nil {
					panic(err)
				}
			}
			decode()
			checkLone(t, env, w.E)
			if raceEnabled {
				return
			}
			// The envelope's own copy of its bytes, then the envelope.
			allocs := testing.AllocsPerRun(50, decode)
			t.Logf("a lone %s envelope: %.0f allocations", tc.name, allocs)
			require.LessOrEqual(t, allocs, tc.allocs+1, "allocations to decode a lone %s envelope in a WireEnvelope", tc.name)
		})
	}
}

// A run of one read tail by tail: the head's closure and its slabs'
// holder, then the envelope with its index.
func TestEnvelopeRunOfOneAllocations(t *testing.T) {
	e := runEntry(t)
	for _, tc := range loneIndexCases {
		t.Run(tc.name, func(t *testing.T) {
			env := loneEnvelope(e, tc.index, 42)
			it := encodeRun(t, env)
			got := decodeTails(it, nil)
			require.Len(t, got, 1)
			checkLone(t, env, got[0])
			if raceEnabled {
				return
			}
			allocs := testing.AllocsPerRun(50, func() { got = decodeTails(it, got[:0]) })
			t.Logf("a run of one %s envelope: %.0f allocations", tc.name, allocs)
			require.LessOrEqual(t, allocs, tc.allocs+2, "allocations to decode a run of one %s envelope", tc.name)
		})
	}
}

// A short run read tail by tail makes its slabs no longer than the run:
// three element envelopes take one array of three envelopes and one of
// three indices (a slab of four of each before).
func TestEnvelopeRunSlabsSizedToTheRun(t *testing.T) {
	e := runEntry(t)
	var envs []actor.WireRunner
	for i := range 3 {
		envs = append(envs, loneEnvelope(e, 10+i, int32(i)))
	}
	it := encodeRun(t, envs...)
	got := decodeTails(it, nil)
	require.Len(t, got, 3)
	for i, m := range got {
		checkLone(t, envs[i].(*env1[runWorker, runMsg]), m)
	}
	// The slabs: as long as what is left of the run, at most as long as
	// they would be without knowing it.
	var es envSlab[runWorker, runMsg]
	es.n = 4
	es.nextOf(3)
	require.Equal(t, 2, cap(es.free), "an envelope slab for the first of three")
	es.free = nil
	es.nextOf(0)
	require.Equal(t, 7, cap(es.free), "the next slab for a run of unknown length")
	var ix indexSlab
	ix.index([]byte{1}, 3)
	require.Equal(t, 2, cap(ix.free), "an index slab for the first of three")
	ix.free = nil
	ix.index([]byte{1}, 100)
	require.Equal(t, 7, cap(ix.free), "the next index slab, for a long run")
	if raceEnabled {
		return
	}
	into := make([]actor.Message, 0, 3)
	allocs := testing.AllocsPerRun(50, func() { decodeTails(it, into[:0]) })
	// The head's closure and its slabs' holder, the envelope slab and its
	// array, the index array.
	t.Logf("a run of three element envelopes: %.0f allocations", allocs)
	require.LessOrEqual(t, allocs, 5.0, "allocations to decode a run of three element envelopes")
}

// A lone envelope's length comes from the wire: a short or truncated one
// is an error that says so, and a length of a gigabyte over a few bytes
// does not allocate the gigabyte.
func TestWireEnvelopeBadLength(t *testing.T) {
	e := runEntry(t)
	good, err := msgpack.Marshal(WireEnvelope{E: loneEnvelope(e, 5, 1)})
	require.NoError(t, err)
	for _, tc := range []struct {
		name string
		b    []byte
		want string
	}{
		{"shorter than a head", []byte{0xc4, 3, 1, 2, 3}, "an envelope of 3 bytes"},
		{"truncated", good[:len(good)-2], fmt.Sprintf("an envelope of %d bytes", len(good)-2)},
		{"a gigabyte announced", []byte{0xc6, 0x40, 0, 0, 0, 1, 2, 3}, "an envelope of 1073741824 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			before := ms.TotalAlloc
			var w WireEnvelope
			err := msgpack.Unmarshal(tc.b, &w)
			require.ErrorContains(t, err, tc.want)
			runtime.ReadMemStats(&ms)
			require.Less(t, ms.TotalAlloc-before, uint64(1<<20), "bytes allocated to refuse it")
		})
	}
}

// keptMsg's UnmarshalMsg keeps its bytes, as actor/codec allows.
type keptMsg struct{ Data []byte }

func (m keptMsg) MarshalMsg(b []byte) ([]byte, error) { return append(b, m.Data...), nil }
func (m *keptMsg) UnmarshalMsg(b []byte) ([]byte, error) {
	m.Data = b
	return nil, nil
}

type keeper struct {
	Chare[keeper]
	got []keptMsg
}

func (k *keeper) Keep(m keptMsg) { k.got = append(k.got, m) }

func init() { Register[keeper]() }

// TestWireEnvelopesKeepTheirBytes: the lone envelopes of one batch (a
// TRAM delegate's) decode one after the other; a message that keeps views
// into its bytes still reads its own after the next one is decoded.
func TestWireEnvelopesKeepTheirBytes(t *testing.T) {
	e, err := lookupEntry((*keeper).Keep)
	require.NoError(t, err)
	(&env1[keeper, keptMsg]{fn: (*keeper).Keep}).installWire(e)
	texts := []string{"first-message", "SECOND-MESSAG", "third"}
	var all []byte
	for _, s := range texts {
		env := &env1[keeper, keptMsg]{fn: (*keeper).Keep, msg: keptMsg{Data: []byte(s)}}
		env.h = Header{Route: Route{Kind: KindBranch, Coll: 1<<32 | 9, PE: 1}, Entry: e}
		b, err := msgpack.Marshal(WireEnvelope{E: env})
		require.NoError(t, err)
		all = append(all, b...)
	}
	dec := msgpack.NewDecoder(bytes.NewReader(all))
	var got []*env1[keeper, keptMsg]
	for range texts {
		var w WireEnvelope
		require.NoError(t, w.DecodeMsgpack(dec))
		env, ok := w.E.(*env1[keeper, keptMsg])
		require.True(t, ok, "decoded a %T", w.E)
		got = append(got, env)
	}
	for i, s := range texts {
		require.Equal(t, s, string(got[i].msg.Data), "message %d after the batch was decoded", i)
	}
}
