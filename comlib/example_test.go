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
