package reducer

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

var userSeq atomic.Int64

// uniqueName gives each user reducer of the tests its own name, since the
// registry outlives a test (go test -count=2 runs them twice).
func uniqueName(t *testing.T) string {
	return fmt.Sprintf("test.%s.%d", t.Name(), userSeq.Add(1))
}

func TestUserCombine(t *testing.T) {
	// The longest string, ties broken alphabetically: associative and
	// commutative, so any order gives the same result.
	longest, err := User(uniqueName(t), func(a, b any) (any, error) {
		x, y := a.(string), b.(string)
		if len(y) > len(x) || len(y) == len(x) && y < x {
			return y, nil
		}
		return x, nil
	})
	require.NoError(t, err)
	require.Equal(t, "eeeee", requireOrderIndependent(t, longest, values("a", "bbb", "zzzzz", "eeeee", "cc")))

	got, err := Lookup(longest.Name())
	require.NoError(t, err)
	require.Same(t, longest, got)
}

func TestUserIdentityLiftAndResult(t *testing.T) {
	r, err := User(uniqueName(t), func(a, b any) (any, error) { return a.(int) + b.(int), nil })
	require.NoError(t, err)
	p, err := r.Lift(5, "index ignored")
	require.NoError(t, err)
	require.Equal(t, 5, p)
	res, err := r.Result(p)
	require.NoError(t, err)
	require.Equal(t, 5, res)
}

func TestUserFull(t *testing.T) {
	// A "weighted mean": lift pairs value and weight, result divides.
	type acc struct{ sum, weight float64 }
	r, err := UserFull(uniqueName(t),
		func(v, index any) (any, error) {
			w := float64(index.(int) + 1)
			return acc{v.(float64) * w, w}, nil
		},
		func(a, b any) (any, error) {
			x, y := a.(acc), b.(acc)
			return acc{x.sum + y.sum, x.weight + y.weight}, nil
		},
		func(p any) (any, error) { return p.(acc).sum / p.(acc).weight, nil })
	require.NoError(t, err)
	// Weights 1, 2, 3: (1*1 + 4*2 + 7*3) / 6 = 5.
	require.Equal(t, 5.0, requireOrderIndependent(t, r, values(1.0, 4.0, 7.0)))
}

func TestUserFullNilLiftAndResultAreIdentity(t *testing.T) {
	r, err := UserFull(uniqueName(t), nil, func(a, _ any) (any, error) { return a, nil }, nil)
	require.NoError(t, err)
	require.Equal(t, "x", mustReduce(t, r, values("x")))
}

func TestUserErrorsAreWrapped(t *testing.T) {
	boom := errors.New("boom")
	name := uniqueName(t)
	r, err := UserFull(name,
		func(v, _ any) (any, error) {
			if v == nil {
				return nil, boom
			}
			return v, nil
		},
		func(_, _ any) (any, error) { return nil, boom },
		func(any) (any, error) { return nil, boom })
	require.NoError(t, err)
	_, err = r.Lift(nil, 0)
	require.EqualError(t, err, "reducer "+name+": boom")
	require.ErrorIs(t, err, boom)
	_, err = r.Combine(1, 2)
	require.ErrorIs(t, err, boom)
	_, err = r.Result(1)
	require.EqualError(t, err, "reducer "+name+": boom")
}

func TestUserNameTaken(t *testing.T) {
	combine := func(a, _ any) (any, error) { return a, nil }
	for _, name := range []string{"sum_int64", "gather", "nop"} {
		_, err := User(name, combine)
		require.EqualError(t, err, fmt.Sprintf("reducer: the name %q is taken", name))
	}
	name := uniqueName(t)
	_, err := User(name, combine)
	require.NoError(t, err)
	_, err = User(name, combine)
	require.EqualError(t, err, fmt.Sprintf("reducer: the name %q is taken", name))

	// The numeric constructors do not take over a user's name. (The name
	// is fixed by the type, so a second run of the test finds it taken.)
	if _, err := Lookup("sum_reducer.userNamed"); err != nil {
		_, err = User("sum_reducer.userNamed", combine)
		require.NoError(t, err)
	}
	require.PanicsWithValue(t, `reducer: the name "sum_reducer.userNamed" is taken by a *reducer.user`,
		func() { Sum[userNamed]() })
}

type userNamed int

func TestUserBadArguments(t *testing.T) {
	_, err := User("", func(a, _ any) (any, error) { return a, nil })
	require.EqualError(t, err, "reducer: a user reducer needs a name")
	name := uniqueName(t)
	_, err = User(name, nil)
	require.True(t, strings.HasSuffix(err.Error(), "a user reducer needs a combine function"))
	_, err = Lookup(name)
	require.Error(t, err, "a failed User must not register")
}
