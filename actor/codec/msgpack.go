package codec

import (
	"encoding/binary"
	"fmt"
	"math"
)

// msgpack type codes (the tests check them against msgpack/v5's msgpcode).
const (
	codePosFixMax = 0x7f
	codeFixMapLo  = 0x80
	codeFixMapHi  = 0x8f
	codeFixArrLo  = 0x90
	codeFixArrHi  = 0x9f
	codeFixStrLo  = 0xa0
	codeFixStrHi  = 0xbf
	codeNil       = 0xc0
	codeFalse     = 0xc2
	codeTrue      = 0xc3
	codeBin8      = 0xc4
	codeBin16     = 0xc5
	codeBin32     = 0xc6
	codeExt8      = 0xc7
	codeExt32     = 0xc9
	codeFloat     = 0xca
	codeDouble    = 0xcb
	codeUint8     = 0xcc
	codeUint16    = 0xcd
	codeUint32    = 0xce
	codeUint64    = 0xcf
	codeInt8      = 0xd0
	codeInt16     = 0xd1
	codeInt32     = 0xd2
	codeInt64     = 0xd3
	codeFixExt1   = 0xd4
	codeFixExt16  = 0xd8
	codeStr8      = 0xd9
	codeStr16     = 0xda
	codeStr32     = 0xdb
	codeArr16     = 0xdc
	codeArr32     = 0xdd
	codeMap16     = 0xde
	codeMap32     = 0xdf
	codeNegFixLow = 0xe0
)

// Writing: the shortest forms, as msgpack/v5 chooses them.

func appendUint(b []byte, n uint64) []byte {
	switch {
	case n <= codePosFixMax:
		return append(b, byte(n))
	case n <= math.MaxUint8:
		return append(b, codeUint8, byte(n))
	case n <= math.MaxUint16:
		return binary.BigEndian.AppendUint16(append(b, codeUint16), uint16(n))
	case n <= math.MaxUint32:
		return binary.BigEndian.AppendUint32(append(b, codeUint32), uint32(n))
	}
	return binary.BigEndian.AppendUint64(append(b, codeUint64), n)
}

func appendInt(b []byte, n int64) []byte {
	switch {
	case n >= 0:
		return appendUint(b, uint64(n))
	case n >= -32:
		return append(b, byte(n))
	case n >= math.MinInt8:
		return append(b, codeInt8, byte(n))
	case n >= math.MinInt16:
		return binary.BigEndian.AppendUint16(append(b, codeInt16), uint16(n))
	case n >= math.MinInt32:
		return binary.BigEndian.AppendUint32(append(b, codeInt32), uint32(n))
	}
	return binary.BigEndian.AppendUint64(append(b, codeInt64), uint64(n))
}

func appendArrayLen(b []byte, n int) []byte {
	switch {
	case n < 16:
		return append(b, codeFixArrLo+byte(n))
	case n <= math.MaxUint16:
		return binary.BigEndian.AppendUint16(append(b, codeArr16), uint16(n))
	}
	return binary.BigEndian.AppendUint32(append(b, codeArr32), uint32(n))
}

func appendStrLen(b []byte, n int) []byte {
	switch {
	case n < 32:
		return append(b, codeFixStrLo+byte(n))
	case n <= math.MaxUint8:
		return append(b, codeStr8, byte(n))
	case n <= math.MaxUint16:
		return binary.BigEndian.AppendUint16(append(b, codeStr16), uint16(n))
	}
	return binary.BigEndian.AppendUint32(append(b, codeStr32), uint32(n))
}

func appendBinLen(b []byte, n int) []byte {
	switch {
	case n <= math.MaxUint8:
		return append(b, codeBin8, byte(n))
	case n <= math.MaxUint16:
		return binary.BigEndian.AppendUint16(append(b, codeBin16), uint16(n))
	}
	return binary.BigEndian.AppendUint32(append(b, codeBin32), uint32(n))
}

