// Package trace records a run as a timeline in the Chrome trace-event JSON
// format, which Perfetto (ui.perfetto.dev), chrome://tracing and Chrome
// DevTools' Performance panel (Load profile) open.
//
// A program gets it with the runtime flag -trace FILE (or chare.Config's
// Trace). The runtime keeps one Buffer per PE, written only by that PE. A
// buffer keeps an event in 40 bytes without pointers (a slice, a flow's
// end or start; an element index that is not an int and an instant's
// arguments take more) and hands its events to the process's Writer a
// chunk of 4096 at a time; a goroutine of the writer encodes them and
// writes them to the file as the run goes, so memory holds the chunks in
// flight, not the run, and about 118 bytes per event reach the file. The
// file holds:
//
//   - one process per node (pid = node) and one thread per PE (tid = PE),
//     named "node N" and "PE i" by metadata events;
//   - a complete slice ("X") per entry method, named Type.Entry, with the
//     element index (or branch PE) in args;
//   - flow arrows ("s" to "f") from the slice that sends a message to
//     the slice that runs it, both ends at their slice's start time and
//     in its category (what Chrome's DevTools needs to join them),
//     sampled: each PE draws at most FlowsPerWindow arrows per
//     FlowWindow, so that a run of millions of messages still gives a
//     file that the viewers open;
//   - instant events ("i") for migrations, load-balancing steps, TRAM
//     flushes, Comlib's error mode, quiescence and checkpoints.
//
// A process records at most a fixed number of events (EventLimit, or
// Options.Max: the runtime flag -tracemax N). When its PEs reach it,
// recording stops: standard error says so at once, the file ends with a
// global instant event "trace stopped: -tracemax N events reached", and
// otherData says how many events were not recorded (dropped_events) and
// the cap (tracemax).
//
// Each PE's events are written in time order, a chunk at a time; the
// chunks of different PEs follow each other as they fill, so the file as
// a whole is not in time order (Perfetto and chrome://tracing sort it).
// Chrome's DevTools reads flows in file order and drops an end that comes
// before its start: the writer holds a flow's end until its start is
// written. The tracks' names (metadata events) come at the end.
//
// A job of several processes: node N > 0 writes FILE.nodeN as it runs;
// node 0 writes its own events beside FILE (FILE.part) and, when the job
// ends, merges them with the node files it finds into FILE, in time order
// (a local launch, -nodes M, waits for the others to exit, so it finds
// them all; this merge reads the files into memory), shifting each node's timestamps by the difference of
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
