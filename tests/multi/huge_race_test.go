//go:build race

package multi

// Under -race, TestHugeMessageAcrossProcesses sends 50 MB and lets a node
// be silent for longSilence. The race detector checks every byte a copy
// touches, which makes the copies of a message (encoding, fragments,
// protobuf, joining, decoding) about ten times slower. 2 × 50 MB lost a
// node at the default 3 s in 2 jobs of 3 on a loaded machine, although no
// goroutine held a P for more than 0.6 s (execution trace): most likely a
// batch of 16 fragments (16 MiB), which the remote layer marshals, sends
// and unmarshals as one gRPC message, takes over 3 s there, and the
// heartbeat queued behind it arrives too late. The default bound is
// checked without -race.
const (
	hugeDefault   = 50_000_000
	hugeFailAfter = longSilence
)
