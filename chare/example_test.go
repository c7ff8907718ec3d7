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

// Counter keeps its state in unexported fields, as Charm++ code without a
// pup routine does: it registers and runs, but does not migrate nor go
// into a checkpoint.
type Counter struct {
	chare.Chare[Counter]
	n    int
	last string
}

// Cache declares its unexported cache Transient: it is never packed, and
// comes back empty after a migration or a restart.
type Cache struct {
	chare.Chare[Cache]
	Hits  int
	cache map[string]int
}

func init() {
	chare.Register[Counter]()
	chare.Register[Cache](chare.Transient("cache"))
}

// PackError says whether a type's objects can be packed, and if not,
// which fields would be lost and what would make each survive.
func ExampleType_PackError() {
	c, _ := chare.TypeOf[Counter]()
	fmt.Println(c.Packs())
	fmt.Println(c.PackError("migration"))
	k, _ := chare.TypeOf[Cache]()
	fmt.Println(k.Packs(), k.PackError("migration"))
	// Output:
	// false
	// chare: chare_test.Counter cannot be packed for migration, as these fields would not survive it: n (int), last (string) are unexported, so they are not packed: export them, or declare them Transient. Either make them survive, or accept their loss with chare.Register[Counter](chare.Transient("n", "last")), or implement chare.Packer
	// true <nil>
}
