package actor

import (
	"reflect"

	"github.com/vmihailenco/msgpack/v5"
)

// Wire kinds of the runtime's own messages (detection waves and their
// requests), so that quiescence and completion detection work across
// processes. They are plain structs of exported fields.
const (
	kindWaveDown uint16 = iota + 1
	kindWaveUp
	kindQDReq
	kindQDFire
	kindCDBegin
	kindCDInit
	kindCDInitAck
	kindCDPoke
	kindCDFire
)

// registerStruct registers a message kind encoded as a msgpack struct.
func registerStruct[T Message](kind uint16, name string) {
	RegisterWireChecked(kind, name, func(_ *PE, dec *msgpack.Decoder) (Message, error) {
		var v T
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		return v, nil
	})
}

func init() {
	registerStruct[waveDown](kindWaveDown, "detection wave")
	registerStruct[waveUp](kindWaveUp, "detection wave reply")
	registerStruct[qdReq](kindQDReq, "quiescence request")
	registerStruct[qdFire](kindQDFire, "quiescence reached")
	registerStruct[cdBegin](kindCDBegin, "completion detection start")
	registerStruct[cdInit](kindCDInit, "completion detection init")
	registerStruct[cdInitAck](kindCDInitAck, "completion detection init ack")
	registerStruct[cdPoke](kindCDPoke, "completion detection poke")
	registerStruct[cdFire](kindCDFire, "completion detection callback")
}

func encodeStruct(enc *msgpack.Encoder, v any) error { return enc.Encode(v) }

func (m waveDown) WireKind() uint16                       { return kindWaveDown }
func (m waveDown) EncodeWire(enc *msgpack.Encoder) error  { return encodeStruct(enc, m) }
func (m waveUp) WireKind() uint16                         { return kindWaveUp }
func (m waveUp) EncodeWire(enc *msgpack.Encoder) error    { return encodeStruct(enc, m) }
func (m qdReq) WireKind() uint16                          { return kindQDReq }
func (m qdReq) EncodeWire(enc *msgpack.Encoder) error     { return encodeStruct(enc, m) }
func (m qdFire) WireKind() uint16                         { return kindQDFire }
func (m qdFire) EncodeWire(enc *msgpack.Encoder) error    { return encodeStruct(enc, m) }
func (m cdBegin) WireKind() uint16                        { return kindCDBegin }
func (m cdBegin) EncodeWire(enc *msgpack.Encoder) error   { return encodeStruct(enc, m) }
func (m cdInit) WireKind() uint16                         { return kindCDInit }
func (m cdInit) EncodeWire(enc *msgpack.Encoder) error    { return encodeStruct(enc, m) }
func (m cdInitAck) WireKind() uint16                      { return kindCDInitAck }
func (m cdInitAck) EncodeWire(enc *msgpack.Encoder) error { return encodeStruct(enc, m) }
func (m cdPoke) WireKind() uint16                         { return kindCDPoke }
func (m cdPoke) EncodeWire(enc *msgpack.Encoder) error    { return encodeStruct(enc, m) }
func (m cdFire) WireKind() uint16                         { return kindCDFire }
func (m cdFire) EncodeWire(enc *msgpack.Encoder) error    { return encodeStruct(enc, m) }

// RegisterStruct registers a message kind that travels as a msgpack
// struct: a pointer to T is the message (packages above use it for their
// protocol messages). Its bodies are checked as RegisterWireChecked says.
func RegisterStruct[T any, P interface {
	*T
	Message
}](kind uint16, name string) {
	registerChecked(kind, name, reflect.TypeFor[T](), func(_ *PE, dec *msgpack.Decoder) (Message, error) {
		m := P(new(T))
		if err := dec.Decode(m); err != nil {
			return nil, err
		}
		return m, nil
	})
}
