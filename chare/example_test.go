package chare_test

import (
	"fmt"

	"github.com/charmgo/charm/chare"
)

// Greeter is a singleton chare: one object, on the PE it is created on.
type Greeter struct {
	chare.Chare[Greeter]
	Greeted int
}

// Greet is an entry method that returns a value (a sync entry method).
func (g *Greeter) Greet(name string) string {
	g.Greeted++
	return fmt.Sprintf("hello, %s (greeting %d)", name, g.Greeted)
}

type exampleMain struct{ chare.Chare[exampleMain] }

func init() {
	chare.Register[Greeter]()
	chare.Register[exampleMain]()
}

// A job: the main chare runs on PE 0, creates a chare on PE 1, calls its
// entry method twice and waits for each result in the main thread, then
// ends the job with Exit.
func Example() {
	code, err := chare.Run(chare.Config{PEs: 2}, func(m *exampleMain, _ []string) {
		defer m.Exit(0)
		g, err := chare.New[Greeter](m, 1)
		if err != nil {
			fmt.Println(err)
			return
		}
		for _, name := range []string{"world", "PE 1"} {
			f, err := chare.Call(m, g, (*Greeter).Greet, name)
			if err != nil {
				fmt.Println(err)
				return
			}
			s, err := f.Get(m)
			fmt.Println(s, err)
		}
	})
	fmt.Println("exit", code, err)
	// Output:
	// hello, world (greeting 1) <nil>
	// hello, PE 1 (greeting 2) <nil>
	// exit 0 <nil>
}
