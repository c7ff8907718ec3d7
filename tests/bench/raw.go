package main

import (
	"fmt"
	"io"
	"log/slog"
	"sync"

	pa "github.com/asynkron/protoactor-go/actor"
)

// rawSystem is P plain protoactor-go actors, the baseline of the runtime
// benchmarks: the same messages, the same number of actors, no chare layer.
type rawSystem struct {
	sys  *pa.ActorSystem
	pids []*pa.PID
}

// rawHandler runs inside actor i for each message.
type rawHandler func(rs *rawSystem, i int, msg any)

func newRaw(n int, h rawHandler) (*rawSystem, error) {
	rs := &rawSystem{sys: pa.NewActorSystem(pa.WithLoggerFactory(func(*pa.ActorSystem) *slog.Logger {
		return slog.New(slog.NewTextHandler(io.Discard, nil))
	}))}
	for i := 0; i < n; i++ {
		i := i
		pid, err := rs.sys.Root.SpawnNamed(pa.PropsFromFunc(func(c pa.Context) {
			h(rs, i, c.Message())
		}), fmt.Sprintf("raw-%d", i))
		if err != nil {
			return nil, err
		}
		rs.pids = append(rs.pids, pid)
	}
	return rs, nil
}

func (rs *rawSystem) send(to int, msg any) { rs.sys.Root.Send(rs.pids[to], msg) }

func (rs *rawSystem) stop() {
	for _, p := range rs.pids {
		rs.sys.Root.Stop(p)
	}
	rs.sys.Shutdown()
}

// signal is a one-shot completion flag shared by a raw benchmark's actors.
type signal struct {
	once sync.Once
	ch   chan struct{}
}

func newSignal() *signal                { return &signal{ch: make(chan struct{})} }
func (s *signal) fire()                 { s.once.Do(func() { close(s.ch) }) }
func (s *signal) wait() <-chan struct{} { return s.ch }
