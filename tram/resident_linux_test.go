package tram

import (
	"syscall"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// residentPages counts the pages of the memory under b[:cap(b)] that are
// resident (mincore), and all of them. b must stay alive meanwhile (the
// caller holds it).
func residentPages[E any](t *testing.T, b []E) (resident, pages int) {
	t.Helper()
	full := b[:cap(b)]
	page := uintptr(pageBytes)
	start := uintptr(unsafe.Pointer(unsafe.SliceData(full)))
	end := start + uintptr(len(full))*unsafe.Sizeof(full[0])
	first := start &^ (page - 1)
	vec := make([]byte, (end-first+page-1)/page)
	_, _, errno := syscall.Syscall(syscall.SYS_MINCORE, first, end-first, uintptr(unsafe.Pointer(unsafe.SliceData(vec))))
	require.Zero(t, errno, "mincore: %v", errno)
	for _, v := range vec {
		resident += int(v & 1)
	}
	return resident, len(vec)
}

// A buffer that an Aggregator makes has every page of its room resident
// from the start (resident), so that filling it — in a later step, after
// it was recycled part-filled — takes no page fault. The buffers here are
// large enough (megabytes, firstCap items of 4 KiB) to come from memory
// that Go's allocator takes fresh from the system, whose pages are not
// resident until written. Both kinds of buffer, both ways of making one:
// a first buffer (reuse) and one grown to the buffer size (more). The
// item holds a pointer: growing a slice of pointer-free items zeroes its
// new room anyway, one with pointers leaves it to fresh pages.
func TestNewBuffersAreResident(t *testing.T) {
	type big struct {
		p *byte
		b [4088]byte
	}
	topo := mustTopology(t, 2)
	for _, bare := range []bool{false, true} {
		a, err := NewAggregator(Config[big]{Topology: topo, PE: 0, Sizing: Sizing{BufferItems: 2 * firstCap}, Bare: bare})
		require.NoError(t, err)
		env := a.newBuffer()
		require.Zero(t, len(env))
		require.GreaterOrEqual(t, cap(env), firstCap)
		r, n := residentPages(t, env)
		require.Equal(t, n, r, "bare %v: resident pages of a new envelope buffer of %d bytes", bare, cap(env)*int(unsafe.Sizeof(env[0])))

		fin := a.newFinal()
		r, n = residentPages(t, fin)
		require.Equal(t, n, r, "bare %v: resident pages of a new last-hop buffer", bare)

		fin = fin[:cap(fin)] // full: the next item grows it
		fin[0].b[0], fin[len(fin)-1].b[0] = 1, 2
		grown := a.moreFinal(fin)
		require.GreaterOrEqual(t, cap(grown), 2*firstCap)
		r, n = residentPages(t, grown)
		require.Equal(t, n, r, "bare %v: resident pages of a buffer grown to the buffer size", bare)
		require.Len(t, grown, len(fin), "growing keeps the items")
		require.True(t, grown[0].b[0] == 1 && grown[len(grown)-1].b[0] == 2, "growing keeps the items")
	}
}

// resident writes only zero values into the free room, and leaves the
// items and the length alone.
func TestResidentKeepsItems(t *testing.T) {
	b := make([]int, 3, 5000)
	b[0], b[1], b[2] = 7, 8, 9
	b = resident(b)
	require.Equal(t, []int{7, 8, 9}, b)
	for _, v := range b[:cap(b)][3:] {
		require.Zero(t, v)
	}
	require.Empty(t, resident([]int(nil)))
	s := resident(make([]*int, 0, 10000))
	for _, p := range s[:cap(s)] {
		require.Nil(t, p)
	}
}
