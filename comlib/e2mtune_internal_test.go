package comlib

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestOmegaCandidates: one ω per number of rounds, with the start in
// place of the candidate that has its rounds.
func TestOmegaCandidates(t *testing.T) {
	for _, c := range []struct {
		pes, start int
		want       []int
	}{
		{16, 4, []int{1, 2, 3, 4, 5, 8, 15}},
		{16, 6, []int{1, 2, 3, 4, 6, 8, 15}},  // 6 has 3 rounds, as 5 has
		{16, 40, []int{1, 2, 3, 4, 5, 8, 15}}, // beyond P−1: P−1
		{6, 3, []int{1, 2, 3, 5}},
		{2, 1, []int{1}},
	} {
		require.Equal(t, c.want, omegaCandidates(c.pes, c.start), "p=%d start=%d", c.pes, c.start)
	}
}
