// Package tram is TRAM, the Topological Routing and Aggregation Module of Charm++, in Go.
//
// Many-to-many and all-to-all patterns send huge numbers of small items, and every message pays
// a fixed cost. TRAM combines items into fewer, larger messages: it buffers them per destination
// and sends a buffer when it fills. Buffering for every PE would cost P buffers per PE, so TRAM
// routes items over a virtual grid and buffers only for a PE's few neighbours.
//
// # The grid
//
// A Topology arranges the job's P PEs in N dimensions of sizes s_0 … s_{N−1} whose product is P
// (claim T01). PE numbers map to coordinates in row-major order, the last dimension varying
// fastest. Two PEs are peers when their coordinates differ in exactly one dimension, and PEs send
// only to peers (T02). DefaultTopology(nodes, pesPerNode, ndims) builds a 1-, 2- or 3-D grid whose
// last dimension is the PEs of one process, so that one hop of each route stays in memory (T29).
//
//	topo, err := tram.NewTopology([]int{2, 3, 4}, 24) // or tram.DefaultTopology(2, 4, 2)
//
// # Routing
//
// An item for a non-peer goes first to the peer obtained by replacing, in the sender's
// coordinates, the coordinate of the greatest differing dimension with the destination's
// (Topology.NextHop, T03). Each hop fixes one coordinate, so an item from j reaches k in exactly
// F(j,k) messages, the number of dimensions in which they differ (Topology.Hops, T04).
//
// # Aggregation
//
// An Aggregator is the state of one PE: one buffer per peer, Σ(s_d − 1) in all (T05), instead of
// P−1. Insert(item, dest) wraps the item in an Envelope that carries its final destination and
// appends it to the buffer of the next hop. A buffer is sent as soon as it is full (T06); when the
// items buffered on the PE reach the total capacity although no buffer is full, the fullest buffer
// is sent (T07). A PE that receives a message passes its envelopes to Route, which sorts them into
// its own buffers and hands back those whose destination is this PE for delivery at once (T08).
// FlushAll empties every buffer, for periodic flushing and the end of a step (T24, T26).
//
// Insert and Route return an Output — messages to send (Flush values, each for one peer), items
// to send directly (larger than the Config.DirectCutoff, not worth buffering) and items to deliver
// locally — and the caller does the sending. The Aggregator does no I/O and starts no goroutines,
// in the manner of etcd's raft, so routing and aggregation are tested as plain data
// transformations, including a simulated network in which every item must arrive exactly once
// after exactly F(j,k) messages.
//
// # Sizing
//
// Charm++ sizes an instance in one of two ways (T11), and so does Sizing: by the capacity of each
// peer's buffer (BufferItems), giving a total capacity of BufferItems × peers, or by the total
// number of items buffered on a PE (TotalCapacity), giving buffers of TotalCapacity / peers (at
// least 1). Setting both uses both as given. Stats reports the items and bytes buffered, for the
// memory a step costs, and counts the flushes by cause.
//
// # What comes next
//
// This package holds the pure logic so far. The mesh streamers (a group per instance that owns an
// Aggregator per PE and delivers to a group or array client's process function), the termination
// modes (staged completion, completion detection, quiescence detection, periodic flushing) and the
// delegation layer that routes a proxy's sends through TRAM come next, in issue 6.
package tram
