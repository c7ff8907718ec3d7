//go:build !race

package tram_test

const raceEnabled = false
