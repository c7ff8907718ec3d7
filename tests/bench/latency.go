package main

import (
	"fmt"
	"syscall"
	"time"

	"github.com/charmgo/charm/array"
	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/group"
)

// latency/pingpong/{array,group}/1proc: two players on PE 0 and PE 1 of a
// job of 2 PEs pass a 100-byte ball back and forth (an entry method each
// way); the value is the mean round trip in microseconds. The baseline is
// two plain goroutines of the same process passing the same ball over
// unbuffered channels, run after each timed run of the players (A B A B):
// what the machine allows without a runtime. The .../cpu line is the CPU
// time of the whole process (every thread: the PEs, the garbage
// collector, any spinning) per round trip, of each.
//
// latency/idle/2pe: the CPU that a job of 2 PEs uses while its PEs have
// nothing to do (the main chare naps for a second), in percent of a core
// per PE, measured from the process's rusage. The baseline is the budget,
// 5 % of a core per PE: a ratio at or below 1 keeps it.

const (
	ppPayload = 100
	ppPEs     = 2
	idleGrant = 5.0 // % of a core per idle PE
)

func init() {
	chare.Register[ppPlayer](chare.Transient("done")) // never moves
	chare.Register[ppBranch](chare.Transient("done"))
	registerPaired("latency/pingpong/array/1proc", func(cfg config) ([]figure, error) {
		return benchPingpong(cfg, "latency/pingpong/array/1proc", false)
	})
	registerPaired("latency/pingpong/group/1proc", func(cfg config) ([]figure, error) {
		return benchPingpong(cfg, "latency/pingpong/group/1proc", true)
	})
	registerPaired("latency/idle/2pe", benchIdle)
}

// ppBall is the ball; Data is the payload, handed over, never written.
type ppBall struct {
	Left int // round trips still to go after this one
	Data []byte
}

type ppServe struct {
	Rounds int
	Done   chare.Callback
}

// ppPlayer is element 0 (the server) or 1 of the array pingpong.
type ppPlayer struct {
	array.Element[ppPlayer, int]
	done chare.Callback
}

func (p *ppPlayer) Serve(s ppServe) {
	p.done = s.Done
	p.send(ppBall{Left: s.Rounds - 1, Data: make([]byte, ppPayload)})
}

func (p *ppPlayer) Ball(b ppBall) {
	if p.ThisIndex() == 0 {
		if b.Left == 0 {
			_ = p.done.Send(p, nil)
			return
		}
		b.Left--
	}
	p.send(b)
}

func (p *ppPlayer) send(b ppBall) {
	if err := chare.Send(p, p.ThisProxy().At(1-p.ThisIndex()), (*ppPlayer).Ball, b); err != nil {
		p.Abort(err)
	}
}

// ppBranch is the group pingpong's player on PE 0 (the server) or PE 1.
type ppBranch struct {
	group.Branch[ppBranch]
	done chare.Callback
}

func (p *ppBranch) Serve(s ppServe) {
	p.done = s.Done
	p.send(ppBall{Left: s.Rounds - 1, Data: make([]byte, ppPayload)})
}

func (p *ppBranch) Ball(b ppBall) {
	if p.PE() == 0 {
		if b.Left == 0 {
			_ = p.done.Send(p, nil)
			return
		}
		b.Left--
	}
	p.send(b)
}

func (p *ppBranch) send(b ppBall) {
	if err := chare.Send(p, p.ThisProxy().At(1-p.PE()), (*ppBranch).Ball, b); err != nil {
		p.Abort(err)
	}
}

func benchPingpong(cfg config, name string, useGroup bool) ([]figure, error) {
	fig := figure{name: name, unit: "us"}
	cpu := figure{name: name + "/cpu", unit: "us"}
	rounds := max(100, int(20000*cfg.scale))
	err := runJob(ppPEs, func(m *benchMain) error {
		var serve func(f chare.Callback) error
		if useGroup {
			g, err := group.New[ppBranch](m)
			if err != nil {
				return err
			}
			serve = func(f chare.Callback) error {
				return chare.Send(m, g.At(0), (*ppBranch).Serve, ppServe{Rounds: rounds, Done: f})
			}
		} else {
			onePEEach := array.MapFunc(func(i int, npes int) int { return i % npes })
			a, err := array.New[ppPlayer](m, array.Dims(2), array.WithMap(onePEEach))
			if err != nil {
				return err
			}
			serve = func(f chare.Callback) error {
				return chare.Send(m, a.At(0), (*ppPlayer).Serve, ppServe{Rounds: rounds, Done: f})
			}
		}
		run := func() (wall, busy float64, err error) {
			f := chare.NewFuture[any](m)
			c0, t0 := cpuTime(), time.Now()
			if err := serve(f.Callback()); err != nil {
				return 0, 0, err
			}
			if _, err := f.Get(m); err != nil {
				return 0, 0, err
			}
			return perRound(time.Since(t0), rounds), perRound(cpuTime()-c0, rounds), nil
		}
		if _, _, err := run(); err != nil { // warm-up
			return err
		}
		for i := 0; i < pairsOf(cfg); i++ {
			v, c, err := run()
			if err != nil {
				return err
			}
			fig.value, cpu.value = append(fig.value, v), append(cpu.value, c)
			c0, t0 := cpuTime(), time.Now()
			chanPingpong(rounds)
			fig.baseline = append(fig.baseline, perRound(time.Since(t0), rounds))
			cpu.baseline = append(cpu.baseline, perRound(cpuTime()-c0, rounds))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return []figure{fig, cpu}, nil
}

// perRound is d in microseconds per round trip.
func perRound(d time.Duration, rounds int) float64 { return d.Seconds() * 1e6 / float64(rounds) }

// chanPingpong is the baseline: two goroutines, rounds round trips over
// unbuffered channels.
func chanPingpong(rounds int) {
	ping, pong := make(chan ppBall), make(chan ppBall)
	go func() {
		for b := range ping {
			pong <- b
		}
	}()
	b := ppBall{Data: make([]byte, ppPayload)}
	for i := 0; i < rounds; i++ {
		b.Left = rounds - 1 - i
		ping <- b
		b = <-pong
	}
	close(ping)
}

// benchIdle measures the CPU of a job of 2 PEs while the main chare naps.
func benchIdle(cfg config) ([]figure, error) {
	fig := figure{name: "latency/idle/2pe", unit: "%core/pe"}
	err := runJob(ppPEs, func(m *benchMain) error {
		for i := 0; i < pairsOf(cfg); i++ {
			c0, t0 := cpuTime(), time.Now()
			deadline := t0.Add(time.Second)
			for time.Now().Before(deadline) {
				if _, err := chare.Nap(m, deadline); err != nil {
					return err
				}
			}
			pct := (cpuTime() - c0).Seconds() / time.Since(t0).Seconds() * 100 / ppPEs
			fig.value = append(fig.value, pct)
			fig.baseline = append(fig.baseline, idleGrant)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return []figure{fig}, nil
}

// cpuTime is the user and system CPU time of this process so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(fmt.Sprintf("getrusage: %v", err))
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
