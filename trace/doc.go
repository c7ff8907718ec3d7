// Package trace records a run as a timeline in the Chrome trace-event JSON
// format, which Perfetto (ui.perfetto.dev), chrome://tracing and Chrome
// DevTools' Performance panel (Load profile) open.
//
// A program gets it with the runtime flag -trace FILE (or chare.Config's
// Trace). The runtime keeps one Buffer per PE, written only by that PE,
// and writes them out when the job ends:
//
//   - one process per node (pid = node) and one thread per PE (tid = PE),
//     named "node N" and "PE i" by metadata events;
//   - a complete slice ("X") per entry method, named Type.Entry, with the
//     chare type, the entry and the element index (or branch PE) in args;
//   - flow arrows ("s" to "f") from the slice that sends a message to
//     the slice that runs it, both ends at their slice's start time and
//     in its category (what Chrome's DevTools needs to join them),
//     sampled: each PE draws at most FlowsPerWindow arrows per
//     FlowWindow, so that a run of millions of messages still gives a
//     file that the viewers open;
//   - instant events ("i") for migrations, load-balancing steps, TRAM
//     flushes, Comlib's error mode, quiescence and checkpoints.
//
// A process keeps at most a fixed number of events (EventLimit, split
// between its PEs); what does not fit is counted, and the file says how
// many were dropped (otherData.dropped_events) instead of growing without
// bound.
//
// A job of several processes: node N > 0 writes FILE.nodeN when the job
// ends; node 0 writes FILE with its own events and merges the node files
// it finds (a local launch, -nodes M, waits for the others to exit, so it
// finds them all), shifting each node's timestamps by the difference of
// the wall clocks at which the nodes started. It removes the node files it
// merged, and names the ones it did not find in otherData.missing_nodes
// (the nodes of a job across hosts write theirs on their own host: merge
// them with Merge). Clocks of different hosts are only as close as NTP
// keeps them.
//
// A flow's id joins the sending PE (job-wide) to a number that PE draws
// (FlowID), and the number travels with the message, to another process
// too: the receiving PE records the end under the same id, so arrows
// cross from one node's track to another's in the merged file, and ids of
// different nodes never collide.
package trace
