package bracket

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/comlib/agree"
	"github.com/charmgo/charm/comlib/route"
)

// varSim runs package agree inside the simulation: every PE has a
// Follower that answers Options.Variant, PE 0 the Decider; the router is
// the group shuffle with the variant as its fan-out ω, whose stages pair
// PEs differently for each ω, so PEs that disagreed would strand or
// misroute messages.
type varSim struct {
	s      *sim
	dec    *agree.Decider
	fol    []*agree.Follower
	bat    []*agree.Batcher
	used   map[int]map[int]int // iteration → PE → variant its exchange ran with
	waits  int
	quiet  int  // exchanges not reported
	broken bool // PEs answer a variant of their own (the negative control)
	errs   []error
}

func groupRouter(n, v int) (Router, error) { return route.New("group", n, route.Options{Omega: v}) }

func newVarSim(t require.TestingT, seed int64, p, n, iters int, o agree.Options) *varSim {
	s := newSim(t, seed, p, n, iters, groupRouter, Options{})
	dec, err := agree.NewDecider(o)
	require.NoError(t, err)
	v := &varSim{s: s, dec: dec, used: map[int]map[int]int{}}
	s.vary = v
	for pe := range s.pes {
		f := agree.NewFollower(dec.Length())
		v.fol = append(v.fol, f)
		v.bat = append(v.bat, agree.NewBatcher(dec.Length(), dec.Lead()))
		pe := pe
		s.pes[pe] = NewPE[payload](pe, Options{Variant: func(iter int) (int, bool) {
			if v.broken {
				return 1 + (pe+iter)%max(1, p-1), true
			}
			return f.Value(iter)
		}}, groupRouter)
	}
	return v
}

func (v *varSim) effects(pe int, fx Effects[payload]) {
	for _, n := range fx.Wait {
		v.waits++
		if seg, ask := v.fol[pe].Need(n); ask {
			v.s.send(pe, 0, wire{ask: &seg})
		}
	}
	for _, f := range fx.Finished {
		if v.used[f.Iter] == nil {
			v.used[f.Iter] = map[int]int{}
		}
		v.used[f.Iter][pe] = f.Variant
		if v.broken || !v.fol[pe].Reported(f.Iter) {
			v.quiet++
			continue // a quiet segment (agree.Range.Every); broken PEs only check packets
		}
		d := f.Variant - 3
		cost := float64(1+d*d) * (1 + 0.1*v.s.rng.Float64())
		if batch := v.bat[pe].Add(agree.Report{PE: pe, Iter: f.Iter, Step: f.Step, Parts: f.Parts, Value: f.Variant, Cost: cost}); batch != nil {
			v.s.send(pe, 0, wire{measure: batch})
		}
	}
}

func (v *varSim) deliver(to int, w wire) {
	switch {
	case w.ask != nil:
		v.broadcast(v.dec.Request(*w.ask))
	case w.measure != nil:
		for _, r := range w.measure {
			rs, err := v.dec.Report(r)
			if err != nil {
				v.errs = append(v.errs, err)
			}
			v.broadcast(rs)
		}
	case w.announce != nil:
		if err := v.fol[to].Take(*w.announce); err != nil {
			v.errs = append(v.errs, err)
		}
		v.s.apply(to, v.s.pes[to].Resume())
	default:
		panic(fmt.Sprintf("simulation: an empty message to PE %d", to))
	}
}

func (v *varSim) broadcast(rs []agree.Range) {
	for i := range rs {
		for pe := range v.s.pes {
			v.s.send(0, pe, wire{announce: &rs[i]})
		}
	}
}

// check adds to sim.check: every exchange of an iteration ran with the
// variant the Decider announced for it, on every participant.
func (v *varSim) check() {
	t := v.s.t
	v.s.check()
	require.Empty(t, v.errs)
	for it, byPE := range v.used {
		want, ok := v.dec.Value(it)
		require.True(t, ok, "iteration %d ran before its variant was announced", it)
		for pe, got := range byPE {
			require.Equal(t, want, got, "PE %d ran iteration %d with variant %d, the decider announced %d", pe, it, got, want)
		}
		require.Equal(t, v.s.exch[it], len(byPE), "iteration %d: every PE that started it finished it", it)
	}
}

