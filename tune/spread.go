package tune

import (
	"fmt"
	"math"
)

// Spread realises a non-negative real p as whole counts whose running mean
// is p (E10): at call i (i ≥ 1) it returns ⌊p·i⌋ − ⌊p·(i−1)⌋, so the first
// i calls together return ⌊p·i⌋. Each count is ⌊p⌋ or ⌈p⌉. The seed applies
// it to the local computations per overlap loop; it serves as well for any
// integer parameter tuned as a real one (a buffer size per evaluation, say).
//
// Changing p with Set keeps the fraction already owed, so a p that varies
// (the fast variant, E11) is realised with no drift: the total always stays
// within one of the sum of the p's in force.
type Spread struct {
	p    float64
	r    float64 // carried fraction from before the last Set, in [0, 1)
	i    int     // calls since the last Set
	prev int     // ⌊r + p·i⌋ at the previous call
}

// NewSpread returns a Spread of p, or an error if p is negative or not finite.
func NewSpread(p float64) (*Spread, error) {
	s := &Spread{}
	if err := s.Set(p); err != nil {
		return nil, err
	}
	return s, nil
}

// P is the mean being realised.
func (s *Spread) P() float64 { return s.p }

// Set changes the mean from the next call on.
func (s *Spread) Set(p float64) error {
	if math.IsNaN(p) || math.IsInf(p, 0) || p < 0 {
		return fmt.Errorf("tune: spread of %v, want a finite non-negative number", p)
	}
	if p == s.p {
		return nil
	}
	total := s.r + s.p*float64(s.i)
	s.r = total - math.Floor(total)
	s.p, s.i, s.prev = p, 0, 0
	return nil
}

// Next is the count for the next call.
func (s *Spread) Next() int {
	s.i++
	cur := int(math.Floor(s.r + s.p*float64(s.i)))
	n := cur - s.prev
	s.prev = cur
	return n
}
