package agree

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// batchRun feeds a Batcher the reports of the given iterations, in order,
// and returns the messages it sends (each a list of iterations) and, per
// message, the iteration whose report triggered it.
func batchRun(b *Batcher, iters []int) (msgs [][]int, at []int) {
	for _, n := range iters {
		if out := b.Add(Report{PE: 1, Iter: n, Step: 1, Parts: 2, Value: 3, Cost: 1}); out != nil {
			var m []int
			for _, r := range out {
				m = append(m, r.Iter)
			}
			msgs, at = append(msgs, m), append(at, n)
		}
	}
	return msgs, at
}

func seq(lo, hi int) []int { // lo..hi−1
	var out []int
	for n := lo; n < hi; n++ {
		out = append(out, n)
	}
	return out
}

// TestBatcherOneMessagePerSegment: a PE that runs every iteration sends
// one message per segment, at the last scored iteration (when the Decider
// needs it to announce the next segment), holding the segment's scored
// reports and the previous segment's lead; every report goes once, in
// order; the last segment's lead is held until Flush.
func TestBatcherOneMessagePerSegment(t *testing.T) {
	const segs = 10
	for _, c := range []struct{ length, lead int }{
		{8, DefaultLead(8)}, {8, 0}, {2, 1}, {1, 0}, {4, 3}, {16, 4},
	} {
		t.Run(fmt.Sprintf("len%d/lead%d", c.length, c.lead), func(t *testing.T) {
			b := NewBatcher(c.length, c.lead)
			msgs, at := batchRun(b, seq(0, segs*c.length))
			require.Len(t, msgs, segs, "one message per segment: %v", msgs)
			scored := c.length - c.lead
			for k, m := range msgs {
				require.Equal(t, k*c.length+scored-1, at[k], "segment %d's message leaves at its last scored iteration", k)
				lo := k*c.length - c.lead // the previous segment's lead
				if k == 0 {
					lo = 0
				}
				require.Equal(t, seq(lo, k*c.length+scored), m, "segment %d's message", k)
			}
			require.Equal(t, c.lead, b.Held(), "the last segment's lead is held")
			var rest []int
			for _, r := range b.Flush() {
				rest = append(rest, r.Iter)
			}
			require.Equal(t, seq(segs*c.length-c.lead, segs*c.length), rest)
			require.Zero(t, b.Held())
			require.Nil(t, b.Flush())
		})
	}
}

// TestBatcherWhenTheScoredPartIsNotWhole: when an iteration of a
// segment's scored part ran no exchange here (a recovery), or the PE
// starts in the middle, the Decider fills the segment's score with lead
// iterations: the held reports go at the first lead iteration and the
// later ones at once, as with a report per iteration; the next segment is
// batched again.
func TestBatcherWhenTheScoredPartIsNotWhole(t *testing.T) {
	for _, c := range []struct {
		name          string
		length, lead  int
		iters         []int
		wantMsgs, wat [][]int
	}{
		{"a recovered iteration", 8, 2, append(append(seq(0, 3), seq(4, 8)...), seq(8, 14)...),
			[][]int{{0, 1, 2, 4, 5, 6}, {7}, {8, 9, 10, 11, 12, 13}}, [][]int{{6}, {7}, {13}}},
		{"starts in the middle", 8, 2, seq(3, 14),
			[][]int{{3, 4, 5, 6}, {7}, {8, 9, 10, 11, 12, 13}}, [][]int{{6}, {7}, {13}}},
		// The last scored iteration and the lead both ran no exchange: the
		// next segment's first report takes what is overdue with it.
		{"no lead iteration to carry it", 4, 1, append(seq(0, 2), seq(4, 7)...),
			[][]int{{0, 1, 4}, {5, 6}}, [][]int{{4}, {6}}},
		// Segment 1's scored part is cut short by a jump to segment 3:
		// what it held goes at once; then an iteration of segment 1 ends
		// late, and goes at once too.
		{"a late report of an older segment", 4, 1, []int{0, 1, 2, 3, 4, 12, 5},
			[][]int{{0, 1, 2}, {3, 4, 12}, {5}}, [][]int{{2}, {12}, {5}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := NewBatcher(c.length, c.lead)
			msgs, at := batchRun(b, c.iters)
			require.Equal(t, c.wantMsgs, msgs)
			var want []int
			for _, w := range c.wat {
				want = append(want, w[0])
			}
			require.Equal(t, want, at)
		})
	}
}

// TestBatcherQuietSegments: with quiet segments in between (their
// iterations are not reported, Range.Every), a re-check segment's lead
// travels with the next reported segment's message: one message per
// reported segment.
func TestBatcherQuietSegments(t *testing.T) {
	const length, lead, every, segs = 4, 1, 4, 20
	b := NewBatcher(length, lead)
	var iters []int
	for seg := 0; seg < segs; seg += every {
		iters = append(iters, seq(seg*length, (seg+1)*length)...)
	}
	msgs, _ := batchRun(b, iters)
	require.Len(t, msgs, segs/every)
	require.Equal(t, []int{3, 16, 17, 18}, msgs[1], "segment 0's lead with segment 4's scored part")
	require.Equal(t, 1, b.Held())
}
