// Package alloctest measures what a piece of code allocates, for tests
// that bound what decoding crafted input may cost.
package alloctest

import "runtime"

// Bytes returns the bytes of heap f allocates. It counts the whole
// process: run it on one goroutine, in a test that does not run in
// parallel with others.
func Bytes(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}
