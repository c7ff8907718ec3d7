// Package actor is the runtime underneath the chare programming model: it
// runs processing elements (PEs), moves messages between them, and detects
// global states such as quiescence.
//
// A PE is one protoactor-go actor with its own mailbox. Everything that lives
// on a PE runs on it one message at a time, so code running there needs no
// locks. PEs are numbered 0..P-1 across the job. A [Runtime] owns the PEs of
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
// Quiescence detection uses the four-counter method: waves over a spanning
// tree of PEs sum the messages created and processed; the job is quiescent
// when two consecutive waves see equal sums that do not change. Completion
// detection ([Detector]) uses the same waves over produced, consumed and done
// counts. Both only exchange messages, so they stay correct when PEs live in
// several processes.
package actor
