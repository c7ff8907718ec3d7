//go:build !charmexp_frameperitem

package actor

// framePerItem is an experiment knob for benchmarks, off in every normal
// build: see experiment_frameperitem.go.
const framePerItem = false
