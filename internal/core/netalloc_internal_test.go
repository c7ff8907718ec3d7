package core

import (
	"bytes"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/charmgo/charm/chare/reducer"
)

// A reduction's partial is opaque bytes inside its message, and so the
// check of the message's body does not reach it: it is checked on its
// own. Unchecked, this partial of 11 bytes made msgpack/v5 allocate
// 64 MiB (8 Mi int64s) before failing.
func TestReductionPartialChecked(t *testing.T) {
	r := reducer.ConcatOf[int, []int64]()
	partial := []byte{0x92, 0x91, 0x00, 0x91, 0xdd, 0x00, 0x80, 0x00, 0x00}
	body, err := msgpack.Marshal(&wireReduction{Coll: 7, Has: true, Count: 1, Reducer: r.Name(), Partial: partial})
	require.NoError(t, err)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err = decodeReduction(nil, msgpack.NewDecoder(bytes.NewReader(body)))
	runtime.ReadMemStats(&after)
	require.ErrorContains(t, err, "the partial of a "+r.Name()+" reduction")
	require.ErrorContains(t, err, "claims 8388608 values")
	n := after.TotalAlloc - before.TotalAlloc
	require.Less(t, n, uint64(1<<20), "a reduction of %d bytes allocated %d bytes", len(body), n)

	// A valid partial still decodes.
	var buf bytes.Buffer
	require.NoError(t, reducer.EncodePartial(msgpack.NewEncoder(&buf), r, []reducer.Item{{Index: 0, Value: []int64{1, 2}}}))
	body, err = msgpack.Marshal(&wireReduction{Coll: 7, Has: true, Count: 1, Reducer: r.Name(), Partial: buf.Bytes()})
	require.NoError(t, err)
	m, err := decodeReduction(nil, msgpack.NewDecoder(bytes.NewReader(body)))
	require.NoError(t, err)
	require.Equal(t, 1, m.(*redUp).count)
}

// The restart fence and acknowledgement carry nothing: their body is one
// nil. msgpack/v5's Skip, which read it before, recursed once per level
// of whatever a corrupt body nested, and 8 MB of array headers took more
// than the goroutine's stack limit: a fatal error no recover catches.
func TestRestartFenceBodyIsOneNil(t *testing.T) {
	read := func(body []byte) error {
		return decodeEmpty(msgpack.NewDecoder(bytes.NewReader(body)))
	}
	require.NoError(t, read([]byte{0xc0}))
	deep := append(bytes.Repeat([]byte{0x91}, 8<<20), 0xc0)
	require.ErrorContains(t, read(deep), "the body is not nil")
	require.ErrorContains(t, read([]byte{0xc0, 0xc0}), "bytes after the body's nil")
	require.ErrorContains(t, read(nil), "the body is not nil")
}
