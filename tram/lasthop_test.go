package tram_test

import (
	"fmt"
	"math/rand"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/chare/reducer"
	"github.com/charmgo/charm/group"
	"github.com/charmgo/charm/tram"
)

// placed is an item that knows the PE it is for: a fixed-size type, so
// it crosses processes in TRAM's binary blocks.
type placed struct {
	To, V int32
}

// post is a client that checks where each item arrives.
type post struct {
	group.Branch[post]
	got   []int64 // per destination PE, then the misdelivered count
	ready bool
}

func (p *post) Take(it placed) {
	if !p.ready {
		p.got, p.ready = make([]int64, p.NumPEs()+1), true
	}
	if int(it.To) != p.PE() {
		p.got[p.NumPEs()]++
		return
	}
	p.got[p.PE()] += int64(it.V)
}

type postFeed struct {
	S     tram.Streamer[post, placed]
	Items int
	Seed  int64
}

// Feed inserts Items items for random PEs, then says done.
func (p *post) Feed(m postFeed) {
	r := rand.New(rand.NewSource(m.Seed + int64(p.PE())))
	for range m.Items {
		to := r.Intn(p.NumPEs())
		if err := m.S.Insert(p, placed{To: int32(to), V: int32(1 + r.Intn(9))}, to); err != nil {
			p.Abort(err)
			return
		}
	}
	if err := m.S.Done(p, 1); err != nil {
		p.Abort(err)
	}
}

// Report sums, per PE, what arrived there and what arrived elsewhere.
func (p *post) Report(cb chare.Callback) {
	if !p.ready {
		p.got, p.ready = make([]int64, p.NumPEs()+1), true
	}
	_ = p.Contribute(p.got, reducer.SumInt64, cb)
}

func init() {
	chare.Register[post]()
	tram.Register((*post).Take)
}

// wantPosts is what Report should sum to: per PE the values sent to it,
// and nothing misdelivered.
func wantPosts(pes, items int, seed int64) []int64 {
	want := make([]int64, pes+1)
	for pe := range pes {
		r := rand.New(rand.NewSource(seed + int64(pe)))
		for range items {
			to := r.Intn(pes)
			want[to] += int64(1 + r.Intn(9))
		}
	}
	return want
}

// runPosts runs one completion step of the post client on a grid and
// returns what Report summed.
func runPosts(m *tmain, dims []int, items int, seed int64) ([]int64, error) {
	g, err := group.New[post](m)
	if err != nil {
		return nil, err
	}
	s, err := tram.New(m, g, (*post).Take, tram.Options{Dims: dims, Sizing: tram.Sizing{BufferItems: 16}, FlushPeriod: 2 * time.Millisecond})
	if err != nil {
		return nil, err
	}
	started, finished := chare.NewFuture[any](m), chare.NewFuture[any](m)
	if err := s.Start(m, tram.Step{Mode: tram.Completion, Producers: m.NumPEs(), Started: started.Callback(), Finished: finished.Callback()}); err != nil {
		return nil, err
	}
	if err := chare.WaitAll(m, started); err != nil {
		return nil, err
	}
	if err := chare.Send(m, g, (*post).Feed, postFeed{S: s, Items: items, Seed: seed}); err != nil {
		return nil, err
	}
	if err := chare.WaitAll(m, finished); err != nil {
		return nil, err
	}
	rep := chare.NewFuture[[]int64](m)
	if err := chare.Send(m, g, (*post).Report, rep.Callback()); err != nil {
		return nil, err
	}
	return rep.Get(m)
}

// TestLastHopItemsArriveWhereTheyShould: items whose last hop drops their
// destination (every item on a 1-D grid; on 2-D and 3-D grids a PE gets
// bare batches from its last-dimension peers and envelopes, some for
// itself and some to pass on, from the others) each arrive on their own
// PE, counted per PE, none elsewhere.
func TestLastHopItemsArriveWhereTheyShould(t *testing.T) {
	cases := []struct {
		pes  int
		dims []int
	}{{8, []int{8}}, {8, []int{4, 2}}, {8, []int{2, 2, 2}}, {12, []int{3, 2, 2}}}
	for _, c := range cases {
		t.Run(fmt.Sprint(c.dims), func(t *testing.T) {
			const items, seed = 2000, 5
			var got []int64
			code, err := chare.Run(chare.Config{PEs: c.pes, Timeout: 30 * time.Second}, func(m *tmain, _ []string) {
				var err error
				if got, err = runPosts(m, c.dims, items, seed); err != nil {
					m.Abort(err)
					return
				}
				m.Exit(0)
			})
			require.NoError(t, err)
			require.Equal(t, 0, code)
			require.Equal(t, wantPosts(c.pes, items, seed), got, "per PE, then misdelivered")
		})
	}
}

// TestLastHopItemsArriveAcrossProcesses: the same over two processes, on a
// 1-D grid (every batch is last-hop items only, a binary block without
// destinations) and a 2-D one whose first dimension crosses the processes
// (batches of both kinds).
func TestLastHopItemsArriveAcrossProcesses(t *testing.T) {
	for _, dims := range [][]int{{4}, {2, 2}} {
		t.Run(fmt.Sprint(dims), func(t *testing.T) {
			const items, seed = 3000, 9
			var got []int64
			code, err := twoProcesses(t, func(m *tmain, _ []string) {
				var err error
				if got, err = runPosts(m, dims, items, seed); err != nil {
					m.Abort(err)
					return
				}
				m.Exit(0)
			})
			require.NoError(t, err)
			require.Equal(t, 0, code)
			require.Equal(t, wantPosts(4, items, seed), got, "per PE, then misdelivered")
		})
	}
}
