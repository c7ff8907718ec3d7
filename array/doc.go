// Package array provides chare arrays: indexed collections of chares
// spread over the PEs.
//
//	type Cell struct {
//		array.Element[Cell, [2]int]
//		V float64 // exported: it migrates with the element
//	}
//
//	cells, err := array.New[Cell](self, array.Dims2(8, 8))
//	chare.Send(self, cells, (*Cell).Step, StepMsg{})            // broadcast
//	chare.Send(self, cells.At([2]int{1, 2}), (*Cell).Step, msg)  // one element
//
// Indices are int (1-D), [2]int up to [6]int (2-D to 6-D), or any
// comparable type given as an explicit list with Indices. A Map places
// indices on PEs: Block (the default), RoundRobin, or a user function
// (MapFunc). Inside an element, ThisIndex and ThisProxy give its index and
// its array. Sections (subsets of indices) multicast and reduce among
// their members.
//
// Elements migrate (Migrate, and the AtSync hook of the load balancer),
// are inserted and deleted while the program runs (Insert, InsertWith,
// Destroy, Sparse arrays, WithDemandCreation). Each array has a location
// manager on every PE (package location holds its logic): the map gives
// an element's home, which always knows where it is; other PEs cache
// locations with epochs, forward messages for elements that moved (at
// most MaxHops times along caches, then via the home), and hold messages
// for elements in transit. Broadcasts are numbered at PE 0 and
// reductions counted there, so that each element takes part exactly once
// while elements move.
//
// Element state travels as msgpack of its exported fields, or through its
// own Pack/Unpack (chare.Packer). An element type with fields that would
// not survive that (unexported, interface, func, channel) and that are
// not declared with chare.Transient works like any other, but does not
// migrate, as a Charm++ element without a pup routine: Migrate returns an
// error naming the element, its type and the fields; load balancers leave
// its elements where they are and name the type in their report; a
// checkpoint of a job that has one is refused. Nothing is lost silently.
// Transient fields are left behind: they arrive as their zero value. An
// element that cannot be unpacked on the PE it migrates to (its own
// Unpack fails) stops the job with an error naming it, its type and the
// reason: its old PE let it go when it was packed, and keeping a copy
// there to fall back on would cost every migration.
//
// NewWith's constructor runs on each element once the array's part
// exists on the element's PE, so it may send to the array (to a
// neighbour, say); the sends are delivered after every element on that
// PE has been constructed.
package array
