package comlib

import (
	"bytes"
	"reflect"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/charmgo/charm/actor/codec"
	"github.com/charmgo/charm/tune"
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

// TestPerIterationStatsAreBounded: FanOuts and Exchanges keep the latest
// maxIterStats iterations of a long job, not every one.
func TestPerIterationStatsAreBounded(t *testing.T) {
	in := &Instance{st: &Stats{}}
	const iters = maxIterStats + 100
	for it := 0; it < iters; it++ {
		for pe := 0; pe < 2; pe++ {
			in.st.ranFanOut(it, pe, 1+it%3)
			in.st.exchanged(it, pe)
		}
	}
	fo := in.FanOuts()
	require.Equal(t, maxIterStats, len(fo), "iterations in FanOuts")
	require.NotContains(t, fo, 99, "the oldest iterations went")
	require.Equal(t, map[int]int{0: 1 + 100%3, 1: 1 + 100%3}, fo[100])
	require.Equal(t, map[int]int{0: 1 + (iters-1)%3, 1: 1 + (iters-1)%3}, fo[iters-1])
	require.Equal(t, maxIterStats, len(in.st.exchanges), "iterations in Exchanges")
	require.Zero(t, in.Exchanges(99))
	require.Equal(t, 2, in.Exchanges(100))
	require.Equal(t, 2, in.Exchanges(iters-1))
}

// TestStreamTrajectoriesAreBounded: a Streaming PE's cap and period
// trajectories keep the latest tune.MaxTrajectory evaluations.
func TestStreamTrajectoriesAreBounded(t *testing.T) {
	s := &Stats{}
	const n = tune.MaxTrajectory + 5
	for i := 0; i < n; i++ {
		s.tuned(3, &tune.Point{Value: 8, Cost: 1}, &tune.Point{Value: 100, Cost: 1})
	}
	tu := s.tuning(3)
	for _, tr := range [][]tune.Point{tu.Cap, tu.Period} {
		require.Equal(t, tune.MaxTrajectory, len(tr), "points kept")
		require.Equal(t, 6, tr[0].Eval)
		require.Equal(t, n, tr[len(tr)-1].Eval)
	}
}

// TestOmegaReportsDecode: a message of reports about ω survives the wire,
// and one whose length header claims two billion reports is an error, not
// two billion reports allocated (msgpack v5.4.1 trusts such headers).
func TestOmegaReportsDecode(t *testing.T) {
	in := ctlMsg{Inst: 3, Measures: reports{{PE: 1, Iter: 8, Step: 2, Parts: 4, Value: 3, Cost: 1.5}, {PE: 1, Iter: 9, Step: 2, Parts: 4, Value: 3, Cost: 2}}}
	b, err := msgpack.Marshal(in)
	require.NoError(t, err)
	var out ctlMsg
	require.NoError(t, msgpack.Unmarshal(b, &out))
	require.Equal(t, in, out)

	// From another process the message goes through the runtime's codec,
	// which checks the bytes as a ctlMsg first: a header claiming two
	// billion reports is an error before anything is allocated for it,
	// and so are a quarter million nils, each a 48-byte report (the
	// check passed them while reports had a decoder of its own, which
	// then allocated 294 bytes a byte).
	c := codec.For[ctlMsg]()
	head := []byte{0x82, 0xa4, 'I', 'n', 's', 't', 0x03, 0xa8, 'M', 'e', 'a', 's', 'u', 'r', 'e', 's'}
	huge := append(slices.Clone(head), 0xdd, 0x7f, 0xff, 0xff, 0xff, 0x80)
	require.ErrorContains(t, c.DecodeValue(huge, reflect.ValueOf(new(ctlMsg))), "claims 2147483647 values")
	nils := append(slices.Clone(head), 0xdd, 0x00, 0x04, 0x00, 0x00)
	nils = append(nils, bytes.Repeat([]byte{0xc0}, 1<<18)...)
	require.ErrorContains(t, c.DecodeValue(nils, reflect.ValueOf(new(ctlMsg))), "would allocate at least")
}
