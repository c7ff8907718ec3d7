package mcast

import (
	"bytes"
	"math/rand"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSplit(t *testing.T) {
	payload := []byte("abcdefghij")
	cases := []struct {
		size int
		want []string
	}{
		{1, []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"}},
		{3, []string{"abc", "def", "ghi", "j"}},
		{5, []string{"abcde", "fghij"}},
		{10, []string{"abcdefghij"}},
		{64, []string{"abcdefghij"}},
	}
	for _, c := range cases {
		chunks, err := Split(payload, c.size)
		require.NoError(t, err)
		var got []string
		for _, ch := range chunks {
			got = append(got, string(ch))
		}
		require.Equal(t, c.want, got, "size %d", c.size)
	}
	// Appending to a chunk does not overwrite the next one.
	chunks, err := Split(payload, 3)
	require.NoError(t, err)
	_ = append(chunks[0], 'X')
	require.Equal(t, "def", string(chunks[1]))

	chunks, err = Split(nil, 8)
	require.NoError(t, err)
	require.Len(t, chunks, 1)
	require.Empty(t, chunks[0])

	for _, size := range []int{0, -5} {
		_, err = Split(payload, size)
		require.EqualError(t, err, "mcast: chunk size "+strconv.Itoa(size)+": must be positive")
	}
}

// Many messages, split at random sizes, their chunks shuffled together, come back whole, each
// exactly when its last chunk arrives, and nothing stays pending.
func TestReassembleRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	type chunk struct {
		id           uint64
		index, total int
		data         []byte
	}
	payloads := map[uint64][]byte{}
	var all []chunk
	for id := uint64(0); id < 50; id++ {
		p := make([]byte, rng.Intn(5000))
		rng.Read(p)
		payloads[id] = p
		chunks, err := Split(p, 1+rng.Intn(700))
		require.NoError(t, err)
		for i, c := range chunks {
			all = append(all, chunk{id, i, len(chunks), c})
		}
	}
	rng.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
	left := map[uint64]int{}
	for _, c := range all {
		left[c.id]++
	}
	r := NewReassembler(0)
	done := map[uint64]bool{}
	for _, c := range all {
		whole, ok, err := r.Add(c.id, c.index, c.total, c.data)
		require.NoError(t, err)
		left[c.id]--
		require.Equal(t, left[c.id] == 0, ok, "message %d: done too early or too late", c.id)
		if ok {
			require.True(t, bytes.Equal(payloads[c.id], whole), "message %d differs", c.id)
			require.False(t, done[c.id])
			done[c.id] = true
		}
	}
	require.Len(t, done, len(payloads))
	require.Zero(t, r.Pending())
	require.Zero(t, r.Bytes())
}

func TestReassembleOutOfOrder(t *testing.T) {
	r := NewReassembler(0)
	_, ok, err := r.Add(9, 2, 3, []byte("gh"))
	require.NoError(t, err)
	require.False(t, ok)
	_, ok, err = r.Add(9, 0, 3, []byte("abc"))
	require.NoError(t, err)
	require.False(t, ok)
	require.Equal(t, 1, r.Pending())
	require.Equal(t, 5+2*ChunkOverhead, r.Bytes())
	whole, ok, err := r.Add(9, 1, 3, []byte("def"))
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, "abcdefgh", string(whole))
	require.Zero(t, r.Pending())

	// A one-chunk message, the empty one included, completes at once.
	whole, ok, err = r.Add(10, 0, 1, nil)
	require.NoError(t, err)
	require.True(t, ok)
	require.Empty(t, whole)
}

// The chunk is copied: the caller may reuse its buffer.
func TestReassembleCopies(t *testing.T) {
	r := NewReassembler(300)
	buf := []byte("ab")
	_, _, err := r.Add(1, 0, 2, buf)
	require.NoError(t, err)
	copy(buf, "zz")
	whole, ok, err := r.Add(1, 1, 2, []byte("cd"))
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, "abcd", string(whole))
}

