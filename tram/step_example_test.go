package tram_test

import (
	"fmt"

	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/chare/reducer"
	"github.com/charmgo/charm/group"
	"github.com/charmgo/charm/tram"
)

// Tally is a group whose branches receive items through a streamer.
type Tally struct {
	group.Branch[Tally]
	Got int
}

// Take is the streamer's process method: one item.
func (t *Tally) Take(x int) { t.Got += x }

type tallyFeed struct {
	S tram.Streamer[Tally, int]
	N int
}

// Feed inserts N items of value 1 for every PE, then ends this producer.
// The loop inserts through the PE's Inserter, found once (Charm++'s
// ckLocalBranch()->insertData); m.S.Insert(t, 1, pe) does the same, finding
// the branch each time.
func (t *Tally) Feed(m tallyFeed) {
	in, err := m.S.Local(t)
	if err != nil {
		t.Abort(err)
		return
	}
	for i := 0; i < m.N; i++ {
		for pe := range t.NumPEs() {
			_ = in.Insert(1, pe)
		}
	}
	_ = m.S.Done(t, 1)
}

// Total contributes what the branch received to a sum.
func (t *Tally) Total(done chare.Callback) { _ = t.Contribute(t.Got, reducer.Sum[int](), done) }

type tramMain struct{ chare.Chare[tramMain] }

func init() {
	chare.Register[Tally]()
	chare.Register[tramMain]()
	tram.Register((*Tally).Take)
}

// A TRAM step: every PE streams items to every PE through aggregated
// buffers; the step finishes once all producers are done and every item
// is delivered (completion mode).
func Example_step() {
	_, err := chare.Run(chare.Config{PEs: 4}, func(m *tramMain, _ []string) {
		defer m.Exit(0)
		g, err := group.New[Tally](m)
		if err != nil {
			fmt.Println(err)
			return
		}
		s, err := tram.New(m, g, (*Tally).Take, tram.Options{})
		if err != nil {
			fmt.Println(err)
			return
		}
		started, finished := chare.NewFuture[any](m), chare.NewFuture[any](m)
		if err := s.Start(m, tram.Step{Mode: tram.Completion, Producers: 4, Started: started.Callback(), Finished: finished.Callback()}); err != nil {
			fmt.Println(err)
			return
		}
		_, _ = started.Get(m)
		_ = chare.Send(m, g, (*Tally).Feed, tallyFeed{S: s, N: 100})
		_, _ = finished.Get(m)
		total := chare.NewFuture[int](m)
		_ = chare.Send(m, g, (*Tally).Total, total.Callback())
		n, err := total.Get(m)
		fmt.Println("items delivered:", n, err)
	})
	fmt.Println(err)
	// Output:
	// items delivered: 1600 <nil>
	// <nil>
}
