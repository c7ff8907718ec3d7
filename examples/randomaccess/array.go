package main

import (
	"fmt"
	"time"

	"github.com/charmgo/charm/array"
	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/chare/reducer"
	"github.com/charmgo/charm/group"
	"github.com/charmgo/charm/internal/exutil"
	"github.com/charmgo/charm/internal/hpcc"
	"github.com/charmgo/charm/tram"
)

// The chare-array form (-client array): the table is split into -blocks
// elements of an array (more than PEs, as in Charm++'s RandomAccess), word
// i in element i % B at slot i / B, and the updates go through a
// tram.ArrayStreamer to the element's index. The group's branches still
// generate the stream. Arrays may migrate, so the steps end by completion
// detection (staged completion needs exact locations, claim T22), with
// periodic flushing.

// Block is one element of the array form's table.
type Block struct {
	array.Element[Block, int]
	// Exported, so that the table travels with an element that migrates.
	Words     []uint64
	Blocks    uint64
	Mask      uint64
	Misrouted int64
}

// BlockSetup describes the table to every element.
type BlockSetup struct {
	LogSize, Blocks int
}

// ArrayGenerateMsg makes a branch send its share of the stream to blocks.
type ArrayGenerateMsg struct {
	S       tram.ArrayStreamer[Block, int, uint64]
	LogSize int
	Blocks  int
}

func init() {
	chare.Register[Block]()
	tram.RegisterArray[Block, int]((*Block).Update)
}

// Init fills the element's words with their global indices.
func (b *Block) Init(s BlockSetup) {
	size, nb, idx := int64(1)<<s.LogSize, int64(s.Blocks), int64(b.ThisIndex())
	b.Blocks, b.Mask = uint64(nb), uint64(size-1)
	b.Words = hpcc.Words(uint64(idx), uint64(nb), hpcc.Strided(size, nb, idx))
}

// Update applies one update to a word of this element.
func (b *Block) Update(ran uint64) {
	i := ran & b.Mask
	if i%b.Blocks != uint64(b.ThisIndex()) {
		b.Misrouted++
		return
	}
	b.Words[i/b.Blocks] ^= ran
}

// Check counts the words that differ from their initial value, and the
// misrouted updates, over all elements.
func (b *Block) Check(cb chare.Callback) {
	bad := b.Misrouted + hpcc.Changed(b.Words, uint64(b.ThisIndex()), b.Blocks)
	if err := b.Contribute(bad, reducer.SumInt64, cb); err != nil {
		b.Abort(err)
	}
}

// GenerateForArray inserts this PE's share of the stream for the blocks.
func (t *Table) GenerateForArray(m ArrayGenerateMsg) {
	mask, nb := uint64(1)<<m.LogSize-1, uint64(m.Blocks)
	first, n := hpcc.Share(4<<m.LogSize, t.NumPEs(), t.PE())
	ran := hpcc.Starts(first)
	for i := int64(0); i < n; i++ {
		ran = hpcc.Next(ran)
		if err := m.S.Insert(t, ran, int((ran&mask)%nb)); err != nil {
			t.Abort(fmt.Errorf("randomaccess: PE %d, update %d: %w", t.PE(), first+i, err))
			return
		}
	}
	if err := m.S.Done(t, 1); err != nil {
		t.Abort(err)
	}
}

// runArray creates the blocks and the array streamer and runs both steps.
func (m *Main) runArray(gen group.Proxy[Table]) error {
	blocks, err := array.NewWith(m, array.Dims(m.blocks), (*Block).Init, BlockSetup{LogSize: m.logSize, Blocks: m.blocks})
	if err != nil {
		return fmt.Errorf("creating the blocks: %w", err)
	}
	s, err := tram.NewArray(m, blocks, (*Block).Update, exutil.Options(m.dims, m.buffer, time.Millisecond))
	if err != nil {
		return fmt.Errorf("creating the streamer: %w", err)
	}
	m.updates = 4 << m.logSize
	if m.elapsed, err = hpcc.TwoPasses(func() error {
		finished, err := exutil.StartStep(m, s.S, tram.Completion, m.NumPEs(), "")
		if err == nil {
			err = chare.Send(m, gen, (*Table).GenerateForArray, ArrayGenerateMsg{S: s, LogSize: m.logSize, Blocks: m.blocks})
		}
		if err == nil {
			_, err = finished.Get(m)
		}
		return err
	}); err != nil {
		return err
	}
	bad := chare.NewFuture[int64](m)
	if err := chare.Send(m, blocks, (*Block).Check, bad.Callback()); err != nil {
		return fmt.Errorf("checking the table: %w", err)
	}
	m.errors, err = bad.Get(m)
	return err
}
