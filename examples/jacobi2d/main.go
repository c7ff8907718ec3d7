// Jacobi2d solves Laplace's equation on a square grid with the five-point
// Jacobi stencil, decomposed over a 2-D chare array of blocks: the classic
// Charm++ example of ghost exchange and reduction-driven iteration.
//
// The grid has G×G interior points and a fixed boundary: the top edge is
// 1.0, the other edges 0. It is cut into B×B blocks, one array element
// each (blocks differ in size by at most one row or column when B does not
// divide G). Every iteration, each block
//
//  1. sends its edge rows and columns to its four neighbours (Ghost),
//  2. once its own ghosts for that iteration have arrived, replaces every
//     interior point by the mean of its four neighbours, and
//  3. contributes the largest change of one of its points (its residual)
//     to a max reduction whose callback broadcasts the result back to the
//     whole array (Check).
//
// Nothing waits in the main chare between iterations: the reduction's
// broadcast tells every block whether to go on. A neighbour that has
// already heard the broadcast may send its ghosts for the next iteration
// before this block has heard it, so ghosts are buffered by iteration.
// When the residual drops below -tol or -iters iterations have run, the
// blocks contribute their values to a gather reduction that fulfils a
// future the main chare waits on; the main chare reassembles the grid,
// runs the same iterations sequentially and checks that the two grids
// agree to 1e-12 (they are in fact bitwise equal: every point is computed
// with the same operations in the same order).
//
// With -checkpoint DIR -checkpoint-at K, the blocks stop after iteration
// K, the job writes a checkpoint to DIR (chare.Checkpoint) and goes on;
// running the program again with the runtime's flag -restart DIR, on the
// same or another number of PEs and processes, resumes from iteration K and
// ends with the same result.
//
// Run it with
//
//	go run ./examples/jacobi2d -p 4
//	go run ./examples/jacobi2d -p 4 -grid 256 -blocks 8 -iters 5000 -tol 1e-5
//	go run ./examples/jacobi2d -p 4 -checkpoint /tmp/j2d -checkpoint-at 100
//	go run ./examples/jacobi2d -p 3 -restart /tmp/j2d
//
// The runtime takes its flags (-p N) anywhere on the line. The last line is
// "jacobi2d: ok grid=64 blocks=4x4 iters=... residual=... maxdiff=...", or
// "jacobi2d: FAILED ..." with a non-zero exit code.
package main

import (
	"fmt"
	"io"
	"math"
	"os"
	"sync/atomic"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/charmgo/charm/array"
	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/chare/progress"
	"github.com/charmgo/charm/chare/reducer"
	"github.com/charmgo/charm/internal/exutil"
	_ "github.com/charmgo/charm/lb" // -balancer, -lbperiod, -lbdebug...
)

// out is where the program prints; the test replaces it.
var out io.Writer = os.Stdout

// bar shows the iterations on a terminal (stderr; off otherwise).
var bar atomic.Pointer[progress.Bar]

// Params are the problem's parameters.
type Params struct {
	Grid   int     // interior points per side
	Blocks int     // blocks per side
	Iters  int     // maximum number of iterations
	Tol    float64 // stop when the residual falls below it
	// CheckpointDir, if set, is where the job checkpoints itself after
	// iteration CheckpointAt.
	CheckpointDir string
	CheckpointAt  int
	// Imbalance makes the blocks of the top half do that many times the
	// work (the extra sweeps are thrown away, the result is unchanged);
	// LBEvery, if set, makes the blocks stop at AtSync every LBEvery
	// iterations, where the load balancer (-balancer) may move them.
	Imbalance int
	LBEvery   int
}

// Result is what the program computed, for the test.
type Result struct {
	Iters    int           // iterations run
	Residual float64       // residual of the last iteration
	MaxDiff  float64       // largest difference from the sequential grid
	IterTime time.Duration // time per iteration after the first AtSync step
}

// Main is the main chare. Its exported fields are saved by a checkpoint.
type Main struct {
	chare.Chare[Main]
	P      Params
	Blocks array.Proxy[Block, [2]int]
	res    Result
	began  bool // Start ran: this is not a restarted job
	// The first AtSync step: the iteration it came after, and when.
	markIter int
	markAt   time.Time
}

