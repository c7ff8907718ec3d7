package comlib_test

import (
	"fmt"
	"time"

	"github.com/charmgo/charm/array"
	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/comlib"
)

// Example: a streaming strategy behind an array proxy. The sends are
// ordinary sends; the strategy buffers them per destination PE.
func Example() {
	var got []int64
	code, err := chare.Run(chare.Config{PEs: 4, Timeout: 30 * time.Second}, func(m *tmain, _ []string) {
		sinks, _ := array.New[sink](m, array.Dims(8))
		inst, err := comlib.New(m, comlib.Streaming(comlib.StreamOptions{MaxMsgs: 32}))
		if err != nil {
			m.Abort(err)
			return
		}
		to := sinks.Delegate(inst)
		for i := 0; i < 800; i++ {
			_ = chare.Send(m, to.At(i%8), (*sink).Num, num{From: 0, Seq: i / 8})
		}
		qd := chare.NewFuture[any](m)
		m.DetectQuiescence(qd.Callback())
		_, _ = qd.Get(m)
		f := chare.NewFuture[[]int64](m)
		_ = chare.Send(m, sinks, (*sink).Totals, f.Callback())
		got, _ = f.Get(m)
		m.Exit(0)
	})
	fmt.Println(code, err, "received", got[0], "out of order", got[2])
	// Output: 0 <nil> received 800 out of order 0
}

// Example_tagged: tagged messages through a Streaming instance that tunes
// its cap while the program runs; the sender flushes its buffers when it
// is done, and the receiver identifies each datum by its tag.
func Example_tagged() {
	var got []int64
	var tuned bool
	code, err := chare.Run(chare.Config{PEs: 4, Timeout: 30 * time.Second}, func(m *tmain, _ []string) {
		sinks, _ := array.New[tagSink](m, array.Dims(8))
		inst, err := comlib.New(m, comlib.Streaming(comlib.StreamOptions{MaxMsgs: 8, Tune: true, Window: 64}))
		if err != nil {
			m.Abort(err)
			return
		}
		to := sinks.Delegate(inst)
		for i := 0; i < 800; i++ {
			_ = chare.Send(m, to.At(i%8), (*tagSink).Got, comlib.Tagged[int64]{Tag: uint64(i), Data: int64(i)})
		}
		_ = comlib.Flush(m, to.Delegated())
		qd := chare.NewFuture[any](m)
		m.DetectQuiescence(qd.Callback())
		_, _ = qd.Get(m)
		f := chare.NewFuture[[]int64](m)
		_ = chare.Send(m, sinks, (*tagSink).Totals, f.Callback())
		got, _ = f.Get(m)
		caps := inst.Tuning()[0].Cap // PE 0's trajectory
		tuned = caps[len(caps)-1].Value != caps[0].Value
		m.Exit(0)
	})
	fmt.Println(code, err, "received", got[0], "duplicated", got[2], "cap moved", tuned)
	// Output: 0 <nil> received 800 duplicated 0 cap moved true
}
