//go:build !race

package rt_test

const raceOn = false
