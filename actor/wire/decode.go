package wire

import (
	"fmt"
	"math"

	"github.com/charmgo/charm/internal/msgp"
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
	d := decoder{Reader: msgp.Reader{B: b}, item: noItem}
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
	if d.Off != len(b) {
		d.Start = d.Off
		return nil, d.fail("frame", "%d trailing bytes", len(b)-d.Off)
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
	if left := len(d.B) - d.Off; n > left/minItemSize {
		return nil, d.fail("items", "%d items declared, but only %d bytes left", n, left)
	}
	items := make([]Item, n)
	for i := range items {
		d.item = i
		it := &items[i]
		m := itemFieldCount
		if d.Off < len(d.B) && d.B[d.Off] == msgp.FixArrLo+itemFieldCount {
			d.Off++ // the usual headers, read fast
		} else if d.Off < len(d.B) && d.B[d.Off] == msgp.FixArrLo+runFieldCount {
			d.Off++
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
		if left := len(d.B) - d.Off; n > left/minTailSize {
			return nil, d.fail("tails", "%d tails declared, but only %d bytes left", n, left)
		}
		start := d.Off
		if err := d.tails(n); err != nil {
			return nil, err
		}
		it.Tails, it.Body = n, d.B[start:d.Off:d.Off]
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
	if d.Off < len(d.B) && d.B[d.Off] == msgp.Nil {
		d.Start = d.Off
		return nil, d.fail("tail", "want binary, found nil")
	}
	return d.bin("tail")
}

// decoder reads msgpack values from its input strictly (package msgp):
// each field must have the msgpack type its Go type calls for (an integer
// for an int, a string for a string, binary or nil for a []byte), and must
// fit it. Its methods name the field in their errors.
type decoder struct {
	msgp.Reader
	item int // the item being read, or noItem
}

func (d *decoder) fail(field, format string, args ...any) error {
	return d.failAt(field, d.Start, fmt.Sprintf(format, args...))
}

func (d *decoder) failAt(field string, off int, msg string) error {
	where := field
	if d.item != noItem {
		where = fmt.Sprintf("item %d: %s", d.item, field)
	}
	return &corruptError{fmt.Sprintf("wire: corrupt frame: %s: %s (at byte %d)", where, msg, off)}
}

// named gives a reader's error the field's name.
func (d *decoder) named(field string, err error) error {
	if e, ok := err.(*msgp.Error); ok {
		return d.failAt(field, e.Off, e.Msg)
	}
	return err
}

// int reads an integer that must lie in [lo, hi].
func (d *decoder) int(field string, lo, hi int64) (int64, error) {
	v, err := d.Int(lo, hi)
	if err != nil {
		return 0, d.named(field, err)
	}
	return v, nil
}

// uint reads an integer that must lie in [0, hi].
func (d *decoder) uint(field string, hi uint64) (uint64, error) {
	v, err := d.Uint(hi)
	if err != nil {
		return 0, d.named(field, err)
	}
	return v, nil
}

// str reads a msgpack string.
func (d *decoder) str(field string) (string, error) {
	p, err := d.Str()
	if err != nil {
		return "", d.named(field, err)
	}
	return string(p), nil
}

// bin reads msgpack binary (aliasing the input) or nil.
func (d *decoder) bin(field string) ([]byte, error) {
	p, err := d.Bin()
	if err != nil {
		return nil, d.named(field, err)
	}
	return p, nil
}

// arrayHeader reads the length of a msgpack array, or nil. The length is
// not checked against the input here: callers do, with the size of their
// elements.
func (d *decoder) arrayHeader(field string) (n int, isNil bool, err error) {
	n, isNil, err = d.ArrayLen()
	if err != nil {
		return 0, false, d.named(field, err)
	}
	return n, isNil, nil
}
