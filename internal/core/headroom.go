package core

import (
	"math"
	"os"
	"runtime"
	"runtime/metrics"
	"sync"
)

// The collector's headroom. Go's collector starts its first cycle when the
// heap reaches 4 MiB, and later ones when it doubles what the cycle before
// found live: a job whose heap is a few MiB collects every few MiB it
// allocates, and a collection in the middle of a parallel step delays
// every PE that waits on the one it slows (a step's messages in flight
// are live until their handlers run). A process that runs a job keeps
// HeadroomBytes of heap that is never touched — counted as live by the
// collector, and so added to every cycle's goal — so that a job whose heap
// is small collects rarely; one whose heap is large does not notice it.
// The pages are never written, so they cost address space, not memory.
//
// The headroom is Go's default pace turned for parallel jobs, not a
// policy over the program's own: a program (or its environment) that
// set the collector's pace — GOGC or GOMEMLIMIT in the environment,
// debug.SetGCPercent to another value than 100, or debug.SetMemoryLimit —
// before its first job gets none (it would count against a memory limit).

// HeadroomBytes is the heap that a process keeps as the collector's
// headroom once it runs a job (see above).
const HeadroomBytes = 16 << 20

var (
	headroomOnce sync.Once
	headroom     []byte
)

// gcPace is what decides the headroom: whether the environment sets GOGC
// or GOMEMLIMIT, and the collector's percent and memory limit.
type gcPace struct {
	envGOGC, envLimit bool
	percent           uint64
	limit             uint64
}

// headroomFor returns the headroom a process whose collector runs at
// pace p keeps: HeadroomBytes at Go's default pace, none otherwise.
func headroomFor(p gcPace) int {
	if p.envGOGC || p.envLimit || p.percent != 100 || p.limit != math.MaxInt64 {
		return 0
	}
	return HeadroomBytes
}

// currentPace reads the collector's pace without changing it.
func currentPace() gcPace {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}, {Name: "/gc/gomemlimit:bytes"}}
	metrics.Read(s)
	p := gcPace{envGOGC: os.Getenv("GOGC") != "", envLimit: os.Getenv("GOMEMLIMIT") != "", percent: 100, limit: math.MaxInt64}
	if s[0].Value.Kind() == metrics.KindUint64 {
		p.percent = s[0].Value.Uint64()
	}
	if s[1].Value.Kind() == metrics.KindUint64 {
		p.limit = s[1].Value.Uint64()
	}
	return p
}

// keepHeadroom gives the process its headroom, the first time a job
// starts in it. Allocating it passes the collector's first goal (4 MiB)
// and so starts a cycle: keepHeadroom waits for a whole cycle to end
// (runtime.GC, about a millisecond with a heap of a few MiB), so that
// none runs beside the job's first messages.
func keepHeadroom() {
	headroomOnce.Do(func() {
		if n := headroomFor(currentPace()); n > 0 {
			headroom = make([]byte, n)
			runtime.GC()
		}
	})
}
