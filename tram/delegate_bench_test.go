package tram_test

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/group"
	"github.com/charmgo/charm/internal/hpcc"
	"github.com/charmgo/charm/tram"
)

// sendSink is a group whose branches send keys to one another through a
// TRAM delegate, one entry-method send a key, as a program with an
// [aggregate] entry method does.
type sendSink struct {
	group.Branch[sendSink]
	sum uint64
}

// sendLoop asks each branch to send N keys through To (At(owner)).
type sendLoop struct {
	To   group.Proxy[sendSink]
	N    int
	Loop *atomic.Int64 // nanoseconds spent in the loops of sends
}

func (s *sendSink) Generate(l sendLoop) {
	p := s.NumPEs()
	key := hpcc.Starts(int64(s.PE()) * int64(l.N))
	start := time.Now()
	for range l.N {
		key = hpcc.Next(key)
		if err := chare.Send(s, l.To.At(int(key>>7)&(p-1)), (*sendSink).Take, key); err != nil {
			s.Abort(err)
			return
		}
	}
	l.Loop.Add(int64(time.Since(start)))
}

func (s *sendSink) Take(key uint64) { s.sum ^= key }

func init() { chare.Register[sendSink]() }

// benchDelegatedSend times b.N entry-method sends between the branches
// of a group on 2 PEs (half each, half of each PE's to itself) through a
// TRAM delegate with [aggregate]'s buffering, from the first send to
// quiescence; tag: Take is tagged for aggregation and the proxy is
// plain, else the proxy is delegated. It reports send-ns/op, the time
// of the loops of sends alone (summed over the PEs) a send.
func benchDelegatedSend(b *testing.B, tag bool) {
	b.ReportAllocs()
	b.StopTimer()
	var loop atomic.Int64
	code, err := chare.Run(chare.Config{PEs: 2, Timeout: 5 * time.Minute}, func(m *tmain, _ []string) {
		g, err := group.New[sendSink](m)
		if err != nil {
			m.Abort(err)
			return
		}
		d, err := tram.NewDelegate(m, tram.Options{Sizing: tram.Sizing{BufferItems: 1000}, FlushPeriod: 10 * time.Microsecond})
		if err != nil {
			m.Abort(err)
			return
		}
		to := g.Delegate(d)
		if tag {
			done := chare.NewFuture[any](m)
			if err := d.Aggregate(m, (*sendSink).Take, done.Callback()); err != nil {
				m.Abort(err)
				return
			}
			if _, err := done.Get(m); err != nil {
				m.Abort(err)
				return
			}
			to = g
		}
		if err := quiet(m); err != nil {
			m.Abort(err)
			return
		}
		b.StartTimer()
		if err := chare.Send(m, g, (*sendSink).Generate, sendLoop{To: to, N: b.N / 2, Loop: &loop}); err != nil {
			m.Abort(err)
			return
		}
		if err := quiet(m); err != nil {
			m.Abort(err)
			return
		}
		b.StopTimer()
		m.Exit(0)
	})
	if err != nil || code != 0 {
		b.Fatalf("the job: code %d, %v", code, err)
	}
	b.ReportMetric(float64(loop.Load())/float64(b.N/2*2+1), "send-ns/op")
}

// BenchmarkDelegatedSendTagged: the entry method tagged for aggregation
// (Delegate.Aggregate), sends through a plain group proxy's At.
func BenchmarkDelegatedSendTagged(b *testing.B) { benchDelegatedSend(b, true) }

// BenchmarkDelegatedSendProxy: sends through a delegated group proxy's At.
func BenchmarkDelegatedSendProxy(b *testing.B) { benchDelegatedSend(b, false) }
