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

func TestPositional(t *testing.T) {
	names, defaults := []string{"payload", "iterations"}, []int{100, 1000}
	v, err := Positional(nil, names, defaults, 1)
	require.NoError(t, err)
	require.Equal(t, []int{100, 1000}, v)
	require.Equal(t, []int{100, 1000}, defaults, "the defaults are not changed")
	v, err = Positional([]string{"64"}, names, defaults, 1)
	require.NoError(t, err)
	require.Equal(t, []int{64, 1000}, v)
	_, err = Positional([]string{"64", "x"}, names, defaults, 1)
	require.EqualError(t, err, `iterations "x": want a whole number of at least 1`)
	_, err = Positional([]string{"0"}, names, defaults, 1)
	require.EqualError(t, err, `payload "0": want a whole number of at least 1`)
	_, err = Positional([]string{"1", "2", "3"}, names, defaults, 1)
	require.EqualError(t, err, `3 arguments, want at most 2: payload iterations`)
}

func TestParseOK(t *testing.T) {
	kv, err := ParseOK("pingpong", "a line before\npingpong: ok payload=100 roundtrip_us_group=2.5\n")
	require.NoError(t, err)
	require.Equal(t, map[string]string{"payload": "100", "roundtrip_us_group": "2.5"}, kv)
	v, err := Figure(kv, "roundtrip_us_group")
	require.NoError(t, err)
	require.Equal(t, 2.5, v)
	_, err = Figure(kv, "gups")
	require.EqualError(t, err, "no gups= in the final line")
	for _, bad := range []string{"0", "-1", "NaN", "+Inf", "x"} {
		_, err = Figure(map[string]string{"x": bad}, "x")
		require.Error(t, err, bad)
	}

	_, err = ParseOK("pingpong", "pingpong: FAILED bad arguments\n")
	require.EqualError(t, err, `pingpong: the last line is not "pingpong: ok ...": "pingpong: FAILED bad arguments"`)
	_, err = ParseOK("pingpong", "pingpong: okay=1")
	require.Error(t, err)
	_, err = ParseOK("pingpong", "pingpong: ok payload")
	require.EqualError(t, err, `pingpong: field "payload" of "pingpong: ok payload" is not key=value`)
	kv, err = ParseOK("hello", "hello: ok")
	require.NoError(t, err)
	require.Empty(t, kv)
}
