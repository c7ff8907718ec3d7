package tram_test

import (
	"fmt"
	"math/rand"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/array"
	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/chare/reducer"
	"github.com/charmgo/charm/group"
	"github.com/charmgo/charm/internal/core"
	"github.com/charmgo/charm/tram"
)

// Items for elements that move: TRAM routes an item to the PE where the
// producer's PE believed its element to be; if the element has left by
// the time the item arrives there, the array sink re-sends it as an
// ordinary message, which the location manager forwards.

const (
	roverElems = 32 // elements of the array
	roverEvery = 5  // an element migrates after roverEvery items on a PE
)

// rover is an array client that records every item it gets and moves to
// another PE every roverEvery items. Its exported fields travel with it.
type rover struct {
	array.Element[rover, int]
	Seen   map[int64]bool
	Got    int64
	Sum    int64
	Dups   int64 // items seen before
	Strays int64 // items for another index
	Away   int64 // items taken on a PE other than the one they were addressed to
	Moves  int64 // migrations asked for
	// since counts the items taken on this PE; unexported, it does not
	// travel: it is 0 when the element arrives, and no second migration is
	// asked for before the first is done.
	since int
}

// roverItem is an item for element To, addressed to PE At (where the
// producer's PE located the element when it inserted the item).
type roverItem struct {
	ID int64
	To int32
	At int32
}

// roverTaken counts the items taken in this process, so that the main
// function can see how many had arrived when a completion step finished.
var roverTaken atomic.Int64

// Take is the process method.
func (r *rover) Take(it roverItem) {
	roverTaken.Add(1)
	if r.Seen == nil {
		r.Seen = map[int64]bool{}
	}
	if r.Seen[it.ID] {
		r.Dups++
	}
	r.Seen[it.ID] = true
	if int(it.To) != r.ThisIndex() {
		r.Strays++
	}
	if int(it.At) != r.PE() {
		// TRAM delivers only on the PE an item is addressed to: the
		// element was not there, and the item was re-sent to it.
		r.Away++
	}
	r.Got++
	r.Sum += it.ID
	if r.since++; r.since == roverEvery && r.NumPEs() > 1 {
		to := (r.PE() + 1 + rand.Intn(r.NumPEs()-1)) % r.NumPEs()
		if err := r.Migrate(to); err != nil {
			r.Abort(err)
			return
		}
		r.Moves++
	}
}

// Report reduces the elements' records.
func (r *rover) Report(cb chare.Callback) {
	_ = r.Contribute([]int64{r.Got, r.Sum, r.Dups, r.Strays, r.Away, r.Moves}, reducer.SumInt64, cb)
}

// roverFeeder is a producer on each PE.
type roverFeeder struct{ group.Branch[roverFeeder] }

type roverFeed struct {
	S     tram.ArrayStreamer[rover, int, roverItem]
	Items int // items of this producer
	Chunk int // items per entry method
	Next  int // the next item
	Done  bool
}

// Feed inserts a chunk of items for random elements and sends itself the
// next chunk, so that deliveries and migrations run between chunks; after
// the last chunk it says done if the step has producers.
func (f *roverFeeder) Feed(m roverFeed) {
	part, err := core.PartOf(chare.PEOf(f), m.S.A.Route().Coll)
	if err != nil {
		f.Abort(err)
		return
	}
	r := rand.New(rand.NewSource(int64(f.PE()*1000 + m.Next)))
	end := min(m.Next+m.Chunk, m.Items)
	for ; m.Next < end; m.Next++ {
		to := r.Intn(roverElems)
		// Where the insertion will address the item: the same lookup,
		// on this PE, with nothing in between.
		at, err := part.Locate(to)
		if err != nil {
			f.Abort(err)
			return
		}
		it := roverItem{ID: int64(f.PE()*m.Items + m.Next), To: int32(to), At: int32(at)}
		if err := m.S.Insert(f, it, to); err != nil {
			f.Abort(err)
			return
		}
	}
	if m.Next < m.Items {
		if err := chare.Send(f, f.ThisProxy().At(f.PE()), (*roverFeeder).Feed, m); err != nil {
			f.Abort(err)
		}
		return
	}
	if m.Done {
		if err := m.S.Done(f, 1); err != nil {
			f.Abort(err)
		}
	}
}

// Stats reduces the location manager's counts for the array on this PE.
func (f *roverFeeder) Stats(m roverStatsMsg) {
	s, err := array.LocalStats(f, m.A)
	if err != nil {
		f.Abort(err)
		return
	}
	_ = f.Contribute(s, array.SumStats, m.CB)
}

type roverStatsMsg struct {
	A  array.Proxy[rover, int]
	CB chare.Callback
}

func init() {
	chare.Register[rover](chare.Transient("since")) // since is per PE, on purpose
	chare.Register[roverFeeder]()
	tram.RegisterArray[rover, int]((*rover).Take)
}

// roverResult is what a run found.
type roverResult struct {
	got, sum, dups, strays, away, moves int64
	migratedIn, migratedOut             int64
	forwarded, delivered, held, local   int64
	atFinished                          int64 // items taken in this process when Finished ran (-1: no Finished)
}

