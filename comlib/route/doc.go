// Package route holds Comlib's store-and-forward routers for all-to-all and many-to-many
// exchanges.
//
// Sending one message to each of P−1 others costs P−1 message overheads per participant. A
// router trades that for a few stages: in each stage a participant sends one combined message to
// each of a few stage peers, which keep what is theirs and pass the rest on in a later stage.
// Small messages then pay far fewer overheads; large ones pay for being copied along the way.
//
// # Participants and stages
//
// Participants are numbered 0..n−1; the runtime maps them to PEs. An exchange has Stages()
// stages. In stage s, participant i sends exactly one message — combined, possibly empty — to
// every participant of SendTo(i, s), and waits for one from every participant of
// RecvFrom(i, s) before it starts stage s+1. Empty messages are part of the protocol: they tell
// the receiver that the stage is complete. The peer lists are tight (every edge carries some
// message of a full all-to-all), sorted, never contain i, and mirror each other: j is in
// SendTo(i, s) exactly when i is in RecvFrom(j, s).
//
// A message for dest held by at at the start of stage s goes to NextHop(at, dest, s), a
// stage peer, or stays at at. Starting at the source in stage 0, after the last stage every
// message is at its destination. Partition does a participant's sorting for one stage; Path
// follows one message and checks each hop.
//
//	r, err := route.New("mesh", n, route.Options{})
//	for s := 0; s < r.Stages(); s++ {
//		byPeer, stay := route.Partition(r, me, s, destsOfHeldMessages)
//		// send one message per key of byPeer (even if empty), keep stay,
//		// then wait for one message from each of r.RecvFrom(me, s) and add its contents
//	}
//	// every held message is now for me
//
// # Routers
//
// New(name, n, options) builds one; Names lists them. Every router works for any n ≥ 1.
//
//   - direct: one stage, everyone sends to everyone else; the baseline.
//   - mesh: the 2-D one (the original Comlib's USE_MESH; its USE_GRID was 3-D). Participants
//     sit row by row on ⌈√n⌉ columns, the last row possibly partial. Stage 0 moves a message
//     along its row to the destination's column, stage 1 along that column. A participant of the
//     partial last row has no peer in the missing columns, so it hands those messages to the
//     member of that column in the row above, which takes them down its column in stage 1.
//     At most 2(⌈√n⌉−1) messages per participant per exchange.
//   - grid: the same in three dimensions (⌈∛n⌉ in the fastest one), three stages, fixing the
//     fastest-varying coordinate first. A point beyond n is replaced by the point one step
//     lower in the next slower dimension, which exists and keeps the coordinates already fixed.
//   - hypercube: dimensional exchange; stage t makes bit t of the holder equal to the
//     destination's, log2 n stages for n a power of two. For other n, with P the largest power
//     of two below n, participant P+x first hands its messages to x, the cube 0..P−1 routes
//     each message to x for destination x or P+x, and a last stage hands x's share to P+x:
//     ⌊log2 n⌋+2 stages, and participants 0..n−P−1 carry twice the load. Options.Direct = m
//     fixes the first m bits in one stage among the 2^m members of a sub-cube (capped at
//     log2 P; 0 and 1 change nothing).
//   - tree: a k-ary tree rooted at 0 (Options.Degree, default 4); the children of i are
//     k·i+1 … k·i+k. The first D stages (D the depth) combine up level by level, deepest first;
//     the next D go down level by level. A message climbs until its destination is in the
//     holder's subtree — the lowest common ancestor — and then descends: 2·D stages.
//   - prefix: at stage s participant i exchanges directly with i XOR (s+1); nothing is stored
//     and forwarded, but the pairs are ordered so each stage is a perfect matching. For n not a
//     power of two the stages run to the next power of two minus one and pairs with a member
//     ≥ n are idle.
//   - shift, pairwise, xor, sync, group: the complete-exchange schedules of package
//     comlib/schedule (claims X03–X06), one stage per round, every message sent directly to its
//     destination in the stage where its source meets it. shift: n−1 stages, one partner each;
//     pairwise: the edge colouring (n−1 stages for even n, n for odd, each participant idle in
//     one); xor: i pairs with i XOR (s+1), for n not a power of two the prefix router's stages;
//     sync: one stage with all n−1 partners; group: ⌈(n−1)/ω⌉ stages of ω partners
//     (Options.Omega, default ⌈√(n−1)⌉). These routers also implement Ordered: SendOrder gives
//     the partners in the schedule's step order, in which no two participants send to the same
//     one at the same position. Building one costs O(n²) (a schedule lists every pair).
//
// With n = 1 the hypercube, tree, prefix and schedule routers have no stages at all.
//
// Routers are immutable values and safe for concurrent use; nothing here does I/O.
package route