// TestVariantAgreementSimulated: the fan-out changes while the sources
// migrate (recoveries in the middle), and every participant of every
// iteration exchanges with the same one; every message arrives once; no
// PE is left waiting. With Length 1 and Lead 0 every PE waits for every
// announcement: the Wait/Resume path is taken all the time.
func TestVariantAgreementSimulated(t *testing.T) {
	for _, o := range []agree.Options{
		{Min: 1, Max: 6, Start: 2},
		{Min: 1, Max: 6, Start: 2, Length: 1, Lead: 0, Evals: 1},
		// A Picker settles and leaves segments quiet: unreported.
		{Values: []int{1, 2, 3, 4, 5, 6}, Start: 2, Length: 1, Lead: 0, Every: 3},
	} {
		var waits, recoveries, changes, quiet int
		for _, c := range []struct{ p, n int }{{3, 7}, {5, 12}, {7, 9}} {
			for seed := int64(1); seed <= 12; seed++ {
				t.Run(fmt.Sprintf("len%d/p%d/n%d/seed%d", o.Length, c.p, c.n, seed), func(t *testing.T) {
					o := o
					if o.Values == nil {
						o.Max = c.p - 1
					}
					v := newVarSim(t, seed, c.p, c.n, 30, o)
					v.s.migr, v.s.swapP = 0.05, 0.3
					v.s.run()
					v.check()
					waits += v.waits
					recoveries += v.s.root.Recoveries - 1
					seen := map[int]bool{}
					for _, byPE := range v.used {
						for _, x := range byPE {
							seen[x] = true
						}
					}
					changes += len(seen) - 1
					quiet += v.quiet
				})
			}
		}
		require.Positive(t, waits, "PEs waited for announcements (%+v)", o)
		require.Positive(t, recoveries, "migrations were recovered while tuning (%+v)", o)
		require.Positive(t, changes, "the variant changed (%+v)", o)
		if o.Values != nil {
			require.Positive(t, quiet, "settled, the Picker left exchanges unreported")
		}
	}
}

// TestVariantAgreementAcrossRecovery: a source moves between iterations 7
// and 8 while the fan-out is being changed at every iteration; the
// iterations after the recovery exchange with the announced fan-out on
// every participant again.
func TestVariantAgreementAcrossRecovery(t *testing.T) {
	for seed := int64(1); seed <= 20; seed++ {
		v := newVarSim(t, seed, 5, 10, 20, agree.Options{Min: 1, Max: 4, Start: 1, Length: 1, Lead: 0, Evals: 1})
		v.s.run1Until(8)
		src := v.s.srcs[v.s.rng.Intn(v.s.n)]
		src.pe = (src.pe + 1) % v.s.p
		v.s.lastMove = 8
		v.s.run()
		v.check()
		require.Equal(t, 2, v.s.root.Recoveries, "seed %d: the first iteration and the move", seed)
		parts := map[int]bool{}
		for _, src := range v.s.srcs {
			parts[src.pe] = true
		}
		for it := 9; it < 20; it++ {
			require.Len(t, v.used[it], len(parts), "seed %d: iteration %d exchanged by every participant", seed, it)
		}
	}
}

// failRecorder is a require.TestingT that records a failure instead of
// ending the test, for the negative control.
type failRecorder struct{ failed bool }

func (f *failRecorder) Errorf(string, ...any) { f.failed = true }
func (f *failRecorder) FailNow()              { panic(f) }

// TestVariantAgreementNegativeControl: PEs that pick their own fan-out
// break the exchange, and the checks above notice.
func TestVariantAgreementNegativeControl(t *testing.T) {
	caught := 0
	for seed := int64(1); seed <= 5; seed++ {
		rec := &failRecorder{}
		func() {
			defer func() {
				if r := recover(); r != nil && r != any(rec) {
					panic(r)
				}
			}()
			v := newVarSim(rec, seed, 5, 10, 12, agree.Options{Min: 1, Max: 4, Start: 2})
			v.broken = true
			v.s.run()
			v.check()
		}()
		if rec.failed {
			caught++
		}
	}
	require.Equal(t, 5, caught, "every broken run is caught")
}

// TestVariantDisagreementCaughtByPackets: PEs that pick their own fan-out
// and report nothing (as in quiet segments) are caught by the packets
// themselves: a receiver running an iteration with another variant than
// the sender's says so (Effects.Errors), naming both.
func TestVariantDisagreementCaughtByPackets(t *testing.T) {
	for seed := int64(1); seed <= 5; seed++ {
		v := newVarSim(t, seed, 5, 10, 12, agree.Options{Min: 1, Max: 4, Start: 2})
		v.broken = true
		v.s.run()
		require.NotEmpty(t, v.s.errs, "seed %d", seed)
		require.ErrorContains(t, v.s.errs[0], "the PEs disagree")
		require.Regexp(t, `iteration \d+: PE \d+ exchanges it with router variant \d+, PE \d+ with \d+`, v.s.errs[0].Error())
		require.Empty(t, v.errs, "nothing was reported")
	}
}
