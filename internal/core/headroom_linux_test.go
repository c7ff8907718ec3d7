package core_test

import (
	"os"
	"syscall"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// requireNotResident checks that no page of b is resident (mincore): a
// headroom that was written, or cleared, would be.
func requireNotResident(t *testing.T, b []byte) {
	page := os.Getpagesize()
	start := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	off := int((uintptr(page) - start%uintptr(page)) % uintptr(page))
	whole := b[off : off+(len(b)-off)/page*page]
	vec := make([]byte, len(whole)/page)
	_, _, errno := syscall.Syscall(syscall.SYS_MINCORE, uintptr(unsafe.Pointer(unsafe.SliceData(whole))), uintptr(len(whole)), uintptr(unsafe.Pointer(unsafe.SliceData(vec))))
	require.Zero(t, errno, "mincore")
	resident := 0
	for _, v := range vec {
		resident += int(v & 1)
	}
	require.Zero(t, resident, "pages of the headroom resident, of %d", len(vec))
}
