// Package comlib is Charm++'s communication library: strategies that
// carry the sends of delegated proxies — all-to-all and many-to-many
// exchanges through routers, streaming, multicast — beside the direct
// path, and bracketed strategies that re-learn where array elements live
// when they migrate.
//
//	// In the main chare, on PE 0 (C02):
//	inst, err := comlib.New(m, comlib.EachToMany(comlib.EachToManyOptions{Router: "mesh", Sources: pencils}))
//	pencils = pencils.Delegate(inst) // then hand the proxy to the elements
//
//	// In each element, every iteration (C06):
//	chare.BeginIteration(p, proxy, iter)
//	for j := range peers { chare.Send(p, proxy.At(j), (*Pencil).Block, blocks[j]) }
//	chare.EndIteration(p, proxy)
//
// Strategies:
//
//   - Direct: every message directly; the baseline.
//   - Streaming / MeshStreaming: short messages buffered per destination PE
//     (or per PE of a √P mesh, two hops) and sent as one when a buffer is
//     full or the next message does not fit, on a period, when the PE runs
//     out of work, or on Flush; large and Urgent messages go directly. The
//     buffering is EasyMSG's multi-buffer channel, package comlib/channel
//     (E01–E03). Messages of type Tagged[T] carry a tag that identifies
//     their data at the receiver (E02). With StreamOptions.Tune each PE
//     tunes its cap of messages per buffer, and its flush period if it has
//     one, with package tune while the program runs (one
//     evaluation per Window messages, scored by wall time per message);
//     Instance.Tuning returns the trajectories.
//   - EachToMany: bracketed all-to-all / many-to-many; in each iteration the
//     messages are combined through a router of package comlib/route
//     (direct, mesh, grid, hypercube, tree, prefix) among the PEs that hold
//     sources. Migrations are found at BeginIteration by count (C10) and by
//     identity (C13); the PE that finds one enters error mode for that
//     iteration — queued messages go directly, new ones wait (C11) — and
//     PE 0 declares the iteration in error on every PE, which all take
//     part in the recovery at its end (C12). Error mode sends directly
//     what has not left yet: a PE that had started the iteration's
//     exchange before it heard keeps the router for what it had passed
//     on, so only some PEs send that iteration directly (the one a source
//     left always does); Instance.ExchangedOn says which took the router.
//     On a one-stage router in a job of one process an optimized
//     iteration sends each message straight, as Direct would (there is
//     nothing to combine). The protocol is package comlib/bracket. The
//     first iteration teaches the strategy where its sources are, the same
//     way, so it goes directly. With the "group" router and
//     EachToManyOptions.Tune the fan-out ω is tuned per instance: PE 0
//     scores each ω by its slowest participant's exchange time, chooses
//     among one ω per number of rounds, moving only for a gain beyond the
//     noise (package tune's Picker), and gives
//     each segment of Window iterations its ω ahead of time (package
//     comlib/agree); a PE that reaches an iteration whose ω it has not
//     heard waits for it, so all PEs exchange it with the same ω, across
//     recoveries too. PEs report their exchange times to PE 0 while the
//     search runs, one message per segment; once it has settled, only
//     every 16th segment's (EachToManyOptions.Every; a re-check that
//     opens the search again if the cost moves). Instance.FanOuts says
//     which ω each PE used.
//   - Multicast: section multicasts and group broadcasts along a plan of
//     package comlib/mcast (direct, ring, multiring, tree, dim, node), with
//     large messages cut into chunks that are pipelined and reassembled.
//   - Auto: a strategy per message, chosen from a selection tree (package
//     comlib/selection; the shipped default_select.json, -comlibselect
//     FILE, or AutoOptions.Tree) pruned when the instance is made, so
//     that each send walks only the msg_size branches — or none, when the
//     caller declares the message size (AutoOptions.MsgSize) and Auto is
//     the one strategy the tree chooses for it. Its containers are
//     parsed by ContainerSpec; Explain and Served say what it chose.
//
// Start-up (C03–C05): New creates the manager group (a branch per PE) the
// first time; its branches pass a barrier, then PE 0 broadcasts the
// strategy table, collects acknowledgements, marks the strategies ready
// and broadcasts a sync, which each PE acknowledges again before another
// table may go out. Whatever is sent through an instance before it is
// ready on the sending PE waits in one queue per instance, and leaves from
// one place, in order. Instances travel with the proxies delegated to them
// (chare.PortableDelegate), so the elements of an array spread over
// several processes send through the same strategy.
//
// What the strategies keep: sends through one instance from one PE keep
// their order as far as the strategy's path allows (a router combines per
// iteration, so messages of one iteration arrive together); nothing is
// promised between a strategy's messages and direct ones. Messages wait in
// buffers under quiescence detection's count, so DetectQuiescence does not
// fire while they do.
//
// Statistics per instance (messages and their bytes, packets, direct, held, iterations,
// optimized iterations, recoveries, time in error mode) are counted per
// process, by the PEs of the process together: Instance.Stats returns
// this process's, Instance.Report gathers every process's and their sums
// over the job. Exchanges and ExchangedOn count the PEs of this process
// that took the router in an iteration; Recovered, FanOuts and an
// EachToMany's ω trajectory are PE 0's process's; Streaming's tuning
// trajectories are per PE, in that PE's process. -comlibdebug logs error
// modes and recoveries.
//
// Descriptions: a Strategy made by Direct, Streaming, EachToMany or
// Multicast, a name given to ParseStrategy and a container of a selection
// file given to ContainerSpec all become a Spec: the strategy's Kind and
// that kind's parameters in the field named after it (Spec.Streaming,
// Spec.EachToMany, Spec.Multicast), zero where the default applies. New
// applies the defaults, one function per kind, and checks the result
// before the Spec enters the strategy table, so the three ways of naming a
// strategy resolve alike.
//
// Instances are portable delegates: a proxy delegated to one, sent to
// another process in a message, in migrated or checkpointed state or in a
// callback made from it, sends through the same instance there.
//
// Tuners' trajectories: -tunedebug DIR makes every process write, when
// the job ends, each trajectory its tuners reported, as DIR/NAME.csv
// (eval,value,cost) and DIR/NAME.svg (parameter and cost per evaluation).
// Streaming reports as comlibI-peN-cap and comlibI-peN-period, a tuned
// EachToMany as comlibI-omega (on PE 0's process); any other
// tuner (TRAM's, the overlap loop's) reports with tunedebug.Report(from,
// name, trajectory), again as it grows; without the flag that costs a
// look-up. The flag is package tune/tunedebug's, which comlib imports.
// Streaming's trajectories stay in each PE's process (Instance.Tuning
// there, -tunedebug's files per process): nothing has to be sent for them.
//
// Flush after the last iteration: a PE holds the ω reports of its last
// segment's lead iterations, so PE 0's Instance.FanOuts lacks those
// iterations of other processes' PEs until the program calls Flush on
// every PE after its last EndIteration. The tuning itself does not need
// it. Why nothing sends them by itself: docs/design/omega-agreement.md.
package comlib
