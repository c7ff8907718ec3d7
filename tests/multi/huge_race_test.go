//go:build race

package multi

// hugeDefault is the message size of TestHugeMessageAcrossProcesses. The
// race detector checks every byte that a copy touches, which makes the
// copies of a message (encoding, fragments, protobuf, joining, decoding)
// about ten times slower: 2 × 200 MB take over a minute and the remote
// layer's batches of fragments over 3 s each (see README). 50 MB keeps
// the job near 20 s.
const hugeDefault = 50_000_000
