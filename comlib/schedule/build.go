package schedule

import (
	"fmt"
	"math"
)

// A partner map m has m[i] = the participant i sends to (and, for pairings, receives from);
// -1 means i is idle.

// shiftMaps: map r (0..p−2) sends i to (i+r+1) mod p.
func shiftMaps(p int) [][]int {
	maps := make([][]int, 0, p-1)
	for r := 1; r < p; r++ {
		m := make([]int, p)
		for i := range m {
			m[i] = (i + r) % p
		}
		maps = append(maps, m)
	}
	return maps
}

func isPow2(p int) bool { return p > 0 && p&(p-1) == 0 }

// xorMaps: map r (0..p−2) pairs i with i⊕(r+1); p must be a power of two.
func xorMaps(p int) [][]int {
	maps := make([][]int, 0, p-1)
	for r := 1; r < p; r++ {
		m := make([]int, p)
		for i := range m {
			m[i] = i ^ r
		}
		maps = append(maps, m)
	}
	return maps
}

// edgeColouring returns the colour classes of a proper edge colouring of the complete graph
// on p vertices, each as a pairing (m[m[i]] = i, or m[i] = −1). For odd p, colour c pairs i
// with (2c − i) mod p and leaves c alone: p colours, each vertex idle in exactly one. For even
// p, vertex p−1 takes the place of the idle one: p−1 colours and nobody idle. 2 is invertible
// modulo an odd number, so i ≠ c gives a partner ≠ i, and i, j share colour c exactly when
// i + j ≡ 2c, so every edge gets exactly one colour.
func edgeColouring(p int) [][]int {
	if p < 2 {
		return nil
	}
	n := p // odd: p colours over p vertices
	if p%2 == 0 {
		n = p - 1 // even: colour the odd K_{p−1}, then pair its idle vertex with p−1
	}
	maps := make([][]int, 0, n)
	for c := 0; c < n; c++ {
		m := make([]int, p)
		for i := 0; i < n; i++ {
			m[i] = ((2*c-i)%n + n) % n
		}
		m[c] = -1
		if p%2 == 0 {
			m[c], m[p-1] = p-1, c
		}
		maps = append(maps, m)
	}
	return maps
}

// step sends packet q from every active i to m[i].
func step(m []int, q int) Step {
	s := make(Step, 0, len(m))
	for i, to := range m {
		if to >= 0 {
			s = append(s, Transfer{From: i, To: to, Block: Block{Src: i, Dst: to}, Packet: q})
		}
	}
	return s
}

// byRounds gives each map a round of its own, sending the k packets of a block in k steps.
func byRounds(p, k int, maps [][]int) *Schedule {
	s := &Schedule{P: p, K: k, Omega: 1}
	for _, m := range maps {
		round := make(Round, 0, k)
		for q := 0; q < k; q++ {
			round = append(round, step(m, q))
		}
		s.Rounds = append(s.Rounds, round)
	}
	return s
}

// shuffled multiplexes a group of maps in one round: packet q to every partner of the group,
// then packet q+1, so every step is one contention-free map.
func shuffled(k int, group [][]int) Round {
	round := make(Round, 0, k*len(group))
	for q := 0; q < k; q++ {
		for _, m := range group {
			round = append(round, step(m, q))
		}
	}
	return round
}

// X03: round r sends all k packets to (i+r) mod p.
func buildShift(p, k int, _ Options) (*Schedule, error) {
	return byRounds(p, k, shiftMaps(p)), nil
}

// X04: one round per colour of the complete graph's edge colouring.
func buildPairwise(p, k int, _ Options) (*Schedule, error) {
	return byRounds(p, k, edgeColouring(p)), nil
}

// X04: the classic pairing by XOR, only for powers of two.
func buildXOR(p, k int, _ Options) (*Schedule, error) {
	if !isPow2(p) {
		return nil, fmt.Errorf("schedule xor: p = %d is not a power of two; use pairwise (edge colouring) for any p", p)
	}
	return byRounds(p, k, xorMaps(p)), nil
}

// perm returns the p−1 contention-free maps that order the partners of a shuffle.
func perm(name string, p int, o Options) (string, [][]int, error) {
	switch o.Perm {
	case "", "shift":
		return "shift", shiftMaps(p), nil
	case "xor":
		if !isPow2(p) {
			return "", nil, fmt.Errorf("schedule %s: permutation xor needs p a power of two, got p = %d", name, p)
		}
		return "xor", xorMaps(p), nil
	case "edge":
		if p%2 == 1 && p > 1 {
			return "", nil, fmt.Errorf("schedule %s: permutation edge needs p even (for odd p every colour leaves a node idle), got p = %d", name, p)
		}
		return "edge", edgeColouring(p), nil
	}
	return "", nil, fmt.Errorf("schedule %s: unknown permutation %q (known: shift, xor, edge)", name, o.Perm)
}

// X05: one round; step (q, r) sends packet q along map r.
func buildSync(p, k int, o Options) (*Schedule, error) {
	pname, maps, err := perm("sync", p, o)
	if err != nil {
		return nil, err
	}
	s := &Schedule{P: p, K: k, Omega: p - 1, Perm: pname}
	if len(maps) > 0 {
		s.Rounds = []Round{shuffled(k, maps)}
	}
	return s, nil
}

// DefaultOmega is the group shuffle's fan-out when Options.Omega is 0: ⌈√(p−1)⌉, which
// balances the number of rounds against the fan-out of each.
func DefaultOmega(p int) int {
	if p <= 2 {
		return 1
	}
	return int(math.Ceil(math.Sqrt(float64(p - 1))))
}

// GroupOmegas are the fan-outs worth telling apart for p participants: the
// group schedule's cost depends on ω mostly through its ⌈(p−1)/ω⌉ rounds,
// so it lists, for each number of rounds r from p−1 down to 1, the
// smallest ω that gives r — ⌈(p−1)/r⌉, whose rounds are the most even —
// in increasing order (for p = 16: 1, 2, 3, 4, 5, 8, 15). With p ≤ 2 it
// is [1].
func GroupOmegas(p int) []int {
	m := p - 1
	if m <= 1 {
		return []int{1}
	}
	var out []int
	for r := m; r >= 1; r-- {
		w := (m + r - 1) / r
		if (m+w-1)/w == r && (len(out) == 0 || out[len(out)-1] != w) {
			out = append(out, w)
		}
	}
	return out
}

// X06: ⌈(p−1)/ω⌉ rounds, each a synchronous shuffle among the next ω maps.
func buildGroup(p, k int, o Options) (*Schedule, error) {
	pname, maps, err := perm("group", p, o)
	if err != nil {
		return nil, err
	}
	w := o.Omega
	if w == 0 {
		w = DefaultOmega(p)
	}
	if w > p-1 && p > 1 {
		w = p - 1
	}
	s := &Schedule{P: p, K: k, Omega: w, Perm: pname}
	for lo := 0; lo < len(maps); lo += w {
		hi := min(lo+w, len(maps))
		s.Rounds = append(s.Rounds, shuffled(k, maps[lo:hi]))
	}
	return s, nil
}
