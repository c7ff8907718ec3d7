// Each TestXnn checks a sentence of claim Xnn in docs/claims.md (the complete-exchange
// chapter, "Complete Exchange Algorithms"), on every p from 2 to 64 and several k.
package schedule_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/comlib/schedule"
)

var ks = []int{1, 2, 3}

func pow2(p int) bool { return p&(p-1) == 0 }

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// every yields each schedule New can build for p and k, with the options that apply.
func every(t *testing.T, p, k int, f func(name string, o schedule.Options, s *schedule.Schedule)) {
	t.Helper()
	perms := []string{"shift", "edge"}
	if pow2(p) {
		perms = append(perms, "xor")
	}
	for _, name := range schedule.Names() {
		var opts []schedule.Options
		switch name {
		case "xor":
			if !pow2(p) {
				continue
			}
			opts = []schedule.Options{{}}
		case "sync":
			for _, perm := range perms {
				if perm == "edge" && p%2 == 1 {
					continue
				}
				opts = append(opts, schedule.Options{Perm: perm})
			}
		case "group":
			for _, w := range []int{0, 1, 2, 3, 5, p - 1, p + 3} {
				for _, perm := range perms {
					if perm == "edge" && p%2 == 1 {
						continue
					}
					opts = append(opts, schedule.Options{Omega: w, Perm: perm})
				}
			}
		default:
			opts = []schedule.Options{{}}
		}
		for _, o := range opts {
			s, err := schedule.New(name, p, k, o)
			require.NoError(t, err, "%s p=%d k=%d %+v", name, p, k, o)
			f(name, o, s)
		}
	}
}

func TestX02_EveryPacketOnceDirectlyNoNodeSendsOrReceivesTwiceInAStep(t *testing.T) {
	for p := 2; p <= 64; p++ {
		for _, k := range ks {
			every(t, p, k, func(name string, o schedule.Options, s *schedule.Schedule) {
				require.NoError(t, s.Verify(), "%s p=%d k=%d %+v", name, p, k, o)
				require.Equal(t, k*p*(p-1), s.Transfers(), "%s p=%d k=%d: one transfer per packet", name, p, k)
				require.Equal(t, name, s.Name)
				require.Equal(t, p, s.P)
				require.Equal(t, k, s.K)
			})
		}
	}
}

// Verify is what the X02 test relies on, so each of its checks must be able to fail.
func TestX02_VerifyRejectsDetoursDuplicatesGapsAndContention(t *testing.T) {
	mk := func() *schedule.Schedule {
		s, err := schedule.New("shift", 4, 2, schedule.Options{})
		require.NoError(t, err)
		require.NoError(t, s.Verify())
		return s
	}
	cases := []struct {
		name   string
		mutate func(s *schedule.Schedule)
		want   string
	}{
		{"detour", func(s *schedule.Schedule) { // 0 forwards to 1 a packet of 3's block for 1
			tr := &s.Rounds[0][0][0]
			tr.Block = schedule.Block{Src: 3, Dst: tr.To}
		}, "detour"},
		{"twice", func(s *schedule.Schedule) {
			s.Rounds = append(s.Rounds, schedule.Round{schedule.Step{s.Rounds[1][0][2]}})
		}, "packet sent twice"},
		{"missing", func(s *schedule.Schedule) { s.Rounds[2][1] = s.Rounds[2][1][:3] }, "never sent"},
		{"double send", func(s *schedule.Schedule) {
			// 0 sends packet 1 of its round-1 block in step 0 as well.
			s.Rounds[0][0] = append(s.Rounds[0][0], s.Rounds[0][1][0])
			s.Rounds[0][1] = s.Rounds[0][1][1:]
		}, "sends twice"},
		{"double receive", func(s *schedule.Schedule) {
			// move 2→3 packet 0 of round 0 (i→i+1) into round 1's step 0, where 1→3 also lands
			tr := s.Rounds[0][0][2]
			s.Rounds[0][0] = append(s.Rounds[0][0][:2:2], s.Rounds[0][0][3:]...)
			s.Rounds[1][0] = append([]schedule.Transfer{tr}, s.Rounds[1][0]...)
		}, "receives twice"},
		{"out of range", func(s *schedule.Schedule) { s.Rounds[0][0][0].To = 9 }, "out of range"},
		{"bad packet", func(s *schedule.Schedule) { s.Rounds[0][0][0].Packet = 2 }, "packet out of range"},
		{"own block", func(s *schedule.Schedule) {
			s.Rounds[0][0][0] = schedule.Transfer{From: 0, To: 0, Block: schedule.Block{Src: 0, Dst: 0}}
		}, "own block"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := mk()
			c.mutate(s)
			err := s.Verify()
			require.Error(t, err)
			require.Contains(t, err.Error(), "schedule shift")
			require.Contains(t, err.Error(), c.want)
		})
	}
}

