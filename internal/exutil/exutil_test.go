package exutil

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/tram"
)

func TestParseDims(t *testing.T) {
	for s, want := range map[string][]int{"": nil, "4": {4}, "2,2": {2, 2}, " 2 , 3 ,1": {2, 3, 1}, "2x2": {2, 2}, "2×3×1": {2, 3, 1}} {
		got, err := ParseDims(s)
		require.NoError(t, err, s)
		require.Equal(t, want, got, s)
	}
	_, err := ParseDims("2,y")
	require.EqualError(t, err, `-dims "2,y": "y" is not a size: want whole numbers separated by commas, such as "2,2"`)
	_, err = ParseDims(",")
	require.EqualError(t, err, `-dims ",": no sizes: want whole numbers separated by commas, such as "2,2"`)
}

func TestOptions(t *testing.T) {
	require.Equal(t, tram.Options{Dims: []int{2, 2}, FlushPeriod: time.Millisecond}, Options([]int{2, 2}, 0, time.Millisecond))
	require.Equal(t, tram.Options{Sizing: tram.Sizing{BufferItems: 64}}, Options(nil, 64, 0))
}
