package core

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/charmgo/charm/actor"
)

// The typed envelopes of entry methods that return a value, on the wire:
// a sync call (Call, Call0) keeps its reply future, a send (SendR, SendR0)
// arrives without one and drops the result, and a reply future on a method
// that returns nothing is refused.

type wireCallWorker struct {
	Chare[wireCallWorker]
	n int
}

func (w *wireCallWorker) Add(x int) int { w.n += x; return w.n }
func (w *wireCallWorker) Bump() int     { w.n++; return w.n }
func (w *wireCallWorker) Ping()         { w.n++ }

func init() { Register[wireCallWorker]() }

func TestWireCallEnvelopes(t *testing.T) {
	entry := func(method any) *Entry {
		e, err := lookupEntry(method)
		require.NoError(t, err)
		return e
	}
	add, bump, ping := entry((*wireCallWorker).Add), entry((*wireCallWorker).Bump), entry((*wireCallWorker).Ping)
	// The decoders that a process installs by sending to these methods.
	(&envCall[wireCallWorker, int, int]{fn: (*wireCallWorker).Add}).installWire(add)
	(&envCall0[wireCallWorker, int]{fn: (*wireCallWorker).Bump}).installWire(bump)
	(&env0[wireCallWorker]{fn: (*wireCallWorker).Ping}).installWire(ping)

	route := Route{Kind: KindChare, Coll: 7, PE: 1}
	reply := futureRef{PE: 2, ID: 99}
	head := func(e *Entry) envHead { return envHead{h: Header{Route: route, Entry: e, Src: 3}} }
	cases := []struct {
		name  string
		env   Envelope
		reply futureRef // what the decoded envelope must answer to
		msg   any
		n     int // the worker's count after the decoded envelope ran, for sends
		err   string
	}{
		{name: "Call", env: &envCall[wireCallWorker, int, int]{envHead: head(add), fn: (*wireCallWorker).Add, msg: 5, reply: reply}, reply: reply, msg: 5},
		{name: "SendR", env: &envCall[wireCallWorker, int, int]{envHead: head(add), fn: (*wireCallWorker).Add, msg: 5}, msg: 5, n: 5},
		{name: "Call0", env: &envCall0[wireCallWorker, int]{envHead: head(bump), fn: (*wireCallWorker).Bump, reply: reply}, reply: reply},
		{name: "SendR0", env: &envCall0[wireCallWorker, int]{envHead: head(bump), fn: (*wireCallWorker).Bump}, n: 1},
		{name: "Send0", env: &env0[wireCallWorker]{envHead: head(ping), fn: (*wireCallWorker).Ping}, n: 1},
		{name: "a reply on a method without a result", env: &envDyn{envHead: head(ping), reply: reply},
			err: "a reply future on a call of core.wireCallWorker.Ping, which returns nothing"},
	}
	var _ actor.WireRunner = (*env1[wireCallWorker, int])(nil)
	var _ actor.WireRunner = (*env0[wireCallWorker])(nil)
	var _ actor.WireRunner = (*envCall[wireCallWorker, int, int])(nil)
	var _ actor.WireRunner = (*envCall0[wireCallWorker, int])(nil)
	var _ actor.WireRunner = (*envDyn)(nil)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var buf bytes.Buffer
			require.NoError(t, c.env.(actor.WireMessage).EncodeWire(msgpack.NewEncoder(&buf)))
			m, err := decodeEnvelope(nil, msgpack.NewDecoder(&buf))
			if c.err != "" {
				require.EqualError(t, err, c.err)
				return
			}
			require.NoError(t, err)
			require.IsType(t, c.env, m, "decoded by the typed decoder")
			got := m.(Envelope)
			require.Equal(t, route, got.Header().Route)
			require.Equal(t, 3, got.Header().Src)
			require.Equal(t, c.msg, got.Payload())
			switch e := got.(type) {
			case *envCall[wireCallWorker, int, int]:
				require.Equal(t, c.reply, e.reply)
			case *envCall0[wireCallWorker, int]:
				require.Equal(t, c.reply, e.reply)
			}
			if c.reply.ID == 0 {
				// A send: the method runs, its result goes nowhere (and
				// needs no PE to go there).
				w := &wireCallWorker{}
				got.invoke(nil, w)
				require.Equal(t, c.n, w.n)
			}
		})
	}
}