func TestX03_ShiftRoundRSendsToIPlusRReceivesFromIMinusR(t *testing.T) {
	for p := 2; p <= 64; p++ {
		for _, k := range ks {
			s, err := schedule.New("shift", p, k, schedule.Options{})
			require.NoError(t, err)
			require.Len(t, s.Rounds, p-1)
			for r, round := range s.Rounds {
				require.Len(t, round, k, "p=%d round %d: one step per packet", p, r)
				got := make(map[[3]int]bool)
				for _, st := range round {
					for _, tr := range st {
						got[[3]int{tr.From, tr.To, tr.Packet}] = true
					}
				}
				require.Len(t, got, p*k)
				for i := 0; i < p; i++ {
					for q := 0; q < k; q++ {
						require.True(t, got[[3]int{i, (i + r + 1) % p, q}], "p=%d round %d: %d sends packet %d to i+r", p, r+1, i, q)
						require.True(t, got[[3]int{((i-r-1)%p + p) % p, i, q}], "p=%d round %d: %d receives from i−r", p, r+1, i)
					}
				}
			}
		}
	}
}

func TestX04_PairwiseEdgeColouringForAnyPXORForPowersOfTwo(t *testing.T) {
	for p := 2; p <= 64; p++ {
		for _, k := range ks {
			s, err := schedule.New("pairwise", p, k, schedule.Options{})
			require.NoError(t, err)
			want := p - 1
			if p%2 == 1 {
				want = p
			}
			require.Len(t, s.Rounds, want, "p=%d: p−1 rounds for even p, p for odd", p)
			sh := schedule.Inspect(s)
			for i, idle := range sh.Idle {
				require.Equal(t, p%2, idle, "p=%d: node %d idle in %d rounds (once for odd p, never for even)", p, i, idle)
			}
			for r, round := range s.Rounds {
				// Every step of a round is the same pairing: i→j and j→i.
				partner := make(map[int]int)
				for _, st := range round {
					for _, tr := range st {
						if j, ok := partner[tr.From]; ok {
							require.Equal(t, j, tr.To, "p=%d round %d: %d changes partner", p, r, tr.From)
						}
						partner[tr.From] = tr.To
					}
				}
				for i, j := range partner {
					require.Equal(t, i, partner[j], "p=%d round %d: %d→%d is not a pair", p, r, i, j)
				}
				require.Len(t, partner, p-p%2, "p=%d round %d: exactly one node idle for odd p", p, r)
			}
		}
	}
	for p := 2; p <= 64; p++ {
		s, err := schedule.New("xor", p, 2, schedule.Options{})
		if !pow2(p) {
			require.Error(t, err)
			require.Contains(t, err.Error(), fmt.Sprintf("p = %d is not a power of two", p))
			continue
		}
		require.NoError(t, err)
		require.Len(t, s.Rounds, p-1)
		for r, round := range s.Rounds {
			for _, st := range round {
				require.Len(t, st, p)
				for _, tr := range st {
					require.Equal(t, tr.From^(r+1), tr.To, "p=%d round %d", p, r+1)
				}
			}
		}
	}
}

func TestX05_SynchronousShuffleOneRoundEachStepAPermutationAtTheOptimum(t *testing.T) {
	m := schedule.Params{Os: 3 * time.Microsecond, Or: 5 * time.Microsecond, Ur: 7 * time.Microsecond, G: 11 * time.Microsecond, L: 13 * time.Microsecond}
	for p := 2; p <= 64; p++ {
		for _, k := range ks {
			for _, perm := range []string{"shift", "xor", "edge"} {
				s, err := schedule.New("sync", p, k, schedule.Options{Perm: perm})
				if (perm == "xor" && !pow2(p)) || (perm == "edge" && p%2 == 1) {
					require.Error(t, err)
					require.Contains(t, err.Error(), "permutation "+perm)
					continue
				}
				require.NoError(t, err)
				require.Equal(t, perm, s.Perm)
				require.Len(t, s.Rounds, 1)
				require.Len(t, s.Rounds[0], k*(p-1))
				for j, st := range s.Rounds[0] {
					require.Len(t, st, p, "p=%d step %d: every node sends", p, j)
					for _, tr := range st {
						require.Equal(t, j/(p-1), tr.Packet, "p=%d step %d: packet j of every block before packet j+1", p, j)
					}
				}
				require.Equal(t, m.LowerBound(p, k), m.Predict(s), "p=%d k=%d %s: T_sync = T_ata", p, k, perm)
			}
		}
	}
}

