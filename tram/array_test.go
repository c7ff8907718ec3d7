package tram_test

import (
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/array"
	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/chare/reducer"
	"github.com/charmgo/charm/tram"
)

// bin is an array client: each element sums what it gets.
type bin struct {
	array.Element[bin, [2]int]
	got, sum int
}

func (b *bin) Put(v int) { b.got++; b.sum += v }

type binFeed struct {
	S         tram.ArrayStreamer[bin, [2]int, int]
	Items     int
	Broadcast bool
}

// Feed sends Items values to random elements (or broadcasts one), then
// says this producer is done.
func (b *bin) Feed(m binFeed) {
	idx := b.ThisIndex()
	r := rand.New(rand.NewSource(int64(idx[0]*10 + idx[1])))
	for i := 0; i < m.Items; i++ {
		if err := m.S.Insert(b, idx[0]*10+idx[1], [2]int{r.Intn(4), r.Intn(4)}); err != nil {
			b.Abort(err)
			return
		}
	}
	if m.Broadcast {
		if err := m.S.Broadcast(b, 1000); err != nil {
			b.Abort(err)
			return
		}
	}
	if err := m.S.Done(b, 1); err != nil {
		b.Abort(err)
	}
}

func (b *bin) Totals(cb chare.Callback) { _ = b.Contribute([]int{b.got, b.sum}, reducer.SumInt, cb) }

func init() {
	chare.Register[bin](chare.Transient("got", "sum")) // the bins never move
	tram.RegisterArray[bin, [2]int]((*bin).Put)
}

// claim T09, claim T10, claim T17, claim T18
//
// TestT17_T09_T10_T18_ArrayClientGetsEveryItem: items addressed to array indices reach
// their elements exactly once, one call each (T09, T10, T17); an array
// broadcast reaches every element (T18).
func TestT17_T09_T10_T18_ArrayClientGetsEveryItem(t *testing.T) {
	for _, bcast := range []bool{false, true} {
		const items = 300
		var got []int
		code, err := chare.Run(chare.Config{PEs: 4, Timeout: 30 * time.Second}, func(m *tmain, _ []string) {
			bins, err := array.New[bin](m, array.Dims2(4, 4))
			if err != nil {
				m.Abort(err)
				return
			}
			s, err := tram.NewArray(m, bins, (*bin).Put, tram.Options{Dims: []int{2, 2}, Sizing: tram.Sizing{BufferItems: 16}, FlushPeriod: time.Millisecond})
			if err != nil {
				m.Abort(err)
				return
			}
			started, finished := chare.NewFuture[any](m), chare.NewFuture[any](m)
			if err := s.Start(m, tram.Step{Mode: tram.Completion, Producers: 16, Started: started.Callback(), Finished: finished.Callback()}); err != nil {
				m.Abort(err)
				return
			}
			if err := chare.WaitAll(m, started); err != nil {
				m.Abort(err)
				return
			}
			_ = chare.Send(m, bins, (*bin).Feed, binFeed{S: s, Items: items, Broadcast: bcast})
			if err := chare.WaitAll(m, finished); err != nil {
				m.Abort(err)
				return
			}
			f := chare.NewFuture[[]int](m)
			_ = chare.Send(m, bins, (*bin).Totals, f.Callback())
			if got, err = f.Get(m); err != nil {
				m.Abort(err)
				return
			}
			m.Exit(0)
		})
		require.NoError(t, err)
		require.Equal(t, 0, code)
		n, sum := 16*items, 0
		for i := 0; i < 4; i++ {
			for j := 0; j < 4; j++ {
				sum += (i*10 + j) * items
			}
		}
		if bcast { // 16 producers each broadcast 1000 to 16 elements
			n, sum = n+16*16, sum+16*16*1000
		}
		require.Equal(t, []int{n, sum}, got, "broadcast=%v", bcast)
	}
}

// TestT22_StagedCompletionRefusedForArrays: staged completion relies on
// exact locations; an array client gets a clear error.
func TestT22_StagedCompletionRefusedForArrays(t *testing.T) {
	code, err := chare.Run(chare.Config{PEs: 2, Timeout: 30 * time.Second}, func(m *tmain, _ []string) {
		bins, _ := array.New[bin](m, array.Dims2(2, 2))
		s, err := tram.NewArray(m, bins, (*bin).Put, tram.Options{Dims: []int{2}})
		if err != nil {
			m.Abort(err)
			return
		}
		if err := s.Start(m, tram.Step{Mode: tram.Staged, Producers: 1}); err == nil || !strings.Contains(err.Error(), "T22") {
			m.Abort(constErr("staged completion on an array was not refused"))
			return
		}
		m.Exit(0)
	})
	require.NoError(t, err)
	require.Equal(t, 0, code)
}

// TestArrayInsertAllocatesNothing: inserting an item for an array index
// (here a [2]int, which an interface would have to box) allocates
// nothing once the buffers exist: the index is located in its own type.
func TestArrayInsertAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts under -race are not the program's")
	}
	var allocs float64
	code, err := chare.Run(chare.Config{PEs: 4, Timeout: 30 * time.Second}, func(m *tmain, _ []string) {
		bins, err := array.New[bin](m, array.Dims2(4, 4))
		if err != nil {
			m.Abort(err)
			return
		}
		s, err := tram.NewArray(m, bins, (*bin).Put, tram.Options{Dims: []int{4}, Sizing: tram.Sizing{BufferItems: 1 << 16}})
		if err != nil {
			m.Abort(err)
			return
		}
		started := chare.NewFuture[any](m)
		if err := s.Start(m, tram.Step{Mode: tram.Completion, Producers: 1, Started: started.Callback()}); err != nil {
			m.Abort(err)
			return
		}
		if err := chare.WaitAll(m, started); err != nil {
			m.Abort(err)
			return
		}
		i := 0
		insert := func() {
			i++
			if err := s.Insert(m, i, [2]int{1 + i%3, 3}); err != nil {
				panic(err)
			}
		}
		for range 100 { // the buffers
			insert()
		}
		allocs = testing.AllocsPerRun(200, insert)
		m.Exit(0)
	})
	require.NoError(t, err)
	require.Equal(t, 0, code)
	require.Zero(t, allocs, "allocations per array insert")
}
