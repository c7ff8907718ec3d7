package schedule

import (
	"fmt"
	"time"
)

// Params are the parameters of the seed's model for packets of one size (all durations):
//
//   - Os: the sender's overhead to put one packet on the network;
//   - Or: the receiver's overhead to take one off;
//   - Ur: the user's time to handle (unpack) one received packet;
//   - G: the gap, the least time between two packets sent (or received) by one participant,
//     max(g_s, g_r) of the seed;
//   - L: the latency of one packet through the network.
//
// The model assumes Os + Or + Ur < G < L for large packets, but the formulas hold for any values.
type Params struct {
	Os, Or, Ur, G, L time.Duration
}

// Tw is the fixed cost of one pipeline flow: T_w = O_s + L − g + O_r + U_r. A flow of n packets
// from one participant takes n·g + T_w: the first is posted after O_s, the others follow one gap
// apart, and the last arrives L later and is handled in O_r + U_r.
func (m Params) Tw() time.Duration { return m.Os + m.L - m.G + m.Or + m.Ur }

// LowerBound is T_ata = k(p−1)g + T_w (X01): each participant must put k(p−1) packets through
// its send and receive pipelines at one gap apart, and pay one flow's fixed cost.
func (m Params) LowerBound(p, k int) time.Duration {
	if p < 2 {
		return 0
	}
	return time.Duration(k*(p-1))*m.G + m.Tw()
}

// Predict is the time the model gives for running s: each round is one pipeline flow costing
// T_w plus g for every step, and a step in which some participant sends or receives c packets
// costs c·g (in this package's schedules c = 1). Rounds follow each other, drained in between.
func (m Params) Predict(s *Schedule) time.Duration {
	var t time.Duration
	sends := make([]int, s.P)
	recvs := make([]int, s.P)
	for _, round := range s.Rounds {
		if len(round) == 0 {
			continue
		}
		t += m.Tw()
		for _, st := range round {
			clear(sends)
			clear(recvs)
			c := 0
			for _, tr := range st {
				if tr.From >= 0 && tr.From < s.P {
					sends[tr.From]++
					c = max(c, sends[tr.From])
				}
				if tr.To >= 0 && tr.To < s.P {
					recvs[tr.To]++
					c = max(c, recvs[tr.To])
				}
			}
			t += time.Duration(c) * m.G
		}
	}
	return t
}

// Formula is the seed's closed form for the named schedule, without building it:
//
//	shift, xor:  T = kg(p−1) + (p−1)T_w                      (5.2)
//	pairwise:    the same for even p; p rounds for odd p:  kgp + pT_w
//	sync:        T = k(p−1)g + T_w = T_ata                    (5.3)
//	group:       T = kg(p−1) + ⌈(p−1)/ω⌉T_w                   (5.4; the seed assumes ω | p−1)
//
// For odd p the pairwise schedule's idle participant still waits out its round, so every
// participant pays p flows of k packets. omega is the group's fan-out (0 for DefaultOmega);
// the others ignore it.
func (m Params) Formula(name string, p, k, omega int) (time.Duration, error) {
	if p < 1 || k < 1 || omega < 0 {
		return 0, fmt.Errorf("schedule %s: formula needs p ≥ 1, k ≥ 1, ω ≥ 0; got p = %d, k = %d, ω = %d", name, p, k, omega)
	}
	if p == 1 {
		if _, ok := builders[name]; !ok {
			return 0, fmt.Errorf("schedule: unknown schedule %q", name)
		}
		return 0, nil
	}
	kg := time.Duration(k) * m.G
	n := time.Duration(p - 1)
	switch name {
	case "shift":
		return kg*n + n*m.Tw(), nil
	case "xor":
		if !isPow2(p) {
			return 0, fmt.Errorf("schedule xor: p = %d is not a power of two", p)
		}
		return kg*n + n*m.Tw(), nil
	case "pairwise":
		if p%2 == 1 {
			n = time.Duration(p)
		}
		return kg*n + n*m.Tw(), nil
	case "sync":
		return kg*n + m.Tw(), nil
	case "group":
		if omega == 0 {
			omega = DefaultOmega(p)
		}
		omega = min(omega, p-1)
		rounds := (p - 1 + omega - 1) / omega
		return kg*n + time.Duration(rounds)*m.Tw(), nil
	}
	return 0, fmt.Errorf("schedule: unknown schedule %q", name)
}
