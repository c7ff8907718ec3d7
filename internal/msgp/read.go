package msgp

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Error is a decoding error at byte Off of the input.
type Error struct {
	Off int
	Msg string
}

func (e *Error) Error() string { return fmt.Sprintf("%s (at byte %d)", e.Msg, e.Off) }

// Reader reads msgpack values from B, from Off on. Start is where the value
// being read starts; errors report it.
type Reader struct {
	B     []byte
	Off   int
	Start int
}

// Fail returns an error about the value being read.
func (r *Reader) Fail(format string, args ...any) error {
	return &Error{Off: r.Start, Msg: fmt.Sprintf(format, args...)}
}

// Code reads the type code that starts the next value.
func (r *Reader) Code() (byte, error) {
	r.Start = r.Off
	if r.Off >= len(r.B) {
		return 0, r.Fail("truncated")
	}
	c := r.B[r.Off]
	r.Off++
	return c, nil
}

// Next returns the following n bytes, aliasing B with the capacity cut to n.
func (r *Reader) Next(n int) ([]byte, error) {
	if left := len(r.B) - r.Off; n > left || n < 0 {
		return nil, r.Fail("truncated: needs %d bytes, %d left", n, left)
	}
	p := r.B[r.Off : r.Off+n : r.Off+n]
	r.Off += n
	return p, nil
}

// Length reads a big-endian length of size 1, 2 or 4 bytes.
func (r *Reader) Length(size int) (int, error) {
	p, err := r.Next(size)
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
	if uint64(n) > math.MaxInt { // where int has 32 bits
		return 0, r.Fail("length %d is beyond this platform", n)
	}
	return int(n), nil
}

// Integer reads the rest of an integer whose code c has been read. A
// negative value comes back as its two's complement with neg set.
func (r *Reader) Integer(c byte) (u uint64, neg bool, err error) {
	switch {
	case c <= PosFixMax:
		return uint64(c), false, nil
	case c >= NegFixLow:
		return uint64(int64(int8(c))), true, nil
	}
	var size int
	switch c {
	case Uint8, Int8:
		size = 1
	case Uint16, Int16:
		size = 2
	case Uint32, Int32:
		size = 4
	case Uint64, Int64:
		size = 8
	default:
		return 0, false, r.Fail("want an integer, found %s", Describe(c))
	}
	p, err := r.Next(size)
	if err != nil {
		return 0, false, err
	}
	var s int64
	switch c {
	case Uint8:
		return uint64(p[0]), false, nil
	case Uint16:
		return uint64(binary.BigEndian.Uint16(p)), false, nil
	case Uint32:
		return uint64(binary.BigEndian.Uint32(p)), false, nil
	case Uint64:
		return binary.BigEndian.Uint64(p), false, nil
	case Int8:
		s = int64(int8(p[0]))
	case Int16:
		s = int64(int16(binary.BigEndian.Uint16(p)))
	case Int32:
		s = int64(int32(binary.BigEndian.Uint32(p)))
	default: // Int64
		s = int64(binary.BigEndian.Uint64(p))
	}
	return uint64(s), s < 0, nil
}

// The fast paths of Int, Uint and Bin take the short forms that small values
// have; everything else, errors included, goes the general way.

// Int reads an integer that must lie in [lo, hi].
func (r *Reader) Int(lo, hi int64) (int64, error) {
	if r.Off < len(r.B) {
		if c := r.B[r.Off]; c <= PosFixMax && int64(c) >= lo && int64(c) <= hi {
			r.Off++
			return int64(c), nil
		}
	}
	return r.intSlow(lo, hi)
}

func (r *Reader) intSlow(lo, hi int64) (int64, error) {
	r.Start = r.Off
	u, neg, n := ReadInteger(r.B[min(r.Off, len(r.B)):])
	if n == 0 {
		return 0, r.integerError()
	}
	r.Off += n
	if !neg && u > uint64(hi) {
		return 0, r.Fail("%d exceeds %d", u, hi)
	}
	v := int64(u)
	if v < lo {
		if lo == 0 {
			return 0, r.Fail("%d is negative", v)
		}
		return 0, r.Fail("%d is below %d", v, lo)
	}
	return v, nil
}

// ReadInteger reads the integer, in any of msgpack's forms, at the start
// of p: a negative value comes back as its two's complement with neg set,
// and n is its length, 0 if p does not start with a whole integer. It is
// the pure step under Reader.Int and Reader.Uint, for a caller that reads
// integers back to back and asks a Reader for the error only when n is 0.
func ReadInteger(p []byte) (u uint64, neg bool, n int) {
	if len(p) == 0 {
		return 0, false, 0
	}
	c := p[0]
	switch {
	case c <= PosFixMax:
		return uint64(c), false, 1
	case c >= NegFixLow:
		return uint64(int64(int8(c))), true, 1
	}
	var s int64
	switch c {
	case Uint8:
		if len(p) < 2 {
			return 0, false, 0
		}
		return uint64(p[1]), false, 2
	case Uint16:
		if len(p) < 3 {
			return 0, false, 0
		}
		return uint64(binary.BigEndian.Uint16(p[1:])), false, 3
	case Uint32:
		if len(p) < 5 {
			return 0, false, 0
		}
		return uint64(binary.BigEndian.Uint32(p[1:])), false, 5
	case Uint64:
		if len(p) < 9 {
			return 0, false, 0
		}
		return binary.BigEndian.Uint64(p[1:]), false, 9
	case Int8:
		if len(p) < 2 {
			return 0, false, 0
		}
		s, n = int64(int8(p[1])), 2
	case Int16:
		if len(p) < 3 {
			return 0, false, 0
		}
		s, n = int64(int16(binary.BigEndian.Uint16(p[1:]))), 3
	case Int32:
		if len(p) < 5 {
			return 0, false, 0
		}
		s, n = int64(int32(binary.BigEndian.Uint32(p[1:]))), 5
	case Int64:
		if len(p) < 9 {
			return 0, false, 0
		}
		s, n = int64(binary.BigEndian.Uint64(p[1:])), 9
	default:
		return 0, false, 0
	}
	return uint64(s), s < 0, n
}

