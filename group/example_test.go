package group_test

import (
	"fmt"

	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/chare/reducer"
	"github.com/charmgo/charm/group"
)

// Counter has one branch on every PE.
type Counter struct {
	group.Branch[Counter]
}

// Report contributes the branch's PE squared to a sum over the group.
func (c *Counter) Report(done chare.Callback) {
	_ = c.Contribute(c.PE()*c.PE(), reducer.Sum[int](), done)
}

type groupMain struct{ chare.Chare[groupMain] }

func init() {
	chare.Register[Counter]()
	chare.Register[groupMain]()
}

// A group: a broadcast reaches the branch on every PE, and their
// contributions are summed into one value for the main chare's future.
func Example() {
	_, err := chare.Run(chare.Config{PEs: 4}, func(m *groupMain, _ []string) {
		defer m.Exit(0)
		g, err := group.New[Counter](m)
		if err != nil {
			fmt.Println(err)
			return
		}
		f := chare.NewFuture[int](m)
		if err := chare.Send(m, g, (*Counter).Report, f.Callback()); err != nil {
			fmt.Println(err)
			return
		}
		sum, err := f.Get(m)
		fmt.Println("sum of PE² over 4 PEs:", sum, err)
	})
	fmt.Println(err)
	// Output:
	// sum of PE² over 4 PEs: 14 <nil>
	// <nil>
}