// Block is one block of the grid: array element [bi, bj] holds rows
// r0..r0+nr-1 and columns c0..c0+nc-1 of the interior (0-based).
type Block struct {
	array.Element[Block, [2]int]

	p      Params
	r0, c0 int
	nr, nc int
	// u and next hold (nr+2)×(nc+2) values, row-major: the block and a
	// ring of ghost cells, which on the edges of the grid hold the fixed
	// boundary values.
	u, next []float64

	iter      int                // iterations completed
	exchanged bool               // ghosts for iteration iter were sent
	expect    int                // ghost messages per iteration (one per neighbour)
	ghosts    map[int][]GhostMsg // received, by iteration
	done      chare.Callback     // where the final gather goes
	main      chare.Proxy[Main]
	marked    bool // block [0 0] told Main of the first step
}

// Setup configures a block when the array is created.
type Setup struct {
	P    Params
	Done chare.Callback
	Main chare.Proxy[Main]
}

// Side names the edge of a block that a ghost message fills.
type Side uint8

const (
	North Side = iota // ghost row above the block
	South             // ghost row below
	West              // ghost column to the left
	East              // ghost column to the right
)

// GhostMsg carries one edge of a neighbour for one iteration.
type GhostMsg struct {
	Iter   int
	Side   Side // the receiver's side to fill
	Values []float64
}

// BlockResult is a block's contribution to the final gather.
type BlockResult struct {
	R0, C0, NR, NC int
	Values         []float64 // nr×nc, row-major
	Iters          int
	Residual       float64
}

func init() {
	// The result, whether Start ran and the timing mark belong to one
	// run: a restart starts them afresh.
	chare.Register[Main](chare.Transient("res", "began", "markIter", "markAt"))
	chare.Register[Block]()
}

func main() { os.Exit(chare.Main((*Main).Start)) }

// Start parses the flags, creates the blocks and starts them; the
// gathered grid comes back to Finish.
func (m *Main) Start(args []string) {
	p, err := parseFlags(args)
	if err != nil {
		exutil.FlagError(out, m, "jacobi2d", err)
		return
	}
	m.P, m.began = p, true
	bar.Store(progress.New("jacobi2d", p.Iters, "iterations"))
	// The final gather goes to an entry method, not a future: a
	// checkpoint (and a restart from it) keeps callbacks to entry methods.
	done := chare.EntryCallbackFor(m.ThisProxy(), resultGather, (*Main).Finish)
	m.Blocks, err = array.NewWith(m, array.Dims2(p.Blocks, p.Blocks), (*Block).Init, Setup{P: p, Done: done, Main: m.ThisProxy()})
	if err != nil {
		m.fail(1, "creating the blocks: %v", err)
		return
	}
	if err := chare.Send0(m, m.Blocks, (*Block).Begin); err != nil {
		m.fail(1, "starting the blocks: %v", err)
	}
}

// resultGather gathers the blocks' results. It is made (and registered)
// when the package is initialized, so that every process can decode its
// partial results.
var resultGather = reducer.GatherOf[[2]int, BlockResult]()

// Finish receives the gathered grid.
func (m *Main) Finish(items []reducer.Pair[[2]int, BlockResult]) { m.finish(m.P, items) }

// Checkpoint runs when every block has finished iteration CheckpointAt:
// the job saves itself, then Resume goes on (in this run, and in a run
// restarted from the checkpoint).
func (m *Main) Checkpoint(int) {
	if err := chare.Checkpoint(m, m.P.CheckpointDir, chare.EntryCallback0(m.ThisProxy(), (*Main).Resume)); err != nil {
		m.fail(1, "checkpoint: %v", err)
	}
}

// Resume starts the iteration after the checkpoint.
func (m *Main) Resume() {
	if m.began {
		fmt.Fprintf(out, "jacobi2d: checkpoint written to %s after iteration %d\n", m.P.CheckpointDir, m.P.CheckpointAt)
	} else {
		fmt.Fprintf(out, "jacobi2d: restarted after iteration %d on %d PEs\n", m.P.CheckpointAt, m.NumPEs())
	}
	if err := chare.Send0(m, m.Blocks, (*Block).Begin); err != nil {
		m.fail(1, "resuming the blocks: %v", err)
	}
}

