// Package indexcodec encodes the index of a collection member (an array
// element's int or [N]int, a group branch's PE, or a user-defined index
// type) for messages between processes.
//
// The built-in index types, int and [2]int up to [6]int, are written and
// read here without reflection, and Decode reads them without an
// allocation. Any other type goes through msgpack (reflection). Either
// way the bytes are msgpack, and for the built-in types they are the very
// bytes that msgpack.Marshal writes (an int in its shortest integer form,
// 1 byte for 0..127 and 9 at most; an [N]int a fixarray of them): keys
// (chare.IndexKey), checkpoints and processes that encode with msgpack
// all agree, and Decode also accepts
// the longer integer forms that another msgpack encoder may write.
//
// The encoding of a value is canonical: one value of one type always gives
// the same bytes, in every process, so the bytes can serve as a map key
// (chare.IndexKey).
//
// Decode reads bytes from another process strictly: truncated, trailing or
// malformed bytes give an error that names the index type and what was
// wrong, never a panic.
package indexcodec

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"unsafe"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/charmgo/charm/internal/mpcheck"
)

// msgpack codes used here.
const (
	fixArray = 0x90 // | n, n < 16
	uint8c   = 0xcc
	uint16c  = 0xcd
	uint32c  = 0xce
	uint64c  = 0xcf
	int8c    = 0xd0
	int16c   = 0xd1
	int32c   = 0xd2
	int64c   = 0xd3
)

// Append appends the encoding of index i to b. A nil index appends
// nothing.
func Append(b []byte, i any) ([]byte, error) {
	switch v := i.(type) {
	case nil:
		return b, nil
	case int:
		return AppendInt(b, v), nil
	case [2]int:
		return appendInts(b, v[:]), nil
	case [3]int:
		return appendInts(b, v[:]), nil
	case [4]int:
		return appendInts(b, v[:]), nil
	case [5]int:
		return appendInts(b, v[:]), nil
	case [6]int:
		return appendInts(b, v[:]), nil
	}
	m, err := msgpack.Marshal(i)
	if err != nil {
		return b, fmt.Errorf("index %v (%T): %w", i, i, err)
	}
	return append(b, m...), nil
}

// Fast reports whether index values of i's type are encoded without
// reflection (and Append of one never fails).
func Fast(i any) bool {
	switch i.(type) {
	case int, [2]int, [3]int, [4]int, [5]int, [6]int:
		return true
	}
	return false
}

// FastType reports whether I is one of the built-in index types, whose
// values Decode reads without an allocation.
func FastType[I any]() bool {
	switch any((*I)(nil)).(type) {
	case *int, *[2]int, *[3]int, *[4]int, *[5]int, *[6]int:
		return true
	}
	return false
}

func appendInts(b []byte, v []int) []byte {
	b = append(b, fixArray|byte(len(v)))
	for _, x := range v {
		b = AppendInt(b, x)
	}
	return b
}

// AppendInt appends n in msgpack's shortest integer form (what msgpack's
// Encoder.EncodeInt writes).
func AppendInt(b []byte, n int) []byte {
	x := int64(n)
	be := binary.BigEndian
	switch {
	case x >= 0 && x <= math.MaxInt8:
		return append(b, byte(x))
	case x >= 0 && x <= math.MaxUint8:
		return append(b, uint8c, byte(x))
	case x >= 0 && x <= math.MaxUint16:
		return be.AppendUint16(append(b, uint16c), uint16(x))
	case x >= 0 && x <= math.MaxUint32:
		return be.AppendUint32(append(b, uint32c), uint32(x))
	case x >= 0:
		return be.AppendUint64(append(b, uint64c), uint64(x))
	case x >= -32:
		return append(b, byte(x))
	case x >= math.MinInt8:
		return append(b, int8c, byte(x))
	case x >= math.MinInt16:
		return be.AppendUint16(append(b, int16c), uint16(x))
	case x >= math.MinInt32:
		return be.AppendUint32(append(b, int32c), uint32(x))
	}
	return be.AppendUint64(append(b, int64c), uint64(x))
}

