package channel_test

import (
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/comlib/channel"
)

// Each test checks a sentence of the EasyMSG paper (claims E01–E03 in
// docs/claims.md).

// TestE01_BufferLeavesWhenFullOrNextDoesNotFit: a buffered channel sends
// nothing until its buffer is full, or until the next datum does not fit
// (then the buffer leaves without it and the datum starts the next one);
// with room for one datum it is unbuffered: every push leaves at once.
func TestE01_BufferLeavesWhenFullOrNextDoesNotFit(t *testing.T) {
	cases := []struct {
		name   string
		o      channel.Options
		sizes  []int
		blocks [][]int // the data (their push index) of each block, in order
	}{
		{"full by count", channel.Options{MaxItems: 3, MaxBytes: 1000}, []int{1, 1, 1, 1, 1, 1, 1}, [][]int{{0, 1, 2}, {3, 4, 5}}},
		{"full by bytes", channel.Options{MaxItems: 100, MaxBytes: 10}, []int{4, 6, 5, 5}, [][]int{{0, 1}, {2, 3}}},
		{"next does not fit", channel.Options{MaxItems: 100, MaxBytes: 10}, []int{4, 4, 4, 4, 4}, [][]int{{0, 1}, {2, 3}}},
		{"unbuffered: one datum per block", channel.Options{MaxItems: 1}, []int{1, 1, 1}, [][]int{{0}, {1}, {2}}},
		{"too large alone", channel.Options{MaxItems: 100, MaxBytes: 10}, []int{3, 50, 3}, [][]int{{0}, {1}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ch, err := channel.New[int](1, c.o)
			require.NoError(t, err)
			var got [][]int
			for i, s := range c.sizes {
				out, err := ch.Push(0, i, s)
				require.NoError(t, err)
				for _, b := range out {
					got = append(got, b.Items)
					require.NoError(t, ch.Done(b.Target, b.Buffer))
				}
			}
			require.Equal(t, c.blocks, got)
			sent := 0
			for _, b := range got {
				sent += len(b)
			}
			require.Equal(t, len(c.sizes)-sent, ch.Pending(), "the rest waits for a flush")
		})
	}
}

// TestE02_TagsIdentifyDataWhateverTheOrder: blocks carry vectors of
// tagged data; delivered in a shuffled order of blocks, every datum is
// still found by its tag, and only by its tag.
func TestE02_TagsIdentifyDataWhateverTheOrder(t *testing.T) {
	r := rand.New(rand.NewSource(2))
	type vec = channel.Tagged[[]float64]
	ch, err := channel.New[vec](3, channel.Options{Buffers: 4, MaxItems: 5})
	require.NoError(t, err)
	want := map[uint64][]float64{}
	var blocks, flying []channel.Block[vec]
	for tag := uint64(0); tag < 100; tag++ {
		v := make([]float64, 1+r.Intn(4))
		for i := range v {
			v[i] = float64(tag) + float64(i)/10
		}
		want[tag] = v
		out, err := ch.Push(int(tag%3), vec{Tag: tag, Data: v}, 8*len(v))
		require.NoError(t, err)
		blocks = append(blocks, out...)
		flying = append(flying, out...)
		// Sends complete late and in any order: keep up to 3 in flight.
		for len(flying) > 3 {
			i := r.Intn(len(flying))
			require.NoError(t, ch.Done(flying[i].Target, flying[i].Buffer))
			flying = append(flying[:i], flying[i+1:]...)
		}
	}
	blocks = append(blocks, ch.End()...)
	r.Shuffle(len(blocks), func(i, j int) { blocks[i], blocks[j] = blocks[j], blocks[i] })
	got := map[uint64][]float64{}
	inOrder := true
	last := -1
	for _, b := range blocks {
		for _, d := range b.Items {
			_, dup := got[d.Tag]
			require.False(t, dup, "tag %d delivered twice", d.Tag)
			got[d.Tag] = d.Data
			if int(d.Tag) < last {
				inOrder = false
			}
			last = int(d.Tag)
		}
	}
	require.Equal(t, want, got)
	require.False(t, inOrder, "the arrival order differs from the push order, yet every datum is identified")
}

// TestE03_MultiBufferFillsWhileOneIsInFlight: with two buffers per
// target, a full buffer leaves and the next fills at once; only when both
// are in flight does a push have to wait (ErrBusy); Flush sends a non-empty
// current buffer; End flushes and is over when every send is done.
func TestE03_MultiBufferFillsWhileOneIsInFlight(t *testing.T) {
	ch, err := channel.New[string](2, channel.Options{Buffers: 2, MaxItems: 2})
	require.NoError(t, err)
	push := func(tg int, s string) []channel.Block[string] {
		out, err := ch.Push(tg, s, 1)
		require.NoError(t, err)
		return out
	}
	require.Empty(t, push(0, "a"))
	first := push(0, "b") // full: leaves; not done yet
	require.Equal(t, []channel.Block[string]{{Target: 0, Buffer: 0, Items: []string{"a", "b"}, Bytes: 2}}, first)
	require.Empty(t, push(0, "c"), "the next buffer fills while the first is in flight")
	second := push(0, "d")
	require.Len(t, second, 1)
	require.Equal(t, 1, second[0].Buffer)
	require.Equal(t, 2, ch.InFlight())

	_, err = ch.Push(0, "e", 1)
	require.ErrorIs(t, err, channel.ErrBusy, "both buffers in flight")
	require.Empty(t, push(1, "x"), "another target is not held up")

	// The second send completes first: order between blocks is not kept.
	require.NoError(t, ch.Done(0, 1))
	require.Empty(t, push(0, "e"))
	out, err := ch.Flush(0)
	require.NoError(t, err)
	require.Equal(t, []string{"e"}, out[0].Items)
	require.Equal(t, 1, out[0].Buffer, "the free buffer was reused")
	none, err := ch.Flush(0)
	require.NoError(t, err)
	require.Empty(t, none, "flush sends only a non-empty buffer")

	end := ch.End()
	require.Equal(t, []string{"x"}, end[0].Items)
	require.False(t, ch.Ended(), "three sends are still in flight")
	_, err = ch.Push(1, "late", 1)
	require.ErrorIs(t, err, channel.ErrEnded)
	for _, b := range []channel.Block[string]{first[0], out[0], end[0]} {
		require.NoError(t, ch.Done(b.Target, b.Buffer))
	}
	require.True(t, ch.Ended())
	require.ErrorContains(t, ch.Done(0, 0), "buffer 0 of target 0, which is not in flight")
}

