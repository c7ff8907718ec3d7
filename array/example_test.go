package array_test

import (
	"fmt"

	"github.com/charmgo/charm/array"
	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/chare/reducer"
)

// Cell is an element of a one-dimensional chare array.
type Cell struct {
	array.Element[Cell, int]
	Value int // exported: it travels with the element when it migrates
}

// Fill sets the value and contributes it to a sum over the array.
func (c *Cell) Fill(done chare.Callback) {
	c.Value = 10 * c.ThisIndex()
	_ = c.Contribute(c.Value, reducer.Sum[int](), done)
}

// Move migrates the element to another PE.
func (c *Cell) Move(to int) { _ = c.Migrate(to) }

// Where says where the element lives now and what it holds.
func (c *Cell) Where() string {
	return fmt.Sprintf("cell %d on PE %d holds %d", c.ThisIndex(), c.PE(), c.Value)
}

type arrayMain struct{ chare.Chare[arrayMain] }

func init() {
	chare.Register[Cell]()
	chare.Register[arrayMain]()
}

// An array with a reduction: a broadcast to every element, whose
// contributions are summed for the main chare.
func Example() {
	_, err := chare.Run(chare.Config{PEs: 2}, func(m *arrayMain, _ []string) {
		defer m.Exit(0)
		a, err := array.New[Cell](m, array.Dims(5))
		if err != nil {
			fmt.Println(err)
			return
		}
		f := chare.NewFuture[int](m)
		if err := chare.Send(m, a, (*Cell).Fill, f.Callback()); err != nil {
			fmt.Println(err)
			return
		}
		sum, err := f.Get(m)
		fmt.Println("sum:", sum, err)
	})
	fmt.Println(err)
	// Output:
	// sum: 100 <nil>
	// <nil>
}

// Migration: an element moves to another PE with its exported state; a
// message sent to it afterwards finds it there.
func Example_migration() {
	_, err := chare.Run(chare.Config{PEs: 2}, func(m *arrayMain, _ []string) {
		defer m.Exit(0)
		a, err := array.New[Cell](m, array.Dims(2))
		if err != nil {
			fmt.Println(err)
			return
		}
		where := func() {
			f, err := chare.Call0(m, a.At(1), (*Cell).Where)
			if err == nil {
				var s string
				s, err = f.Get(m)
				fmt.Println(s)
			}
			if err != nil {
				fmt.Println(err)
			}
		}
		done := chare.NewFuture[int](m)
		_ = chare.Send(m, a, (*Cell).Fill, done.Callback())
		_, _ = done.Get(m)
		where()
		_ = chare.Send(m, a.At(1), (*Cell).Move, 0)
		q := chare.NewFuture[any](m)
		m.DetectQuiescence(q.Callback())
		_, _ = q.Get(m)
		where()
	})
	fmt.Println(err)
	// Output:
	// cell 1 on PE 1 holds 10
	// cell 1 on PE 0 holds 10
	// <nil>
}

// sectionMsg carries the section a member reduces over.
type sectionMsg struct {
	Sec  *chare.Section
	Done chare.Callback
}

// Count contributes 1 to a reduction over the section that multicast it.
func (c *Cell) Count(m sectionMsg) {
	_ = c.ContributeTo(m.Sec, c.ThisIndex(), reducer.Sum[int](), m.Done)
}

// A section multicast: a message to some elements of an array, and a
// reduction over just those.
func Example_section() {
	_, err := chare.Run(chare.Config{PEs: 2}, func(m *arrayMain, _ []string) {
		defer m.Exit(0)
		a, err := array.New[Cell](m, array.Dims(6))
		if err != nil {
			fmt.Println(err)
			return
		}
		sec, err := a.Section(m, []int{1, 3, 4})
		if err != nil {
			fmt.Println(err)
			return
		}
		f := chare.NewFuture[int](m)
		if err := chare.Send(m, sec, (*Cell).Count, sectionMsg{Sec: sec.Info(), Done: f.Callback()}); err != nil {
			fmt.Println(err)
			return
		}
		sum, err := f.Get(m)
		fmt.Println("sum of the members' indices:", sum, err)
	})
	fmt.Println(err)
	// Output:
	// sum of the members' indices: 8 <nil>
	// <nil>
}
