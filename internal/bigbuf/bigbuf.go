// Package bigbuf grows and copies byte slices of hundreds of megabytes in
// pieces, yielding the processor between pieces.
//
// The Go runtime cannot preempt a goroutine inside one memmove or memclr,
// and a copy of 200 MB into fresh memory runs at page-fault speed: up to
// seconds on a virtual machine. append, copy, bytes.Buffer and msgpack's
// encoder all copy a long slice in one such call (bytes.Buffer also clears
// its whole new buffer first, in another). While it runs, the goroutine
// holds its P; with every P so held, nothing else runs: not the node's
// heartbeats, not the garbage collector's stop-the-world, which then stops
// every other goroutine as well while it waits. Copying in pieces, with
// runtime.Gosched between them, bounds that time by one piece.
//
// Short slices (under Piece) take the ordinary path.
package bigbuf

import (
	"bytes"
	"runtime"
	"sync/atomic"
	"unsafe"
)

// Piece is the most bytes copied in one call between two yields, so that
// even a copy into fresh memory at page-fault speed holds its P for a few
// milliseconds at most.
const Piece = 1 << 20

// yield lets other goroutines run; a test counts the calls.
var yield = runtime.Gosched

// yields counts the pieces after which this package yielded (Yields).
var yields atomic.Int64

// Yields returns how many times the package has yielded the processor
// between pieces so far, in the whole process: for tests elsewhere that
// a long copy went through it.
func Yields() int64 { return yields.Load() }

// pause yields between two pieces.
func pause() {
	yields.Add(1)
	yield()
}

// Copy copies src into dst as copy does, Piece bytes at a time, yielding
// between pieces. It returns the number of bytes copied. dst and src
// must not overlap (Move is for that).
func Copy(dst, src []byte) int {
	n := min(len(dst), len(src))
	if n <= Piece {
		return copy(dst, src[:n])
	}
	for off := 0; off < n; off += Piece {
		if off > 0 {
			pause()
		}
		copy(dst[off:n], src[off:min(off+Piece, n)])
	}
	return n
}

// Grow returns b with room for n more bytes, as slices.Grow does. A
// long buffer is allocated with make, whose clearing the runtime does in
// preemptible pieces (or not at all, for memory fresh from the system),
// and b's bytes are copied in pieces; the new capacity leaves an eighth
// more, so that the small appends that follow a long one do not copy it
// all again.
func Grow(b []byte, n int) []byte {
	if n < 0 {
		panic("bigbuf: negative Grow")
	}
	if cap(b)-len(b) >= n {
		return b
	}
	need := len(b) + n
	if need <= Piece {
		return append(b[:cap(b)], make([]byte, need-cap(b))...)[:len(b)]
	}
	nb := make([]byte, len(b), need+need/8)
	Copy(nb, b)
	return nb
}

// Append appends src to dst as append does: see Grow and Copy.
func Append(dst, src []byte) []byte {
	if len(src) <= Piece && cap(dst)-len(dst) >= len(src) {
		return append(dst, src...)
	}
	dst = Grow(dst, len(src))
	n := len(dst)
	dst = dst[:n+len(src)]
	Copy(dst[n:], src)
	return dst
}

// Clone returns a copy of src in memory of its own, as long as its
// capacity (empty, not nil, for an empty src). A short src is copied by
// append's growth, which does not clear the bytes it is about to copy
// into (make followed by copy clears them all first: 2.5 % of the samples
// of a job of two processes exchanging 16 KiB messages); a long one as
// Append copies it.
func Clone(src []byte) []byte {
	if n := len(src); n <= Piece {
		return append([]byte{}, src...)[:n:n]
	}
	return Append(make([]byte, 0, len(src)), src)
}

// AppendString appends s to dst as append does, a long s in pieces.
func AppendString(dst []byte, s string) []byte {
	if len(s) <= Piece && cap(dst)-len(dst) >= len(s) {
		return append(dst, s...)
	}
	return Append(dst, unsafe.Slice(unsafe.StringData(s), len(s)))
}

// AppendByte appends c to dst as append does; a full long dst grows by a
// quarter, copied in pieces (append would copy it in one call).
func AppendByte(dst []byte, c byte) []byte {
	if len(dst) == cap(dst) && len(dst) >= Piece {
		dst = Grow(dst, len(dst)/4)
	}
	return append(dst, c)
}

// Reserve makes room in a long dst for the next few small appends (at
// least 64 bytes), so that a loop appending them to a buffer of
// megabytes never leaves the growth to append, which copies it whole.
// On a short dst it does nothing.
func Reserve(dst []byte) []byte {
	if cap(dst)-len(dst) < 64 && len(dst) >= Piece {
		return Grow(dst, len(dst)/4)
	}
	return dst
}

// Move copies b[from:from+n] to b[to:to+n], which may overlap, as
// copy(b[to:], b[from:from+n]) does, in pieces.
func Move(b []byte, to, from, n int) {
	if n <= Piece || to == from {
		copy(b[to:to+n], b[from:from+n])
		return
	}
	if to < from { // forwards: each piece reads ahead of what it writes
		for off := 0; off < n; off += Piece {
			if off > 0 {
				pause()
			}
			k := min(Piece, n-off)
			copy(b[to+off:to+off+k], b[from+off:from+off+k])
		}
		return
	}
	for end := n; end > 0; end -= Piece { // backwards
		if end < n {
			pause()
		}
		k := min(Piece, end)
		copy(b[to+end-k:to+end], b[from+end-k:from+end])
	}
}

// Reader is a bytes.Reader whose Read copies at most Piece bytes per
// call, yielding after each full piece: a decoder that reads a long field
// with one io.ReadFull (msgpack/v5 does, for a []byte) would otherwise get
// it in one copy.
type Reader struct{ bytes.Reader }

func (r *Reader) Read(p []byte) (int, error) {
	if len(p) <= Piece {
		return r.Reader.Read(p)
	}
	n, err := r.Reader.Read(p[:Piece])
	pause()
	return n, err
}
