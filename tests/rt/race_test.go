//go:build race

package rt_test

// raceOn: allocation counts under -race are not the program's.
const raceOn = true