// reader reads msgpack strictly from b: every read checks the bytes left.
type reader struct {
	b     []byte
	off   int // next byte
	start int // where the value being read starts, for errors
}

func (r *reader) failAt(off int, format string, args ...any) error {
	return &decErr{off: off, msg: fmt.Sprintf(format, args...)}
}

func (r *reader) code() (byte, error) {
	r.start = r.off
	if r.off >= len(r.b) {
		return 0, r.failAt(r.off, "truncated")
	}
	c := r.b[r.off]
	r.off++
	return c, nil
}

func (r *reader) next(n int) ([]byte, error) {
	if left := len(r.b) - r.off; n > left || n < 0 {
		return nil, r.failAt(r.start, "truncated: needs %d bytes, %d left", n, left)
	}
	p := r.b[r.off : r.off+n : r.off+n]
	r.off += n
	return p, nil
}

func (r *reader) length(size int) (int, error) {
	p, err := r.next(size)
	if err != nil {
		return 0, err
	}
	switch size {
	case 1:
		return int(p[0]), nil
	case 2:
		return int(binary.BigEndian.Uint16(p)), nil
	}
	n := binary.BigEndian.Uint32(p)
	if uint64(n) > math.MaxInt {
		return 0, r.failAt(r.start, "length %d is beyond this platform", n)
	}
	return int(n), nil
}

// integer reads any msgpack integer; a negative one comes back as its two's
// complement with neg set.
func (r *reader) integer(c byte) (u uint64, neg bool, err error) {
	switch {
	case c <= codePosFixMax:
		return uint64(c), false, nil
	case c >= codeNegFixLow:
		return uint64(int64(int8(c))), true, nil
	}
	var size int
	switch c {
	case codeUint8, codeInt8:
		size = 1
	case codeUint16, codeInt16:
		size = 2
	case codeUint32, codeInt32:
		size = 4
	case codeUint64, codeInt64:
		size = 8
	default:
		return 0, false, r.failAt(r.start, "want an integer, found %s", describe(c))
	}
	p, err := r.next(size)
	if err != nil {
		return 0, false, err
	}
	var s int64
	switch c {
	case codeUint8:
		return uint64(p[0]), false, nil
	case codeUint16:
		return uint64(binary.BigEndian.Uint16(p)), false, nil
	case codeUint32:
		return uint64(binary.BigEndian.Uint32(p)), false, nil
	case codeUint64:
		return binary.BigEndian.Uint64(p), false, nil
	case codeInt8:
		s = int64(int8(p[0]))
	case codeInt16:
		s = int64(int16(binary.BigEndian.Uint16(p)))
	case codeInt32:
		s = int64(int32(binary.BigEndian.Uint32(p)))
	default:
		s = int64(binary.BigEndian.Uint64(p))
	}
	return uint64(s), s < 0, nil
}

// int reads an integer in [lo, hi].
func (r *reader) int(lo, hi int64) (int64, error) {
	if r.off < len(r.b) { // the short form, fast
		if c := r.b[r.off]; c <= codePosFixMax && int64(c) <= hi {
			r.off++
			return int64(c), nil
		}
	}
	c, err := r.code()
	if err != nil {
		return 0, err
	}
	u, neg, err := r.integer(c)
	if err != nil {
		return 0, err
	}
	if !neg && u > uint64(hi) {
		return 0, r.failAt(r.start, "%d exceeds %d", u, hi)
	}
	if v := int64(u); neg && v < lo {
		return 0, r.failAt(r.start, "%d is below %d", v, lo)
	}
	return int64(u), nil
}

// uint reads an integer in [0, hi].
func (r *reader) uint(hi uint64) (uint64, error) {
	if r.off < len(r.b) {
		if c := r.b[r.off]; c <= codePosFixMax && uint64(c) <= hi {
			r.off++
			return uint64(c), nil
		}
	}
	c, err := r.code()
	if err != nil {
		return 0, err
	}
	u, neg, err := r.integer(c)
	if err != nil {
		return 0, err
	}
	if neg {
		return 0, r.failAt(r.start, "%d is negative", int64(u))
	}
	if u > hi {
		return 0, r.failAt(r.start, "%d exceeds %d", u, hi)
	}
	return u, nil
}

