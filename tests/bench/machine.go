package main

import "time"

// machine/wakeup: what the machine charges to start work on an idle core.
// A goroutine keeps one core busy and readies another goroutine (a channel
// send to it, as one PE posting to another's mailbox does), and the value
// is the time until that goroutine runs. Before each sample the process
// sleeps 3 ms, so the other core has gone idle; in the baseline, measured
// in the same pairs, the samples follow each other 20 µs apart (busy
// waiting), so the other core was at work a moment before. On a virtual
// machine a halted virtual CPU can take milliseconds to run again, which
// a paired figure that starts from idle cores (a TRAM step after the main
// PE waited) pays at random; a ratio near 1 says the machine has no such
// cost.
const wakeSamples = 40

func init() {
	registerPaired("machine/wakeup", benchWakeup)
}

func benchWakeup(cfg config) ([]figure, error) {
	fig := figure{name: "machine/wakeup", unit: "us"}
	for r := 0; r < pairsOf(cfg); r++ {
		idle := wakeLatency(true)
		awake := wakeLatency(false)
		fig.value, fig.baseline = append(fig.value, idle), append(fig.baseline, awake)
	}
	return []figure{fig}, nil
}

// wakeLatency returns the median, in microseconds, of wakeSamples
// wake-ups of a goroutine readied by a busy one, 3 ms of sleep before each
// (idle) or 20 µs of busy waiting.
func wakeLatency(idle bool) float64 {
	ch := make(chan time.Time)
	got := make(chan time.Duration, 1)
	go func() {
		for t := range ch {
			got <- time.Since(t)
		}
	}()
	defer close(ch)
	lat := make([]float64, 0, wakeSamples)
	for range wakeSamples {
		if idle {
			time.Sleep(3 * time.Millisecond)
		} else {
			for t := time.Now(); time.Since(t) < 20*time.Microsecond; {
			}
		}
		t0 := time.Now()
		go func() { ch <- t0 }() // readied on this core's queue
		// Busy on this core until the receiver has run elsewhere (or 50
		// ms have passed: then it is counted as 50 ms).
		d := 50 * time.Millisecond
	spin:
		for time.Since(t0) < 50*time.Millisecond {
			select {
			case d = <-got:
				break spin
			default:
			}
		}
		lat = append(lat, float64(d.Microseconds()))
	}
	return median(lat)
}
