package wire

import (
	"encoding/binary"
	"fmt"
	"math"
)

// msgpack type codes. They are the values of msgpack/v5's msgpcode
// variables, as constants so that the decoder can switch on them (a test
// checks that they agree).
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

const (
	itemFieldCount = 3
	runFieldCount  = 4
	minItemSize    = 4  // fixarray(3), PE, kind, nil body: one byte each
	minTailSize    = 2  // bin8 of length 0
	noItem         = -1 // decoder.item outside the items
)

// DecodeFrame decodes one frame, which must fill b exactly.
//
// The Body of the frame and of each item alias b (with their capacity cut
// to their length, so appending to one cannot overwrite another): b must not
// be modified while the frame is in use. The receiver decodes item bodies
// right away, so this saves a copy per message. The Token is copied.
//
// DecodeFrame never panics, and never allocates more than a small multiple
// of len(b): every declared length is checked against the bytes that remain
// before anything is allocated. Every error wraps [ErrCorrupt] and says which
// field (and which item) is wrong and at which byte.
func DecodeFrame(b []byte) (*Frame, error) {
	d := decoder{b: b, item: noItem}
	n, isNil, err := d.arrayHeader("frame")
	if err != nil {
		return nil, err
	}
	if isNil || n == 0 {
		return nil, d.fail("frame", "an empty frame has no version")
	}
	v, err := d.int("version", math.MinInt64, math.MaxInt64)
	if err != nil {
		return nil, err
	}
	if v != Version {
		return nil, &corruptError{fmt.Sprintf("wire: frame version %d, this program speaks %d", v, Version)}
	}
	if n != frameLen {
		return nil, d.fail("frame", "version %d frame has %d fields, want %d", Version, n, frameLen)
	}

	f := new(Frame)
	k, err := d.uint("kind", math.MaxUint8)
	if err != nil {
		return nil, err
	}
	f.Kind = FrameKind(k)
	if !f.Kind.Valid() {
		return nil, d.fail("kind", "unknown kind %d", k)
	}
	if f.Token, err = d.str("token"); err != nil {
		return nil, err
	}
	from, err := d.int("from", 0, math.MaxInt)
	if err != nil {
		return nil, err
	}
	f.From = int(from)
	if f.Seq, err = d.uint("seq", math.MaxUint64); err != nil {
		return nil, err
	}
	code, err := d.int("code", math.MinInt, math.MaxInt)
	if err != nil {
		return nil, err
	}
	f.Code = int(code)
	if f.Body, err = d.bin("body"); err != nil {
		return nil, err
	}
	if f.Items, err = d.items(); err != nil {
		return nil, err
	}
	if d.off != len(b) {
		d.start = d.off
		return nil, d.fail("frame", "%d trailing bytes", len(b)-d.off)
	}
	return f, nil
}

func (d *decoder) items() ([]Item, error) {
	n, isNil, err := d.arrayHeader("items")
	if err != nil || isNil {
		return nil, err
	}
	// Each item takes at least minItemSize bytes: a count that the rest of
	// the input cannot hold is rejected before the slice is allocated.
	if left := len(d.b) - d.off; n > left/minItemSize {
		return nil, d.fail("items", "%d items declared, but only %d bytes left", n, left)
	}
	items := make([]Item, n)
	for i := range items {
		d.item = i
		it := &items[i]
		m := itemFieldCount
		if d.off < len(d.b) && d.b[d.off] == codeFixArrLo+itemFieldCount {
			d.off++ // the usual headers, read fast
		} else if d.off < len(d.b) && d.b[d.off] == codeFixArrLo+runFieldCount {
			d.off++
			m = runFieldCount
		} else {
			var err error
			if m, _, err = d.arrayHeader("item"); err != nil {
				return nil, err
			}
			if m != itemFieldCount && m != runFieldCount {
				return nil, d.fail("item", "%d fields, want %d (a message) or %d (a run)", m, itemFieldCount, runFieldCount)
			}
		}
		pe, err := d.int("PE", 0, math.MaxInt32)
		if err != nil {
			return nil, err
		}
		it.PE = int32(pe)
		k, err := d.uint("kind", math.MaxUint16)
		if err != nil {
			return nil, err
		}
		it.Kind = uint16(k)
		if m == itemFieldCount {
			if it.Body, err = d.bin("body"); err != nil {
				return nil, err
			}
			continue
		}
		if it.Head, err = d.bin("head"); err != nil {
			return nil, err
		}
		n, isNil, err := d.arrayHeader("tails")
		if err != nil {
			return nil, err
		}
		if isNil || n == 0 {
			return nil, d.fail("tails", "a run without tails")
		}
		if left := len(d.b) - d.off; n > left/minTailSize {
			return nil, d.fail("tails", "%d tails declared, but only %d bytes left", n, left)
		}
		start := d.off
		if err := d.tails(n); err != nil {
			return nil, err
		}
		it.Tails, it.Body = n, d.b[start:d.off:d.off]
	}
	d.item = noItem
	return items, nil
}

