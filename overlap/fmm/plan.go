// Package fmm is the transfer step of the Fast Multipole Method as a
// workload for the overlap loop (the problem of the EasyMSG paper): the
// cells of an oct-tree are spread over the PEs, and each cell i sums
// contributions T(i, j)·x_j of its far cells j — the cells of its level
// that are not its neighbours but whose parent neighbours its parent (its
// interaction list). A contribution from a cell on another PE needs x_j to
// travel; the others are local computations to overlap with that traffic.
//
// Plan holds the problem and a sequential reference (pure, no runtime);
// Register, New and Iterate run it on the runtime, one group branch per PE
// running the overlap loop in a threaded entry method with TRAM carrying
// the cell data. examples/fmmtransfer and the tune/fmmtransfer benchmarks
// use it.
package fmm

import (
	"fmt"
	"math"
	"sort"
)

// V is the length of a cell's vector (the paper's x_j is a small vector).
const V = 8

// Size is a problem size: the oct-tree levels whose transfers are computed
// and the shell of active cells (the surface of the object, as the paper's
// gray cells).
type Size struct {
	Name     string
	MinLevel int // the coarsest level with far cells (2)
	MaxLevel int
	Shell    float64 // a cell is active if its centre is within Shell·cell of the sphere of radius 0.4
}

// Sizes are the -size values: small, medium and large.
var Sizes = map[string]Size{
	"small":  {Name: "small", MinLevel: 2, MaxLevel: 3, Shell: 100},
	"medium": {Name: "medium", MinLevel: 2, MaxLevel: 4, Shell: 1.5},
	"large":  {Name: "large", MinLevel: 2, MaxLevel: 5, Shell: 1},
}

// SizeNamed returns the size called name, or an error naming the choices.
func SizeNamed(name string) (Size, error) {
	s, ok := Sizes[name]
	if !ok {
		return Size{}, fmt.Errorf("fmm: unknown size %q (want small, medium or large)", name)
	}
	return s, nil
}

// Cell is one active cell.
type Cell struct {
	Level   int
	X, Y, Z int
	Owner   int     // PE
	Far     []int32 // indices of its far cells (all levels are apart)
}

// Plan is the problem on P PEs.
type Plan struct {
	Size  Size
	PEs   int
	Cells []Cell
	// Local[pe] are the cells owned by pe.
	Local [][]int32
}

// NewPlan builds the cells of s, their interaction lists and their owners
// on pes PEs: each level's active cells in Morton order, cut into pes
// blocks, so every PE holds a part of every level.
func NewPlan(s Size, pes int) (*Plan, error) {
	if pes < 1 {
		return nil, fmt.Errorf("fmm: %d PEs", pes)
	}
	if s.MinLevel < 2 || s.MaxLevel < s.MinLevel || s.MaxLevel > 7 {
		return nil, fmt.Errorf("fmm: levels %d..%d, want 2 ≤ min ≤ max ≤ 7", s.MinLevel, s.MaxLevel)
	}
	p := &Plan{Size: s, PEs: pes, Local: make([][]int32, pes)}
	for l := s.MinLevel; l <= s.MaxLevel; l++ {
		n := 1 << l
		index := map[[3]int]int32{}
		var level []int32
		for x := 0; x < n; x++ {
			for y := 0; y < n; y++ {
				for z := 0; z < n; z++ {
					if !active(s, n, x, y, z) {
						continue
					}
					id := int32(len(p.Cells))
					p.Cells = append(p.Cells, Cell{Level: l, X: x, Y: y, Z: z})
					index[[3]int{x, y, z}] = id
					level = append(level, id)
				}
			}
		}
		sort.Slice(level, func(a, b int) bool {
			ca, cb := p.Cells[level[a]], p.Cells[level[b]]
			return morton(ca.X, ca.Y, ca.Z) < morton(cb.X, cb.Y, cb.Z)
		})
		for k, id := range level {
			pe := k * pes / len(level)
			p.Cells[id].Owner = pe
			p.Local[pe] = append(p.Local[pe], id)
		}
		for _, id := range level {
			c := &p.Cells[id]
			for dx := -3; dx <= 3; dx++ {
				for dy := -3; dy <= 3; dy++ {
					for dz := -3; dz <= 3; dz++ {
						x, y, z := c.X+dx, c.Y+dy, c.Z+dz
						j, ok := index[[3]int{x, y, z}]
						if !ok || cheb(c.X-x, c.Y-y, c.Z-z) <= 1 || cheb(c.X/2-x/2, c.Y/2-y/2, c.Z/2-z/2) > 1 {
							continue
						}
						c.Far = append(c.Far, j)
					}
				}
			}
		}
	}
	return p, nil
}

func active(s Size, n, x, y, z int) bool {
	h := 1 / float64(n)
	cx, cy, cz := (float64(x)+0.5)*h-0.5, (float64(y)+0.5)*h-0.5, (float64(z)+0.5)*h-0.5
	r := math.Sqrt(cx*cx + cy*cy + cz*cz)
	return math.Abs(r-0.4) <= s.Shell*h
}

func cheb(a, b, c int) int { return max(abs(a), abs(b), abs(c)) }

func abs(a int) int {
	if a < 0 {
		return -a
	}
	return a
}

func morton(x, y, z int) uint64 {
	var m uint64
	for b := 0; b < 8; b++ {
		m |= uint64(x>>b&1)<<(3*b+2) | uint64(y>>b&1)<<(3*b+1) | uint64(z>>b&1)<<(3*b)
	}
	return m
}

// Transfers counts the transfers (i, j) of the plan, and those whose j is
// on another PE than i.
func (p *Plan) Transfers() (all, remote int) {
	for _, c := range p.Cells {
		for _, j := range c.Far {
			all++
			if p.Cells[j].Owner != c.Owner {
				remote++
			}
		}
	}
	return all, remote
}

// Input is x_j at iteration it: a deterministic function, so every PE
// computes its own cells' data and the check needs no transfer of x.
func Input(it, j int) [V]float64 {
	var x [V]float64
	for k := range x {
		x[k] = math.Sin(float64(j*V+k)*0.37 + float64(it)*0.11)
	}
	return x
}

// Transfer adds T(i, j)·x to y: the transfer function of the pair,
// evaluated work times (the cost of one local computation; the result is
// the same for any work ≥ 1).
func (p *Plan) Transfer(y *[V]float64, i, j int32, x *[V]float64, work int) {
	ci, cj := &p.Cells[i], &p.Cells[j]
	dx, dy, dz := float64(ci.X-cj.X), float64(ci.Y-cj.Y), float64(ci.Z-cj.Z)
	r2 := dx*dx + dy*dy + dz*dz
	var t float64
	for w := 0; w < work; w++ {
		for m := 0; m < 4; m++ { // a short series, standing for T_{L,P}
			t += math.Cos(float64(m)*math.Sqrt(r2)) / (r2 + float64(m+1))
		}
	}
	t /= float64(work)
	for k := range y {
		y[k] += t * x[k] * float64(k+1) / V
	}
}

// Sequential computes y for iteration it on one PE, in the plan's order.
func (p *Plan) Sequential(it int) [][V]float64 {
	y := make([][V]float64, len(p.Cells))
	for i := range p.Cells {
		for _, j := range p.Cells[i].Far {
			x := Input(it, int(j))
			p.Transfer(&y[i], int32(i), j, &x, 1)
		}
	}
	return y
}