// runRovers runs one step in which each PE produces items for random
// elements while the elements migrate; after the step (Finished for a
// completion step) and quiescence, it collects the elements' records and
// the location managers' counts.
func runRovers(m *tmain, pes, items int, mode tram.Mode, r *roverResult) error {
	roverTaken.Store(0)
	a, err := array.New[rover](m, array.Dims(roverElems))
	if err != nil {
		return err
	}
	g, err := group.New[roverFeeder](m)
	if err != nil {
		return err
	}
	s, err := tram.NewArray(m, a, (*rover).Take, tram.Options{Dims: []int{2, pes / 2}, Sizing: tram.Sizing{BufferItems: 8}, FlushPeriod: time.Millisecond})
	if err != nil {
		return err
	}
	started, finished := chare.NewFuture[any](m), chare.NewFuture[any](m)
	st := tram.Step{Mode: mode, Started: started.Callback()}
	if mode == tram.Completion {
		st.Producers, st.Finished = pes, finished.Callback()
	}
	if err := s.Start(m, st); err != nil {
		return err
	}
	if err := chare.WaitAll(m, started); err != nil {
		return err
	}
	if err := chare.Send(m, g, (*roverFeeder).Feed, roverFeed{S: s, Items: items, Chunk: 40, Done: mode == tram.Completion}); err != nil {
		return err
	}
	r.atFinished = -1
	if mode == tram.Completion {
		if err := chare.WaitAll(m, finished); err != nil {
			return err
		}
		r.atFinished = roverTaken.Load()
	}
	// Items re-sent as ordinary messages are not the step's any more: they
	// are in flight until quiescence, as are migrations.
	qd := chare.NewFuture[any](m)
	m.DetectQuiescence(qd.Callback())
	if _, err := qd.Get(m); err != nil {
		return err
	}
	tot := chare.NewFuture[[]int64](m)
	if err := chare.Send(m, a, (*rover).Report, tot.Callback()); err != nil {
		return err
	}
	v, err := tot.Get(m)
	if err != nil {
		return err
	}
	if len(v) != 6 {
		return fmt.Errorf("the elements' report has %d values", len(v))
	}
	r.got, r.sum, r.dups, r.strays, r.away, r.moves = v[0], v[1], v[2], v[3], v[4], v[5]
	sf := chare.NewFuture[array.Stats](m)
	if err := chare.Send(m, g, (*roverFeeder).Stats, roverStatsMsg{A: a, CB: sf.Callback()}); err != nil {
		return err
	}
	ls, err := sf.Get(m)
	if err != nil {
		return err
	}
	r.migratedIn, r.migratedOut, r.forwarded = int64(ls.MigratedIn), int64(ls.MigratedOut), int64(ls.Forwarded)
	r.delivered, r.held, r.local = int64(ls.Delivered), int64(ls.Held), int64(ls.Local)
	return nil
}

// checkRovers checks a run's records: every item delivered exactly once
// to its element, some items re-sent after their element left, and the
// migrations asked for all done.
func checkRovers(t *testing.T, pes, items int, r roverResult) {
	t.Helper()
	n := int64(pes * items)
	t.Logf("items %d (taken when Finished ran: %d), migrations %d, items taken away from the PE they were addressed to %d, element messages delivered (re-sent items) %d, forwarded %d",
		r.got, r.atFinished, r.migratedOut, r.away, r.delivered, r.forwarded)
	require.Equal(t, n, r.got, "items delivered")
	require.Equal(t, n*(n-1)/2, r.sum, "checksum of the item IDs")
	require.Zero(t, r.dups, "items delivered twice")
	require.Zero(t, r.strays, "items delivered to another element")
	require.Positive(t, r.moves, "migrations asked for")
	require.Equal(t, r.moves, r.migratedOut, "migrations done (array.Stats.MigratedOut)")
	require.Equal(t, r.moves, r.migratedIn, "arrivals (array.Stats.MigratedIn)")
	require.Equal(t, int64(roverElems), r.local, "elements at the end")
	require.Zero(t, r.held, "messages still held at the end")
	// Items delivered on another PE than the one TRAM took them to came
	// by the re-send path; the only element messages of the run are
	// re-sent items, so the location managers delivered at least as many.
	require.Positive(t, r.away, "items that followed their element (re-send path)")
	require.GreaterOrEqual(t, r.delivered, r.away, "re-sent items delivered as element messages")
	require.LessOrEqual(t, r.delivered, n, "element messages delivered")
}

// TestArrayStreamerItemsFollowMigratingElements: producers on every PE
// insert items for random elements of an array whose elements migrate to
// a random PE every few items they get. Items that reach a PE their
// element has left are re-sent and follow it: after the step and
// quiescence, every item was delivered exactly once, to its element.
func TestArrayStreamerItemsFollowMigratingElements(t *testing.T) {
	const pes, items = 4, 1500
	for _, mode := range []tram.Mode{tram.Completion, tram.Quiescence} {
		t.Run(mode.String(), func(t *testing.T) {
			var r roverResult
			code, err := chare.Run(chare.Config{PEs: pes, Timeout: 60 * time.Second}, func(m *tmain, _ []string) {
				if err := runRovers(m, pes, items, mode, &r); err != nil {
					m.Abort(err)
					return
				}
				m.Exit(0)
			})
			require.NoError(t, err)
			require.Equal(t, 0, code)
			checkRovers(t, pes, items, r)
		})
	}
}

// TestArrayStreamerItemsFollowMigratingElementsAcrossProcesses: the same
// in two processes: elements, TRAM batches and re-sent items cross them.
func TestArrayStreamerItemsFollowMigratingElementsAcrossProcesses(t *testing.T) {
	const pes, items = 4, 1000
	var r roverResult
	code, err := twoProcesses(t, func(m *tmain, _ []string) {
		if err := runRovers(m, pes, items, tram.Completion, &r); err != nil {
			m.Abort(err)
			return
		}
		m.Exit(0)
	})
	require.NoError(t, err)
	require.Equal(t, 0, code)
	r.atFinished = -1 // the other process's deliveries are not counted here
	checkRovers(t, pes, items, r)
}
