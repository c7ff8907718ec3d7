package actor

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestBackoff(t *testing.T) {
	cases := []struct {
		failures int
		want     time.Duration
	}{
		{0, 0},
		{1, 0},
		{2, 50 * time.Microsecond},
		{3, 100 * time.Microsecond},
		{4, 200 * time.Microsecond},
		{7, 1600 * time.Microsecond},
		{8, 2 * time.Millisecond},
		{100, 2 * time.Millisecond},
	}
	for _, c := range cases {
		require.Equal(t, c.want, backoff(c.failures), "after %d failures", c.failures)
	}
}

// TestPokeBudget: a token every pokeEvery, at most pokeBurst kept; without
// a token, the wait is until the next one.
func TestPokeBudget(t *testing.T) {
	cases := []struct {
		tokens     float64
		elapsed    time.Duration
		wantTokens float64
		wantWait   time.Duration
	}{
		{0, 0, 0, pokeEvery},
		{0, pokeEvery / 2, 0.5, pokeEvery / 2},
		{0, pokeEvery, 1, 0},
		{0.25, 0, 0.25, pokeEvery * 3 / 4},
		{1, 0, 1, 0},
		{3.5, pokeEvery, pokeBurst, 0},
		{0, time.Hour, pokeBurst, 0},
	}
	for _, c := range cases {
		tokens, wait := pokeBudget(c.tokens, c.elapsed)
		require.InDelta(t, c.wantTokens, tokens, 1e-9, "tokens after %v from %v", c.elapsed, c.tokens)
		require.Equal(t, c.wantWait, wait, "wait after %v from %v", c.elapsed, c.tokens)
	}
}

// TestPokeBudgetBoundsRate spends tokens as fast as pokes could: over a
// long stretch, at most one wave per pokeEvery (plus the burst) starts
// at once.
func TestPokeBudgetBoundsRate(t *testing.T) {
	tokens, now, started := float64(pokeBurst), time.Duration(0), 0
	const span = 100 * time.Millisecond
	step := pokeEvery / 10 // a poke every 20 µs
	for now < span {
		var wait time.Duration
		tokens, wait = pokeBudget(tokens, step)
		now += step
		if wait == 0 {
			tokens--
			started++
		}
	}
	require.LessOrEqual(t, started, int(span/pokeEvery)+pokeBurst)
	require.GreaterOrEqual(t, started, int(span/pokeEvery)-1)
}

// TestShouldPoke: only a PE that saw a wave and did counted work since.
func TestShouldPoke(t *testing.T) {
	require.False(t, shouldPoke(false, [2]int64{3, 3}, 5, 4), "no wave seen (or already poked)")
	require.False(t, shouldPoke(true, [2]int64{3, 3}, 3, 3), "nothing done since the wave: an idle job stays quiet")
	require.True(t, shouldPoke(true, [2]int64{3, 3}, 4, 3), "sent since the wave")
	require.True(t, shouldPoke(true, [2]int64{3, 3}, 3, 4), "handled since the wave")
}
