//go:build !race

package multi

// hugeDefault is the message size of TestHugeMessageAcrossProcesses, and
// hugeFailAfter its Config.FailAfter: the default (see huge_race_test.go
// for -race).
const (
	hugeDefault   = 200_000_000
	hugeFailAfter = 0
)