func parseFlags(args []string) (Params, error) {
	p := Params{}
	fs := exutil.NewFlagSet("jacobi2d")
	fs.IntVar(&p.Grid, "grid", 64, "interior `points` per side of the grid")
	fs.IntVar(&p.Blocks, "blocks", 4, "blocks per side (the array has blocks×blocks elements)")
	fs.IntVar(&p.Iters, "iters", 2000, "maximum number of iterations")
	fs.Float64Var(&p.Tol, "tol", 1e-4, "stop once the largest change in an iteration is below this")
	fs.StringVar(&p.CheckpointDir, "checkpoint", "", "checkpoint the job to this `directory` (with -checkpoint-at)")
	fs.IntVar(&p.CheckpointAt, "checkpoint-at", 0, "checkpoint after this `iteration`")
	fs.IntVar(&p.Imbalance, "imbalance", 1, "the blocks of the top half do this many `times` the work")
	fs.IntVar(&p.LBEvery, "lbevery", 0, "stop at AtSync every this many `iterations` (load balancing with -balancer)")
	if err := fs.Parse(args); err != nil {
		return p, err
	}
	switch {
	case fs.NArg() > 0:
		return p, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	case p.Grid < 1:
		return p, fmt.Errorf("-grid %d: want at least 1 point per side", p.Grid)
	case p.Blocks < 1 || p.Blocks > p.Grid:
		return p, fmt.Errorf("-blocks %d: want 1 to %d (the grid size) blocks per side", p.Blocks, p.Grid)
	case p.Iters < 1:
		return p, fmt.Errorf("-iters %d: want at least 1", p.Iters)
	case !(p.Tol >= 0):
		return p, fmt.Errorf("-tol %v: want a number ≥ 0", p.Tol)
	case (p.CheckpointDir == "") != (p.CheckpointAt == 0):
		return p, fmt.Errorf("-checkpoint and -checkpoint-at go together")
	case p.CheckpointAt < 0:
		return p, fmt.Errorf("-checkpoint-at %d: want an iteration ≥ 1", p.CheckpointAt)
	case p.Imbalance < 1:
		return p, fmt.Errorf("-imbalance %d: want 1 (none) or more", p.Imbalance)
	case p.LBEvery < 0:
		return p, fmt.Errorf("-lbevery %d: want 0 (never) or more", p.LBEvery)
	}
	return p, nil
}

// finish reassembles the grid, compares it with the sequential solution
// and ends the job.
func (m *Main) finish(p Params, items []reducer.Pair[[2]int, BlockResult]) {
	if bb := bar.Load(); bb != nil {
		bb.Done()
	}
	if len(items) != p.Blocks*p.Blocks {
		m.fail(1, "gathered %d blocks, want %d", len(items), p.Blocks*p.Blocks)
		return
	}
	g := p.Grid
	grid := make([]float64, g*g)
	iters, residual := -1, 0.0
	for _, it := range items {
		b := it.Value
		if iters >= 0 && (b.Iters != iters || b.Residual != residual) {
			m.fail(1, "blocks disagree: block %v stopped after %d iterations at residual %g, another after %d at %g",
				it.Index, b.Iters, b.Residual, iters, residual)
			return
		}
		iters, residual = b.Iters, b.Residual
		for i := range b.NR {
			copy(grid[(b.R0+i)*g+b.C0:], b.Values[i*b.NC:(i+1)*b.NC])
		}
	}
	want, seqIters, seqRes := Sequential(p)
	m.res = Result{Iters: iters, Residual: residual}
	if iters != seqIters || residual != seqRes {
		m.fail(1, "parallel run stopped after %d iterations at residual %g, the sequential one after %d at %g",
			iters, residual, seqIters, seqRes)
		return
	}
	for k := range grid {
		m.res.MaxDiff = math.Max(m.res.MaxDiff, math.Abs(grid[k]-want[k]))
	}
	if !(m.res.MaxDiff <= 1e-12) {
		m.fail(1, "grids differ by up to %g (allowed: 1e-12)", m.res.MaxDiff)
		return
	}
	extra := ""
	if !m.markAt.IsZero() && iters > m.markIter {
		// The time per iteration after the first load-balancing step.
		m.res.IterTime = time.Since(m.markAt) / time.Duration(iters-m.markIter)
		extra = fmt.Sprintf(" iter_ms_after_lb=%.3f", float64(m.res.IterTime)/1e6)
	}
	fmt.Fprintf(out, "jacobi2d: ok grid=%d blocks=%dx%d iters=%d residual=%.3g maxdiff=%.3g%s\n",
		p.Grid, p.Blocks, p.Blocks, iters, residual, m.res.MaxDiff, extra)
	m.Exit(0)
}

// Sequential runs the same Jacobi iteration on one grid and returns the
// interior (G×G, row-major), the number of iterations and the last
// residual.
func Sequential(p Params) (grid []float64, iters int, residual float64) {
	w := p.Grid + 2
	u, next := make([]float64, w*w), make([]float64, w*w)
	for j := 1; j <= p.Grid; j++ {
		u[j], next[j] = 1, 1 // the top edge
	}
	for iters < p.Iters {
		residual = sweep(u, next, w, p.Grid, p.Grid)
		u, next = next, u
		iters++
		if residual < p.Tol {
			break
		}
	}
	grid = make([]float64, p.Grid*p.Grid)
	for i := range p.Grid {
		copy(grid[i*p.Grid:], u[(i+1)*w+1:(i+1)*w+1+p.Grid])
	}
	return grid, iters, residual
}

