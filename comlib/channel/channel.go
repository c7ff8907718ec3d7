// Package channel is the buffering of EasyMSG's buffered channels as a
// state machine: data pushed for a target wait in a buffer, and a buffer
// leaves as one block when it is full or when the next datum does not fit
// (E01). Each target has several buffers (EasyMSG's MultiSender, E03): a
// buffer that left stays in flight until its sender says it is done, and
// meanwhile the next free one fills, so a slow send does not stop the
// producer. Flush sends a target's non-empty buffer now; End flushes every
// target and refuses further data, and Ended reports when nothing is in
// flight any more.
//
// The package does no I/O: Push, Flush and End return the blocks that
// leave, the caller sends them and calls Done for each when its send has
// completed. Comlib's Streaming strategy is built on it; its blocks are
// done as soon as they are handed to the runtime (which never blocks a
// sender), so there a target rarely has more than one buffer in flight.
//
// # Order and tags
//
// Blocks of one target may complete, and arrive, in any order: with two
// buffers in flight, the second can overtake the first. Inside a block,
// data keep the order they were pushed in. A receiver that must know what
// a datum is therefore identifies it by a tag carried with it (E02), as
// Tagged does, not by its position in the stream.
//
//	ch, _ := channel.New[channel.Tagged[[]float64]](targets, channel.Options{Buffers: 2, MaxItems: 64})
//	out, err := ch.Push(t, channel.Tagged[[]float64]{Tag: cell, Data: v}, 8*len(v))
//	for _, b := range out { send(b); ch.Done(b.Target, b.Buffer) }
//	out = ch.End() // the rest; Ended() once every send is done
package channel

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Options configure a Channel. Zero fields take the defaults beside them.
type Options struct {
	// Buffers per target (default 2): how many blocks of one target may be
	// in flight, or filling, at once.
	Buffers int
	// MaxItems caps the data in one buffer (default 64).
	MaxItems int
	// MaxBytes caps a buffer's bytes (default 32 KiB), as sizes are given
	// to Push. A datum larger than MaxBytes gets a buffer of its own.
	MaxBytes int
}

func (o Options) withDefaults() Options {
	if o.Buffers == 0 {
		o.Buffers = 2
	}
	if o.MaxItems == 0 {
		o.MaxItems = 64
	}
	if o.MaxBytes == 0 {
		o.MaxBytes = 32 << 10
	}
	return o
}

func (o Options) validate() error {
	switch {
	case o.Buffers < 1:
		return fmt.Errorf("channel: Options.Buffers %d: want at least 1", o.Buffers)
	case o.MaxItems < 1:
		return fmt.Errorf("channel: Options.MaxItems %d: want at least 1", o.MaxItems)
	case o.MaxBytes < 1:
		return fmt.Errorf("channel: Options.MaxBytes %d: want at least 1", o.MaxBytes)
	}
	return nil
}

// Tagged is a datum with the tag that identifies it at the receiver (E02).
type Tagged[T any] struct {
	Tag  uint64
	Data T
}

// Size is the datum's size in bytes as a buffer counts it: 8 for the tag,
// plus the Data's own Size() if it has one, else its binary size for
// fixed-size values and slices of them (encoding/binary), else 64.
func (t Tagged[T]) Size() int {
	if s, ok := any(t.Data).(interface{ Size() int }); ok {
		return 8 + s.Size()
	}
	if n := binary.Size(t.Data); n >= 0 {
		return 8 + n
	}
	return 8 + 64
}

// Block is a buffer that leaves: the data pushed into buffer Buffer of
// Target since it last left, in push order, and their bytes.
type Block[T any] struct {
	Target, Buffer int
	Items          []T
	Bytes          int
}

// Errors of Push and Done.
var (
	// ErrBusy: every buffer of the target is in flight and the current one
	// cannot take the datum. Send what is pending, call Done, push again
	// (EasyMSG's push would wait here).
	ErrBusy = errors.New("channel: every buffer of the target is in flight")
	// ErrEnded: Push after End.
	ErrEnded = errors.New("channel: push after End")
)

type bufState uint8

const (
	free bufState = iota
	filling
	inFlight
)

type buffer[T any] struct {
	state bufState
	items []T
	bytes int
}

type target[T any] struct {
	bufs []buffer[T]
	cur  int // the filling buffer, or -1
	hint int // length of the last block, to size the next
}

// Channel buffers data for a fixed set of targets 0..n−1. It is not safe
// for concurrent use: it belongs to one PE.
type Channel[T any] struct {
	o        Options
	ts       []target[T]
	dirty    []int // targets with a non-empty filling buffer, in order of first push
	pending  int   // data in filling buffers
	inFlight int   // blocks in flight
	ended    bool
}

// New returns a channel to n targets, or an error naming the option out of
// range.
func New[T any](n int, o Options) (*Channel[T], error) {
	o = o.withDefaults()
	if err := o.validate(); err != nil {
		return nil, err
	}
	if n < 1 {
		return nil, fmt.Errorf("channel: %d targets: want at least 1", n)
	}
	c := &Channel[T]{o: o, ts: make([]target[T], n)}
	for i := range c.ts {
		c.ts[i].cur = -1
	}
	return c, nil
}

// Options returns the options in force, defaults filled in.
func (c *Channel[T]) Options() Options { return c.o }

