package tune_test

import (
	"fmt"
	"math"

	"github.com/charmgo/charm/tune"
)

// A loop whose time is smallest at p = 10: the tuner starts at 0, doubles
// its steps rightwards, overshoots and closes in.
func Example() {
	t, err := tune.New(tune.Options{Start: 0, Step: 1, MinStep: 0.5, Evals: 2})
	if err != nil {
		fmt.Println(err)
		return
	}
	cost := func(p float64) float64 { return 1 + math.Abs(p-10)/10 }
	for range 24 {
		if err := t.Observe(cost(t.Value())); err != nil {
			fmt.Println(err)
			return
		}
	}
	var tried []float64
	for i, pt := range t.Trajectory() {
		if i%2 == 0 {
			tried = append(tried, pt.Value)
		}
	}
	best, score, _ := t.Best()
	fmt.Println("tried:", tried)
	fmt.Printf("best p = %v, time %.2f\n", best, score)
	// Output:
	// tried: [0 1 3 7 15 3 9 13 7 10 12 9]
	// best p = 10, time 1.00
}

// A real p realised as whole local computations per loop: 2.5 on average.
func ExampleSpread() {
	s, err := tune.NewSpread(2.5)
	if err != nil {
		fmt.Println(err)
		return
	}
	for range 6 {
		fmt.Print(s.Next(), " ")
	}
	fmt.Println()
	// Output: 2 3 2 3 2 3
}
