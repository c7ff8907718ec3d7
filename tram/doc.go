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
// FlushAll empties every buffer, for periodic flushing and the end of a step (T24, T26). With
// Config.Bare (as streamers use it), the buffers of the peers that every item reaching them is
// for — every peer on a 1-D grid, the peers in the last dimension routed on others — hold bare
// items without the Envelope (a Flush's Final part), and the receiver delivers those as its own.
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
// # On the runtime
//
// A Streamer (New, after Register in an init function) is a group with one
// Aggregator per PE; it delivers each item to the client group's local
// branch by one call of its process method (T09, T10). A step begins with
// Start — Completion (global producers, a completion detector, T12) or
// Quiescence (T15) — whose Started callback runs once every PE accepts
// items (T16); Insert and Broadcast submit items (T17, T18), Done ends a
// PE's producers (T19, T20), and Start again begins the next step (T27).
// Items waiting in buffers count as work for quiescence (T23), and
// Options.FlushPeriod flushes a PE that was idle for a period (T24), which
// dependent items need (T25): Start refuses, in every process alike, a
// step that could strand items without it. A completion step on a 1-D
// grid needs none, even for chains of items, because what deliveries
// insert is sent at the end of each delivered run. On a grid of several
// dimensions a completion step drains once every producer called Done
// (the detector's all-produced): items passing a PE leave at the end of
// each received message instead of at the next idle flush. A Delegate carries
// the element sends of a delegated proxy over TRAM, so that existing send
// code is aggregated unchanged (T28). Staged completion (Staged: local producers, T13)
// finishes the grid dimension by dimension with per-peer message counts
// and needs neither a detector nor periodic flushing (T21); it serves
// group clients, whose locations are exact (T22).
//
// An ArrayStreamer (NewArray, after RegisterArray) delivers items to the
// elements of a chare array by index (T17) or to all of them (T18); an
// item that reaches a PE its element has left is re-sent to the element
// as an ordinary message, which the runtime forwards.
//
// Options.Yield makes long insertion loops in threaded entry methods yield
// the PE (chare.Yield) every so many items (T11).
//
// Options.Tune tunes the buffer size from step to step on the PE that
// calls Start, each step scored by its time per item (package tune's
// search over log2 of the size, by the median of 4 steps, moving only for
// a 2 % gain, holding its best once settled). A set flush period scales
// with the size, times a factor that a second search tunes while the size
// is held. Streamer.Tuning reports the size's trajectory (with
// -tunedebug the period's as well), and Streamer.Buffering the size and
// period in force on any PE. Options.TuneMin and TuneMax bound the size;
// equal, they hold it and the period (a control).
//
// A staged step may name a sender array (Step.Senders): each PE then
// counts its local elements as its producers (T14).
//
// Delegate.Aggregate tags an entry method for aggregation: every send of it
// through an undelegated proxy then travels over the delegate, in every
// process of the job (the second form of T28); its
// callback says when every PE has the mark.
//
// A Delegate is job-wide and portable (chare.PortableDelegate): a proxy
// delegated to it keeps its delegation in messages to other processes, in
// migrated and checkpointed state and in callbacks made from it, so a
// program sends the same items through it on one process or many.
// NewDelegate's zero FlushPeriod means DefaultDelegateFlush: a delegate
// has no Done, so only a periodic flush empties buffers that never fill.
// Its figures: Stats is this process's (the sends made on its PEs, the
// messages its branches sent); Report gathers every PE's, with the sums
// per process and over the job. A streamer's figures are its PEs'
// Aggregator Stats; Streamer.Report gathers them the same way.
//
// Items cross processes in TRAM's batches: items of a fixed-size type
// (numbers, and arrays and structs of them) as one binary block of
// destinations and item bytes, and a block of the last-hop items' bytes
// alone; other items msgpack-encoded one by one,
// for streamers and, encoded as the transport encodes them, for delegates' envelopes;
// a delegate's runs cross as the runtime's runs do.
//
// # Cost per item
//
// An item for the inserting PE is delivered at once, without buffering or
// counting. Other items cost an append to a recycled buffer whose slot
// comes from a table of next hops; a received batch is counted once for
// the completion detector and quiescence detection, however many items it
// delivers, and its items for this PE are delivered in one loop. A
// streamer that travels in a message finds its process's branches through
// a table, so Insert looks nothing up per item in any process. A loop of
// insertions does better still with its PE's Inserter (Streamer.Local,
// Charm++'s ckLocalBranch()->insertData): the branch found once, and the
// usual item placed in one function whose step checks were made when the
// step began. Fixed-size
// items without a cutoff skip the size call and byte counts, and a batch
// of them crosses processes through the runtime's codec (MarshalMsg)
// written straight into the message.
package tram
