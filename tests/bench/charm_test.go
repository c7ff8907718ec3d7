package main

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Charm++'s own output, as its programs print it.
const (
	charmPingpong = `Charm++> Running in Multicore mode: 2 threads (PEs)
Pingpong with payload: 100 iterations: 10000
Roundtrip time for 1D Arrays is 0.780288 us
Roundtrip time for 1D threaded Arrays is 1.533458 us
Roundtrip time for Groups is 0.626044 us
Roundtrip time for Groups (zero copy message send api) is 1.523590 us
`
	charmKNeighbor = `kNeighbor program finished!
Time stats: lowest: 3.228700, median: 3.484680, highest: 15758.529420
The average time for each 3-kNeighbor iteration with msg size 64 is 2.910183 (us)
`
	charmRandomAccess = `Aggregation topology: 1 2
CPU time used = 0.105335 seconds
0.002488678 Billion(10^9) Updates    per second [GUP/s]
0.001244339 Billion(10^9) Updates/PE per second [GUP/s]
Found 0 errors in 65536 locations (passed).
`
	charmStreaming = `TEST 1: Using 2D TRAM Topology: 1 2
Elapsed time for all-to-all of     8192 bytes sent in    256 iterations of 32 bytes each (    using TRAM): 0.000025 seconds
Elapsed time for all-to-all of    16384 bytes sent in    512 iterations of 32 bytes each (    using TRAM): 0.000044 seconds

TEST 2: Using point to point sends
Elapsed time for all-to-all of       32 bytes sent in      1  iteration of 32 bytes each (not using TRAM): 0.000012 seconds
Elapsed time for all-to-all of    16384 bytes sent in    512 iterations of 32 bytes each (not using TRAM): 0.011949 seconds
`
	charmAllToAll = "iter = 300\nallToAll on 2 cores for msg size: 1024\n iteration(ms):1024\t0.004075\n"
)

func charmRunNamed(name string) charmRun {
	for _, r := range charmRuns {
		if r.name == name {
			return r
		}
	}
	panic("no charm run " + name)
}

func TestCharmFigures(t *testing.T) {
	v, err := charmFigures(charmRunNamed("pingpong").figures, charmPingpong)
	require.NoError(t, err)
	require.Equal(t, []float64{0.780288, 0.626044}, v)
	v, err = charmFigures(charmRunNamed("kneighbor/64B").figures, charmKNeighbor)
	require.NoError(t, err)
	require.Equal(t, []float64{2.910183}, v)
	v, err = charmFigures(charmRunNamed("alltoall/1KiB").figures, charmAllToAll)
	require.NoError(t, err)
	require.Equal(t, []float64{0.004075}, v)

	v, err = charmFigures(charmRunNamed("randomaccess/staged").figures, charmRandomAccess)
	require.NoError(t, err)
	require.Equal(t, []float64{0.002488678}, v)

	v, err = charmFigures(charmRunNamed("streamingalltoall").figures, charmStreaming)
	require.NoError(t, err)
	require.Equal(t, []float64{0.000044, 0.011949}, v)

	_, err = charmFigures(charmRunNamed("pingpong").figures, "Roundtrip time for 1D Arrays is 0.78 us\n")
	require.ErrorContains(t, err, "no figure matching")
}

func TestOursFigures(t *testing.T) {
	v, err := oursFigures("pingpong", charmRunNamed("pingpong").figures,
		"pingpong: ok payload=100 iterations=10 roundtrip_us_1D_array=3.5 roundtrip_us_group=2.25\n")
	require.NoError(t, err)
	require.Equal(t, []float64{3.5, 2.25}, v)
	_, err = oursFigures("pingpong", charmRunNamed("pingpong").figures, "pingpong: ok roundtrip_us_1D_array=3.5\n")
	require.ErrorContains(t, err, "no roundtrip_us_group=")
	_, err = oursFigures("pingpong", charmRunNamed("pingpong").figures, "pingpong: FAILED bad arguments\n")
	require.ErrorContains(t, err, "FAILED")
}

// Every run of the family reads its figures from both programs.
func TestCharmRunsComplete(t *testing.T) {
	names := map[string]bool{}
	for _, r := range charmRuns {
		require.False(t, names[r.name], "two runs named %s", r.name)
		names[r.name] = true
		require.NotEmpty(t, r.figures, r.name)
		require.NotEmpty(t, r.args(charmMulticore), r.name)
		require.NotEmpty(t, r.args(charmNetlrts), r.name)
		for _, f := range r.figures {
			require.Contains(t, []string{"us", "ms", "s", "GUP/s"}, f.unit, r.name)
			require.NotEmpty(t, f.ours, r.name)
		}
	}
}

func TestRunLimited(t *testing.T) {
	out, err := charmExec("", nil, 10*time.Second, []string{"sh", "-c", "echo one; echo two"}, nil)
	require.NoError(t, err)
	require.Equal(t, "one\ntwo\n", out)

	began := time.Now()
	_, err = charmExec("", nil, 200*time.Millisecond, []string{"sh", "-c", "echo started; sleep 30"}, nil)
	require.True(t, errors.Is(err, errCharmTimeout), "%v", err)
	require.ErrorContains(t, err, "started")
	require.Less(t, time.Since(began), 20*time.Second, "the run and its child were killed")

	// Stopped once enough was printed: a success, with the output.
	out, err = charmExec("", nil, 20*time.Second, []string{"sh", "-c", "echo figure=1; sleep 30"},
		func(b []byte) bool { return len(b) > 0 })
	require.NoError(t, err)
	require.Equal(t, "figure=1\n", out)

	_, err = charmExec("", nil, 10*time.Second, []string{"sh", "-c", "echo bad; exit 3"}, nil)
	require.ErrorContains(t, err, "exit status 3")
	require.ErrorContains(t, err, "bad")
}
