// Package mpcheck checks msgpack bytes from disk or from the network before
// they are decoded.
//
// msgpack/v5 (v5.4.1) decodes nested values by recursion, so that deep
// nesting into an interface value (millions of one-byte array headers)
// exhausts the goroutine's stack: a fatal error, not a panic that can be
// recovered. It also makes a slice or a map for the number of elements its
// header claims, up to a million at once, before reading them, so that a
// few bytes can ask for a million elements per header. Seq checks, without
// allocating, that the bytes are msgpack values back to back whose every
// array and map claims no more elements than there are bytes left to hold
// them (each element takes at least one byte) and that are nested no
// deeper than MaxDepth: decoding them then recurses no deeper than that,
// and makes no container for more elements than there are bytes.
//
// An element of one byte can still become a large Go value: msgpack/v5
// decodes nil into a struct or array element as its zero value, so a
// slice of 4 KiB arrays takes 4 KiB per byte that Seq passed. SeqAs, for
// bytes that will be decoded into a known Go type by reflection, walks
// them along the type and also bounds what the decoding allocates
// (Expansion bytes per byte, plus Slack).
//
// Seq, not One, is the check for bytes that user encoders wrote: a type's
// own EncodeMsgpack may write several values (msgpack's EncodeMulti), which
// leaves the enclosing map or array with more values than its header
// says, and the bytes then parse as one value followed by others.
package mpcheck

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// MaxDepth bounds the nesting of arrays and maps: deep enough for any
// real state (a linked list or an unbalanced tree thousands deep, each
// level a map and an array), far from the millions of levels that exhaust
// a stack.
const MaxDepth = 10000

// ErrTruncated says the bytes end inside a value.
var ErrTruncated = errors.New("msgpack: truncated")

// One checks that b holds exactly one msgpack value, as the package doc
// says.
func One(b []byte) error {
	n, err := value(b, 0, 0)
	if err != nil {
		return err
	}
	if n != len(b) {
		return fmt.Errorf("msgpack: %d bytes after the value (of %d bytes)", len(b)-n, n)
	}
	return nil
}

// Seq checks that b holds one or more msgpack values back to back, as the
// package doc says.
func Seq(b []byte) error {
	at := 0
	for {
		n, err := value(b, at, 0)
		if err != nil {
			return err
		}
		if at = n; at == len(b) {
			return nil
		}
	}
}

// value checks the value at b[at:] and returns where it ends.
func value(b []byte, at, depth int) (int, error) {
	if at >= len(b) {
		return 0, ErrTruncated
	}
	c := b[at]
	at++
	var n int // elements of an array (or twice the entries of a map), or bytes of data
	container := false
	switch {
	case c <= 0x7f || c >= 0xe0 || c == 0xc0 || c == 0xc2 || c == 0xc3:
		return at, nil
	case c <= 0x8f:
		n, container = 2*int(c&0x0f), true
	case c <= 0x9f:
		n, container = int(c&0x0f), true
	case c <= 0xbf:
		n = int(c & 0x1f)
	case c == 0xc1:
		return 0, fmt.Errorf("msgpack: byte 0xc1 at offset %d is never used", at-1)
	case c == 0xc4 || c == 0xd9: // bin8, str8
		l, err := length(b, at, 1)
		if err != nil {
			return 0, err
		}
		at, n = at+1, l
	case c == 0xc5 || c == 0xda: // bin16, str16
		l, err := length(b, at, 2)
		if err != nil {
			return 0, err
		}
		at, n = at+2, l
	case c == 0xc6 || c == 0xdb: // bin32, str32
		l, err := length(b, at, 4)
		if err != nil {
			return 0, err
		}
		at, n = at+4, l
	case c == 0xc7 || c == 0xc8 || c == 0xc9: // ext8, ext16, ext32: length, type, data
		w := 1 << (c - 0xc7)
		l, err := length(b, at, w)
		if err != nil {
			return 0, err
		}
		at, n = at+w, l+1
	case c == 0xca:
		n = 4
	case c == 0xcb:
		n = 8
	case c >= 0xcc && c <= 0xcf:
		n = 1 << (c - 0xcc)
	case c >= 0xd0 && c <= 0xd3:
		n = 1 << (c - 0xd0)
	case c >= 0xd4 && c <= 0xd8: // fixext: type and 1..16 bytes
		n = 1 + 1<<(c-0xd4)
	case c == 0xdc || c == 0xdd: // array16, array32
		w := 2 << (c - 0xdc)
		l, err := length(b, at, w)
		if err != nil {
			return 0, err
		}
		at, n, container = at+w, l, true
	case c == 0xde || c == 0xdf: // map16, map32
		w := 2 << (c - 0xde)
		l, err := length(b, at, w)
		if err != nil {
			return 0, err
		}
		at, n, container = at+w, 2*l, true
	}
	if !container {
		if n > len(b)-at {
			return 0, ErrTruncated
		}
		return at + n, nil
	}
	if n > len(b)-at {
		return 0, fmt.Errorf("msgpack: a container at offset %d claims %d values, and %d bytes are left", at-1, n, len(b)-at)
	}
	if depth >= MaxDepth {
		return 0, fmt.Errorf("msgpack: values nested deeper than %d", MaxDepth)
	}
	for range n {
		var err error
		if at, err = value(b, at, depth+1); err != nil {
			return 0, err
		}
	}
	return at, nil
}

// length reads a big-endian length of w bytes at b[at:].
func length(b []byte, at, w int) (int, error) {
	if len(b)-at < w {
		return 0, ErrTruncated
	}
	switch w {
	case 1:
		return int(b[at]), nil
	case 2:
		return int(binary.BigEndian.Uint16(b[at:])), nil
	}
	return int(binary.BigEndian.Uint32(b[at:])), nil
}
