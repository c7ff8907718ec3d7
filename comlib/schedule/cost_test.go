package schedule_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/comlib/schedule"
)

// Distinct primes, so that a formula using the wrong parameter gives a different number.
var params = schedule.Params{
	Os: 3 * time.Microsecond, Or: 5 * time.Microsecond, Ur: 7 * time.Microsecond,
	G: 11 * time.Microsecond, L: 13 * time.Microsecond,
}

const us = time.Microsecond

func TestX01_LowerBoundIsKPMinus1GPlusTw(t *testing.T) {
	require.Equal(t, 17*us, params.Tw(), "T_w = O_s + L − g + O_r + U_r = 3+13−11+5+7")
	require.Equal(t, (6*11+17)*us, params.LowerBound(4, 2))
	require.Equal(t, (63*3*11+17)*us, params.LowerBound(64, 3))
	require.Equal(t, time.Duration(0), params.LowerBound(1, 5), "nothing to exchange")
	// No schedule beats the bound, and only those without stalls reach it (X02 condition 2).
	for p := 2; p <= 64; p++ {
		for _, k := range ks {
			every(t, p, k, func(name string, o schedule.Options, s *schedule.Schedule) {
				got, lb := params.Predict(s), params.LowerBound(p, k)
				require.GreaterOrEqual(t, got, lb, "%s p=%d k=%d %+v", name, p, k, o)
				if schedule.Inspect(s).Stalls == 0 {
					require.Equal(t, lb, got, "%s p=%d k=%d %+v", name, p, k, o)
				} else {
					require.Greater(t, got, lb, "%s p=%d k=%d %+v", name, p, k, o)
				}
			})
		}
	}
}

func TestX03_X05_X06_PredictionsMatchTheSeedsFormulas(t *testing.T) {
	// By hand from (5.2)–(5.4), p = 4, k = 2, g = 11, T_w = 17:
	hand := []struct {
		name  string
		p, w  int
		want  time.Duration
		label string
	}{
		{"shift", 4, 0, 3 * (2*11 + 17) * us, "(p−1)(kg+T_w)"},
		{"xor", 4, 0, 3 * (2*11 + 17) * us, "T_pair = T_shift"},
		{"pairwise", 4, 0, 3 * (2*11 + 17) * us, "T_pair = T_shift, even p"},
		{"pairwise", 5, 0, 5 * (2*11 + 17) * us, "p rounds for odd p"},
		{"sync", 4, 0, (2*3*11 + 17) * us, "k(p−1)g + T_w"},
		{"group", 7, 3, (2*6*11 + 2*17) * us, "kg(p−1) + (p−1)/ω T_w"},
		{"group", 8, 3, (2*7*11 + 3*17) * us, "⌈(p−1)/ω⌉ rounds"},
	}
	for _, h := range hand {
		f, err := params.Formula(h.name, h.p, 2, h.w)
		require.NoError(t, err)
		require.Equal(t, h.want, f, "%s p=%d: %s", h.name, h.p, h.label)
	}
	// Predict inspects the schedule; Formula is the closed form. They agree everywhere.
	for p := 2; p <= 64; p++ {
		for _, k := range ks {
			every(t, p, k, func(name string, o schedule.Options, s *schedule.Schedule) {
				f, err := params.Formula(name, p, k, o.Omega)
				require.NoError(t, err)
				require.Equal(t, f, params.Predict(s), "%s p=%d k=%d %+v", name, p, k, o)
			})
		}
	}
	_, err := params.Formula("bruck", 4, 1, 0)
	require.ErrorContains(t, err, `unknown schedule "bruck"`)
	_, err = params.Formula("xor", 6, 1, 0)
	require.ErrorContains(t, err, "p = 6 is not a power of two")
	_, err = params.Formula("shift", 4, 0, 0)
	require.ErrorContains(t, err, "k = 0")
}

func TestPredictChargesContention(t *testing.T) {
	// Two packets for node 1 in the same step take two gaps.
	s := &schedule.Schedule{Name: "hand", P: 3, K: 1, Rounds: []schedule.Round{{
		{{From: 0, To: 1, Block: schedule.Block{Src: 0, Dst: 1}}, {From: 2, To: 1, Block: schedule.Block{Src: 2, Dst: 1}}},
	}}}
	require.Equal(t, 2*params.G+params.Tw(), params.Predict(s))
	require.ErrorContains(t, s.Verify(), "1 receives twice in one step")
}

func TestNewRejectsBadInput(t *testing.T) {
	cases := []struct {
		name string
		p, k int
		o    schedule.Options
		want string
	}{
		{"bruck", 4, 1, schedule.Options{}, `unknown schedule "bruck" (known: group, pairwise, shift, sync, xor)`},
		{"shift", 0, 1, schedule.Options{}, "p = 0 participants"},
		{"shift", -3, 1, schedule.Options{}, "p = -3 participants"},
		{"sync", 4, 0, schedule.Options{}, "k = 0 packets per block"},
		{"group", 4, 1, schedule.Options{Omega: -2}, "fan-out ω = -2"},
		{"group", 4, 1, schedule.Options{Perm: "random"}, `unknown permutation "random"`},
		{"sync", 6, 1, schedule.Options{Perm: "xor"}, "permutation xor needs p a power of two, got p = 6"},
		{"group", 5, 1, schedule.Options{Perm: "edge"}, "permutation edge needs p even"},
		{"xor", 12, 1, schedule.Options{}, "p = 12 is not a power of two"},
	}
	for _, c := range cases {
		s, err := schedule.New(c.name, c.p, c.k, c.o)
		require.Nil(t, s)
		require.ErrorContains(t, err, c.want)
	}
	// One participant: nothing to do, still valid.
	for _, name := range schedule.Names() {
		s, err := schedule.New(name, 1, 2, schedule.Options{})
		require.NoError(t, err, name)
		require.Empty(t, s.Rounds, name)
		require.NoError(t, s.Verify(), name)
		require.Equal(t, time.Duration(0), params.Predict(s), name)
	}
}
