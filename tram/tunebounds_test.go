package tram

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTuneBoundsDefaultBand: bounds left 0 keep the search within a factor
// of tuneBand of the configured size (an unbounded search once settled at
// 128× the default on the 1-D histogram and ran at 0.40 of its rate); a
// bound given is kept, and the other one stays on its side of it.
func TestTuneBoundsDefaultBand(t *testing.T) {
	cases := []struct {
		lo, hi, start  int
		wantLo, wantHi int
	}{
		{0, 0, 256, 32, 2048},
		{0, 0, 4, 1, 32},
		{0, 0, 1 << 14, 1 << 11, maxTunedItems},
		{0, 48, 256, 32, 48},
		{0, 16, 256, 16, 16},
		{1000, 0, 32, 1000, 1000},
		{8, 0, 32, 8, 256},
		{64, 64, 256, 64, 64},
	}
	for _, c := range cases {
		lo, hi, err := tuneBounds(c.lo, c.hi, c.start)
		require.NoError(t, err, "%+v", c)
		require.Equal(t, [2]int{c.wantLo, c.wantHi}, [2]int{lo, hi}, "%+v", c)
	}
	for _, c := range [][2]int{{-1, 0}, {0, maxTunedItems + 1}, {64, 32}} {
		_, _, err := tuneBounds(c[0], c[1], 256)
		require.ErrorContains(t, err, fmt.Sprintf("TuneMin=%d, TuneMax=%d", c[0], c[1]), "%v", c)
	}
}