func TestReassembleErrors(t *testing.T) {
	cases := []struct {
		name  string
		prior [][3]int // index, total, length of chunks added first to message 5
		index int
		total int
		size  int
		want  string
	}{
		{"index negative", nil, -1, 3, 1, "message 0x5: chunk index -1 outside 0..2"},
		{"index too big", nil, 3, 3, 1, "chunk index 3 outside 0..2"},
		{"total zero", nil, 0, 0, 1, "chunk total 0: must be at least 1"},
		{"total inconsistent", [][3]int{{0, 3, 2}}, 1, 4, 2, "chunk 1 says 4 chunks, earlier chunks said 3"},
		{"one chunk after many", [][3]int{{0, 3, 2}}, 0, 1, 2, "chunk 0 says 1 chunks, earlier chunks said 3"},
		{"duplicate", [][3]int{{1, 3, 2}}, 1, 3, 2, "duplicate chunk 1 of 3"},
		{"empty chunk", nil, 0, 2, 0, "chunk 0 of 2 is empty"},
		{"total above limit", nil, 0, 1 << 40, 1, "1099511627776 chunks cannot fit in the 300-byte limit"},
		{"more chunks than fit", nil, 0, 5, 1, "5 chunks cannot fit in the 300-byte limit"},
		{"bytes above limit", [][3]int{{0, 3, 150}}, 1, 3, 30, "would hold 308 bytes for incomplete messages, above the 300-byte limit"},
		{"single chunk above limit", nil, 0, 1, 301, "301 bytes, above the 300-byte limit"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := NewReassembler(300)
			for _, p := range c.prior {
				_, _, err := r.Add(5, p[0], p[1], make([]byte, p[2]))
				require.NoError(t, err)
			}
			pending, held := r.Pending(), r.Bytes()
			whole, ok, err := r.Add(5, c.index, c.total, make([]byte, c.size))
			require.ErrorContains(t, err, c.want)
			require.Nil(t, whole)
			require.False(t, ok)
			require.Equal(t, pending, r.Pending(), "a rejected chunk changes nothing")
			require.Equal(t, held, r.Bytes())
		})
	}
}

// The limit counts all incomplete messages together, and completing or discarding one frees what
// it held.
func TestReassembleLimitAcrossMessages(t *testing.T) {
	r := NewReassembler(200)
	_, _, err := r.Add(1, 0, 2, make([]byte, 6))
	require.NoError(t, err)
	require.Equal(t, 6+ChunkOverhead, r.Bytes())
	_, _, err = r.Add(2, 0, 2, make([]byte, 70))
	require.ErrorContains(t, err, "message 0x2: chunk 0 (70 bytes) would hold 204 bytes")
	require.True(t, r.Discard(1))
	require.False(t, r.Discard(1))
	require.Zero(t, r.Bytes())
	require.Zero(t, r.Pending())
	_, _, err = r.Add(2, 0, 2, make([]byte, 70))
	require.NoError(t, err)
	whole, ok, err := r.Add(2, 1, 2, make([]byte, 1))
	require.NoError(t, err)
	require.True(t, ok)
	require.Len(t, whole, 71)
	require.Zero(t, r.Bytes())
}

// Tiny chunks are bounded too: each counts ChunkOverhead.
func TestReassembleTinyChunksBounded(t *testing.T) {
	r := NewReassembler(1000)
	for i := 0; i < 9; i++ { // 9·65 = 585
		_, _, err := r.Add(7, i, 10, []byte{1})
		require.NoError(t, err)
	}
	for i := 0; i < 6; i++ { // 15·65 = 975
		_, _, err := r.Add(8, i, 10, []byte{1})
		require.NoError(t, err)
	}
	_, _, err := r.Add(8, 6, 10, []byte{1})
	require.ErrorContains(t, err, "would hold 1040 bytes for incomplete messages, above the 1000-byte limit")
	require.Equal(t, 975, r.Bytes())
}

// FuzzReassembler feeds arbitrary frames: Add never panics, never holds more than its limit, and
// what it returns as whole is the chunks it accepted for that message, in index order.
func FuzzReassembler(f *testing.F) {
	f.Add([]byte{1, 0, 2, 3, 'a', 'b', 'c', 1, 1, 2, 1, 'd'})
	f.Add([]byte{0, 0, 1, 0})
	f.Add([]byte{2, 255, 255, 4, 1, 2, 3, 4})
	f.Fuzz(func(t *testing.T, data []byte) {
		const limit = 300
		r := NewReassembler(limit)
		accepted := map[uint64]map[int][]byte{}
		for len(data) >= 4 {
			id := uint64(data[0] % 4)
			index, total := int(int8(data[1])), int(int8(data[2]))
			n := min(int(data[3]%16), len(data)-4)
			chunk := data[4 : 4+n]
			data = data[4+n:]
			whole, ok, err := r.Add(id, index, total, chunk)
			if r.Bytes() > limit || r.Bytes() < 0 || r.Pending() < 0 {
				t.Fatalf("holds %d bytes in %d messages, limit %d", r.Bytes(), r.Pending(), limit)
			}
			if err != nil {
				if ok || whole != nil {
					t.Fatalf("error %v with a result", err)
				}
				continue
			}
			if accepted[id] == nil {
				accepted[id] = map[int][]byte{}
			}
			accepted[id][index] = append([]byte(nil), chunk...)
			if ok {
				var want []byte
				for i := 0; i < total; i++ {
					c, has := accepted[id][i]
					if !has {
						t.Fatalf("message %d done without chunk %d", id, i)
					}
					want = append(want, c...)
				}
				if !bytes.Equal(want, whole) {
					t.Fatalf("message %d: got %q want %q", id, whole, want)
				}
				delete(accepted, id)
			}
		}
	})
}
