package reducer

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRegistryBuiltins(t *testing.T) {
	for _, r := range []Reducer{
		Nop, And, Or, Xor, BitAnd, BitOr, BitXor, Gather, Concat, Set, Stats,
		SumInt, SumInt64, SumFloat64, ProductInt, ProductInt64, ProductFloat64,
		MinInt, MinInt64, MinFloat64, MaxInt, MaxInt64, MaxFloat64,
	} {
		got, err := Lookup(r.Name())
		require.NoError(t, err, r.Name())
		require.Equal(t, r, got, r.Name())
	}
}

func TestRegistryLookupUnknownListsKnownNames(t *testing.T) {
	_, err := Lookup("no-such-reducer")
	require.Error(t, err)
	msg := err.Error()
	require.True(t, strings.HasPrefix(msg, `reducer: no reducer named "no-such-reducer" (known: [`), msg)
	inner := msg[strings.Index(msg, "[")+1 : strings.LastIndex(msg, "]")]
	names := strings.Fields(inner)
	for _, name := range []string{"and", "bitor", "gather", "max_float64", "nop", "set", "stats", "sum_int64", "xor"} {
		require.Contains(t, names, name)
	}
	// The list is sorted, so that it is readable.
	require.IsNonDecreasing(t, names)
}

func TestRegistryClash(t *testing.T) {
	err := Register(&elementwise[int]{name: "sum_int"})
	require.EqualError(t, err, `reducer: the name "sum_int" is taken`)
	require.NoError(t, Register(SumInt), "registering the same reducer again is fine")
	got, err := Lookup("sum_int")
	require.NoError(t, err)
	require.Same(t, SumInt, got)
}

func TestRegistryConcurrentConstruction(t *testing.T) {
	// Runtimes on several goroutines may build the same tuple or numeric
	// reducer at once; all must get the one registered reducer.
	var wg sync.WaitGroup
	tuples := make([]Reducer, 16)
	sums := make([]Reducer, 16)
	for i := range tuples {
		wg.Go(func() {
			tuples[i] = Tuple(SumInt, Gather, Stats)
			sums[i] = Sum[int16]()
		})
	}
	wg.Wait()
	for i := range tuples {
		require.Same(t, tuples[0], tuples[i], fmt.Sprint(i))
		require.Same(t, sums[0], sums[i], fmt.Sprint(i))
	}
}
