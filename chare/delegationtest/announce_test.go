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

// nilKind's resolver returns neither a delegate nor an error.
type nilKind struct{ recDelegate }

func (nilKind) DelegateRef() (string, uint64) { return "delegationtest.nil", 42 }

func init() {
	chare.RegisterDelegateKind("delegationtest.rec", func(*chare.PE, uint64) (chare.Delegate, error) { return recDelegate{}, nil })
	chare.RegisterDelegateKind("delegationtest.nil", func(*chare.PE, uint64) (chare.Delegate, error) { return nil, nil })
	chare.Register[annMain]()
}

// viaWire returns p encoded and decoded again, as a chare that gets it
// in a message has it.
func viaWire[T any](p chare.Proxy[T]) (chare.Proxy[T], error) {
	var q chare.Proxy[T]
	b, err := msgpack.Marshal(p)
	if err != nil {
		return q, err
	}
	err = msgpack.Unmarshal(b, &q)
	return q, err
}

// TestDelegatedSendWithABadIndex: a delegated proxy decoded from the wire
// whose index does not decode (its collection has no index decoder) is
// refused with an error naming the index; the delegate never gets it.
func TestDelegatedSendWithABadIndex(t *testing.T) {
	recSends.Store(0)
	sendErr := sendViaWire(t, func(m *annMain) chare.Proxy[annMain] {
		r := m.ThisProxy().Route()
		r.Index = 5 // the main chare takes no index
		return chare.NewProxy[annMain](r).Delegate(recDelegate{})
	})
	require.Error(t, sendErr, "a delegated send whose index does not decode")
	require.ErrorContains(t, sendErr, "the index 5 of a message for")
	require.Zero(t, recSends.Load(), "the delegate got a send with a bad index")
}

// TestPortableResolverReturningNil: a send through a proxy whose
// delegate's resolver returns no delegate (and no error) is an error
// naming the kind and the id, not a panic of the PE.
func TestPortableResolverReturningNil(t *testing.T) {
	sendErr := sendViaWire(t, func(m *annMain) chare.Proxy[annMain] {
		return m.ThisProxy().Delegate(nilKind{})
	})
	require.Error(t, sendErr)
	require.ErrorContains(t, sendErr, `"delegationtest.nil"`)
	require.ErrorContains(t, sendErr, "42")
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
		p, err := viaWire(chare.NewProxy[annMain](chare.Route{Kind: chare.KindElement, Coll: forged, Index: 5}).Delegate(recDelegate{}))
		if err != nil {
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

// sendViaWire runs a job of one PE whose main chare sends Note through the
// proxy proxy returns, after a trip through the wire (viaWire), and
// returns what the send returned.
func sendViaWire(t *testing.T, proxy func(m *annMain) chare.Proxy[annMain]) error {
	t.Helper()
	var sendErr error
	code, err := chare.Run(chare.Config{PEs: 1, Timeout: 30 * time.Second}, func(m *annMain, _ []string) {
		p, err := viaWire(proxy(m))
		if err != nil {
			m.Abort(err)
			return
		}
		sendErr = chare.Send(m, p, (*annMain).Note, 1)
		m.Exit(0)
	})
	require.NoError(t, err)
	require.Equal(t, 0, code)
	return sendErr
}
