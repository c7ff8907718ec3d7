// Package mcast plans Comlib's multicasts and cuts large messages into chunks.
//
// A multicast goes from a root PE to a sorted set of destination PEs. Sending every copy from
// the root makes the root the bottleneck; a plan instead has destinations forward the message
// along a spanning tree. The message carries its root and destinations, and each PE that gets it
// computes its own part of the tree from those alone, so nothing else has to be agreed on:
//
//	next, err := mcast.Children(mcast.Tree, mcast.Options{Degree: 4}, root, dests, myPE)
//	// deliver locally if myPE is a destination, then send the message on to each of next
//
// The root is never sent the message, even when it is among the destinations; a PE that is
// neither root nor destination gets an error, as do destinations that are not sorted or repeat.
// Plan returns the whole tree at once.
//
// # Kinds
//
// ParseKind turns the names "direct", "ring", "multiring", "tree", "dim" and "node" into a
// Kind. Every kind reaches each destination exactly once and only destinations:
//
//   - Direct: the root sends to all. One hop, root busy for all of them.
//   - Ring: in ring order after the root (the destinations above it ascending, then those below)
//     the root sends to the first and each to the next. The root sends once; the last copy
//     arrives after as many hops as destinations.
//   - MultiRing: the ring order cut into Options.Rings contiguous rings (default 2), each
//     started by the root.
//   - Tree: a k-ary tree (Options.Degree, default 4) over the list of the root followed by the
//     sorted destinations: the one at position q sends to those at k·q+1 … k·q+k. About
//     log_k(destinations) hops.
//   - DimOrdered: PEs sit on a grid (Options.Dims, row-major, dimension 0 slowest; by default a
//     near-square over Options.NumPEs). At stage 0 the root splits the destinations by their
//     coordinate in dimension 0, keeps the share of its own coordinate, and sends to the lowest
//     destination of each other share; at stage d every holder does the same with its share
//     by dimension d. At most one hop per dimension. A strict dimension-ordered plan would pass
//     through the PE that differs from the holder in that one coordinate, destination or not;
//     taking the lowest destination of the share instead means the plan never visits a PE that
//     is not one (a hop then may change later coordinates too).
//   - NodeAware: Options.NodeOf maps a PE to its node (process). The root sends one copy to
//     the lowest destination of every other node, then to the destinations of its own node;
//     each such node leader sends to the other destinations of its node. One copy crosses
//     between nodes per node; at most two hops.
//
// # Chunks
//
// A large message is better pipelined down a plan in chunks than stored whole at every hop.
// Split cuts a payload into chunks of a given size, sharing its memory. At the receiver a
// Reassembler collects the chunks of each message (keyed by an opaque id, such as the source PE
// and a sequence number), in any order and interleaved with other messages, and returns the
// payload when the last missing chunk arrives:
//
//	chunks, _ := mcast.Split(payload, 2048)
//	// ... each chunk i travels with (id, i, len(chunks)) ...
//	whole, done, err := re.Add(id, i, total, chunk)
//
// A chunk whose index is out of range, whose total disagrees with earlier chunks, that repeats,
// or that would take what is held for incomplete messages above the Reassembler's limit (each
// chunk counts its bytes plus ChunkOverhead, so neither a huge chunk nor a flood of tiny ones
// can exhaust memory) is rejected with an error naming the message and the chunk; a rejected
// chunk changes nothing.
// Discard drops a message that will never complete.
//
// Everything here is plain data in, data out: no I/O, no goroutines. Plans are safe for
// concurrent use; a Reassembler belongs to one PE.
package mcast
