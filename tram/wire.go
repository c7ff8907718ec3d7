package tram

import (
	"fmt"
	"reflect"
	"unsafe"

	"github.com/charmgo/charm/actor"
	"github.com/charmgo/charm/chare"
	"github.com/vmihailenco/msgpack/v5"
)

// How a batch crosses processes. Items of a fixed-size type — numbers,
// booleans, and arrays and structs of them, nothing that points — travel
// as one binary block: per item its destination (4 bytes) and its bytes
// as they lie in memory, copied without reflection. Every process runs
// the same binary, so the layout is the same at both ends. Booleans are
// left out: a byte from the network that is neither 0 nor 1 is not a
// valid bool. Other items are msgpack-encoded one by one.

const (
	wireItems = 0 // Items as a msgpack array of envelopes
	wireBlock = 1 // Items as one binary block
)

// fixedSize reports whether values of t are fixed-size and pointer-free,
// and any bytes make a valid value.
func fixedSize(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128:
		return true
	case reflect.Array:
		return fixedSize(t.Elem())
	case reflect.Struct:
		for i := 0; i < t.NumField(); i++ {
			if !fixedSize(t.Field(i).Type) {
				return false
			}
		}
		return true
	}
	return false
}

var (
	customEncoder = reflect.TypeFor[msgpack.CustomEncoder]()
	marshaler     = reflect.TypeFor[msgpack.Marshaler]()
)

// blockItem is the size of an item in a block, or 0 if T travels item by
// item: a type that encodes itself for msgpack keeps doing so.
func blockItem[T any]() int {
	t := reflect.TypeFor[T]()
	pt := reflect.PointerTo(t)
	if !fixedSize(t) || t.Size() == 0 || pt.Implements(customEncoder) || pt.Implements(marshaler) {
		return 0
	}
	return int(t.Size())
}

// EncodeMsgpack writes a batch: [format, detector, sender, items].
func (m batch[T]) EncodeMsgpack(enc *msgpack.Encoder) error {
	if err := enc.EncodeArrayLen(4); err != nil {
		return err
	}
	size := blockItem[T]()
	format := wireItems
	if size > 0 {
		format = wireBlock
	}
	if err := enc.EncodeInt(int64(format)); err != nil {
		return err
	}
	if err := enc.EncodeUint(uint64(m.Det.ID)); err != nil {
		return err
	}
	if err := enc.EncodeInt(int64(m.From)); err != nil {
		return err
	}
	if format == wireItems {
		return enc.Encode(m.Items)
	}
	rec := 4 + size
	block := make([]byte, len(m.Items)*rec)
	for i := range m.Items {
		e := &m.Items[i]
		b := block[i*rec : (i+1)*rec]
		d := uint32(e.Dest)
		b[0], b[1], b[2], b[3] = byte(d), byte(d>>8), byte(d>>16), byte(d>>24)
		copy(b[4:], unsafe.Slice((*byte)(unsafe.Pointer(&e.Item)), size))
	}
	return enc.EncodeBytes(block)
}

// DecodeMsgpack reads a batch; a block whose length is not a whole number
// of items is an error that says so.
func (m *batch[T]) DecodeMsgpack(dec *msgpack.Decoder) error {
	n, err := dec.DecodeArrayLen()
	if err != nil {
		return err
	}
	if n != 4 {
		return fmt.Errorf("tram: a batch of %d fields, want 4", n)
	}
	format, err := dec.DecodeInt()
	if err != nil {
		return err
	}
	det, err := dec.DecodeUint64()
	if err != nil {
		return err
	}
	from, err := dec.DecodeInt()
	if err != nil {
		return err
	}
	m.Det, m.From = chare.Detector{ID: actor.DetectorID(det)}, from
	switch format {
	case wireItems:
		return dec.Decode(&m.Items)
	case wireBlock:
	default:
		return fmt.Errorf("tram: a batch in format %d, want %d or %d", format, wireItems, wireBlock)
	}
	size := blockItem[T]()
	if size == 0 {
		return fmt.Errorf("tram: a binary batch of %v items, which travel item by item", reflect.TypeFor[T]())
	}
	block, err := dec.DecodeBytes()
	if err != nil {
		return err
	}
	rec := 4 + size
	if len(block)%rec != 0 {
		return fmt.Errorf("tram: a binary batch of %d bytes is not a whole number of %d-byte %v items", len(block), rec, reflect.TypeFor[T]())
	}
	m.Items = make([]Envelope[T], len(block)/rec)
	for i := range m.Items {
		e := &m.Items[i]
		b := block[i*rec : (i+1)*rec]
		e.Dest = int(uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24)
		copy(unsafe.Slice((*byte)(unsafe.Pointer(&e.Item)), size), b[4:])
	}
	return nil
}
