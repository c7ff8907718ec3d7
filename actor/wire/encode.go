package wire

import (
	"fmt"
	"math"

	"github.com/charmgo/charm/internal/bigbuf"
	"github.com/charmgo/charm/internal/msgp"
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
			b = msgp.AppendBinHeader(b, len(p))
		}
		if len(p) > inline {
			cuts = append(cuts, cut{len(b), p})
			return
		}
		b = bigbuf.Append(b, p)
	}
	b = append(b, msgp.FixArrLo+frameLen)
	b = msgp.AppendUint(b, Version)
	b = msgp.AppendUint(b, uint64(f.Kind))
	b = msgp.AppendStrHeader(b, len(f.Token))
	b = append(b, f.Token...)
	b = msgp.AppendInt(b, int64(f.From))
	b = msgp.AppendUint(b, f.Seq)
	b = msgp.AppendInt(b, int64(f.Code))
	body(f.Body, true) // nil stays nil
	if f.Items == nil {
		return append(b, msgp.Nil), cuts
	}
	b = msgp.AppendArrayHeader(b, len(f.Items))
	for i := range f.Items {
		it := &f.Items[i]
		if it.Tails == 0 {
			b = append(b, msgp.FixArrLo+itemFieldCount)
			b = msgp.AppendInt(b, int64(it.PE))
			b = msgp.AppendUint(b, uint64(it.Kind))
			body(it.Body, true)
			continue
		}
		b = append(b, msgp.FixArrLo+runFieldCount)
		b = msgp.AppendInt(b, int64(it.PE))
		b = msgp.AppendUint(b, uint64(it.Kind))
		if it.Head == nil {
			b = append(b, msgp.Nil)
		} else {
			b = append(msgp.AppendBinHeader(b, len(it.Head)), it.Head...)
		}
		b = msgp.AppendArrayHeader(b, it.Tails)
		body(it.Body, false) // the tails, already binaries
	}
	return b, cuts
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
	if msgp.TooLong(len(f.Token)) || msgp.TooLong(len(f.Body)) || msgp.TooLong(len(f.Items)) {
		return fmt.Errorf("wire: cannot encode frame: a field is longer than 4 GiB")
	}
	for i := range f.Items {
		it := &f.Items[i]
		if it.PE < 0 {
			return fmt.Errorf("wire: cannot encode frame: item %d: PE %d is negative", i, it.PE)
		}
		if msgp.TooLong(len(it.Body)) || msgp.TooLong(len(it.Head)) || msgp.TooLong(it.Tails) {
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

// Size returns the exact length of f's encoding.
func Size(f *Frame) int {
	n := 1 + 1 + msgp.UintSize(uint64(f.Kind)) + strSize(len(f.Token)) +
		msgp.IntSize(int64(f.From)) + msgp.UintSize(f.Seq) + msgp.IntSize(int64(f.Code)) + binSize(f.Body)
	if f.Items == nil {
		return n + 1
	}
	n += msgp.ArrayHeaderSize(len(f.Items))
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
	n := 1 + msgp.IntSize(int64(it.PE)) + msgp.UintSize(uint64(it.Kind))
	if it.Tails == 0 {
		return n + binSize(it.Body)
	}
	return n + binSize(it.Head) + msgp.ArrayHeaderSize(it.Tails) + len(it.Body)
}

// strSize is the length of a msgpack string of n bytes.
func strSize(n int) int { return msgp.StrHeaderSize(n) + n }

// binSize is the length of p as a msgpack binary, or nil.
func binSize(p []byte) int {
	if p == nil {
		return 1
	}
	return msgp.BinHeaderSize(len(p)) + len(p)
}
