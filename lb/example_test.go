package lb_test

import (
	"fmt"

	"github.com/charmgo/charm/array"
	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/lb"
)

// Tile is an array element that the load balancer may move.
type Tile struct {
	array.Element[Tile, int]
}

// Where returns the PE the tile lives on.
func (t *Tile) Where() int { return t.PE() }

type exampleMain struct{ chare.Chare[exampleMain] }

func init() {
	chare.Register[Tile]()
	chare.Register[exampleMain]()
}

// A load-balancing step started from code (the manual mode) with the
// rotate strategy, which moves every element to the next PE; the step's
// report says how many moved.
func Example() {
	cfg := chare.Config{PEs: 2, Flags: map[string]string{lb.FlagBalancer: "rotate"}}
	_, err := chare.Run(cfg, func(m *exampleMain, _ []string) {
		defer m.Exit(0)
		a, err := array.New[Tile](m, array.Dims(4))
		if err != nil {
			fmt.Println(err)
			return
		}
		where := func() []int {
			var pes []int
			for i := range 4 {
				f, _ := chare.Call0(m, a.At(i), (*Tile).Where)
				pe, _ := f.Get(m)
				pes = append(pes, pe)
			}
			return pes
		}
		fmt.Println("before:", where())
		rep := chare.NewFuture[lb.Report](m)
		done := chare.NewFuture[any](m)
		if err := lb.Notify(m, rep.Callback()); err != nil {
			fmt.Println(err)
			return
		}
		if err := lb.StartStep(m, done.Callback()); err != nil {
			fmt.Println(err)
			return
		}
		r, _ := rep.Get(m)
		_, _ = done.Get(m)
		fmt.Println("strategy:", r.Strategy, "migrations:", r.Migrations)
		fmt.Println("after: ", where())
	})
	fmt.Println(err)
	// Output:
	// before: [0 0 1 1]
	// strategy: rotate migrations: 4
	// after:  [1 1 0 0]
	// <nil>
}
