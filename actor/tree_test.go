package actor_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/actor"
)

// The spanning trees that broadcasts, reductions and detection waves use.

func TestTreeParentChildren(t *testing.T) {
	cases := []struct {
		pos, n, k int
		parent    int
		children  []int
	}{
		{0, 1, 4, -1, nil},
		{0, 5, 4, -1, []int{1, 2, 3, 4}},
		{0, 3, 4, -1, []int{1, 2}},
		{1, 10, 4, 0, []int{5, 6, 7, 8}},
		{2, 10, 4, 0, []int{9}},
		{3, 10, 4, 0, nil},
		{4, 7, 2, 1, nil},
		{2, 7, 2, 0, []int{5, 6}},
		{3, 5, 1, 2, []int{4}}, // a chain
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("pos%d_n%d_k%d", c.pos, c.n, c.k), func(t *testing.T) {
			require.Equal(t, c.parent, actor.TreeParent(c.pos, c.k))
			require.Equal(t, c.children, actor.TreeChildren(nil, c.pos, c.n, c.k))
		})
	}
	// TreeChildren appends.
	require.Equal(t, []int{-1, 1, 2}, actor.TreeChildren([]int{-1}, 0, 3, 2))
}

// TestPETreeSpans checks, for many sizes, arities and roots, that the tree
// reaches every PE exactly once from its root, that parent and children
// agree, and that its depth is logarithmic.
func TestPETreeSpans(t *testing.T) {
	for n := 1; n <= 40; n++ {
		for _, k := range []int{0, 1, 2, 3, 4, 8} {
			for _, root := range []int{0, n / 2, n - 1} {
				tr := actor.PETree{Root: root, N: n, Arity: k}
				require.True(t, tr.IsRoot(root))
				require.Equal(t, -1, tr.Parent(root))
				seen := map[int]int{} // PE → depth
				var walk func(pe, depth int)
				walk = func(pe, depth int) {
					_, dup := seen[pe]
					require.False(t, dup, "n=%d k=%d root=%d: PE %d reached twice", n, k, root, pe)
					seen[pe] = depth
					for _, c := range tr.Children(pe) {
						require.Equal(t, pe, tr.Parent(c), "n=%d k=%d root=%d: parent of %d", n, k, root, c)
						walk(c, depth+1)
					}
				}
				walk(root, 0)
				require.Len(t, seen, n, "n=%d k=%d root=%d", n, k, root)
				arity := max(k, 1)
				for pe, d := range seen {
					require.True(t, pe >= 0 && pe < n)
					if arity > 1 {
						// A complete arity-ary tree of n nodes has depth < log_arity(n)+1.
						size := 1
						for range d {
							size *= arity
						}
						require.LessOrEqual(t, size, n*arity, "n=%d k=%d: PE %d at depth %d", n, k, pe, d)
					}
				}
			}
		}
	}
}

// TestPETreeAppendChildren checks that AppendChildren keeps what dst held
// and appends what Children returns.
func TestPETreeAppendChildren(t *testing.T) {
	tr := actor.PETree{Root: 3, N: 10, Arity: 2}
	for pe := range 10 {
		got := tr.AppendChildren([]int{-7}, pe)
		require.Equal(t, -7, got[0])
		require.Equal(t, append([]int{}, tr.Children(pe)...), append([]int{}, got[1:]...), "PE %d", pe)
	}
	require.Equal(t, []int{4, 5}, tr.AppendChildren(nil, 3), "the root's children")
}
