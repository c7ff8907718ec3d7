//go:build !linux

package chare

import "time"

// threadCPU is not available here: loads are wall times.
func threadCPU() (time.Duration, bool) { return 0, false }
