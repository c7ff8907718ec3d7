// Package bracket is the protocol of Comlib's bracketed strategies, as pure
// state machines that take events and return effects, with no runtime
// underneath (the way etcd's raft keeps the algorithm free of I/O).
//
// A bracketed strategy (an all-to-all, say) works in iterations. Each
// source object calls BeginIteration, sends through its delegated proxy,
// and calls EndIteration (claim C06). The strategy keeps, on every PE, the
// list of the sources that live there (C09); when all of them have ended an
// iteration, the PE takes part in a store-and-forward exchange over a
// Router among the PEs that have sources (the participants): in each stage
// it sends one combined packet to each of its stage peers and waits for
// one from each peer that sends to it. On a one-hop router (one stage in
// which every message goes straight to its destination: the direct
// router) the messages are queued by destination as they are sent, and
// each destination's run, in the order of the sends, is its packet as it
// is; the last stage's
// messages are delivered from their packets' arrays (Effects.Runs).
// Where the caller says that its own way of sending costs what a packet
// would (Options.Straight: the job is one process), a one-hop
// exchange carries nothing: each message of an optimized iteration goes
// straight to its destination as it is sent (PE.Straight), and the
// iteration ends on a PE once its sources there have ended it. Anything
// an iteration had to queue (it was pending, or an earlier iteration was
// still under way) goes directly when its exchange starts, so each pair's
// messages keep their order.
//
// The list goes stale when sources migrate. A PE notices it when more
// sources begin an iteration than its list has (C10, the original's test)
// or when a source it does not know begins one (C13: two sources that
// swap PEs leave every count unchanged). The PE then enters error mode
// for that iteration (C11): the messages it has queued go directly to
// their destinations, new ones are held, and it tells PE 0 (a Note).
// PE 0's Root declares the iteration in error on every PE (Enter); from
// then on each PE sends what it holds or receives of that iteration
// directly, and reports (Report) the sources that have ended it. When
// every source has been reported, the Root broadcasts the new List
// (C12); each PE leaves error mode, releases what it held (directly), and
// the next iteration takes the optimized path again. Step numbers discard
// stale reports; PEs without sources are caught up by the broadcasts
// alone.
//
// Error mode sends directly only what has not left yet: a PE whose
// sources had all ended the iteration before it learned of the error had
// started its exchange, and what it passed to the router stays on that
// path. So in an iteration with a migration, the PE a source left never
// exchanges through the router (it waits for a source that does not begin
// there), the source that moved sends directly, and every other PE, the
// one that found the move included, takes the router or not depending on
// when the news reached it. Every PE takes part in the recovery.
//
// The first iteration finds no list: it runs in error mode and teaches the
// strategy where the sources are, by the same recovery.
//
// A caller that has carried out an event's Effects may give their lists
// back with PE.Recycle, as etcd's raft advances past a Ready: the next
// events fill them again instead of allocating.
//
// Every message exists in one place at a time — queued on a PE, in a
// packet, held, or sent directly — so none is lost or duplicated whatever
// the interleaving; the seeded simulation in the tests checks that
// across migrations, swaps, PEs left empty and several recoveries.
//
// Restrictions (as in the original): every source takes part in every
// iteration; a source begins iteration n only after it received all the
// messages of iteration n−1 (C07; a late message for a source that has
// moved on is reported, unless it went straight); no source migrates between its BeginIteration and
// its EndIteration (C08; an EndIteration or a send on a PE where the
// source did not begin is an error). The claims are listed in
// docs/claims.md; the protocol's rationale is in
// docs/design/bracket-protocol.md.
package bracket
