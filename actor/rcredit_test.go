package actor

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"
)

// A sender that outruns a receiver in another process waits for it
// (rcredit.go): the bytes in flight stay near Config.MaxRemoteInFlight,
// every message arrives, in order; and PEs of two nodes that flood each
// other, so that each may wait for the other, still finish.

// rflood is a message of about 1 KiB between nodes. Its receiver works on
// it for a while, so that it is slower than its sender.
type rflood struct {
	From, Seq int
	Pad       []byte
}

var rfloodGot [4]atomic.Int64 // messages received, by receiving PE

// rfloodWant is how many messages each receiving PE expects; the PE that
// completes the last exits the job.
var rfloodWant, rfloodDone atomic.Int64

func (m rflood) WireKind() uint16                      { return 91 }
func (m rflood) EncodeWire(enc *msgpack.Encoder) error { return enc.Encode(m) }
func (m rflood) Deliver(pe *PE) {
	if int64(m.Seq) != rfloodGot[pe.ID()].Load() {
		pe.Runtime().Abort(fmt.Errorf("PE %d got message %d from PE %d, expected %d", pe.ID(), m.Seq, m.From, rfloodGot[pe.ID()].Load()))
		return
	}
	t0 := time.Now()
	for time.Since(t0) < 20*time.Microsecond { // work, not a wait
	}
	if rfloodGot[pe.ID()].Add(1) == rfloodWant.Load() && rfloodDone.Add(1) == 2 {
		pe.Runtime().Exit(0)
	}
}

// rfloodStart makes its PE send n messages to PE to, from one handler.
type rfloodStart struct{ To, N int }

func (m rfloodStart) WireKind() uint16                      { return 92 }
func (m rfloodStart) EncodeWire(enc *msgpack.Encoder) error { return enc.Encode(m) }
func (m rfloodStart) Deliver(pe *PE) {
	for i := range m.N {
		pe.Send(m.To, rflood{From: pe.ID(), Seq: i, Pad: make([]byte, 1000)})
	}
}

func init() {
	registerStruct[rflood](91, "test flood")
	registerStruct[rfloodStart](92, "test flood start")
}

func TestRemoteBackPressure(t *testing.T) {
	const bound = 128 << 10
	const n = 3000 // about 3 MB each way
	cases := []struct {
		name   string
		mutual bool // the receiver floods the sender at the same time
	}{
		{"one sender, slow receiver", false},
		{"two nodes flood each other", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for i := range rfloodGot {
				rfloodGot[i].Store(0)
			}
			rfloodDone.Store(0)
			rfloodWant.Store(n)
			if !c.mutual {
				rfloodDone.Store(1) // one receiver only
			}
			two := startTwoConfig(t, Config{PEs: 4, MaxRemoteInFlight: bound}, NewToken(), nil, func(pe *PE) {
				if c.mutual {
					pe.Send(2, rfloodStart{To: 0, N: n}) // PE 2 is on node 1
				}
				pe.Send(0, rfloodStart{To: 2, N: n})
			})
			codes, errs := two.wait(t)
			require.NoError(t, errs[0])
			require.NoError(t, errs[1])
			require.Equal(t, [2]int{0, 0}, codes)
			require.EqualValues(t, n, rfloodGot[2].Load(), "messages on PE 2 (node 1)")
			st := two.rt0.RemoteCreditStats()
			if c.mutual {
				require.EqualValues(t, n, rfloodGot[0].Load(), "messages on PE 0 (node 0)")
				return // either may have sent over the bound while the other waited
			}
			require.Positive(t, st.Parked, "the sender waited for its receiver")
			require.Zero(t, st.Overruns, "the receiver never waited, so neither did the bound give")
			// The sender looks before each frame; a frame holds at most a
			// buffer of batchMax messages or eagerFrame bytes.
			require.LessOrEqual(t, st.Biggest, int64(batchMax*1100+eagerFrame))
			require.LessOrEqual(t, st.Peak, bound+st.Biggest, "bytes in flight to node 1 at most")
			require.Greater(t, int64(n*1000), 6*st.Peak, "far less in flight than sent")
		})
	}
}