// TestE03_SeededRandomUse: random pushes, flushes, caps changes and
// completions, for many seeds: every datum leaves exactly once, in a
// block of the target it was pushed for; no block exceeds the caps in
// force when it filled (unless it holds one datum); a target never has
// more than Buffers blocks in flight; after End and every Done, nothing
// is left.
func TestE03_SeededRandomUse(t *testing.T) {
	type d struct{ target, seq int }
	for seed := int64(0); seed < 200; seed++ {
		r := rand.New(rand.NewSource(seed))
		nt, nb := 1+r.Intn(4), 1+r.Intn(3)
		ch, err := channel.New[d](nt, channel.Options{Buffers: nb, MaxItems: 1 + r.Intn(6), MaxBytes: 5 + r.Intn(40)})
		require.NoError(t, err)
		var flying []channel.Block[d]
		seen := map[d]bool{}
		pushed := 0
		perTarget := make([]int, nt)
		take := func(out []channel.Block[d]) {
			for _, b := range out {
				// 6 and 44 are the largest caps drawn below.
				require.True(t, len(b.Items) == 1 || (len(b.Items) <= 6 && b.Bytes <= 44), "seed %d: block %v over its caps", seed, b)
				for _, it := range b.Items {
					require.Equal(t, b.Target, it.target, "seed %d", seed)
					require.False(t, seen[it], "seed %d: %v twice", seed, it)
					seen[it] = true
				}
				flying = append(flying, b)
			}
			n := make([]int, nt)
			for _, b := range flying {
				n[b.Target]++
				require.LessOrEqual(t, n[b.Target], nb, "seed %d: too many in flight", seed)
			}
		}
		for step := 0; step < 300; step++ {
			switch k := r.Intn(10); {
			case k < 6:
				tg := r.Intn(nt)
				out, err := ch.Push(tg, d{tg, perTarget[tg]}, r.Intn(10))
				if err != nil {
					require.ErrorIs(t, err, channel.ErrBusy, "seed %d", seed)
					continue
				}
				perTarget[tg]++
				pushed++
				take(out)
			case k < 8 && len(flying) > 0:
				i := r.Intn(len(flying))
				require.NoError(t, ch.Done(flying[i].Target, flying[i].Buffer))
				flying = append(flying[:i], flying[i+1:]...)
			case k == 8:
				out, err := ch.Flush(r.Intn(nt))
				require.NoError(t, err)
				take(out)
			default:
				require.NoError(t, ch.SetCaps(1+r.Intn(6), 5+r.Intn(40)))
			}
		}
		take(ch.End())
		for _, b := range flying {
			require.NoError(t, ch.Done(b.Target, b.Buffer))
		}
		require.True(t, ch.Ended(), "seed %d", seed)
		require.Equal(t, pushed, len(seen), "seed %d: every datum left once", seed)
		require.Zero(t, ch.Pending())
	}
}

func TestNewRejectsBadOptions(t *testing.T) {
	for _, c := range []struct {
		n    int
		o    channel.Options
		want string
	}{
		{1, channel.Options{Buffers: -1}, "Buffers -1"},
		{1, channel.Options{MaxItems: -2}, "MaxItems -2"},
		{1, channel.Options{MaxBytes: -3}, "MaxBytes -3"},
		{0, channel.Options{}, "0 targets"},
	} {
		_, err := channel.New[int](c.n, c.o)
		require.ErrorContains(t, err, c.want)
	}
	ch, err := channel.New[int](2, channel.Options{})
	require.NoError(t, err)
	_, err = ch.Push(2, 1, 1)
	require.ErrorContains(t, err, "target 2 out of range [0, 2)")
	require.ErrorContains(t, ch.SetCaps(0, 10), "MaxItems 0")
}

type sized struct{}

func (sized) Size() int { return 100 }

func TestTaggedSize(t *testing.T) {
	require.Equal(t, 8+8*5, channel.Tagged[[]float64]{Data: make([]float64, 5)}.Size())
	require.Equal(t, 8+4, channel.Tagged[int32]{}.Size())
	require.Equal(t, 8+100, channel.Tagged[sized]{}.Size())
	require.Equal(t, 8+64, channel.Tagged[map[int]int]{}.Size(), "unknown: a guess")
}