// float reads a float of either size, or an integer (msgpack/v5 writes
// whole floats as floats, but reads integers into floats too).
func (r *reader) float() (float64, error) {
	c, err := r.code()
	if err != nil {
		return 0, err
	}
	switch c {
	case codeFloat:
		p, err := r.next(4)
		if err != nil {
			return 0, err
		}
		return float64(math.Float32frombits(binary.BigEndian.Uint32(p))), nil
	case codeDouble:
		p, err := r.next(8)
		if err != nil {
			return 0, err
		}
		return math.Float64frombits(binary.BigEndian.Uint64(p)), nil
	}
	u, neg, err := r.integer(c)
	if err != nil {
		return 0, r.failAt(r.start, "want a float, found %s", describe(c))
	}
	if neg {
		return float64(int64(u)), nil
	}
	return float64(u), nil
}

// bytes reads a string or binary, aliasing the input, or nil.
func (r *reader) bytes() (p []byte, isNil bool, err error) {
	c, err := r.code()
	if err != nil {
		return nil, false, err
	}
	var n int
	switch {
	case c >= codeFixStrLo && c <= codeFixStrHi:
		n = int(c - codeFixStrLo)
	case c == codeNil:
		return nil, true, nil
	case c == codeStr8, c == codeBin8:
		n, err = r.length(1)
	case c == codeStr16, c == codeBin16:
		n, err = r.length(2)
	case c == codeStr32, c == codeBin32:
		n, err = r.length(4)
	default:
		return nil, false, r.failAt(r.start, "want a string or binary, found %s", describe(c))
	}
	if err != nil {
		return nil, false, err
	}
	p, err = r.next(n)
	return p, false, err
}

// arrayLen reads an array header, or nil. Callers check the length against
// what remains before they allocate.
func (r *reader) arrayLen() (n int, isNil bool, err error) {
	c, err := r.code()
	if err != nil {
		return 0, false, err
	}
	switch {
	case c >= codeFixArrLo && c <= codeFixArrHi:
		return int(c - codeFixArrLo), false, nil
	case c == codeNil:
		return 0, true, nil
	case c == codeArr16:
		n, err = r.length(2)
	case c == codeArr32:
		n, err = r.length(4)
	default:
		return 0, false, r.failAt(r.start, "want an array, found %s", describe(c))
	}
	return n, false, err
}

func (r *reader) found(isNil bool, n int) string {
	if isNil {
		return "nil"
	}
	return fmt.Sprintf("%d", n)
}

func foundBytes(isNil bool, n int) string {
	if isNil {
		return "nil"
	}
	return fmt.Sprintf("%d", n)
}

// describe names the msgpack type that code c starts.
func describe(c byte) string {
	switch {
	case c <= codePosFixMax, c >= codeNegFixLow, c >= codeUint8 && c <= codeInt64:
		return "an integer"
	case c >= codeFixMapLo && c <= codeFixMapHi, c == codeMap16, c == codeMap32:
		return "a map"
	case c >= codeFixArrLo && c <= codeFixArrHi, c == codeArr16, c == codeArr32:
		return "an array"
	case c >= codeFixStrLo && c <= codeFixStrHi, c >= codeStr8 && c <= codeStr32:
		return "a string"
	case c == codeNil:
		return "nil"
	case c == codeFalse, c == codeTrue:
		return "a bool"
	case c >= codeBin8 && c <= codeBin32:
		return "binary"
	case c == codeFloat, c == codeDouble:
		return "a float"
	case c >= codeExt8 && c <= codeExt32, c >= codeFixExt1 && c <= codeFixExt16:
		return "an extension"
	}
	return fmt.Sprintf("the unused code %#x", c)
}
