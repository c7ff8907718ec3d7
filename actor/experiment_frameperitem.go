//go:build charmexp_frameperitem

package actor

// framePerItem: an experiment knob, not for programs. Built with
// -tags charmexp_frameperitem, every item for another process (one
// message, or a run of messages to one PE) leaves in a frame of its own
// instead of sharing frames with the other items for that process, as a
// transport that sends each message on its own would. It exists to
// measure what coalescing saves: comlib's routers against Direct across
// processes (tests/bench, comlib/alltoall/auto/*).
const framePerItem = true
