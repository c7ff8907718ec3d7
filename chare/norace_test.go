//go:build !race

package chare

const raceEnabled = false
