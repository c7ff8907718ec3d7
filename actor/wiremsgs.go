package actor

import (
	"fmt"
	"reflect"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/charmgo/charm/internal/wirekind"
)

// The runtime's own messages that cross processes (detection waves and
// their requests), so that quiescence and completion detection work
// across processes. They are plain structs of exported fields; their
// kinds are in package internal/wirekind.

// registerStruct registers a message kind encoded as a msgpack struct,
// whose message is a T.
func registerStruct[T Message](kind uint16, name string) {
	registerStructType(reflect.TypeFor[T](), kind, name)
	RegisterWireChecked(kind, name, func(_ *PE, dec *msgpack.Decoder) (Message, error) {
		var v T
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		return v, nil
	})
}

func init() {
	registerStruct[waveDown](wirekind.WaveDown, "detection wave")
	registerStruct[waveUp](wirekind.WaveUp, "detection wave reply")
	registerStruct[qdReq](wirekind.QDReq, "quiescence request")
	registerStruct[qdFire](wirekind.QDFire, "quiescence reached")
	registerStruct[cdBegin](wirekind.CDBegin, "completion detection start")
	registerStruct[cdInit](wirekind.CDInit, "completion detection init")
	registerStruct[cdInitAck](wirekind.CDInitAck, "completion detection init ack")
	registerStruct[cdPoke](wirekind.CDPoke, "completion detection poke")
	registerStruct[cdFire](wirekind.CDFire, "completion detection callback")
	registerStruct[qdPoke](wirekind.QDPoke, "quiescence poke")
}

// RegisterStruct registers a message kind that travels as a msgpack
// struct: a pointer to T is the message (packages above use it for their
// protocol messages). Its bodies are checked as RegisterWireChecked says.
// A *T that is not a WireMessage is encoded as the struct it is, under
// kind, after its PrepareWire() error method if it has one (which fills
// the fields that carry its wire form); one that is a WireMessage encodes
// itself.
func RegisterStruct[T any, P interface {
	*T
	Message
}](kind uint16, name string) {
	registerStructType(reflect.TypeFor[P](), kind, name)
	registerChecked(kind, name, reflect.TypeFor[T](), func(_ *PE, dec *msgpack.Decoder) (Message, error) {
		m := P(new(T))
		if err := dec.Decode(m); err != nil {
			return nil, err
		}
		return m, nil
	})
}

// registerStructType records that a message of type t travels as kind.
func registerStructType(t reflect.Type, kind uint16, name string) {
	wireMu.Lock()
	defer wireMu.Unlock()
	if old, dup := structKinds[t]; dup && old != kind {
		panic(fmt.Sprintf("actor: %v registered as wire kinds %d and %d (%s)", t, old, kind, name))
	}
	structKinds[t] = kind
}
