package hpcc

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestStartsFollowsTheStream(t *testing.T) {
	require.Equal(t, uint64(1), Starts(0))
	ran := uint64(1)
	for n := int64(1); n <= 1000; n++ {
		ran = Next(ran)
		require.Equal(t, ran, Starts(n), "value %d", n)
	}
	// Far into the stream, where the top bit has fed POLY back many times.
	for _, n := range []int64{1 << 20, 123456789, 1<<40 + 17} {
		require.Equal(t, Next(Starts(n)), Starts(n+1), "value %d", n)
	}
	require.Equal(t, Starts(5), Starts(5+Period), "the stream has period %d", int64(Period))
}

func TestShareSplitsTheStream(t *testing.T) {
	for _, c := range []struct {
		total int64
		pes   int
	}{{16, 4}, {17, 4}, {3, 4}, {1 << 20, 3}, {0, 2}} {
		next := int64(0)
		for pe := 0; pe < c.pes; pe++ {
			first, n := Share(c.total, c.pes, pe)
			require.Equal(t, next, first, "%+v: PE %d starts where PE %d ended", c, pe, pe-1)
			require.LessOrEqual(t, n, c.total/int64(c.pes)+1)
			next += n
		}
		require.Equal(t, c.total, next, "%+v: the shares cover the stream", c)
	}
}

func TestWordsChangedRoundTrip(t *testing.T) {
	for _, c := range []struct{ size, stride, k int64 }{{16, 4, 0}, {16, 4, 3}, {17, 4, 0}, {17, 4, 1}, {3, 4, 3}, {8, 1, 0}} {
		n := Strided(c.size, c.stride, c.k)
		want := 0
		for i := c.k; i < c.size; i += c.stride {
			want++
		}
		require.Equal(t, want, n, "%+v: the part's word count", c)
		w := Words(uint64(c.k), uint64(c.stride), n)
		for s, v := range w {
			require.Equal(t, uint64(c.k+int64(s)*c.stride), v, "%+v: word %d starts as its global index", c, s)
		}
		require.Zero(t, Changed(w, uint64(c.k), uint64(c.stride)), "%+v: a fresh part is unchanged", c)
		if n > 0 {
			w[n-1] ^= 1 << 40
			require.EqualValues(t, 1, Changed(w, uint64(c.k), uint64(c.stride)), "%+v: one changed word", c)
			w[n-1] ^= 1 << 40
			require.Zero(t, Changed(w, uint64(c.k), uint64(c.stride)), "%+v: applied twice, an update cancels", c)
		}
	}
}

func TestTwoPassesNamesTheFailingPass(t *testing.T) {
	runs := 0
	_, err := TwoPasses(func() error { runs++; return nil })
	require.NoError(t, err)
	require.Equal(t, 2, runs, "both passes run")
	boom := errors.New("boom")
	for k, name := range []string{"update", "verification"} {
		runs = 0
		_, err := TwoPasses(func() error {
			runs++
			if runs == k+1 {
				return boom
			}
			return nil
		})
		require.ErrorIs(t, err, boom)
		require.ErrorContains(t, err, name+" pass: boom")
		require.Equal(t, k+1, runs, "no pass after the failing one")
	}
}
