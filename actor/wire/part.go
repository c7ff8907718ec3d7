package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/charmgo/charm/internal/bigbuf"
	"github.com/charmgo/charm/internal/msgp"
)

// A frame longer than the transport takes travels as fragments: frames of
// kind [KindPart], each carrying a piece of the long frame's encoding.
// [Fragments] cuts, a [Reassembler] (one per sending node) joins.
//
// A fragment is an ordinary frame:
//
//	Kind  KindPart
//	Seq   the id of the long frame, unique per sending node
//	Code  0
//	Body  uvarint total length, uvarint offset of this piece, the piece
//	Items nil
//
// One goroutine sends all the fragments of one frame, in order, on the one
// connection to the peer; the remote layer keeps the order of one
// goroutine's sends while the connection lives. Other goroutines of the
// same node may send frames (fragments of other long frames among them) in
// between, so the fragments of different frames interleave, but each
// frame's own fragments arrive in order, without gaps or repeats. A
// Reassembler relies on exactly that and nothing more: anything else is an
// error, never a panic.

// partHeaderMax is the most bytes a fragment's own header takes in its
// Body: two uvarints.
const partHeaderMax = 2 * binary.MaxVarintLen64

// ErrTooLarge is wrapped by the errors of [Reassembler.Add] and
// [Fragments] for a frame over the size limit.
var ErrTooLarge = errors.New("wire: frame too large")

// Fragments cuts b, the encoding of a frame, into fragment frames of at
// most max bytes each, in the order they must be sent. token and from are
// the sender's, as in every frame; id names the frame among those the
// sender fragments (a counter will do). Each fragment is a slice of its
// own, so the sent ones can be freed while the rest wait.
//
// A b of max bytes or less needs no fragments: the caller sends it as it
// is (Fragments would still cut it, into one fragment).
func Fragments(b []byte, token string, from int, id uint64, max int) ([][]byte, error) {
	if len(b) == 0 {
		return nil, fmt.Errorf("wire: cannot fragment an empty frame")
	}
	return fragments(b, nil, token, from, id, max)
}

// FrameFragments returns the fragments of f's encoding, as Fragments does
// with the encoding, and its length, without encoding the frame whole
// first: the long bodies of f (a message of hundreds of megabytes) are
// copied once, straight into the fragments, in pieces that the scheduler
// can preempt between. The fragments carry f.Token and f.From. It refuses
// the frames that AppendFrame refuses.
func FrameFragments(f *Frame, id uint64, max int) ([][]byte, int, error) {
	if err := check(f); err != nil {
		return nil, 0, err
	}
	// The frame without its long bodies: its headers, and the short
	// bodies, which would cost more to track than to copy.
	head, cuts := appendFrame(nil, f, 64<<10, nil)
	parts, err := fragments(head, cuts, f.Token, f.From, id, max)
	if err != nil {
		return nil, 0, err
	}
	n := len(head)
	for _, c := range cuts {
		n += len(c.body)
	}
	return parts, n, nil
}

// fragments cuts the frame whose encoding is head with the cuts' bodies
// put back at their offsets (see appendFrame).
func fragments(head []byte, cuts []cut, token string, from int, id uint64, max int) ([][]byte, error) {
	// The fragment's fields up to Body, from the encoder itself: a frame
	// with nil Body and nil Items ends with two msgpack nils, which are
	// replaced by the Body and a nil.
	prefix, err := AppendFrame(nil, &Frame{Kind: KindPart, Token: token, From: from, Seq: id})
	if err != nil {
		return nil, err
	}
	prefix = prefix[:len(prefix)-2]
	const tail = 5 + 1 // the longest binary header, and the nil Items
	piece := max - len(prefix) - tail - partHeaderMax
	if piece < 1 {
		return nil, fmt.Errorf("wire: fragments of at most %d bytes cannot carry anything (a fragment's header takes %d)", max, max-piece+1)
	}
	total := len(head)
	for _, c := range cuts {
		total += len(c.body)
	}
	// src walks the frame's encoding: the head up to the next cut, that
	// cut's body, the head up to the next, and so on.
	var (
		src  []byte
		hoff int // how much of head has been walked
		next int // the next cut
	)
	advance := func() {
		for len(src) == 0 {
			switch {
			case next < len(cuts) && hoff == cuts[next].at:
				src = cuts[next].body
				next++
			case next < len(cuts):
				src, hoff = head[hoff:cuts[next].at], cuts[next].at
			default:
				src, hoff = head[hoff:], len(head)
			}
		}
	}
	out := make([][]byte, 0, (total+piece-1)/piece)
	for off := 0; off < total; off += piece {
		n := min(piece, total-off)
		var hdr [partHeaderMax]byte
		h := binary.AppendUvarint(hdr[:0], uint64(total))
		h = binary.AppendUvarint(h, uint64(off))
		f := make([]byte, 0, len(prefix)+5+len(h)+n+1)
		f = append(f, prefix...)
		f = msgp.AppendBinHeader(f, len(h)+n)
		f = append(f, h...)
		for k := n; k > 0; {
			advance()
			m := min(k, len(src))
			f = bigbuf.Append(f, src[:m])
			src, k = src[m:], k-m
		}
		f = append(f, msgp.Nil)
		out = append(out, f)
	}
	return out, nil
}

