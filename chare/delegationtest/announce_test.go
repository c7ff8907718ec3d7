package delegationtest_test

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/internal/jobtest"
)

// recDelegate counts the sends handed to it and carries none.
type recDelegate struct{}

var recSends atomic.Int64

func (recDelegate) Send(chare.Context, chare.Envelope) error      { recSends.Add(1); return nil }
func (recDelegate) Broadcast(chare.Context, chare.Envelope) error { recSends.Add(1); return nil }
func (recDelegate) Multicast(chare.Context, chare.Envelope) error { recSends.Add(1); return nil }
func (recDelegate) DelegateRef() (string, uint64)                 { return "delegationtest.rec", 1 }

type annMain struct{ chare.Chare[annMain] }

func (*annMain) Note(int) {}

func init() {
	chare.RegisterDelegateKind("delegationtest.rec", func(*chare.PE, uint64) (chare.Delegate, error) { return recDelegate{}, nil })
	chare.Register[annMain]()
}

// TestDelegatedSendWaitsForTheAnnouncement: a delegated send whose index
// is still in wire form, for a collection made in another process and not
// announced here yet, waits for the announcement as a direct send does:
// the delegate does not get it with an index it cannot read, and if the
// collection never comes, the job fails naming it.
func TestDelegatedSendWaitsForTheAnnouncement(t *testing.T) {
	recSends.Store(0)
	forged := chare.CollID(1<<32 | 77) // made by PE 1, in the other process; it never announces it
	var sendErr error
	cfg := chare.Config{PEs: 2, Nodes: 2, Timeout: 60 * time.Second}
	code, err := jobtest.Run(t, cfg, func(m *annMain, _ []string) {
		b, err := msgpack.Marshal(chare.NewProxy[annMain](chare.Route{Kind: chare.KindElement, Coll: forged, Index: 5}).Delegate(recDelegate{}))
		if err != nil {
			m.Abort(err)
			return
		}
		var p chare.Proxy[annMain]
		if err := msgpack.Unmarshal(b, &p); err != nil {
			m.Abort(err)
			return
		}
		sendErr = chare.Send(m, p, (*annMain).Note, 1) // then wait: the job ends when the wait does
	})
	require.NoError(t, sendErr, "the send waits")
	require.Zero(t, recSends.Load(), "the delegate got a send whose collection is not known here")
	require.Error(t, err)
	require.ErrorContains(t, err, "never announced")
	require.ErrorContains(t, err, forged.String())
	require.NotZero(t, code)
}
