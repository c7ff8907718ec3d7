package wire

import (
	"fmt"
	"math"

	"github.com/charmgo/charm/internal/msgp"
	"github.com/charmgo/charm/internal/bigbuf"
)

// frameLen is the number of elements of the top-level array.
const frameLen = 8

// AppendFrame appends the encoding of f to dst and returns the extended
// slice; it allocates only if dst must grow, and then once, for the
// frame's length ([Size]; a long one with an eighth more, see
// bigbuf.Grow). A long body is copied in pieces that the
// scheduler can preempt between (a message of hundreds of megabytes must
// not hold its processor for seconds: see package bigbuf).
//
// It refuses frames that [DecodeFrame] would reject (an unknown Kind, a
// negative From or PE, a field longer than msgpack can describe); dst is
// then returned unchanged.
func AppendFrame(dst []byte, f *Frame) ([]byte, error) {
	if err := check(f); err != nil {
		return dst, err
	}
	dst = bigbuf.Grow(dst, Size(f))
	dst, _ = appendFrame(dst, f, math.MaxInt, nil)
	return dst, nil
}

// A cut is a body that appendFrame left out of its output: it belongs at
// offset at of that output.
type cut struct {
	at   int
	body []byte
}

// appendFrame appends f's encoding to b, except bodies longer than inline
// (the frame's Body, items' Body), which it leaves out and lists in cuts,
// in order. The encoding is what msgpack/v5 writes for the same values:
// the shortest form of each integer and header ([Size] counts the same).
func appendFrame(b []byte, f *Frame, inline int, cuts []cut) ([]byte, []cut) {
	body := func(p []byte, bin bool) {
		switch {
		case p == nil && bin:
			b = append(b, msgp.Nil)
			return
		case bin:
			b = appendBinHeader(b, len(p))
		}
		if len(p) > inline {
			cuts = append(cuts, cut{len(b), p})
			return
		}
		b = bigbuf.Append(b, p)
	}
	b = append(b, msgp.FixArrLo+frameLen)
	b = appendUint(b, Version)
	b = appendUint(b, uint64(f.Kind))
	b = appendStrHeader(b, len(f.Token))
	b = append(b, f.Token...)
	b = appendInt(b, int64(f.From))
	b = appendUint(b, f.Seq)
	b = appendInt(b, int64(f.Code))
	body(f.Body, true) // nil stays nil
	if f.Items == nil {
		return append(b, msgp.Nil), cuts
	}
	b = appendArrayHeader(b, len(f.Items))
	for i := range f.Items {
		it := &f.Items[i]
		if it.Tails == 0 {
			b = append(b, msgp.FixArrLo+itemFieldCount)
			b = appendInt(b, int64(it.PE))
			b = appendUint(b, uint64(it.Kind))
			body(it.Body, true)
			continue
		}
		b = append(b, msgp.FixArrLo+runFieldCount)
		b = appendInt(b, int64(it.PE))
		b = appendUint(b, uint64(it.Kind))
		if it.Head == nil {
			b = append(b, msgp.Nil)
		} else {
			b = append(appendBinHeader(b, len(it.Head)), it.Head...)
		}
		b = appendArrayHeader(b, it.Tails)
		body(it.Body, false) // the tails, already binaries
	}
	return b, cuts
}

func appendUint(b []byte, n uint64) []byte {
	switch {
	case n <= math.MaxInt8:
		return append(b, byte(n))
	case n <= math.MaxUint8:
		return append(b, msgp.Uint8, byte(n))
	case n <= math.MaxUint16:
		return append(b, msgp.Uint16, byte(n>>8), byte(n))
	case n <= math.MaxUint32:
		return append(b, msgp.Uint32, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	}
	return append(b, msgp.Uint64, byte(n>>56), byte(n>>48), byte(n>>40), byte(n>>32), byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
}

func appendInt(b []byte, n int64) []byte {
	switch {
	case n >= 0:
		return appendUint(b, uint64(n))
	case n >= -32:
		return append(b, byte(n))
	case n >= math.MinInt8:
		return append(b, msgp.Int8, byte(n))
	case n >= math.MinInt16:
		return append(b, msgp.Int16, byte(n>>8), byte(n))
	case n >= math.MinInt32:
		return append(b, msgp.Int32, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	}
	return append(b, msgp.Int64, byte(n>>56), byte(n>>48), byte(n>>40), byte(n>>32), byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
}

func appendStrHeader(b []byte, n int) []byte {
	switch {
	case n < 32:
		return append(b, msgp.FixStrLo+byte(n))
	case n <= math.MaxUint8:
		return append(b, msgp.Str8, byte(n))
	case n <= math.MaxUint16:
		return append(b, msgp.Str16, byte(n>>8), byte(n))
	}
	return append(b, msgp.Str32, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
}

func appendArrayHeader(b []byte, n int) []byte {
	switch {
	case n < 16:
		return append(b, msgp.FixArrLo+byte(n))
	case n <= math.MaxUint16:
		return append(b, msgp.Arr16, byte(n>>8), byte(n))
	}
	return append(b, msgp.Arr32, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
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