// integerError is the error of an integer that ReadInteger could not read:
// Code and Integer say what was wrong.
func (r *Reader) integerError() error {
	c, err := r.Code()
	if err == nil {
		_, _, err = r.Integer(c)
	}
	if err == nil { // cannot happen: ReadInteger and Integer agree
		err = r.Fail("want an integer")
	}
	return err
}

// Uint reads an integer that must lie in [0, hi].
func (r *Reader) Uint(hi uint64) (uint64, error) {
	if r.Off < len(r.B) {
		if c := r.B[r.Off]; c <= PosFixMax && uint64(c) <= hi {
			r.Off++
			return uint64(c), nil
		}
	}
	return r.uintSlow(hi)
}

func (r *Reader) uintSlow(hi uint64) (uint64, error) {
	r.Start = r.Off
	u, neg, n := ReadInteger(r.B[min(r.Off, len(r.B)):])
	if n == 0 {
		return 0, r.integerError()
	}
	r.Off += n
	if neg {
		return 0, r.Fail("%d is negative", int64(u))
	}
	if u > hi {
		return 0, r.Fail("%d exceeds %d", u, hi)
	}
	return u, nil
}

// Float reads a float of either size, or an integer (msgpack/v5 writes whole
// floats as floats, but reads integers into floats too).
func (r *Reader) Float() (float64, error) {
	c, err := r.Code()
	if err != nil {
		return 0, err
	}
	switch c {
	case Float:
		p, err := r.Next(4)
		if err != nil {
			return 0, err
		}
		return float64(math.Float32frombits(binary.BigEndian.Uint32(p))), nil
	case Double:
		p, err := r.Next(8)
		if err != nil {
			return 0, err
		}
		return math.Float64frombits(binary.BigEndian.Uint64(p)), nil
	}
	u, neg, err := r.Integer(c)
	if err != nil {
		return 0, r.Fail("want a float, found %s", Describe(c))
	}
	if neg {
		return float64(int64(u)), nil
	}
	return float64(u), nil
}

// Str reads a string (not binary, not nil), aliasing B.
func (r *Reader) Str() ([]byte, error) {
	c, err := r.Code()
	if err != nil {
		return nil, err
	}
	var n int
	switch {
	case c >= FixStrLo && c <= FixStrHi:
		n = int(c - FixStrLo)
	case c == Str8:
		n, err = r.Length(1)
	case c == Str16:
		n, err = r.Length(2)
	case c == Str32:
		n, err = r.Length(4)
	default:
		return nil, r.Fail("want a string, found %s", Describe(c))
	}
	if err != nil {
		return nil, err
	}
	return r.Next(n)
}

// Bin reads binary, aliasing B, or nil (returned as nil).
func (r *Reader) Bin() ([]byte, error) {
	if o := r.Off; o+1 < len(r.B) && r.B[o] == Bin8 {
		if s, n := o+2, int(r.B[o+1]); n <= len(r.B)-s {
			r.Start, r.Off = o, s+n
			return r.B[s : s+n : s+n], nil
		}
	}
	return r.binSlow()
}

func (r *Reader) binSlow() ([]byte, error) {
	c, err := r.Code()
	if err != nil {
		return nil, err
	}
	var n int
	switch c {
	case Nil:
		return nil, nil
	case Bin8:
		n, err = r.Length(1)
	case Bin16:
		n, err = r.Length(2)
	case Bin32:
		n, err = r.Length(4)
	default:
		return nil, r.Fail("want binary, found %s", Describe(c))
	}
	if err != nil {
		return nil, err
	}
	return r.Next(n)
}

// Bytes reads a string or binary, aliasing B, or nil.
func (r *Reader) Bytes() (p []byte, isNil bool, err error) {
	c, err := r.Code()
	if err != nil {
		return nil, false, err
	}
	var n int
	switch {
	case c >= FixStrLo && c <= FixStrHi:
		n = int(c - FixStrLo)
	case c == Nil:
		return nil, true, nil
	case c == Str8, c == Bin8:
		n, err = r.Length(1)
	case c == Str16, c == Bin16:
		n, err = r.Length(2)
	case c == Str32, c == Bin32:
		n, err = r.Length(4)
	default:
		return nil, false, r.Fail("want a string or binary, found %s", Describe(c))
	}
	if err != nil {
		return nil, false, err
	}
	p, err = r.Next(n)
	return p, false, err
}

// ArrayLen reads an array header, or nil. The length is not checked against
// the input here: callers do, with the size of their elements, before they
// allocate.
func (r *Reader) ArrayLen() (n int, isNil bool, err error) {
	c, err := r.Code()
	if err != nil {
		return 0, false, err
	}
	switch {
	case c >= FixArrLo && c <= FixArrHi:
		return int(c - FixArrLo), false, nil
	case c == Nil:
		return 0, true, nil
	case c == Arr16:
		n, err = r.Length(2)
	case c == Arr32:
		n, err = r.Length(4)
	default:
		return 0, false, r.Fail("want an array, found %s", Describe(c))
	}
	return n, false, err
}