// sweep computes one Jacobi iteration of an nr×nc interior stored with a
// ring of ghost cells in rows of width w, writing into next, and returns
// the largest change. Blocks and the sequential version share it, so they
// do exactly the same arithmetic.
func sweep(u, next []float64, w, nr, nc int) float64 {
	res := 0.0
	for i := 1; i <= nr; i++ {
		for j := 1; j <= nc; j++ {
			k := i*w + j
			v := 0.25 * (u[k-w] + u[k+w] + u[k-1] + u[k+1])
			res = math.Max(res, math.Abs(v-u[k]))
			next[k] = v
		}
	}
	return res
}

// split returns the start and size of part k of n items cut into parts.
func split(n, parts, k int) (start, size int) {
	start = k * n / parts
	return start, (k+1)*n/parts - start
}

// Init runs on every block when the array is created (its constructor).
func (b *Block) Init(s Setup) {
	b.p, b.done, b.main = s.P, s.Done, s.Main
	idx := b.ThisIndex()
	b.r0, b.nr = split(b.p.Grid, b.p.Blocks, idx[0])
	b.c0, b.nc = split(b.p.Grid, b.p.Blocks, idx[1])
	w := b.nc + 2
	b.u = make([]float64, (b.nr+2)*w)
	b.next = make([]float64, (b.nr+2)*w)
	if idx[0] == 0 { // the top edge of the grid is held at 1
		for j := 1; j <= b.nc; j++ {
			b.u[j], b.next[j] = 1, 1
		}
	}
	for _, n := range b.neighbours() {
		if n.ok {
			b.expect++
		}
	}
	b.ghosts = map[int][]GhostMsg{}
}

type neighbour struct {
	idx  [2]int
	side Side // the side of the neighbour that this block's edge fills
	ok   bool // false on the edge of the grid
}

// neighbours lists the blocks above, below, left and right.
func (b *Block) neighbours() [4]neighbour {
	i, j := b.ThisIndex()[0], b.ThisIndex()[1]
	last := b.p.Blocks - 1
	return [4]neighbour{
		{[2]int{i - 1, j}, South, i > 0},
		{[2]int{i + 1, j}, North, i < last},
		{[2]int{i, j - 1}, East, j > 0},
		{[2]int{i, j + 1}, West, j < last},
	}
}

// Begin starts the first iteration.
func (b *Block) Begin() { b.exchange() }

// exchange sends this block's edges for iteration b.iter to its
// neighbours, then computes if their edges are already here.
func (b *Block) exchange() {
	w := b.nc + 2
	for _, n := range b.neighbours() {
		if !n.ok {
			continue
		}
		// A fresh slice per message: after a send the sender must not
		// touch what the message references.
		var vals []float64
		switch n.side {
		case South: // the neighbour above gets my first row
			vals = append(vals, b.u[w+1:w+1+b.nc]...)
		case North: // the neighbour below gets my last row
			vals = append(vals, b.u[b.nr*w+1:b.nr*w+1+b.nc]...)
		case East: // the neighbour to the left gets my first column
			for i := 1; i <= b.nr; i++ {
				vals = append(vals, b.u[i*w+1])
			}
		case West: // the neighbour to the right gets my last column
			for i := 1; i <= b.nr; i++ {
				vals = append(vals, b.u[i*w+b.nc])
			}
		}
		msg := GhostMsg{Iter: b.iter, Side: n.side, Values: vals}
		if err := chare.Send(b, b.ThisProxy().At(n.idx), (*Block).Ghost, msg); err != nil {
			b.Abort(err)
			return
		}
	}
	b.exchanged = true
	b.compute()
}

// Ghost receives a neighbour's edge, possibly for the next iteration.
func (b *Block) Ghost(g GhostMsg) {
	if g.Iter < b.iter {
		b.Abort(fmt.Errorf("jacobi2d: block %v got a ghost for iteration %d while at %d", b.ThisIndex(), g.Iter, b.iter))
		return
	}
	b.ghosts[g.Iter] = append(b.ghosts[g.Iter], g)
	b.compute()
}

