package chare_test

import (
	"os"
	"regexp"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/internal/nodetmp"
)

// recDelegate counts the sends handed to it and carries none.
type recDelegate struct{}

var recSends atomic.Int64

func (recDelegate) Send(chare.Context, chare.Envelope) error      { recSends.Add(1); return nil }
func (recDelegate) Broadcast(chare.Context, chare.Envelope) error { recSends.Add(1); return nil }
func (recDelegate) Multicast(chare.Context, chare.Envelope) error { recSends.Add(1); return nil }
func (recDelegate) DelegateRef() (string, uint64)                 { return "chare_test.rec", 1 }

type diMain struct{ chare.Chare[diMain] }

func (*diMain) Note(int) {}

func init() {
	chare.RegisterDelegateKind("chare_test.rec", func(*chare.PE, uint64) (chare.Delegate, error) { return recDelegate{}, nil })
	chare.Register[diMain]()
}

// TestDelegatedSendWithABadIndex: a delegated proxy decoded from the wire
// whose index does not decode (its collection has no index decoder) is
// refused with an error naming the index; the delegate never gets it.
func TestDelegatedSendWithABadIndex(t *testing.T) {
	recSends.Store(0)
	var sendErr error
	code, err := chare.Run(chare.Config{PEs: 1, Timeout: 30 * time.Second}, func(m *diMain, _ []string) {
		r := m.ThisProxy().Route()
		r.Index = 5 // the main chare takes no index
		b, err := msgpack.Marshal(chare.NewProxy[diMain](r).Delegate(recDelegate{}))
		if err != nil {
			m.Abort(err)
			return
		}
		var p chare.Proxy[diMain]
		if err := msgpack.Unmarshal(b, &p); err != nil {
			m.Abort(err)
			return
		}
		sendErr = chare.Send(m, p, (*diMain).Note, 1)
		m.Exit(0)
	})
	require.NoError(t, err)
	require.Equal(t, 0, code)
	require.Error(t, sendErr, "a delegated send whose index does not decode")
	require.ErrorContains(t, sendErr, "the index 5 of a message for")
	require.Zero(t, recSends.Load(), "the delegate got a send with a bad index")
}

// TestDelegatedSendWaitsForTheAnnouncement: a delegated send whose index
// is still in wire form, for a collection made in another process and not
// announced here yet, waits for the announcement as a direct send does:
// the delegate does not get it with an index it cannot read, and if the
// collection never comes, the job fails naming it.
func TestDelegatedSendWaitsForTheAnnouncement(t *testing.T) {
	if testing.Short() {
		t.Skip("launches a process, and waits for the announcement's limit")
	}
	recSends.Store(0)
	forged := chare.CollID(1<<32 | 77) // made by PE 1, in the other process; it never announces it
	var sendErr error
	cfg := chare.Config{PEs: 2, Nodes: 2, Timeout: 60 * time.Second,
		Launch: []string{os.Args[0], "-test.run=^" + regexp.QuoteMeta(t.Name()) + "$", "-test.count=1"}}
	code, err := chare.Run(cfg, func(m *diMain, _ []string) {
		b, err := msgpack.Marshal(chare.NewProxy[diMain](chare.Route{Kind: chare.KindElement, Coll: forged, Index: 5}).Delegate(recDelegate{}))
		if err != nil {
			m.Abort(err)
			return
		}
		var p chare.Proxy[diMain]
		if err := msgpack.Unmarshal(b, &p); err != nil {
			m.Abort(err)
			return
		}
		sendErr = chare.Send(m, p, (*diMain).Note, 1) // then wait: the job ends when the wait does
	})
	if chare.IsLaunchedNode() {
		nodetmp.Exit(code)
	}
	require.NoError(t, sendErr, "the send waits")
	require.Zero(t, recSends.Load(), "the delegate got a send whose collection is not known here")
	require.Error(t, err)
	require.ErrorContains(t, err, "never announced")
	require.ErrorContains(t, err, forged.String())
	require.NotZero(t, code)
}
