package wire

import (
	"bytes"
	"fmt"
	"math"
	"sync"

	"github.com/charmgo/charm/actor/internal/msgp"
	"github.com/vmihailenco/msgpack/v5"
)

// frameLen is the number of elements of the top-level array.
const frameLen = 8

type encoder struct {
	buf bytes.Buffer
	enc *msgpack.Encoder
}

// encoders reuses msgpack encoders and their buffers: a fresh encoder per
// frame costs allocations, and frames are sent at high rates. (Encoding
// into the buffer and copying it out measured faster than having the
// encoder append to dst through an io.Writer.) The pool drops its buffers
// at garbage collection only while it is idle: under steady traffic a
// buffer goes out and back between collections, so one that a long frame
// grew past keptEncoderBuf is dropped instead (a message of a gigabyte
// must not pin its size for the rest of the job).
var encoders = sync.Pool{New: func() any {
	e := new(encoder)
	e.enc = msgpack.NewEncoder(&e.buf)
	return e
}}

// keptEncoderBuf is the largest buffer encoders keeps: a frame of the
// usual size, at most MaxFrame, and some.
const keptEncoderBuf = MaxFrame + MaxFrame/2

// AppendFrame appends the encoding of f to dst and returns the extended
// slice; it allocates only if dst must grow, and then once.
//
// It refuses frames that [DecodeFrame] would reject (an unknown Kind, a
// negative From or PE, a field longer than msgpack can describe); dst is
// then returned unchanged.
func AppendFrame(dst []byte, f *Frame) ([]byte, error) {
	if err := check(f); err != nil {
		return dst, err
	}
	e := encoders.Get().(*encoder)
	e.buf.Reset()
	enc := e.enc
	// Writes to a bytes.Buffer do not fail, so neither do these calls.
	_ = enc.EncodeArrayLen(frameLen)
	_ = enc.EncodeUint(Version)
	_ = enc.EncodeUint(uint64(f.Kind))
	_ = enc.EncodeString(f.Token)
	_ = enc.EncodeInt(int64(f.From))
	_ = enc.EncodeUint(f.Seq)
	_ = enc.EncodeInt(int64(f.Code))
	_ = enc.EncodeBytes(f.Body) // nil stays nil
	if f.Items == nil {
		_ = enc.EncodeNil()
	} else {
		_ = enc.EncodeArrayLen(len(f.Items))
		for i := range f.Items {
			it := &f.Items[i]
			if it.Tails == 0 {
				_ = enc.EncodeArrayLen(itemFieldCount)
				_ = enc.EncodeInt(int64(it.PE))
				_ = enc.EncodeUint(uint64(it.Kind))
				_ = enc.EncodeBytes(it.Body)
				continue
			}
			_ = enc.EncodeArrayLen(runFieldCount)
			_ = enc.EncodeInt(int64(it.PE))
			_ = enc.EncodeUint(uint64(it.Kind))
			_ = enc.EncodeBytes(it.Head)
			_ = enc.EncodeArrayLen(it.Tails)
			_, _ = e.buf.Write(it.Body) // the tails, already binaries
		}
	}
	dst = append(dst, e.buf.Bytes()...)
	if e.buf.Cap() <= keptEncoderBuf {
		encoders.Put(e)
	}
	return dst, nil
}

// check rejects what AppendFrame must not encode.
func check(f *Frame) error {
	if f == nil {
		return fmt.Errorf("wire: cannot encode a nil frame")
	}
	if !f.Kind.Valid() {
		return fmt.Errorf("wire: cannot encode frame: unknown kind %d", f.Kind)
	}
	if f.From < 0 {
		return fmt.Errorf("wire: cannot encode frame: from: node %d is negative", f.From)
	}
	if tooLong(len(f.Token)) || tooLong(len(f.Body)) || tooLong(len(f.Items)) {
		return fmt.Errorf("wire: cannot encode frame: a field is longer than 4 GiB")
	}
	for i := range f.Items {
		it := &f.Items[i]
		if it.PE < 0 {
			return fmt.Errorf("wire: cannot encode frame: item %d: PE %d is negative", i, it.PE)
		}
		if tooLong(len(it.Body)) || tooLong(len(it.Head)) || tooLong(it.Tails) {
			return fmt.Errorf("wire: cannot encode frame: item %d: body is longer than 4 GiB", i)
		}
		if it.Tails < 0 {
			return fmt.Errorf("wire: cannot encode frame: item %d: %d tails", i, it.Tails)
		}
		if it.Tails > 0 {
			d := decoder{Reader: msgp.Reader{B: it.Body}, item: i}
			if err := d.tails(it.Tails); err != nil || d.Off != len(it.Body) {
				return fmt.Errorf("wire: cannot encode frame: item %d: its body is not %d tails", i, it.Tails)
			}
		}
	}
	return nil
}

// tooLong reports whether n exceeds msgpack's 32-bit lengths.
func tooLong(n int) bool { return uint64(n) > math.MaxUint32 }

// Size returns the exact length of f's encoding.
func Size(f *Frame) int {
	n := 1 + 1 + uintSize(uint64(f.Kind)) + strSize(len(f.Token)) +
		intSize(int64(f.From)) + uintSize(f.Seq) + intSize(int64(f.Code)) + binSize(f.Body)
	if f.Items == nil {
		return n + 1
	}
	n += arrayHeaderSize(len(f.Items))
	for i := range f.Items {
		n += f.Items[i].Size()
	}
	return n
}

// Size returns the length of the item's encoding inside a frame (a run's
// whole encoding). A data
// frame's Items field takes the sum of its items' sizes plus an array
// header of 1, 3 or 5 bytes.
func (it Item) Size() int {
	n := 1 + intSize(int64(it.PE)) + uintSize(uint64(it.Kind))
	if it.Tails == 0 {
		return n + binSize(it.Body)
	}
	return n + binSize(it.Head) + arrayHeaderSize(it.Tails) + len(it.Body)
}

// The sizes below follow the msgpack encoder's choices: the shortest form.

func uintSize(n uint64) int {
	switch {
	case n <= math.MaxInt8:
		return 1
	case n <= math.MaxUint8:
		return 2
	case n <= math.MaxUint16:
		return 3
	case n <= math.MaxUint32:
		return 5
	}
	return 9
}

func intSize(n int64) int {
	switch {
	case n >= 0:
		return uintSize(uint64(n))
	case n >= -32:
		return 1
	case n >= math.MinInt8:
		return 2
	case n >= math.MinInt16:
		return 3
	case n >= math.MinInt32:
		return 5
	}
	return 9
}

func strSize(n int) int {
	switch {
	case n < 32:
		return 1 + n
	case n <= math.MaxUint8:
		return 2 + n
	case n <= math.MaxUint16:
		return 3 + n
	}
	return 5 + n
}

func binSize(b []byte) int {
	n := len(b)
	switch {
	case b == nil:
		return 1
	case n <= math.MaxUint8:
		return 2 + n
	case n <= math.MaxUint16:
		return 3 + n
	}
	return 5 + n
}

func arrayHeaderSize(n int) int {
	switch {
	case n < 16:
		return 1
	case n <= math.MaxUint16:
		return 3
	}
	return 5
}
