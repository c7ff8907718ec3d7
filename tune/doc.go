// Package tune finds, while a program runs, a good value for one real
// parameter whose cost can only be measured, noisily: the number of local
// computations between communication tests of an overlap loop, a buffer
// size, a flush period, a fan-out. It is pure — no clocks, no goroutines, no
// I/O — so the runtime drives it and tests replay it exactly.
//
// # The search
//
// A Tuner holds a point (the best value known, its anchor) and an
// exploration vector. It tries anchor + vector. A try that is better than
// the anchor becomes the anchor and the vector grows (×Grow, 2); a try that
// is worse leaves the anchor where it is, and the vector reverses and
// shrinks (×Shrink, ½) (E06). So from p = 0 the tries run 1, 3, 7, 15, …
// until one is worse, then close in from both sides.
//
//   - Each value is scored by the mean of Evals evaluations, 4 by default,
//     because a single measured time says little (E07); with Median, by
//     their median, which one stalled evaluation does not move.
//   - The domain is [Min, ∞); the first vector points right; a try that
//     would cross Min gets a shorter vector, and at Min the vector turns
//     right (E08).
//   - The vector never gets shorter than MinStep, so the search keeps
//     probing and follows a changing optimum (E09). When two tries in a row
//     at that length are worse, the anchor is scored again: its old score
//     may be stale (the environment changed) or lucky (noise). If one of
//     those two tries beats the new score, the search moves there at once.
//     With Jump set, a single try scored that many times above the anchor
//     triggers the re-scoring at once: the whole cost has moved.
//   - Max, if set, bounds the domain above as Min does below (a fan-out
//     cannot exceed the number of peers).
//   - On a shared machine, where noise only slows evaluations down and a
//     good start should not be left for noise: Median scores a value by
//     the median of its n evaluations; Margin makes a try replace the
//     anchor only when it is better by that fraction; Hold keeps the
//     anchor, once the search has settled, for that many scores before the
//     neighbours are tried again, pooling the held scores into its score.
//     Z makes a try replace the anchor only when it is better by that
//     many standard errors of the spread measured (a fixed Margin is
//     beaten by luck now and then under heavy noise); Paired alternates a
//     try's evaluations with the anchor's and judges it against those,
//     so both see the same load when the load comes and goes. TRAM's
//     Options.Tune uses all five: they keep a good start at the price of
//     finding a better value later.
//
// The driving loop is three calls:
//
//	t, err := tune.New(tune.Options{Start: 0, Step: 1, MinStep: 1, Evals: 4})
//	for iteration := range steps {
//		p := t.Value()          // use p for this evaluation
//		elapsed := runStep(p)   // measure its cost, e.g. seconds
//		err = t.Observe(elapsed)
//	}
//	tune.WriteCSV(w, t.Trajectory()) // value and cost per evaluation
//	tune.WriteSVG(w, "cap", t.Trajectory()) // the same as a chart
//
// A tuner inside a chare program reports its trajectory with
// tunedebug.Report(from, name, t.Trajectory()); the runtime flag
// -tunedebug DIR then writes every reported trajectory as CSV and SVG when
// the job ends (package tune/tunedebug).
//
// # A few values that matter
//
// Some parameters have only a few values worth telling apart: the group
// shuffle's fan-out ω changes its cost mostly through its number of
// rounds, so for 16 PEs only ω = 1, 2, 3, 4, 5, 8, 15 differ. Searching
// 1..15 with a Tuner then wanders over a flat, noisy landscape and pays
// for every step. A Picker searches such a list instead: it scores its
// start, tries a neighbour alternately with the start, takes it only when
// it is faster by more than MinGain and by more than Z standard errors
// (of the samples and of whole evaluations, trimmed of their slowest
// sixth, on log costs), climbs on that way, and settles when neither
// neighbour is taken, watching the incumbent for a change of ground
// (Drift).
//
// # Non-integer values
//
// The tuned value is real even when what it sets is a count. A Spread
// realises it as an average (E10): call i gives ⌊p·i⌋ − ⌊p·(i−1)⌋, so p =
// 2.5 gives 2, 3, 2, 3, … within one run of the loop; a runtime may
// equally spread an integer parameter over evaluations.
//
// The overlap loop's own policy — its priority and how many computations
// go between two tests, realised with a Spread — is package overlap's
// (Decide, Loop).
//
// Why the search is built this way, and how it fares on seeded synthetic
// costs, is in docs/design/tuning.md.
package tune
