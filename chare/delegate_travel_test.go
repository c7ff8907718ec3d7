package chare_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/charmgo/charm/chare"
)

// A proxy or an entry callback delegated to a portable delegate travels
// as the delegate's reference; one delegated to a delegate that is not
// portable refuses to encode, naming the delegate.

// refDelegate forwards; it is portable.
type refDelegate struct{}

func (refDelegate) Send(from chare.Context, e chare.Envelope) error { return chare.Forward(from, e) }
func (refDelegate) Broadcast(from chare.Context, e chare.Envelope) error {
	return chare.Forward(from, e)
}
func (refDelegate) Multicast(from chare.Context, e chare.Envelope) error {
	return chare.Forward(from, e)
}
func (refDelegate) DelegateRef() (string, uint64) { return "chare_test.ref", 1 }

// stayDelegate is not portable.
type stayDelegate struct{ refDelegate }

func (stayDelegate) DelegateRef() {} // not PortableDelegate's method

type unknownKind struct{ refDelegate }

func (unknownKind) DelegateRef() (string, uint64) { return "nobody registered this", 9 }

// refElem is the target type of the proxies.
type refElem struct{ chare.Chare[refElem] }

func (*refElem) Note(int) {}

func init() {
	chare.RegisterDelegateKind("chare_test.ref", func(*chare.PE, uint64) (chare.Delegate, error) { return refDelegate{}, nil })
	chare.Register[refElem]()
}

// TestDelegateEncoding: without a runtime, a proxy or an entry callback
// delegated to a portable delegate encodes as its reference and decodes
// delegated; one delegated to a delegate that is not portable, or whose
// kind is not registered, refuses to encode and names the delegate.
func TestDelegateEncoding(t *testing.T) {
	p := chare.NewProxy[refElem](chare.Route{Kind: chare.KindElement, Coll: 7, Index: 3})

	b, err := msgpack.Marshal(p.Delegate(refDelegate{}))
	require.NoError(t, err)
	var back chare.Proxy[refElem]
	require.NoError(t, msgpack.Unmarshal(b, &back))
	pd, ok := back.Delegated().(chare.PortableDelegate)
	require.True(t, ok, "decoded delegated: %v", back.Delegated())
	kind, id := pd.DelegateRef()
	require.Equal(t, "chare_test.ref", kind)
	require.EqualValues(t, 1, id)

	b, err = msgpack.Marshal(chare.EntryCallback(p.Delegate(refDelegate{}), (*refElem).Note))
	require.NoError(t, err)
	var cb chare.Callback
	require.NoError(t, msgpack.Unmarshal(b, &cb))

	_, err = msgpack.Marshal(p.Delegate(stayDelegate{}))
	require.ErrorContains(t, err, "chare_test.stayDelegate")
	require.ErrorContains(t, err, "element 3 of array #0.7")
	_, err = msgpack.Marshal(chare.EntryCallback(p.Delegate(stayDelegate{}), (*refElem).Note))
	require.ErrorContains(t, err, "chare_test.stayDelegate")
	_, err = msgpack.Marshal(p.Delegate(unknownKind{}))
	require.ErrorContains(t, err, `kind "nobody registered this"`)
	// Undelegated proxies travel as before.
	b, err = msgpack.Marshal(p)
	require.NoError(t, err)
	require.NoError(t, msgpack.Unmarshal(b, &back))
	require.Nil(t, back.Delegated())
}