// compute runs the iteration once this block has sent its edges and has
// all of its neighbours' edges.
func (b *Block) compute() {
	gs := b.ghosts[b.iter]
	if !b.exchanged || len(gs) < b.expect {
		return
	}
	delete(b.ghosts, b.iter)
	w := b.nc + 2
	for _, g := range gs {
		switch g.Side {
		case North:
			copy(b.u[1:], g.Values)
		case South:
			copy(b.u[(b.nr+1)*w+1:], g.Values)
		case West:
			for i, v := range g.Values {
				b.u[(i+1)*w] = v
			}
		case East:
			for i, v := range g.Values {
				b.u[(i+1)*w+b.nc+1] = v
			}
		}
	}
	res := sweep(b.u, b.next, w, b.nr, b.nc)
	if b.ThisIndex()[0] < b.p.Blocks/2 || b.p.Blocks == 1 {
		for range b.p.Imbalance - 1 { // extra work whose result is thrown away
			sweep(b.u, b.next, w, b.nr, b.nc)
		}
	}
	b.u, b.next = b.next, b.u
	b.iter++
	if bb := bar.Load(); bb != nil && b.ThisIndex() == [2]int{} {
		bb.Set(b.iter) // block [0,0] speaks for all, when it lives in main's process
	}
	b.exchanged = false
	// The array proxy as the callback's target: the result is broadcast
	// to every block.
	cb := chare.EntryCallback(b.ThisProxy(), (*Block).Check)
	if err := b.Contribute(res, reducer.MaxFloat64, cb); err != nil {
		b.Abort(err)
	}
}

// Check receives the largest residual of the iteration just completed
// and either starts the next one or contributes the block to the final
// gather.
func (b *Block) Check(residual float64) {
	if residual >= b.p.Tol && b.iter < b.p.Iters {
		if b.p.CheckpointDir != "" && b.iter == b.p.CheckpointAt {
			// Everybody stops here; Main checkpoints, then Begin resumes.
			cb := chare.EntryCallback(b.main, (*Main).Checkpoint)
			if err := b.Contribute(0, reducer.SumInt, cb); err != nil {
				b.Abort(err)
			}
			return
		}
		if b.p.LBEvery > 0 && b.iter%b.p.LBEvery == 0 {
			b.AtSync() // ResumeFromSync goes on, wherever the block then is
			return
		}
		b.exchange()
		return
	}
	w := b.nc + 2
	vals := make([]float64, 0, b.nr*b.nc)
	for i := 1; i <= b.nr; i++ {
		vals = append(vals, b.u[i*w+1:i*w+1+b.nc]...)
	}
	r := BlockResult{R0: b.r0, C0: b.c0, NR: b.nr, NC: b.nc, Values: vals, Iters: b.iter, Residual: residual}
	if err := b.Contribute(r, resultGather, b.done); err != nil {
		b.Abort(err)
	}
}

// ResumeFromSync goes on after a load-balancing step.
func (b *Block) ResumeFromSync() {
	if b.ThisIndex() == [2]int{0, 0} && !b.marked {
		b.marked = true
		if err := chare.Send(b, b.main, (*Main).Mark, b.iter); err != nil {
			b.Abort(err)
			return
		}
	}
	b.exchange()
}

// Mark records when the first load-balancing step ended.
func (m *Main) Mark(iter int) {
	if m.markAt.IsZero() {
		m.markIter, m.markAt = iter, time.Now()
	}
}

// fail prints the final FAILED line and ends the job with code.
func (m *Main) fail(code int, format string, args ...any) {
	exutil.Fail(out, m, "jacobi2d", code, format, args...)
}

// blockState is what a block saves in a checkpoint (and takes along when
// it migrates): Block keeps its fields unexported, and packs them itself.
type blockState struct {
	P              Params
	R0, C0, NR, NC int
	U, Next        []float64
	Iter           int
	Exchanged      bool
	Expect         int
	Ghosts         map[int][]GhostMsg
	Done           chare.Callback
	Main           chare.Proxy[Main]
}

// Pack implements chare.Packer.
func (b *Block) Pack() ([]byte, error) {
	return msgpack.Marshal(&blockState{b.p, b.r0, b.c0, b.nr, b.nc, b.u, b.next, b.iter, b.exchanged, b.expect, b.ghosts, b.done, b.main})
}

// Unpack implements chare.Packer.
func (b *Block) Unpack(data []byte) error {
	var s blockState
	// The bytes come from another process or a file: checked first.
	if err := chare.UnmarshalState(data, &s); err != nil {
		return err
	}
	b.p, b.r0, b.c0, b.nr, b.nc = s.P, s.R0, s.C0, s.NR, s.NC
	b.u, b.next, b.iter, b.exchanged, b.expect = s.U, s.Next, s.Iter, s.Exchanged, s.Expect
	b.ghosts, b.done, b.main = s.Ghosts, s.Done, s.Main
	if b.ghosts == nil {
		b.ghosts = map[int][]GhostMsg{}
	}
	return nil
}