// SetCaps changes MaxItems and MaxBytes for the data pushed from now on
// (a tuner moves them while the program runs). A buffer already fuller
// than the new caps leaves at the next push for its target.
func (c *Channel[T]) SetCaps(maxItems, maxBytes int) error {
	o := c.o
	o.MaxItems, o.MaxBytes = maxItems, maxBytes
	if err := o.validate(); err != nil {
		return err
	}
	c.o = o
	return nil
}

// Pending is how many data wait in filling buffers.
func (c *Channel[T]) Pending() int { return c.pending }

// InFlight is how many blocks have left and are not done.
func (c *Channel[T]) InFlight() int { return c.inFlight }

// Ended reports whether End was called and every block is done (E03's
// "end waits for all").
func (c *Channel[T]) Ended() bool { return c.ended && c.inFlight == 0 }

func (c *Channel[T]) target(t int) (*target[T], error) {
	if t < 0 || t >= len(c.ts) {
		return nil, fmt.Errorf("channel: target %d out of range [0, %d)", t, len(c.ts))
	}
	return &c.ts[t], nil
}

// fits reports whether buffer b may take a datum of size bytes (E01: an
// empty buffer takes anything).
func (c *Channel[T]) fits(b *buffer[T], size int) bool {
	if len(b.items) == 0 {
		return true
	}
	return len(b.items) < c.o.MaxItems && b.bytes+size <= c.o.MaxBytes
}

// Push adds a datum of size bytes for target t and returns the blocks that
// leave because of it: the current buffer, if the datum does not fit in it
// (E01), and the buffer the datum went into, if that is now full. Size is
// the caller's measure; a negative size counts as 0. With every buffer of
// t in flight and no room, Push changes nothing and returns ErrBusy.
func (c *Channel[T]) Push(t int, item T, size int) ([]Block[T], error) {
	if c.ended {
		return nil, ErrEnded
	}
	tg, err := c.target(t)
	if err != nil {
		return nil, err
	}
	size = max(size, 0)
	var out []Block[T]
	if tg.cur >= 0 && !c.fits(&tg.bufs[tg.cur], size) {
		if c.freeBuffer(tg) < 0 {
			return nil, ErrBusy // nothing left yet: the caller may retry as is
		}
		out = append(out, c.leave(t))
	}
	if tg.cur < 0 {
		i := c.freeBuffer(tg)
		if i < 0 {
			return out, ErrBusy
		}
		tg.cur = i
		b := &tg.bufs[i]
		b.state = filling
		b.items = make([]T, 0, max(tg.hint, 1))
		c.dirty = append(c.dirty, t)
	}
	b := &tg.bufs[tg.cur]
	b.items = append(b.items, item)
	b.bytes += size
	c.pending++
	if len(b.items) >= c.o.MaxItems || b.bytes >= c.o.MaxBytes {
		out = append(out, c.leave(t))
	}
	return out, nil
}

// freeBuffer returns a free buffer of tg (making one while there are fewer
// than Buffers), or −1.
func (c *Channel[T]) freeBuffer(tg *target[T]) int {
	for i := range tg.bufs {
		if tg.bufs[i].state == free {
			return i
		}
	}
	if len(tg.bufs) < c.o.Buffers {
		tg.bufs = append(tg.bufs, buffer[T]{})
		return len(tg.bufs) - 1
	}
	return -1
}

// leave sends t's filling buffer: it goes in flight.
func (c *Channel[T]) leave(t int) Block[T] {
	tg := &c.ts[t]
	b := &tg.bufs[tg.cur]
	blk := Block[T]{Target: t, Buffer: tg.cur, Items: b.items, Bytes: b.bytes}
	c.pending -= len(b.items)
	c.inFlight++
	tg.hint = len(b.items)
	*b = buffer[T]{state: inFlight}
	tg.cur = -1
	for i, d := range c.dirty {
		if d == t {
			c.dirty = append(c.dirty[:i], c.dirty[i+1:]...)
			break
		}
	}
	return blk
}

// Flush sends target t's current buffer if it holds anything (E03).
func (c *Channel[T]) Flush(t int) ([]Block[T], error) {
	tg, err := c.target(t)
	if err != nil {
		return nil, err
	}
	if tg.cur < 0 || len(tg.bufs[tg.cur].items) == 0 {
		return nil, nil
	}
	return []Block[T]{c.leave(t)}, nil
}

// FlushAll sends every non-empty buffer, targets in the order they were
// first pushed to.
func (c *Channel[T]) FlushAll() []Block[T] {
	var out []Block[T]
	for len(c.dirty) > 0 {
		out = append(out, c.leave(c.dirty[0]))
	}
	return out
}

// End flushes every target and closes the channel to Push; Ended turns
// true once every block is done (E03).
func (c *Channel[T]) End() []Block[T] {
	c.ended = true
	return c.FlushAll()
}

// Done reports that the send of a block has completed: its buffer is free
// to fill again. A buffer that is not in flight is an error naming it.
func (c *Channel[T]) Done(t, buf int) error {
	tg, err := c.target(t)
	if err != nil {
		return err
	}
	if buf < 0 || buf >= len(tg.bufs) || tg.bufs[buf].state != inFlight {
		return fmt.Errorf("channel: Done for buffer %d of target %d, which is not in flight", buf, t)
	}
	tg.bufs[buf].state = free
	c.inFlight--
	return nil
}
