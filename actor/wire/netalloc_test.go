package wire

import (
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A fragment of a few bytes that claims a long frame costs memory in
// proportion to the bytes that arrived, not to the claim: the buffer was
// allocated at the declared length (here 64 MiB, up to MaxSize, a GiB by
// default, for each of MaxOpen frames).
func TestReassembleGrowsAsFragmentsArrive(t *testing.T) {
	r := &Reassembler{MaxSize: 1 << 30, MaxOpen: 5}
	const total = 64 << 20
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for id := uint64(1); id <= 4; id++ {
		out, err := r.Add(part(2, id, total, 0, "0123456789"))
		require.NoError(t, err)
		require.Nil(t, out)
	}
	runtime.ReadMemStats(&after)
	n := after.TotalAlloc - before.TotalAlloc
	require.Less(t, n, uint64(1<<20), "4 fragments of 10 bytes claiming %d each allocated %d bytes", total, n)
	require.Equal(t, 4, r.Open())

	// A frame in many uneven fragments still comes out whole, and its
	// fragments still must agree on its length.
	want := strings.Repeat("abcdefghij", 1000)
	var got []byte
	for off := 0; off < len(want); {
		k := min(1+off%97, len(want)-off)
		out, err := r.Add(part(2, 9, uint64(len(want)), uint64(off), want[off:off+k]))
		require.NoError(t, err)
		off += k
		if off < len(want) {
			require.Nil(t, out)
		} else {
			got = out
		}
	}
	require.Equal(t, want, string(got))
	_, err := r.Add(part(2, 1, total+1, 10, "x"))
	require.ErrorContains(t, err, "it says the frame has 67108865 bytes, its first fragment said 67108864")
}
