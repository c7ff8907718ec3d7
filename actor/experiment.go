//go:build !charmexp_frameperitem

package actor

// framePerItem is an experiment knob for benchmarks, off in every normal
// build; the build tag charmexp_frameperitem turns it on.
const framePerItem = false
