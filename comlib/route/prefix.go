package route

import "math/bits"

// prefix exchanges directly in XOR order: at stage s participant i swaps with i XOR (s+1), so
// each pair meets exactly once and no message is stored and forwarded. Stages run to the next
// power of two minus one; a pair with a member ≥ n is idle in its stage.
type prefix struct{ n, stages int }

func newPrefix(n int) prefix {
	return prefix{n: n, stages: 1<<bits.Len(uint(n-1)) - 1}
}

func (p prefix) Name() string { return "prefix" }
func (p prefix) N() int       { return p.n }
func (p prefix) Stages() int  { return p.stages }

func (p prefix) partner(self, stage int) (int, bool) {
	if stage < 0 || stage >= p.stages {
		return 0, false
	}
	j := self ^ (stage + 1)
	return j, j < p.n
}

func (p prefix) NextHop(at, dest, stage int) int {
	if j, ok := p.partner(at, stage); ok && j == dest {
		return dest
	}
	return at
}

func (p prefix) SendTo(self, stage int) []int {
	if j, ok := p.partner(self, stage); ok {
		return []int{j}
	}
	return nil
}

func (p prefix) RecvFrom(self, stage int) []int { return p.SendTo(self, stage) }
