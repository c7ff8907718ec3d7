package chare_test

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/charmgo/charm/chare"
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
	var sendErr error
	code, err := chare.Run(chare.Config{PEs: 1, Timeout: 30 * time.Second}, func(m *diMain, _ []string) {
		r := m.ThisProxy().Route()
		r.Index = 5 // the main chare takes no index
		p, err := viaWire(chare.NewProxy[diMain](r).Delegate(recDelegate{}))
		if err != nil {
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