// tails checks n tails, each a msgpack binary (not nil).
func (d *decoder) tails(n int) error {
	for range n {
		if _, err := d.tail(); err != nil {
			return err
		}
	}
	return nil
}

func (d *decoder) tail() ([]byte, error) {
	if d.off < len(d.b) && d.b[d.off] == codeNil {
		d.start = d.off
		return nil, d.fail("tail", "want binary, found nil")
	}
	return d.bin("tail")
}

// decoder reads msgpack values from b strictly: each field must have the
// msgpack type its Go type calls for (an integer for an int, a string for a
// string, binary or nil for a []byte), and must fit it.
type decoder struct {
	b     []byte
	off   int // next byte to read
	start int // where the field being read starts, for errors
	item  int // the item being read, or noItem
}

func (d *decoder) fail(field, format string, args ...any) error {
	where := field
	if d.item != noItem {
		where = fmt.Sprintf("item %d: %s", d.item, field)
	}
	return &corruptError{fmt.Sprintf("wire: corrupt frame: %s: %s (at byte %d)",
		where, fmt.Sprintf(format, args...), d.start)}
}

// code reads the type code that starts the next field.
func (d *decoder) code(field string) (byte, error) {
	d.start = d.off
	if d.off >= len(d.b) {
		return 0, d.fail(field, "truncated")
	}
	c := d.b[d.off]
	d.off++
	return c, nil
}

// next returns the following n bytes, capacity cut to n.
func (d *decoder) next(field string, n int) ([]byte, error) {
	if left := len(d.b) - d.off; n > left {
		return nil, d.fail(field, "truncated: needs %d bytes, %d left", n, left)
	}
	p := d.b[d.off : d.off+n : d.off+n]
	d.off += n
	return p, nil
}

// length reads a big-endian length of size 1, 2 or 4 bytes.
func (d *decoder) length(field string, size int) (int, error) {
	p, err := d.next(field, size)
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
		return 0, d.fail(field, "length %d is beyond this platform", n)
	}
	return int(n), nil
}

// integer reads any msgpack integer. A negative value comes back as its
// two's complement with neg set.
func (d *decoder) integer(field string) (u uint64, neg bool, err error) {
	c, err := d.code(field)
	if err != nil {
		return 0, false, err
	}
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
		return 0, false, d.fail(field, "want an integer, found %s", describe(c))
	}
	p, err := d.next(field, size)
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
	default: // codeInt64
		s = int64(binary.BigEndian.Uint64(p))
	}
	return uint64(s), s < 0, nil
}

// The fast paths of int, uint and bin take the short forms that small
// values have; everything else, errors included, goes the general way.

// int reads an integer that must lie in [lo, hi].
func (d *decoder) int(field string, lo, hi int64) (int64, error) {
	if d.off < len(d.b) {
		if c := d.b[d.off]; c <= codePosFixMax && int64(c) >= lo && int64(c) <= hi {
			d.off++
			return int64(c), nil
		}
	}
	return d.intSlow(field, lo, hi)
}

