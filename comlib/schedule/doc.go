// Package schedule holds complete-exchange (all-to-all) schedules and their cost model, as plain
// data: no runtime, no I/O. They follow a thesis chapter on complete exchange on a cluster
// ("the seed" below and in this package's comments; its claims X01–X07 are listed in
// docs/claims.md).
//
// In a complete exchange each of p participants holds a block for every other one, and every
// block is k packets long. A Schedule says who sends which packet to whom: a list of Rounds,
// each a list of packet Steps, each a list of Transfers {From, To, Block, Packet}. Within a
// round packets flow as one pipeline; between rounds a participant waits until it has sent
// and received everything, which drains its pipelines once (a stall).
//
//	s, err := schedule.New("group", p, k, schedule.Options{Omega: 4})
//	for _, round := range s.Rounds {
//		for _, step := range round {
//			for _, t := range step {
//				if t.From == me {
//					// send packet t.Packet of my block for t.To
//				}
//			}
//		}
//		// wait for every packet of this round addressed to me
//	}
//
// # Schedules
//
// New(name, p, k, options) builds one; Names lists them. All send every packet exactly once and
// directly from its source to its destination (X02's first condition; Verify checks it, and
// that no participant sends or receives two packets in one step).
//
//   - shift (X03): p−1 rounds; in round r participant i sends its k packets to (i+r) mod p and
//     receives from (i−r) mod p.
//   - pairwise (X04): participants pair up for a mutual exchange, one round per colour of an
//     edge colouring of the complete graph: colour c pairs i with (2c−i) mod p for odd p, which
//     leaves c idle, so p rounds with each participant idle once; for even p the idle one pairs
//     with p−1 instead, so p−1 rounds and nobody idle. Works for any p.
//   - xor (X04): the classic pairing i⊕r in round r; p must be a power of two.
//   - sync (X05): one round of k(p−1) steps; step (j, r) sends everyone's packet j along the r-th
//     map of a contention-free permutation (Options.Perm: shift, xor or edge). No stalls: it
//     meets the lower bound.
//   - group (X06): ⌈(p−1)/ω⌉ rounds, each a synchronous shuffle among the next ω partners
//     (Options.Omega, default ⌈√(p−1)⌉). ω bounds the fan-out, which keeps a switch's input
//     buffers from head-of-line blocking, at the price of a stall per round.
//
// Inspect finds a schedule's fan-out, rounds and stalls (Table 5.1, X07) from its transfers:
//
//	            fan-out  rounds          stalls
//	sync        p−1      1               0
//	group       ω        ⌈(p−1)/ω⌉       ⌈(p−1)/ω⌉−1
//	shift, xor  1        p−1             p−2
//	pairwise    1        p−1 (odd p: p)  p−2 (odd p: p−1)
//
// # Cost model
//
// Params holds the model's parameters for packets of one size, as durations: the send and
// receive overheads O_s and O_r, the user's handling time U_r, the gap g between packets and
// the latency L. One pipeline flow of n packets takes n·g + T_w with T_w = O_s + L − g + O_r + U_r.
// LowerBound is T_ata = k(p−1)g + T_w (X01); Predict walks a schedule and charges each round
// T_w and each step g (c·g if someone sends or receives c packets in it); Formula is the seed's
// closed form for a named schedule, which Predict matches:
//
//	shift, xor, pairwise (even p)  kg(p−1) + (p−1)T_w
//	pairwise (odd p)               kgp + pT_w
//	sync                           k(p−1)g + T_w = T_ata
//	group                          kg(p−1) + ⌈(p−1)/ω⌉T_w
//
// The parameters are measured, not typed in: time sends, receives, handlers, bursts of
// back-to-back packets and ping-pongs of several sizes, give them to Fit as Samples, and it
// returns a Model whose At(bytes) is the Params for that packet size. Fit says which parameter
// the samples leave undetermined and which samples would pin it.
package schedule