// Reassembler joins the fragments that one node sends. It is not safe for
// concurrent use: one goroutine (the receiving node's link) owns it.
//
// Memory is bounded by MaxOpen × MaxSize, and by twice the bytes that
// have arrived: a frame's buffer grows (doubling, up to its declared
// length) as its fragments arrive, rather than being allocated at the
// length its first fragment claims (a fragment of a few bytes could claim
// a gigabyte), and is dropped when its last one does.
type Reassembler struct {
	// MaxSize is the longest frame it joins, in bytes.
	MaxSize int
	// MaxOpen is how many frames may be partly received at once: at most
	// one per goroutine of the sender that sends long frames.
	MaxOpen int

	open map[uint64]openFrame // by id
}

// openFrame is a frame partly received: its declared length and what has
// arrived.
type openFrame struct {
	total uint64
	buf   []byte
}

// Open returns how many frames are partly received.
func (r *Reassembler) Open() int { return len(r.open) }

// Add takes fragment f (of kind [KindPart]) and returns the encoding of the
// frame it completes, or nil if the frame is not complete yet. The caller
// decodes the returned bytes with [DecodeFrame]; the fragment's Body is
// copied, so f may be dropped.
//
// A fragment that is malformed, out of order, repeated, or of a frame whose
// start never came is an error that wraps [ErrCorrupt]; a frame longer
// than MaxSize, or one more frame than MaxOpen, an error that wraps
// [ErrTooLarge]. Either names the sender (f.From), the frame and the
// offset. After an error the frame concerned is forgotten; the caller is
// expected to give up on the sender (a lost frame is a lost message).
func (r *Reassembler) Add(f *Frame) ([]byte, error) {
	if f.Kind != KindPart || f.Code != 0 || f.Items != nil {
		return nil, r.corrupt(f, -1, "not a fragment (kind %v, code %d, %d items)", f.Kind, f.Code, len(f.Items))
	}
	total, n := binary.Uvarint(f.Body)
	if n <= 0 {
		return nil, r.corrupt(f, -1, "no length in its %d-byte body", len(f.Body))
	}
	off, m := binary.Uvarint(f.Body[n:])
	if m <= 0 {
		return nil, r.corrupt(f, -1, "no offset in its %d-byte body", len(f.Body))
	}
	data := f.Body[n+m:]
	of, started := r.open[f.Seq]
	buf := of.buf
	switch {
	case total == 0:
		return nil, r.corrupt(f, int64(off), "an empty frame")
	case total > math.MaxInt || int(total) > r.MaxSize:
		delete(r.open, f.Seq)
		return nil, fmt.Errorf("wire: node %d sends frame %d of %d bytes in fragments, over the limit of %d bytes: %w", f.From, f.Seq, total, r.MaxSize, ErrTooLarge)
	case len(data) == 0:
		delete(r.open, f.Seq)
		return nil, r.corrupt(f, int64(off), "an empty fragment")
	case started && of.total != total:
		delete(r.open, f.Seq)
		return nil, r.corrupt(f, int64(off), "it says the frame has %d bytes, its first fragment said %d", total, of.total)
	case off >= total:
		delete(r.open, f.Seq)
		return nil, r.corrupt(f, int64(off), "past the end of the frame's %d bytes", total)
	case !started && off != 0:
		return nil, r.corrupt(f, int64(off), "the frame's start never came (or it is complete already)")
	case started && off == 0:
		delete(r.open, f.Seq)
		return nil, r.corrupt(f, 0, "the frame started again (a repeated fragment?)")
	case started && off != uint64(len(buf)):
		delete(r.open, f.Seq)
		return nil, r.corrupt(f, int64(off), "out of order: %d bytes of the frame had arrived", len(buf))
	case uint64(len(data)) > total-off:
		delete(r.open, f.Seq)
		return nil, r.corrupt(f, int64(off), "%d bytes overrun the frame's %d", len(data), total)
	}
	if !started {
		if uint64(len(data)) == total { // one fragment: nothing to keep
			return append([]byte(nil), data...), nil
		}
		if len(r.open) >= r.MaxOpen {
			return nil, fmt.Errorf("wire: node %d sends frame %d in fragments while %d others are incomplete, over the limit of %d: %w", f.From, f.Seq, len(r.open), r.MaxOpen, ErrTooLarge)
		}
		if r.open == nil {
			r.open = map[uint64]openFrame{}
		}
	}
	if cap(buf)-len(buf) < len(data) { // doubling: the copies add up to less than total
		nb := make([]byte, len(buf), min(total, uint64(max(2*cap(buf), len(buf)+len(data)))))
		bigbuf.Copy(nb, buf) // a long one in pieces: it runs on the link actor, which reads the heartbeats too
		buf = nb
	}
	buf = append(buf, data...)
	if uint64(len(buf)) < total {
		r.open[f.Seq] = openFrame{total, buf}
		return nil, nil
	}
	delete(r.open, f.Seq)
	return buf, nil
}

// corrupt is the error for a bad fragment of f's frame at offset off (-1:
// unknown).
func (r *Reassembler) corrupt(f *Frame, off int64, format string, args ...any) error {
	at := ""
	if off >= 0 {
		at = fmt.Sprintf(" at offset %d", off)
	}
	return &corruptError{fmt.Sprintf("wire: corrupt fragment from node %d, frame %d%s: %s", f.From, f.Seq, at, fmt.Sprintf(format, args...))}
}
