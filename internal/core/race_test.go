//go:build race

package core

// raceEnabled: under -race sync.Pool drops some of what is put back, so
// allocation counts are not the program's.
const raceEnabled = true
