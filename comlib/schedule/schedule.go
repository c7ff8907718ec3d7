package schedule

import (
	"fmt"
	"sort"
	"strings"
)

// Block names the data that participant Src holds for participant Dst: block Dst of Src's send
// buffer. A complete exchange moves every block with Src ≠ Dst, each cut into K packets.
type Block struct{ Src, Dst int }

// Transfer is one packet put on the network: From sends packet Packet (0..K−1) of Block to To.
// In every schedule of this package From = Block.Src and To = Block.Dst (X02: no detour);
// Verify rejects a schedule where they differ.
type Transfer struct {
	From, To int
	Block    Block
	Packet   int
}

// Step is one packet step: the transfers that happen in the same gap g. In a valid schedule
// no participant sends two of them and none receives two.
type Step []Transfer

// Round is a list of packet steps run as one pipeline flow. Rounds are separated by an implicit
// synchronisation: a participant starts round r+1 after it has sent and received everything of
// round r, which drains its pipelines once (one stall).
type Round []Step

// Schedule says who sends which packet to whom, round by round and step by step.
type Schedule struct {
	Name  string // as given to New
	P, K  int    // participants and packets per block
	Omega int    // fan-out bound the schedule was built with (group); otherwise its fan-out
	Perm  string // the contention-free permutation used (sync, group); "" otherwise
	// Rounds in order. Empty steps and empty rounds do not occur.
	Rounds []Round
}

// Options tunes New. The zero value is valid for every schedule.
type Options struct {
	// Omega is the fan-out ω of the group shuffle: each round is a synchronous shuffle among at
	// most ω partners. 0 means ⌈√(p−1)⌉. Values above p−1 act as p−1. Ignored by the others.
	Omega int
	// Perm is the contention-free permutation that orders partners in the synchronous and
	// group shuffles: "shift" (default; partner of i at offset r is (i+r) mod p), "xor"
	// (partner i⊕r; p must be a power of two) or "edge" (the edge colouring of the
	// complete graph; p must be even, since for odd p every colour leaves a node idle).
	Perm string
}

type builder func(p, k int, o Options) (*Schedule, error)

var builders = map[string]builder{
	"shift":    buildShift,
	"pairwise": buildPairwise,
	"xor":      buildXOR,
	"sync":     buildSync,
	"group":    buildGroup,
}

// Names lists the schedules New knows, sorted.
func Names() []string {
	names := make([]string, 0, len(builders))
	for n := range builders {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// New builds the named schedule for p ≥ 1 participants and k ≥ 1 packets per block.
// With p = 1 there is nothing to exchange and the schedule has no rounds.
func New(name string, p, k int, o Options) (*Schedule, error) {
	b, ok := builders[name]
	if !ok {
		return nil, fmt.Errorf("schedule: unknown schedule %q (known: %s)", name, strings.Join(Names(), ", "))
	}
	if p < 1 {
		return nil, fmt.Errorf("schedule %s: p = %d participants, need at least 1", name, p)
	}
	if k < 1 {
		return nil, fmt.Errorf("schedule %s: k = %d packets per block, need at least 1", name, k)
	}
	if o.Omega < 0 {
		return nil, fmt.Errorf("schedule %s: fan-out ω = %d, need at least 1 (or 0 for the default)", name, o.Omega)
	}
	s, err := b(p, k, o)
	if err != nil {
		return nil, err
	}
	s.Name = name
	return s, nil
}

// Verify checks that s is a complete exchange that the model can run without contention:
// every packet of every block Src ≠ Dst is sent exactly once, directly from Src to Dst (X02),
// participants are in 0..P−1, and within a step no participant sends or receives twice.
// The error names the first offending transfer.
func (s *Schedule) Verify() error {
	if s.P < 1 || s.K < 1 {
		return fmt.Errorf("schedule %s: p = %d, k = %d: both must be at least 1", s.Name, s.P, s.K)
	}
	p, k := s.P, s.K
	seen := make([]bool, p*p*k)
	sends := make([]int, p) // step stamp of each participant's last send, +1
	recvs := make([]int, p)
	stamp := 0
	for r, round := range s.Rounds {
		for j, step := range round {
			stamp++
			for _, t := range step {
				where := func() string {
					return fmt.Sprintf("schedule %s: round %d step %d: %d→%d block %d→%d packet %d",
						s.Name, r, j, t.From, t.To, t.Block.Src, t.Block.Dst, t.Packet)
				}
				if t.From < 0 || t.From >= p || t.To < 0 || t.To >= p ||
					t.Block.Src < 0 || t.Block.Src >= p || t.Block.Dst < 0 || t.Block.Dst >= p {
					return fmt.Errorf("%s: participant out of range 0..%d", where(), p-1)
				}
				if t.Packet < 0 || t.Packet >= k {
					return fmt.Errorf("%s: packet out of range 0..%d", where(), k-1)
				}
				if t.Block.Src == t.Block.Dst {
					return fmt.Errorf("%s: a participant's own block is never sent", where())
				}
				if t.From != t.Block.Src || t.To != t.Block.Dst {
					return fmt.Errorf("%s: detour, the packet is not sent directly from its source to its destination", where())
				}
				i := (t.Block.Src*p+t.Block.Dst)*k + t.Packet
				if seen[i] {
					return fmt.Errorf("%s: packet sent twice", where())
				}
				seen[i] = true
				if sends[t.From] == stamp {
					return fmt.Errorf("%s: %d sends twice in one step", where(), t.From)
				}
				sends[t.From] = stamp
				if recvs[t.To] == stamp {
					return fmt.Errorf("%s: %d receives twice in one step", where(), t.To)
				}
				recvs[t.To] = stamp
			}
		}
	}
	for src := 0; src < p; src++ {
		for dst := 0; dst < p; dst++ {
			if src == dst {
				continue
			}
			for q := 0; q < k; q++ {
				if !seen[(src*p+dst)*k+q] {
					return fmt.Errorf("schedule %s: block %d→%d packet %d is never sent", s.Name, src, dst, q)
				}
			}
		}
	}
	return nil
}

// Transfers counts the transfers of s.
func (s *Schedule) Transfers() int {
	n := 0
	for _, round := range s.Rounds {
		for _, step := range round {
			n += len(step)
		}
	}
	return n
}
