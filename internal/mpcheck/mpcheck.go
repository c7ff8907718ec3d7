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
//
// The type codes are package msgp's, the runtime's one table of them.
package mpcheck

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/charmgo/charm/internal/msgp"
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
	case c <= msgp.PosFixMax || c >= msgp.NegFixLow || c == msgp.Nil || c == msgp.False || c == msgp.True:
		return at, nil
	case c <= msgp.FixMapHi:
		n, container = 2*int(c-msgp.FixMapLo), true
	case c <= msgp.FixArrHi:
		n, container = int(c-msgp.FixArrLo), true
	case c <= msgp.FixStrHi:
		n = int(c - msgp.FixStrLo)
	case c == msgp.Unused:
		return 0, fmt.Errorf("msgpack: byte %#x at offset %d is never used", c, at-1)
	case c == msgp.Bin8 || c == msgp.Str8:
		l, err := length(b, at, 1)
		if err != nil {
			return 0, err
		}
		at, n = at+1, l
	case c == msgp.Bin16 || c == msgp.Str16:
		l, err := length(b, at, 2)
		if err != nil {
			return 0, err
		}
		at, n = at+2, l
	case c == msgp.Bin32 || c == msgp.Str32:
		l, err := length(b, at, 4)
		if err != nil {
			return 0, err
		}
		at, n = at+4, l
	case c >= msgp.Ext8 && c <= msgp.Ext32: // length, type, data
		w := 1 << (c - msgp.Ext8)
		l, err := length(b, at, w)
		if err != nil {
			return 0, err
		}
		at, n = at+w, l+1
	case c == msgp.Float:
		n = 4
	case c == msgp.Double:
		n = 8
	case c >= msgp.Uint8 && c <= msgp.Uint64:
		n = 1 << (c - msgp.Uint8)
	case c >= msgp.Int8 && c <= msgp.Int64:
		n = 1 << (c - msgp.Int8)
	case c >= msgp.FixExt1 && c <= msgp.FixExt16: // type and 1..16 bytes
		n = 1 + 1<<(c-msgp.FixExt1)
	case c == msgp.Arr16 || c == msgp.Arr32:
		w := 2 << (c - msgp.Arr16)
		l, err := length(b, at, w)
		if err != nil {
			return 0, err
		}
		at, n, container = at+w, l, true
	case c == msgp.Map16 || c == msgp.Map32:
		w := 2 << (c - msgp.Map16)
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
