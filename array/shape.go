package array

import (
	"fmt"
	"math"
	"strings"
)

// Shape is the set of indices an array is created with.
type Shape[I comparable] struct {
	n    int
	at   func(pos int) I       // the index at a linear position
	pos  func(i I) (int, bool) // the linear position of an index
	desc string
	bad  string // why the shape cannot make an array, if it cannot
	dims []int  // for Dims..Dims6
	list []I    // for Indices
	// sparse: no fixed set of indices (Sparse)
	sparse bool
}

// Len returns the number of indices.
func (s Shape[I]) Len() int { return s.n }

// At returns the index at linear position pos (0 ≤ pos < Len()).
func (s Shape[I]) At(pos int) I { return s.at(pos) }

// Pos returns the linear position of an index, and false if the index is
// not in the shape.
func (s Shape[I]) Pos(i I) (int, bool) { return s.pos(i) }

func (s Shape[I]) String() string { return s.desc }

// Dims returns a 1-D shape 0..n-1.
func Dims(n int) Shape[int] {
	s := Shape[int]{n: max(n, 0), dims: []int{n}, at: func(p int) int { return p },
		pos:  func(i int) (int, bool) { return i, i >= 0 && i < n },
		desc: fmt.Sprintf("%d", n)}
	if n < 0 {
		s.bad = fmt.Sprintf("negative size %d", n)
	}
	return s
}

// Dims2 returns a 2-D shape; indices are [2]int, row-major.
func Dims2(a, b int) Shape[[2]int] { return nd[[2]int](a, b) }

// Dims3 returns a 3-D shape.
func Dims3(a, b, c int) Shape[[3]int] { return nd[[3]int](a, b, c) }

// Dims4 returns a 4-D shape.
func Dims4(a, b, c, d int) Shape[[4]int] { return nd[[4]int](a, b, c, d) }

// Dims5 returns a 5-D shape.
func Dims5(a, b, c, d, e int) Shape[[5]int] { return nd[[5]int](a, b, c, d, e) }

// Dims6 returns a 6-D shape.
func Dims6(a, b, c, d, e, f int) Shape[[6]int] { return nd[[6]int](a, b, c, d, e, f) }

// nd builds a row-major shape over fixed-size int arrays.
func nd[I [2]int | [3]int | [4]int | [5]int | [6]int](dims ...int) Shape[I] {
	n := 1
	bad := ""
	parts := make([]string, len(dims))
	for k, d := range dims {
		if d < 0 {
			bad = fmt.Sprintf("negative size %d in dimension %d", d, k)
			d = 0
		}
		if d > 0 && n > math.MaxInt/d {
			bad = fmt.Sprintf("sizes %v: more elements than an int counts", dims)
			n = 0
		}
		n *= d
		parts[k] = fmt.Sprint(d)
	}
	return Shape[I]{
		bad:  bad,
		dims: dims,
		n:    n,
		at: func(p int) I {
			var idx I
			for k := len(dims) - 1; k >= 0; k-- {
				idx[k] = p % dims[k]
				p /= dims[k]
			}
			return idx
		},
		pos: func(idx I) (int, bool) {
			p := 0
			for k, d := range dims {
				if idx[k] < 0 || idx[k] >= d {
					return 0, false
				}
				p = p*d + idx[k]
			}
			return p, true
		},
		desc: strings.Join(parts, "×"),
	}
}

// Indices returns a shape made of the given indices, of any comparable
// type (a user-defined index). Duplicates are an error at creation.
func Indices[I comparable](list ...I) Shape[I] {
	pos := make(map[I]int, len(list))
	dup := false
	for k, i := range list {
		if _, ok := pos[i]; ok {
			dup = true
		}
		pos[i] = k
	}
	s := Shape[I]{n: len(list), list: list, at: func(p int) I { return list[p] },
		pos:  func(i I) (int, bool) { p, ok := pos[i]; return p, ok },
		desc: fmt.Sprintf("%d listed indices", len(list))}
	if dup {
		s.bad = "duplicate indices"
	}
	return s
}

// Sparse returns the shape of an array that starts empty and whose
// elements are inserted (Insert), or created on their first message
// (WithDemandCreation): any index of type I is valid. Its elements are
// placed by Hash unless WithMap gives a MapFunc or named map.
func Sparse[I comparable]() Shape[I] {
	return Shape[I]{at: func(int) I { var i I; return i }, pos: func(I) (int, bool) { return -1, true },
		desc: "sparse", sparse: true}
}
