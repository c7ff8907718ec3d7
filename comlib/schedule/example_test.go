package schedule_test

import (
	"fmt"
	"time"

	"github.com/charmgo/charm/comlib/schedule"
)

// Build the group shuffle for 7 participants, read off its shape, and compare the model's
// predictions with the lower bound.
func Example() {
	s, err := schedule.New("group", 7, 2, schedule.Options{Omega: 3})
	if err != nil {
		panic(err)
	}
	if err := s.Verify(); err != nil {
		panic(err)
	}
	sh := schedule.Inspect(s)
	fmt.Printf("%s: fan-out %d, %d rounds, %d stalls, %d steps\n", s.Name, sh.FanOut, sh.Rounds, sh.Stalls, sh.Steps)
	for _, t := range s.Rounds[0][0] {
		if t.From == 0 {
			fmt.Printf("first step: %d sends packet %d of its block to %d\n", t.From, t.Packet, t.To)
		}
	}

	m := schedule.Params{Os: 2 * time.Microsecond, Or: 2 * time.Microsecond, Ur: time.Microsecond,
		G: 10 * time.Microsecond, L: 20 * time.Microsecond}
	fmt.Println("T_w", m.Tw(), "lower bound", m.LowerBound(7, 2))
	for _, name := range []string{"sync", "group", "pairwise", "shift"} {
		s, _ := schedule.New(name, 7, 2, schedule.Options{Omega: 3})
		fmt.Println(name, m.Predict(s))
	}
	// Output:
	// group: fan-out 3, 2 rounds, 1 stalls, 12 steps
	// first step: 0 sends packet 0 of its block to 1
	// T_w 15µs lower bound 135µs
	// sync 135µs
	// group 150µs
	// pairwise 245µs
	// shift 210µs
}

// Fit the model to timings and predict an exchange of 4 KiB packets.
func ExampleFit() {
	truth := schedule.Model{
		Os: schedule.Linear{Base: time.Microsecond, PerByte: 0.1},
		Or: schedule.Linear{Base: time.Microsecond, PerByte: 0.1},
		Ur: schedule.Linear{Base: 500 * time.Nanosecond, PerByte: 0.2},
		G:  schedule.Linear{Base: 2 * time.Microsecond, PerByte: 0.5},
		L:  schedule.Linear{Base: 10 * time.Microsecond},
	}
	var samples []schedule.Sample
	for _, b := range []int{256, 4096, 65536} {
		p := truth.At(b)
		samples = append(samples,
			schedule.Sample{Kind: schedule.Send, Bytes: b, Time: p.Os},
			schedule.Sample{Kind: schedule.Receive, Bytes: b, Time: p.Or},
			schedule.Sample{Kind: schedule.Handle, Bytes: b, Time: p.Ur},
			schedule.Sample{Kind: schedule.OneWay, Bytes: b, Count: 1, Time: p.Os + p.L + p.Or + p.Ur},
			schedule.Sample{Kind: schedule.OneWay, Bytes: b, Count: 32, Time: p.Os + 31*p.G + p.L + p.Or + p.Ur},
		)
	}
	m, err := schedule.Fit(samples)
	if err != nil {
		panic(err)
	}
	p := m.At(4096)
	fmt.Println("g", p.G, "T_w", p.Tw(), "T_ata(p=16, k=1)", p.LowerBound(16, 1))
	// Output:
	// g 4.048µs T_w 10.091µs T_ata(p=16, k=1) 70.811µs
}