// Decode reads an index of type I from b, which must hold exactly one.
func Decode[I any](b []byte) (I, error) {
	var i I
	var err error
	// The switch is on the type alone (a nil *I), so that i stays on the
	// stack: no allocation per index.
	switch any((*I)(nil)).(type) {
	case *int:
		err = decodeInts(b, unsafe.Slice((*int)(unsafe.Pointer(&i)), 1), false)
	case *[2]int:
		err = decodeInts(b, (*[2]int)(unsafe.Pointer(&i))[:], true)
	case *[3]int:
		err = decodeInts(b, (*[3]int)(unsafe.Pointer(&i))[:], true)
	case *[4]int:
		err = decodeInts(b, (*[4]int)(unsafe.Pointer(&i))[:], true)
	case *[5]int:
		err = decodeInts(b, (*[5]int)(unsafe.Pointer(&i))[:], true)
	case *[6]int:
		err = decodeInts(b, (*[6]int)(unsafe.Pointer(&i))[:], true)
	default:
		return decodeOther[I](b)
	}
	if err != nil {
		return i, fmt.Errorf("bad %T index (%d bytes): %w", i, len(b), err)
	}
	return i, nil
}

// decodeOther reads a user-defined index type with msgpack.
func decodeOther[I any](b []byte) (I, error) {
	var i I
	err := errors.New("no bytes")
	if len(b) > 0 {
		// Values of a size and depth decoding can afford (mpcheck).
		if err = mpcheck.Seq(b); err == nil {
			err = msgpack.Unmarshal(b, &i)
		}
	}
	if err != nil {
		return i, fmt.Errorf("bad %T index (%d bytes): %w", i, len(b), err)
	}
	return i, nil
}

// decodeInts reads len(dst) integers, as a fixarray of them if array, and
// checks that b holds nothing more.
func decodeInts(b []byte, dst []int, array bool) error {
	off := 0
	if array {
		if len(b) == 0 {
			return fmt.Errorf("no bytes")
		}
		if b[0] != fixArray|byte(len(dst)) {
			return fmt.Errorf("it starts with %#02x, not an array of %d integers", b[0], len(dst))
		}
		off = 1
	}
	for k := range dst {
		v, n, err := readInt(b[off:])
		if err != nil {
			if array {
				return fmt.Errorf("integer %d at byte %d: %w", k, off, err)
			}
			return err
		}
		dst[k] = v
		off += n
	}
	if off != len(b) {
		return fmt.Errorf("%d bytes left over after it", len(b)-off)
	}
	return nil
}

// readInt reads one msgpack integer of any form and returns it and its
// length.
func readInt(b []byte) (int, int, error) {
	if len(b) == 0 {
		return 0, 0, fmt.Errorf("truncated")
	}
	c := b[0]
	switch {
	case c <= 0x7f:
		return int(c), 1, nil
	case c >= 0xe0:
		return int(int8(c)), 1, nil
	}
	size := 0
	switch c {
	case uint8c, int8c:
		size = 1
	case uint16c, int16c:
		size = 2
	case uint32c, int32c:
		size = 4
	case uint64c, int64c:
		size = 8
	default:
		return 0, 0, fmt.Errorf("code %#02x is not an integer", c)
	}
	if len(b) < 1+size {
		return 0, 0, fmt.Errorf("truncated: an integer of %d bytes, %d left", size, len(b)-1)
	}
	be := binary.BigEndian
	var v int64
	switch c {
	case uint8c:
		v = int64(b[1])
	case int8c:
		v = int64(int8(b[1]))
	case uint16c:
		v = int64(be.Uint16(b[1:]))
	case int16c:
		v = int64(int16(be.Uint16(b[1:])))
	case uint32c:
		v = int64(be.Uint32(b[1:]))
	case int32c:
		v = int64(int32(be.Uint32(b[1:])))
	case uint64c:
		u := be.Uint64(b[1:])
		if u > math.MaxInt64 {
			return 0, 0, fmt.Errorf("integer %d overflows int", u)
		}
		v = int64(u)
	case int64c:
		v = int64(be.Uint64(b[1:]))
	}
	if int64(int(v)) != v {
		return 0, 0, fmt.Errorf("integer %d overflows int", v)
	}
	return int(v), 1 + size, nil
}

// Format renders the bytes of a built-in index as fmt's %v renders the
// index itself ("7", "[1 2]"), so that a message whose index is still in
// its wire form names its element readably; other bytes are shown in hex.
func Format(b []byte) string {
	if len(b) > 0 && b[0]&0xf0 == fixArray {
		var v [6]int
		n := int(b[0] & 0x0f)
		if n >= 2 && n <= len(v) && decodeInts(b, v[:n], true) == nil {
			return fmt.Sprint(v[:n])
		}
	} else if one := [1]int{}; decodeInts(b, one[:], false) == nil {
		return fmt.Sprint(one[0])
	}
	return fmt.Sprintf("index bytes %x", b)
}
