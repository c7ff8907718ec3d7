//go:build !linux

package core

import "time"

// threadCPU is not available here: loads are wall times.
func threadCPU() (time.Duration, bool) { return 0, false }
