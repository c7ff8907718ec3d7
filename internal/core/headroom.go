package core

import (
	"math"
	"os"
	"runtime/metrics"
	"sync"
)

// The collector's headroom. Go's collector starts its first cycle when the
// heap reaches 4 MiB, and later ones when it doubles what the cycle before
// found live: a job whose heap is a few MiB collects every few MiB it
// allocates, and a collection in the middle of a parallel step delays
// every PE that waits on the one it slows (a step's messages in flight
// are live until their handlers run). So a program that imports the
// runtime keeps HeadroomBytes of heap that it never writes: the collector
// counts it as live, and every cycle's goal is twice that higher, so a
// job whose heap is small collects rarely (and holds up to HeadroomBytes
// more garbage between cycles); one whose heap is large hardly notices.
//
// It is allocated during package initialisation, while the heap is
// fresh: a large object placed on pages that were freed before is
// cleared, which would make its pages resident; fresh ones are not
// touched. So there is none if a collection ran before this package's
// initialisation (another package's init that collected). Allocating it
// passes the collector's first goal, so a cycle runs then, during
// initialisation, instead of during the first job.
//
// It is Go's default pace adapted to parallel jobs, not a policy over the
// program's own: with GOGC or GOMEMLIMIT in the environment there is
// none, and a program that set debug.SetGCPercent to another value than
// 100, or a memory limit, gives it up for good when its next job starts
// (under a memory limit it would count against the limit).

// HeadroomBytes is the heap that a process keeps as the collector's
// headroom (see above).
const HeadroomBytes = 16 << 20

var (
	headroomMu sync.Mutex
	headroom   []byte
)

func init() {
	if n := headroomAtStart(currentPace()); n > 0 {
		headroom = make([]byte, n)
	}
}

// headroomAtStart returns the headroom to allocate during initialisation
// at pace p: none once the collector ran a cycle.
func headroomAtStart(p gcPace) int {
	if p.cycles > 0 {
		return 0
	}
	return headroomFor(p)
}

// gcPace is what decides the headroom: whether the environment sets GOGC
// or GOMEMLIMIT, and the collector's percent and memory limit; and the
// cycles it has run (none, for the headroom to be allocated on fresh
// pages).
type gcPace struct {
	envGOGC, envLimit bool
	percent           uint64
	limit             uint64
	cycles            uint64
}

// headroomFor returns the headroom a process whose collector runs at
// pace p keeps: HeadroomBytes at Go's default pace, none otherwise.
func headroomFor(p gcPace) int {
	if p.envGOGC || p.envLimit || p.percent != 100 || p.limit != math.MaxInt64 {
		return 0
	}
	return HeadroomBytes
}

// currentPace reads the collector's pace without changing it. A figure
// the runtime does not report reads as the default (a cycle, for cycles:
// as if one ran).
func currentPace() gcPace {
	p := gcPace{envGOGC: os.Getenv("GOGC") != "", envLimit: os.Getenv("GOMEMLIMIT") != "", percent: 100, limit: math.MaxInt64, cycles: 1}
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}, {Name: "/gc/gomemlimit:bytes"}, {Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(s)
	for i, v := range []*uint64{&p.percent, &p.limit, &p.cycles} {
		if s[i].Value.Kind() == metrics.KindUint64 {
			*v = s[i].Value.Uint64()
		}
	}
	return p
}

// checkHeadroom, when a job starts, gives the headroom up if the
// collector's pace is no longer Go's default.
func checkHeadroom() {
	headroomMu.Lock()
	defer headroomMu.Unlock()
	if headroom != nil && headroomFor(currentPace()) == 0 {
		headroom = nil
	}
}
