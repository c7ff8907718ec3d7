// Package agree lets one PE choose, while a program runs, a parameter that
// every PE must use with the same value in the same iteration — the fan-out
// ω of a group-shuffle exchange, which pairs PEs stage by stage and hangs or
// loses messages if two PEs disagree on it. It is pure: no clocks, no
// messages; the runtime carries its values between PEs.
//
// # The plan
//
// Iterations are cut into segments of Length iterations (segment ⌊n/Length⌋).
// One Decider (PE 0) gives each segment a value, once, and announces it as a
// Range of segments; every PE keeps a Follower that stores the ranges it
// has received. A PE about to run iteration n asks its Follower for the
// value of n's segment:
//
//   - known: it runs n with that value;
//   - not known: it waits, and sends the Decider one Request for that
//     segment. The Decider answers every request at once (extending the
//     value in force), so a waiting PE is never left waiting.
//
// Every segment gets one value, decided once by one PE, so for every n all
// PEs that run n use the same value whatever the order in which ranges,
// requests and iterations interleave — across migrations and recoveries
// too, because the value depends on n alone, not on which PEs take part.
// A Follower refuses a range that contradicts one it has (a broken
// decider), and the Decider refuses a report of an iteration run with a
// value it did not announce (a broken follower): both are errors that end
// the job rather than let it hang.
//
// # Tuning
//
// Each PE reports, when its part of an iteration n ends (unless n is
// quiet, below), the value it used and its cost (the time its exchange
// took); n is measured once every participant has reported, and its cost
// is the maximum. A Batcher sends a PE's reports once per segment: those
// of the scored iterations (below) together when the last of them ends,
// those of the lead iterations with the next reported segment's. The
// Decider scores
// a segment by the mean cost of its first Length−Lead measured iterations
// (E07), feeds it to a tune.Tuner, and announces the next segment
// with the Tuner's next value: one announcement per segment. With
// Options.Values it hands the segment's costs to a tune.Picker
// instead, which chooses among those values only and moves only for a
// gain beyond the noise (comlib gives it one ω per number of rounds). The Lead
// iterations left at the end of a segment are the time the announcement
// has to reach every PE before anyone needs it; a PE that gets there first
// waits, as above, so Lead affects speed, never correctness.
//
// # Quiet segments
//
// Reports are the cost of tuning: one message per PE per iteration to the
// Decider's PE, which also takes part in the exchange. Once there is
// nothing to search — a Picker has settled, or nothing is tuned — the
// Decider announces ranges with Every = k (Options.Every, default 16):
// only the iterations of segments that are multiples of k are reported,
// the others are quiet. Which iterations are reported is so part of the
// plan, known to every PE with the value, and the same invariants hold:
// a range that gives a known segment its value but another Every is
// refused, and so is a report of a quiet iteration. (A quiet iteration's
// value is so no longer checked by the Decider; comlib checks it on every
// stage packet instead, bracket.Packet.Variant.) The Decider scores the
// reported segment (a re-check of the settled value) and announces the
// next range with it; a re-check whose cost moved by more than the
// Picker's Drift (tune.Picker.Drifting) is followed by reported segments
// until three in a row confirm it, when the search opens again, or one
// clears it. So a change of conditions is seen at most k segments late.
// Announcements of one settled value merge into one range: the plan does
// not grow while nothing changes. A Tuner (Min..Max) is measured every
// segment.
//
//	d, _ := agree.NewDecider(agree.Options{Min: 1, Max: p - 1, Start: 2})
//	f := agree.NewFollower(d.Length())
//	b := agree.NewBatcher(d.Length(), d.Lead())
//	// PE about to run iteration n:
//	if v, ok := f.Value(n); ok { run(n, v) } else if seg, ask := f.Need(n); ask { send(Request(seg)) }
//	// PE at the end of iteration n:
//	if f.Reported(n) { if rs := b.Add(Report{PE: pe, Iter: n, Value: v, Cost: c, ...}); rs != nil { send(rs) } }
//	// PE 0, on a request or on reports:
//	ranges := d.Request(seg)          // broadcast each range
//	ranges, err := d.Report(report)   // each in turn; err: a PE used a value not announced
//	// every PE, on a range:
//	err := f.Take(r)                  // then retry the waiting iteration
package agree