func (d *decoder) intSlow(field string, lo, hi int64) (int64, error) {
	u, neg, err := d.integer(field)
	if err != nil {
		return 0, err
	}
	if !neg && u > uint64(hi) {
		return 0, d.fail(field, "%d exceeds %d", u, hi)
	}
	v := int64(u)
	if v < lo {
		if lo == 0 {
			return 0, d.fail(field, "%d is negative", v)
		}
		return 0, d.fail(field, "%d is below %d", v, lo)
	}
	return v, nil
}

// uint reads an integer that must lie in [0, hi].
func (d *decoder) uint(field string, hi uint64) (uint64, error) {
	if d.off < len(d.b) {
		if c := d.b[d.off]; c <= codePosFixMax && uint64(c) <= hi {
			d.off++
			return uint64(c), nil
		}
	}
	return d.uintSlow(field, hi)
}

func (d *decoder) uintSlow(field string, hi uint64) (uint64, error) {
	u, neg, err := d.integer(field)
	if err != nil {
		return 0, err
	}
	if neg {
		return 0, d.fail(field, "%d is negative", int64(u))
	}
	if u > hi {
		return 0, d.fail(field, "%d exceeds %d", u, hi)
	}
	return u, nil
}

// str reads a msgpack string.
func (d *decoder) str(field string) (string, error) {
	c, err := d.code(field)
	if err != nil {
		return "", err
	}
	var n int
	switch {
	case c >= codeFixStrLo && c <= codeFixStrHi:
		n = int(c - codeFixStrLo)
	case c == codeStr8:
		n, err = d.length(field, 1)
	case c == codeStr16:
		n, err = d.length(field, 2)
	case c == codeStr32:
		n, err = d.length(field, 4)
	default:
		return "", d.fail(field, "want a string, found %s", describe(c))
	}
	if err != nil {
		return "", err
	}
	p, err := d.next(field, n)
	return string(p), err
}

// bin reads msgpack binary (aliasing d.b) or nil.
func (d *decoder) bin(field string) ([]byte, error) {
	if o := d.off; o+1 < len(d.b) && d.b[o] == codeBin8 {
		if s, n := o+2, int(d.b[o+1]); n <= len(d.b)-s {
			d.off = s + n
			return d.b[s : s+n : s+n], nil
		}
	}
	return d.binSlow(field)
}

func (d *decoder) binSlow(field string) ([]byte, error) {
	c, err := d.code(field)
	if err != nil {
		return nil, err
	}
	var n int
	switch c {
	case codeNil:
		return nil, nil
	case codeBin8:
		n, err = d.length(field, 1)
	case codeBin16:
		n, err = d.length(field, 2)
	case codeBin32:
		n, err = d.length(field, 4)
	default:
		return nil, d.fail(field, "want binary, found %s", describe(c))
	}
	if err != nil {
		return nil, err
	}
	return d.next(field, n)
}

// arrayHeader reads the length of a msgpack array, or nil. The length is
// not checked against the input here: callers do, with the size of their
// elements.
func (d *decoder) arrayHeader(field string) (n int, isNil bool, err error) {
	c, err := d.code(field)
	if err != nil {
		return 0, false, err
	}
	switch {
	case c >= codeFixArrLo && c <= codeFixArrHi:
		return int(c - codeFixArrLo), false, nil
	case c == codeNil:
		return 0, true, nil
	case c == codeArr16:
		n, err = d.length(field, 2)
	case c == codeArr32:
		n, err = d.length(field, 4)
	default:
		return 0, false, d.fail(field, "want an array, found %s", describe(c))
	}
	return n, false, err
}

// describe names the msgpack type that code c starts.
func describe(c byte) string {
	switch {
	case c <= codePosFixMax, c >= codeNegFixLow,
		c >= codeUint8 && c <= codeInt64:
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