func TestX06_GroupShuffleRoundsOfAtMostOmegaPartners(t *testing.T) {
	m := schedule.Params{Os: 3 * time.Microsecond, Or: 5 * time.Microsecond, Ur: 7 * time.Microsecond, G: 11 * time.Microsecond, L: 13 * time.Microsecond}
	for p := 2; p <= 64; p++ {
		for _, k := range ks {
			for _, w := range []int{1, 2, 3, 4, 7, p - 1} {
				s, err := schedule.New("group", p, k, schedule.Options{Omega: w})
				require.NoError(t, err)
				rounds := ceilDiv(p-1, w)
				require.Len(t, s.Rounds, rounds, "p=%d ω=%d", p, w)
				for r, round := range s.Rounds {
					partners := make(map[int]map[int]bool)
					for _, st := range round {
						require.Len(t, st, p, "p=%d ω=%d round %d: a synchronous shuffle, everyone sends each step", p, w, r)
						for _, tr := range st {
							if partners[tr.From] == nil {
								partners[tr.From] = map[int]bool{}
							}
							partners[tr.From][tr.To] = true
						}
					}
					for i, ps := range partners {
						require.LessOrEqual(t, len(ps), w, "p=%d ω=%d round %d: node %d", p, w, r, i)
					}
				}
				// T = kg(p−1) + ⌈(p−1)/ω⌉T_w; the seed's (p−1)/ω when ω divides p−1.
				want := time.Duration(k*(p-1))*m.G + time.Duration(rounds)*m.Tw()
				require.Equal(t, want, m.Predict(s), "p=%d k=%d ω=%d", p, k, w)
			}
		}
	}
	_, err := schedule.New("group", 8, 1, schedule.Options{Omega: -1})
	require.ErrorContains(t, err, "fan-out ω = -1")
	s, err := schedule.New("group", 17, 1, schedule.Options{})
	require.NoError(t, err)
	require.Equal(t, 4, s.Omega, "default ω = ⌈√(p−1)⌉")
	require.Len(t, s.Rounds, 4)
}

// TestX06_GroupOmegasOnePerRoundCount: GroupOmegas gives one ω for each
// number of rounds 1..p−1, the smallest that gives it (checked against
// every ω by brute force), in increasing order, and contains the default.
func TestX06_GroupOmegasOnePerRoundCount(t *testing.T) {
	require.Equal(t, []int{1, 2, 3, 4, 5, 8, 15}, schedule.GroupOmegas(16))
	require.Equal(t, []int{1}, schedule.GroupOmegas(2))
	require.Equal(t, []int{1}, schedule.GroupOmegas(1))
	for p := 3; p <= 200; p++ {
		smallest := map[int]int{} // rounds → smallest ω
		for w := p - 1; w >= 1; w-- {
			smallest[ceilDiv(p-1, w)] = w
		}
		ws := schedule.GroupOmegas(p)
		require.Len(t, ws, len(smallest), "p=%d: one ω per round count", p)
		for i, w := range ws {
			require.Equal(t, smallest[ceilDiv(p-1, w)], w, "p=%d: %d is the smallest ω with its rounds", p, w)
			if i > 0 {
				require.Greater(t, w, ws[i-1], "p=%d: increasing", p)
			}
		}
		require.Contains(t, ws, schedule.DefaultOmega(p), "p=%d: the default is a candidate", p)
	}
}

func TestX07_Table51FanOutRoundsStallsByInspection(t *testing.T) {
	for p := 2; p <= 64; p++ {
		for _, k := range ks {
			every(t, p, k, func(name string, o schedule.Options, s *schedule.Schedule) {
				var fan, rounds, stalls int
				switch name {
				case "sync":
					fan, rounds, stalls = p-1, 1, 0
				case "group":
					w := o.Omega
					if w == 0 {
						w = schedule.DefaultOmega(p)
					}
					w = min(w, p-1)
					fan, rounds, stalls = w, ceilDiv(p-1, w), ceilDiv(p-1, w)-1
				case "shift", "xor":
					fan, rounds, stalls = 1, p-1, p-2
				case "pairwise":
					fan, rounds, stalls = 1, p-1, p-2
					if p%2 == 1 { // X04: one round more for odd p
						rounds, stalls = p, p-1
					}
				default:
					t.Fatalf("no Table 5.1 row for schedule %q", name)
				}
				sh := schedule.Inspect(s)
				require.Equal(t, fan, sh.FanOut, "%s p=%d k=%d %+v: fan-out", name, p, k, o)
				require.Equal(t, rounds, sh.Rounds, "%s p=%d k=%d %+v: rounds", name, p, k, o)
				require.Equal(t, stalls, sh.Stalls, "%s p=%d k=%d %+v: stalls", name, p, k, o)
				require.Equal(t, k*(p-1)+map[bool]int{true: k, false: 0}[name == "pairwise" && p%2 == 1], sh.Steps)
			})
		}
	}
}
