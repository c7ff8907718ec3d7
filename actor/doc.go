// Package actor is the runtime underneath the chare programming model: it
// runs processing elements (PEs), moves messages between them, and detects
// global states such as quiescence.
//
// A PE is a mailbox and one goroutine that handles what is posted to it, in
// the order posted (protoactor-go carries the links between processes; a
// frame from another process is handed to its PEs' mailboxes). Everything
// that lives on a PE runs on it one message at a time, so code running
// there needs no locks. PEs are numbered 0..P-1 across the job. A [Runtime] owns the PEs of
// one process; [Start] creates it and [Runtime.Wait] returns the exit code
// once some PE called [Runtime.Exit] or the job aborted.
//
// Messages implement [Message]: the destination PE calls Deliver on itself.
// Sends made with [PE.Send] are counted for quiescence detection (created on
// the sender, processed on the receiver after Deliver returns); the
// runtime's own control messages are not.
//
// A [Thread] is a goroutine that borrows its PE: while it runs, the PE's own
// goroutine waits, and when it blocks (on a future, say) it hands the PE back
// so that other messages are processed. Exactly one of them runs at a time,
// so threaded entry methods keep the one-at-a-time guarantee.
//
// Sends are buffered per destination PE while a message is processed and
// posted when it ends (or when 256 wait for one PE): one mailbox operation
// then carries many messages. Order per sender and receiver is kept. A [Multi]
// stands for several messages (a run of sends of one entry method, which
// the layer above appends to while it is the last one buffered for its PE,
// see [PE.Open]): it counts as many for quiescence and back-pressure.
//
// Messages in flight are bounded: between the PEs of a process in messages
// (Config.MaxInFlight), and towards each other process in bytes of frames
// (Config.MaxRemoteInFlight). A sender at the bound
// waits; nothing is dropped, and a PE never waits for a PE or a process
// whose PEs wait themselves, so waits form no cycle.
//
// A job may span several processes (nodes, [NodeConfig]): node 0 gathers
// the others' hellos, sends them the node table and starts the program
// once all are ready. Messages for a PE of another node must implement
// [WireMessage]; at flush time they are msgpack-encoded into items,
// coalesced per destination node into frames (package wire) that travel as
// protobuf BytesValue through protoactor-go's remote layer (which ignores
// custom serializers), and decoded by the destination PE. Frames leave
// early when 64 KiB pile up for one node. A frame longer than
// wire.MaxFrame (a message over 3 MiB) travels as fragments of 1 MiB,
// cut from the messages' bytes without encoding the frame whole, that the
// receiving node's link joins (Config.MaxRemoteMessage bounds it). Every
// gRPC call carries the job's token and the server refuses calls without
// it; frames carry it too.
// Nodes on one host (one kernel and network namespace) send each other
// their data and credit frames over Unix-domain sockets instead, each in a
// directory only its user can enter, opened with the job's token
// (sock.go); protoactor-go still carries the join, the heartbeats and the
// exit. NodeConfig.NoLocalSocket or the environment variable
// CHARMGO_LOCAL_SOCKET=off keeps a node on protoactor-go; jobs with TLS
// never use the sockets.
// Heartbeats, and a socket that closes without a word, detect a lost node,
// and the job then aborts everywhere with an error naming it. A process has one remote endpoint, shared by the jobs it
// runs (protoactor-go's remote.Start sets gRPC's global logger, so two
// endpoints in one process would race). The frames and why they look as
// they do: package wire and docs/design/wire-format.md.
//
// Quiescence detection uses the four-counter method: waves over a spanning
// tree of PEs sum the messages created and processed; the job is quiescent
// when two consecutive waves see equal sums that do not change. Completion
// detection ([Detector]) uses the same waves over produced, consumed and done
// counts. Both only exchange messages, so they stay correct when PEs live in
// several processes.
package actor
