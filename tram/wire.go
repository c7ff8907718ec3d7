package tram

import (
	"bytes"
	"fmt"
	"math"
	"reflect"
	"slices"
	"unsafe"

	"github.com/charmgo/charm/actor"
	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/internal/mpcheck"
	"github.com/charmgo/charm/internal/msgp"
	"github.com/vmihailenco/msgpack/v5"
)

// How a batch crosses processes. Items of a fixed-size type — numbers,
// booleans, and arrays and structs of them, nothing that points — travel
// as one binary block: per item its destination (4 bytes) and its bytes
// as they lie in memory, copied without reflection; the last-hop items
// (batch.Final) follow in a second block, without the destination. Every
// process runs
// the same binary, so the layout is the same at both ends. Booleans are
// left out: a byte from the network that is neither 0 nor 1 is not a
// valid bool. Other items are msgpack-encoded one by one.

const (
	wireItems = 0 // Items as a msgpack array of envelopes
	wireBlock = 1 // Items as one binary block
)

// plainData reports whether values of t are fixed-size and hold no
// pointers for the garbage collector to follow (recycled buffers of such
// items need no clearing). With anyBytes it also asks that any bytes make
// a valid value, as a binary block from the network needs: no bool (a
// byte other than 0 or 1), no uintptr.
func plainData(t reflect.Type, anyBytes bool) bool {
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128:
		return true
	case reflect.Bool, reflect.Uintptr:
		return !anyBytes
	case reflect.Array:
		return (!anyBytes && t.Len() == 0) || plainData(t.Elem(), anyBytes)
	case reflect.Struct:
		for i := 0; i < t.NumField(); i++ {
			if !plainData(t.Field(i).Type, anyBytes) {
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
	if !plainData(t, true) || t.Size() == 0 || pt.Implements(customEncoder) || pt.Implements(marshaler) {
		return 0
	}
	return int(t.Size())
}

// batchFields is the length of a batch's msgpack array: format,
// detector, sender, the envelopes to route and the last-hop items.
const batchFields = 5

// EncodeMsgpack writes a batch: [format, detector, sender, items, final].
func (m batch[T]) EncodeMsgpack(enc *msgpack.Encoder) error {
	if err := enc.EncodeArrayLen(batchFields); err != nil {
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
		if err := enc.Encode(m.Items); err != nil {
			return err
		}
		return enc.Encode(m.Final)
	}
	// Never nil: msgpack writes a nil slice as nil, not as a binary string.
	if err := enc.EncodeBytes(appendEnvelopes(make([]byte, 0, len(m.Items)*(4+size)), m.Items, size)); err != nil {
		return err
	}
	return enc.EncodeBytes(appendBare(make([]byte, 0, len(m.Final)*size), m.Final, size))
}

// appendEnvelopes appends the records of items, each its destination (4
// bytes) and its size bytes.
func appendEnvelopes[T any](b []byte, items []Envelope[T], size int) []byte {
	b = slices.Grow(b, len(items)*(4+size))
	for i := range items {
		e := &items[i]
		d := uint32(e.Dest)
		b = append(b, byte(d), byte(d>>8), byte(d>>16), byte(d>>24))
		b = append(b, unsafe.Slice((*byte)(unsafe.Pointer(&e.Item)), size)...)
	}
	return b
}

// appendBare appends the bytes of last-hop items, size bytes each.
func appendBare[T any](b []byte, items []T, size int) []byte {
	if len(items) == 0 {
		return b
	}
	return append(b, unsafe.Slice((*byte)(unsafe.Pointer(&items[0])), len(items)*size)...)
}

// DecodeMsgpack reads a batch; a block whose length is not a whole number
// of items is an error that says so.
func (m *batch[T]) DecodeMsgpack(dec *msgpack.Decoder) error {
	n, err := dec.DecodeArrayLen()
	if err != nil {
		return err
	}
	if n != batchFields {
		return fmt.Errorf("tram: a batch of %d fields, want %d", n, batchFields)
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
		if m.Items, err = decodeSlice[Envelope[T]](dec); err != nil {
			return fmt.Errorf("tram: a batch's items: %w", err)
		}
		if m.Final, err = decodeSlice[T](dec); err != nil {
			return fmt.Errorf("tram: a batch's last-hop items: %w", err)
		}
		return nil
	case wireBlock:
	default:
		return fmt.Errorf("tram: a batch in format %d, want %d or %d", format, wireItems, wireBlock)
	}
	size := blockItem[T]()
	if size == 0 {
		return fmt.Errorf("tram: a binary batch of %v items, which travel item by item", reflect.TypeFor[T]())
	}
	block, err := readBin(dec)
	if err != nil {
		return fmt.Errorf("tram: a binary batch's block: %w", err)
	}
	final, err := readBin(dec)
	if err != nil {
		return fmt.Errorf("tram: a binary batch's last-hop block: %w", err)
	}
	return m.readBlocks(block, final, size)
}

// readBin reads a msgpack binary string (nil for nil) in pieces, so that
// a corrupt length costs no more memory than the bytes that are there:
// msgpack's DecodeBytes may allocate the whole length a header claims.
func readBin(dec *msgpack.Decoder) ([]byte, error) {
	n, err := dec.DecodeBytesLen()
	if err != nil || n <= 0 {
		return nil, err
	}
	const piece = 64 << 10
	b := make([]byte, 0, min(n, piece))
	for len(b) < n {
		k := min(n-len(b), piece)
		b = slices.Grow(b, k)[:len(b)+k]
		if err := dec.ReadFull(b[len(b)-k:]); err != nil {
			return nil, fmt.Errorf("a block of %d bytes cut short at %d: %w", n, len(b)-k, err)
		}
	}
	return b, nil
}

// maxPrealloc bounds the elements decodeSlice allocates before they arrive.
const maxPrealloc = 1024

// decodeSlice reads a msgpack array (nil for nil) growing the slice as
// elements arrive instead of trusting the length header: msgpack v5.4.1
// allocates every element a header claims (its allocation limit never
// applies), so a corrupt header could cost gigabytes.
func decodeSlice[E any](dec *msgpack.Decoder) ([]E, error) {
	n, err := dec.DecodeArrayLen()
	if err != nil || n < 0 {
		return nil, err
	}
	s := make([]E, 0, min(n, maxPrealloc))
	for i := range n {
		var zero E
		s = append(s, zero) // decoded in place: a local E would escape
		if err := dec.Decode(&s[i]); err != nil {
			return nil, fmt.Errorf("element %d of %d: %w", i, n, err)
		}
	}
	return s, nil
}

// readBlocks checks that both blocks hold whole records and reads them
// into m.Items and m.Final.
func (m *batch[T]) readBlocks(block, final []byte, size int) error {
	if rec := 4 + size; len(block)%rec != 0 {
		return fmt.Errorf("tram: a binary batch of %d bytes is not a whole number of %d-byte %v items", len(block), rec, reflect.TypeFor[T]())
	}
	if len(final)%size != 0 {
		return fmt.Errorf("tram: a binary batch's last-hop block of %d bytes is not a whole number of %d-byte %v items", len(final), size, reflect.TypeFor[T]())
	}
	m.Items = readBlock[T](block, size)
	m.Final = readBare[T](final, size)
	return nil
}

// readBlock makes the envelopes of a block whose length is a whole
// number of records, in a recycled buffer if one is at hand (the
// receiving branch recycles it once the items are routed).
func readBlock[T any](block []byte, size int) []Envelope[T] {
	rec, n := 4+size, len(block)/(4+size)
	if n == 0 {
		return nil // every last-hop batch of a 1-D grid: no buffer from the pool
	}
	var items []Envelope[T]
	if p, ok := poolOf[T]().Get().(*[]Envelope[T]); ok && cap(*p) >= n {
		items = (*p)[:n]
	} else {
		items = make([]Envelope[T], n)
	}
	for i := range items {
		e := &items[i]
		b := block[i*rec : (i+1)*rec]
		e.Dest = int(uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24)
		copy(unsafe.Slice((*byte)(unsafe.Pointer(&e.Item)), size), b[4:])
	}
	return items
}

// readBare makes the last-hop items of a block whose length is a whole
// number of items, in a recycled buffer if one is at hand; nil if none.
func readBare[T any](block []byte, size int) []T {
	n := len(block) / size
	if n == 0 {
		return nil
	}
	var items []T
	if p, ok := barePoolOf[T]().Get().(*[]T); ok && cap(*p) >= n {
		items = (*p)[:n]
	} else {
		items = make([]T, n)
	}
	copy(unsafe.Slice((*byte)(unsafe.Pointer(&items[0])), n*size), block)
	return items
}

// MarshalMsg appends the batch to b as EncodeMsgpack writes it: the
// runtime's codec calls it for a message body, so a block batch is
// written straight into the message, without an encoder or a block of its
// own.
func (m *batch[T]) MarshalMsg(b []byte) ([]byte, error) {
	size := blockItem[T]()
	if size == 0 { // item by item, as the runtime encodes by reflection
		w := appender{b}
		enc := msgpack.NewEncoder(&w)
		enc.UseArrayEncodedStructs(true)
		enc.UseCompactInts(true)
		if err := m.EncodeMsgpack(enc); err != nil {
			return b, err
		}
		return w.b, nil
	}
	n, nf := len(m.Items)*(4+size), len(m.Final)*size
	if uint64(n) > 1<<32-1 || uint64(nf) > 1<<32-1 {
		return b, fmt.Errorf("tram: a batch of %d + %d bytes is too large for one message", n, nf)
	}
	b = append(b, msgp.FixArrLo|batchFields, wireBlock) // a fixarray; the format, a fixint
	// The header's integers and lengths are written in their longest
	// forms, which msgpack allows for any value.
	d, from := uint64(m.Det.ID), uint64(int64(m.From))
	b = append(b, msgp.Uint64, byte(d>>56), byte(d>>48), byte(d>>40), byte(d>>32), byte(d>>24), byte(d>>16), byte(d>>8), byte(d))
	b = append(b, msgp.Int64, byte(from>>56), byte(from>>48), byte(from>>40), byte(from>>32), byte(from>>24), byte(from>>16), byte(from>>8), byte(from))
	b = slices.Grow(b, n+nf+10)
	b = append(b, msgp.Bin32, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	b = appendEnvelopes(b, m.Items, size)
	b = append(b, msgp.Bin32, byte(nf>>24), byte(nf>>16), byte(nf>>8), byte(nf))
	return appendBare(b, m.Final, size), nil
}

// UnmarshalMsg reads a batch from the start of b and returns the bytes
// after it. A block batch is read in place; anything else goes through
// DecodeMsgpack.
func (m *batch[T]) UnmarshalMsg(b []byte) ([]byte, error) {
	size := blockItem[T]()
	if size == 0 || len(b) < 2 || b[0] != msgp.FixArrLo|batchFields || b[1] != wireBlock {
		return m.unmarshalSlow(b)
	}
	// The header in any form msgpack allows (EncodeMsgpack writes the
	// shortest), read strictly.
	r := msgp.Reader{B: b, Off: 2}
	det, err := r.Uint(math.MaxUint64)
	if err != nil {
		return nil, fmt.Errorf("tram: a batch of %v items: the detector: %w", reflect.TypeFor[T](), err)
	}
	from, err := r.Int(math.MinInt, math.MaxInt)
	if err != nil {
		return nil, fmt.Errorf("tram: a batch of %v items: the source PE: %w", reflect.TypeFor[T](), err)
	}
	block, err := r.Bin()
	if err != nil {
		return nil, fmt.Errorf("tram: a batch of %v items: the block: %w", reflect.TypeFor[T](), err)
	}
	final, err := r.Bin()
	if err != nil {
		return nil, fmt.Errorf("tram: a batch of %v items: the last-hop block: %w", reflect.TypeFor[T](), err)
	}
	if err := m.readBlocks(block, final, size); err != nil {
		return nil, err
	}
	m.Det, m.From = chare.Detector{ID: actor.DetectorID(det)}, int(from)
	return b[r.Off:], nil
}

// appender is an io.Writer that appends to a byte slice.
type appender struct{ b []byte }

func (a *appender) Write(p []byte) (int, error) {
	a.b = append(a.b, p...)
	return len(p), nil
}

// batchWire is a batch's msgpack form item by item, as a type for
// mpcheck.SeqAs: an item of one byte (nil) becomes a whole T, and the
// check counts what the items will take.
type batchWire[T any] struct {
	_msgpack struct{} `msgpack:",as_array"`
	Format   int
	Det      uint64
	From     int
	Items    []Envelope[T]
	Final    []T
}

func (m *batch[T]) unmarshalSlow(b []byte) ([]byte, error) {
	// decodeSlice bounds the items a header claims, not what msgpack/v5
	// makes inside an item (a slice for a header's count, a level of
	// recursion per level of nesting): the bytes are checked first, a
	// pass that is small beside decoding item by item by reflection.
	if err := mpcheck.SeqAs(b, reflect.TypeFor[batchWire[T]]()); err != nil {
		return nil, fmt.Errorf("tram: a batch of %v items: %w", reflect.TypeFor[T](), err)
	}
	r := bytes.NewReader(b)
	dec := msgpack.GetDecoder()
	defer msgpack.PutDecoder(dec)
	dec.Reset(r)
	if err := m.DecodeMsgpack(dec); err != nil {
		return nil, err
	}
	return b[len(b)-r.Len():], nil
}
