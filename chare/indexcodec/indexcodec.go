// Package indexcodec encodes the index of a collection member (an array
// element's int or [N]int, a group branch's PE, or a user-defined index
// type) for messages between processes.
//
// The built-in index types, int and [2]int up to [6]int, are written and
// read without reflection, by the runtime's one msgpack writer and strict
// reader (package internal/msgp), and Decode reads them without an
// allocation. Any other type goes through msgpack (reflection). Either
// way the bytes are msgpack, and for the built-in types they are the very
// bytes that msgpack.Marshal writes (an int in its shortest integer form,
// 1 byte for 0..127 and 9 at most; an [N]int a fixarray of them): keys
// (core.IndexKey), checkpoints and processes that encode with msgpack
// all agree, and Decode also accepts
// the longer integer forms that another msgpack encoder may write.
//
// The encoding of a value is canonical: one value of one type always gives
// the same bytes, in every process, so the bytes can serve as a map key
// (core.IndexKey).
//
// Decode reads bytes from another process strictly: truncated, trailing or
// malformed bytes give an error that names the index type and what was
// wrong, never a panic.
package indexcodec

import (
	"errors"
	"fmt"
	"math"
	"unsafe"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/charmgo/charm/internal/mpcheck"
	"github.com/charmgo/charm/internal/msgp"
)

// Append appends the encoding of index i to b. A nil index appends
// nothing.
func Append(b []byte, i any) ([]byte, error) {
	switch v := i.(type) {
	case nil:
		return b, nil
	case int:
		return msgp.AppendInt(b, int64(v)), nil
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
	b = append(b, msgp.FixArrLo+byte(len(v)))
	for _, x := range v {
		b = msgp.AppendInt(b, int64(x))
	}
	return b
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
	r := msgp.Reader{B: b}
	if array {
		if len(b) == 0 {
			return errors.New("no bytes")
		}
		if b[0] != msgp.FixArrLo+byte(len(dst)) {
			return fmt.Errorf("it starts with %#02x, not an array of %d integers", b[0], len(dst))
		}
		r.Off = 1
	}
	for k := range dst {
		// The pure step in the loop; the reader only for the error.
		u, neg, n := msgp.ReadInteger(b[r.Off:])
		v := int64(u)
		if n == 0 || !neg && u > math.MaxInt || neg && v < math.MinInt {
			_, err := r.Int(math.MinInt, math.MaxInt)
			if err == nil { // cannot happen: ReadInteger and Int agree
				err = fmt.Errorf("integer %d at byte %d: unreadable", k, r.Off)
			}
			if e, ok := err.(*msgp.Error); ok && array {
				return fmt.Errorf("integer %d at byte %d: %s", k, e.Off, e.Msg)
			}
			return err
		}
		dst[k] = int(v)
		r.Off += n
	}
	if r.Off != len(b) {
		return fmt.Errorf("%d bytes left over after it", len(b)-r.Off)
	}
	return nil
}

// Format renders the bytes of a built-in index as fmt's %v renders the
// index itself ("7", "[1 2]"), so that a message whose index is still in
// its wire form names its element readably; other bytes are shown in hex.
func Format(b []byte) string {
	if len(b) > 0 && b[0]&0xf0 == msgp.FixArrLo {
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
