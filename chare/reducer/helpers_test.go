package reducer

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// contrib is one contribution with the index of its contributor.
type contrib struct {
	index any
	value any
}

// values makes contributions of vs, contributor i contributing vs[i].
func values[T any](vs ...T) []contrib {
	cs := make([]contrib, len(vs))
	for i, v := range vs {
		cs[i] = contrib{index: i, value: v}
	}
	return cs
}

// reduceInOrder lifts the contributions and folds them left to right, as a
// single PE holding every contributor would.
func reduceInOrder(r Reducer, cs []contrib) (any, error) {
	var acc any
	for i, c := range cs {
		p, err := r.Lift(c.value, c.index)
		if err != nil {
			return nil, err
		}
		if i == 0 {
			acc = p
		} else if acc, err = r.Combine(acc, p); err != nil {
			return nil, err
		}
	}
	return r.Result(acc)
}

// reduceRandom lifts the contributions in a shuffled order, then combines
// two partial results picked at random, in a random argument order, until
// one is left: every tree shape and every order of operands can come up.
func reduceRandom(r Reducer, cs []contrib, rng *rand.Rand) (any, error) {
	parts := make([]any, len(cs))
	for n, i := range rng.Perm(len(cs)) {
		p, err := r.Lift(cs[i].value, cs[i].index)
		if err != nil {
			return nil, err
		}
		parts[n] = p
	}
	for len(parts) > 1 {
		i := rng.IntN(len(parts))
		j := rng.IntN(len(parts) - 1)
		if j >= i {
			j++
		}
		p, err := r.Combine(parts[i], parts[j])
		if err != nil {
			return nil, err
		}
		parts[i] = p
		parts[j] = parts[len(parts)-1]
		parts = parts[:len(parts)-1]
	}
	return r.Result(parts[0])
}

// mustReduce is reduceInOrder for contributions that must be accepted.
func mustReduce(t *testing.T, r Reducer, cs []contrib) any {
	t.Helper()
	res, err := reduceInOrder(r, cs)
	require.NoError(t, err)
	return res
}

// requireOrderIndependent checks that many random combination orders give
// exactly the in-order result, and returns that result.
func requireOrderIndependent(t *testing.T, r Reducer, cs []contrib) any {
	t.Helper()
	want := mustReduce(t, r, cs)
	for seed := range uint64(40) {
		rng := rand.New(rand.NewPCG(seed, 7))
		got, err := reduceRandom(r, cs, rng)
		require.NoError(t, err, "seed %d", seed)
		require.Equal(t, want, got, "seed %d", seed)
	}
	return want
}

func TestReduceRandomCoversEveryContribution(t *testing.T) {
	// The helpers themselves: a gather through reduceRandom must see every
	// contribution once, or the order tests would prove nothing.
	cs := values(10, 11, 12, 13, 14, 15, 16)
	res, err := reduceRandom(Concat, cs, rand.New(rand.NewPCG(1, 2)))
	require.NoError(t, err)
	require.Equal(t, []any{10, 11, 12, 13, 14, 15, 16}, res)
}
