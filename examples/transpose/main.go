// Transpose is the transpose step of a 2-D FFT, as NAMD's PME did it: an
// array of pencils exchanges blocks all-to-all every iteration through
// Comlib's bracketed EachToMany strategy, while the pencils migrate.
//
// A -grid G × G matrix of float64 is cut into -pencils P pencils of G/P
// rows. In every iteration, each pencil opens a bracket
// (chare.BeginIteration through the proxy delegated to the EachToMany
// instance), sends to every other pencil j the G/P × G/P block of its
// rows that falls in pencil j's columns, and closes the bracket
// (chare.EndIteration); the strategy combines the iteration's blocks
// through the router named by -router. A pencil that has every block of
// the iteration holds its rows of the transposed matrix; it adds 1 to
// every value (so that each iteration's data differ) and goes on to the
// next iteration with that as its rows.
//
// Every -migrate-every iterations, before the iteration begins, one pencil
// migrates to the next PE and two pencils on different PEs swap PEs
// (element count per PE unchanged, which only the strategy's identity
// check notices, claim C13). The strategy finds the moves at
// BeginIteration, runs that iteration in error mode, and recovers at its
// end (C10–C12).
//
// Every block is checked on arrival against the matrix of its iteration,
// which has a closed form (even iterations: A[r][c] = r·G+c+t, odd:
// c·G+r+t); at the end the pencils' rows are gathered and compared with
// Sequential, which transposes the whole matrix the same number of times
// on one PE. Blocks are counted per (sender, iteration): a second copy is
// a duplicate, a missing one is lost.
//
// Run it with
//
//	go run ./examples/transpose -p 4
//	go run ./examples/transpose -p 4 -nodes 2 -router hypercube
//	go run ./examples/transpose -p 8 -grid 256 -pencils 16 -iters 40 -migrate-every 4 -router mesh
//	go run ./examples/transpose -p 4 -router auto -explain
//	go run ./examples/transpose -p 4 -router auto -explain -comlibselect my_select.json
//
// With -router auto the blocks go through comlib.Auto: a selection tree
// (the package's default, or -comlibselect's) chooses a strategy by the
// size of the blocks, which the program declares (AutoOptions.MsgSize:
// every block is (grid/pencils)² float64s and two ints), so that the tree
// is pruned to one strategy when it is made, msg_size included, as an MPI
// collective chooses from the count every rank passes. -explain prints,
// for each iteration, a line per choice before the last line; every
// branch was decided at creation, nothing is walked per send ("any size",
// 0 nodes):
//
//	explain: iteration 3: 56 messages of any size -> strategy=direct via collective=alltoall (pruned) > comm_type=intra (pruned) > comm_size<=4 (pruned) > msg_size=any (pruned); 0 nodes
//
// and with a tree that tests msg_size, the branch the declared size took:
//
//	explain: iteration 3: 56 messages of any size -> strategy=eachtomany(router=direct) via collective=alltoall (pruned) > comm_size<=8 (pruned) > comm_type=intra (pruned) > msg_size<=32768 (pruned); 0 nodes
//
// The runtime takes its flags (-p N, -nodes M) anywhere on the line. The
// last line is
//
//	transpose: ok pes=4 grid=64 pencils=8 router=mesh iters=12 blocks=672 lost=0 duplicated=0 bad=0 maxdiff=0 migrations=6 recoveries=3 learning=1 optimized=... ms_per_iter=...
//
// where recoveries counts the recoveries after migrations and learning=1
// the recovery of the first iteration, which teaches the strategy where
// its pencils are (it is not counted in recoveries; with -router auto and
// a tree that keeps no bracketed strategy, learning=0); optimized is how many
// PE iterations took the router (the PEs of PE 0's process, with -nodes).
// The blocks are counted once more after the run, at quiescence, so that
// a duplicate arriving late is caught too. With -p 1 nothing can move and
// migrations=0. On failure the last line is "transpose: FAILED ..." and
// the exit code is not 0.
package main

import (
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/charmgo/charm/array"
	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/chare/reducer"
	"github.com/charmgo/charm/comlib"
	"github.com/charmgo/charm/internal/exutil"
)

// out is where the program prints; the test replaces it.
var out io.Writer = os.Stdout

// Params are the program's parameters.
type Params struct {
	Grid, Pencils, Iters, MigrateEvery int
	Router                             string
	Explain                            bool
}

// Main is the main chare.
type Main struct {
	chare.Chare[Main]
	p   Params
	res Result
}

// Result is what a run found; the test reads it.
type Result struct {
	Blocks, Lost, Dups, Bad int64
	MaxDiff                 float64
	Migrations              int
	Recovered               []int // iterations recovered, the first included
	MoveIters               []int // iterations that began after moves
	Stats                   comlib.StatsSnapshot
	Explain                 []comlib.Choice // -router auto
	Served                  map[string]int64
}

// Pencil holds G/P rows of the matrix.
type Pencil struct {
	array.Element[Pencil, int]
	Cfg  Config
	Iter int
	Rows []float64 // this iteration's rows, row-major, G/P × G
	// Next assembles the transposed rows of each iteration still open
	// (this one, and the next if a sender is ahead), by iteration.
	Next map[int][]float64
	Got  map[int]int     // iteration → blocks received
	Seen map[[2]int]bool // (sender, iteration) of the blocks received
	Cnt  Counts
	// Early holds blocks that came before Start: nothing orders the
	// start broadcast before the other pencils' first blocks.
	Early []Block
}

// Counts are a pencil's blocks received, duplicated and bad.
type Counts struct{ N, D, B int64 }

// Config is what the main chare sends every pencil.
type Config struct {
	P      array.Proxy[Pencil, int] // delegated to the EachToMany instance
	Params Params
	Moves  map[int]map[int]int // iteration → pencil → PE it moves to before it
	Done   chare.Callback      // gets the final rows and the counts
}

// Block is what pencil From sends another in iteration Iter: the
// receiver's columns of From's rows, row-major.
type Block struct {
	From, Iter int
	Data       []float64
}

func init() {
	chare.Register[Main]()
	chare.Register[Pencil]()
}

func main() { os.Exit(chare.Main((*Main).Start)) }

// Start parses the flags, runs the transposes and checks them.
func (m *Main) Start(args []string) {
	fs := exutil.NewFlagSet("transpose")
	fs.IntVar(&m.p.Grid, "grid", 64, "the matrix is grid × grid")
	fs.IntVar(&m.p.Pencils, "pencils", 8, "pencils (array elements); must divide -grid")
	fs.IntVar(&m.p.Iters, "iters", 12, "transposes")
	fs.IntVar(&m.p.MigrateEvery, "migrate-every", 3, "iterations between migrations (0: none)")
	fs.StringVar(&m.p.Router, "router", "mesh", "EachToMany router: "+strings.Join(comlib.Routers(), ", ")+", or auto (comlib.Auto: the selection tree chooses per block size; -comlibselect FILE replaces the default tree)")
	fs.BoolVar(&m.p.Explain, "explain", false, "with -router auto: print, for each iteration, which branch of the selection tree chose what")
	if !exutil.ParseNoArgs(out, m, fs, args) {
		return
	}
	p := m.p
	switch {
	case p.Pencils < 1 || p.Grid < 1 || p.Grid%p.Pencils != 0:
		m.fail(2, "bad arguments: -grid %d -pencils %d: want pencils ≥ 1 that divide the grid", p.Grid, p.Pencils)
		return
	case p.Iters < 1:
		m.fail(2, "bad arguments: -iters %d: want at least 1", p.Iters)
		return
	case p.MigrateEvery < 0:
		m.fail(2, "bad arguments: -migrate-every %d: want 0 (none) or more", p.MigrateEvery)
		return
	case !slices.Contains(comlib.Routers(), p.Router) && p.Router != "auto":
		m.fail(2, "bad arguments: -router %q: valid routers are %s, and auto", p.Router, strings.Join(comlib.Routers(), ", "))
		return
	case p.Explain && p.Router != "auto":
		m.fail(2, "bad arguments: -explain explains -router auto's choices; the router is %s", p.Router)
		return
	}
	began := time.Now()
	if err := m.run(); err != nil {
		m.fail(1, "%v", err)
		return
	}
	elapsed := time.Since(began)
	r := m.res
	// Recoveries are not checked against the moves here: a pencil with
	// nothing to wait for (one pencil) runs ahead of the lists, and a PE
	// whose list is stale but still right for it needs no recovery. The
	// test checks them where the all-to-all keeps the pencils in step.
	for _, c := range r.Explain {
		fmt.Fprintf(out, "explain: %v\n", c)
	}
	if p.Explain {
		names := make([]string, 0, len(r.Served))
		for k := range r.Served {
			names = append(names, k)
		}
		slices.Sort(names)
		for _, k := range names {
			fmt.Fprintf(out, "explain: %s carried %d blocks\n", k, r.Served[k])
		}
	}
	// With -router auto a tree that keeps no bracketed strategy learns
	// nothing: there is no list to learn.
	bracketed := p.Router != "auto" || r.Stats.Iterations > 0
	learning := 0
	if len(r.Recovered) > 0 && r.Recovered[0] == 0 {
		learning = 1
	}
	if r.Lost != 0 || r.Dups != 0 || r.Bad != 0 || r.MaxDiff != 0 || bracketed && learning == 0 {
		m.fail(1, "pes=%d router=%s blocks=%d lost=%d duplicated=%d bad=%d maxdiff=%g recovered=%v moves_before=%v",
			m.NumPEs(), p.Router, r.Blocks, r.Lost, r.Dups, r.Bad, r.MaxDiff, r.Recovered, r.MoveIters)
		return
	}
	fmt.Fprintf(out, "transpose: ok pes=%d grid=%d pencils=%d router=%s iters=%d blocks=%d lost=0 duplicated=0 bad=0 maxdiff=0 migrations=%d recoveries=%d learning=%d optimized=%d ms_per_iter=%.3g\n",
		m.NumPEs(), p.Grid, p.Pencils, p.Router, p.Iters, r.Blocks, r.Migrations, max(len(r.Recovered)-learning, 0), learning, r.Stats.Optimized,
		float64(elapsed.Microseconds())/1000/float64(p.Iters))
	m.Exit(0)
}

func (m *Main) fail(code int, format string, args ...any) {
	exutil.Fail(out, m, "transpose", code, format, args...)
}

// run creates the pencils and the strategy, plans the moves and gathers
// the result.
func (m *Main) run() error {
	p := m.p
	pencils, err := array.New[Pencil](m, array.Dims(p.Pencils))
	if err != nil {
		return fmt.Errorf("creating the pencils: %w", err)
	}
	var strat comlib.Strategy = comlib.EachToMany(comlib.EachToManyOptions{Router: p.Router, Sources: pencils})
	if p.Router == "auto" {
		// Every block has the same size: declared, the tree is pruned to
		// one strategy when the instance is made, and no block is sized.
		b := p.Grid / p.Pencils
		strat = comlib.Auto(comlib.AutoOptions{Sources: pencils, MsgSize: comlib.MessageSize(Block{Data: make([]float64, b*b)})})
	}
	inst, err := comlib.New(m, strat)
	if err != nil {
		return fmt.Errorf("creating the %s strategy: %w", p.Router, err)
	}
	where := chare.NewFuture[[]int64](m)
	if err := chare.Send(m, pencils, (*Pencil).Where, WhereMsg{N: p.Pencils, CB: where.Callback()}); err != nil {
		return err
	}
	loc, err := where.Get(m)
	if err != nil {
		return fmt.Errorf("locating the pencils: %w", err)
	}
	moves := Plan(loc, m.NumPEs(), p.Iters, p.MigrateEvery)
	for it, mv := range moves {
		m.res.MoveIters = append(m.res.MoveIters, it)
		m.res.Migrations += len(mv)
	}
	slices.Sort(m.res.MoveIters)

	done := chare.NewFuture[[]float64](m)
	cfg := Config{P: pencils.Delegate(inst), Params: p, Moves: moves, Done: done.Callback()}
	if err := chare.Send(m, pencils, (*Pencil).Start, cfg); err != nil {
		return err
	}
	v, err := done.Get(m)
	if err != nil {
		return fmt.Errorf("the transposes: %w", err)
	}
	g := p.Grid
	got := v[:g*g] // the counts after it are taken again below
	want := Sequential(g, p.Iters)
	for k := range want {
		m.res.MaxDiff = max(m.res.MaxDiff, math.Abs(got[k]-want[k]))
	}
	// A copy that arrives after its pencil finished would not be in the
	// counts yet: count again once nothing is in flight.
	quiet := chare.NewFuture[any](m)
	m.DetectQuiescence(quiet.Callback())
	if _, err := quiet.Get(m); err != nil {
		return fmt.Errorf("waiting for quiescence: %w", err)
	}
	recount := chare.NewFuture[[]int64](m)
	if err := chare.Send(m, pencils, (*Pencil).Count, recount.Callback()); err != nil {
		return err
	}
	c, err := recount.Get(m)
	if err != nil {
		return fmt.Errorf("counting the blocks: %w", err)
	}
	m.res.Blocks, m.res.Dups, m.res.Bad = c[0], c[1], c[2]
	m.res.Lost = int64(p.Iters*p.Pencils*(p.Pencils-1)) - m.res.Blocks
	m.res.Recovered, m.res.Stats = inst.Recovered(), inst.Stats()
	if p.Router == "auto" {
		m.res.Served = inst.Served()
		if p.Explain {
			m.res.Explain = inst.Explain()
		}
	}
	return nil
}

// Plan returns the moves: before every every-th iteration, pencil k (k
// counting the moves) goes to the next PE, and two pencils on different
// PEs swap. loc[i] is pencil i's PE at the start; with one PE nothing
// moves.
func Plan(loc []int64, pes, iters, every int) map[int]map[int]int {
	moves := map[int]map[int]int{}
	if pes < 2 || every == 0 {
		return moves
	}
	cur := make([]int, len(loc))
	for i, pe := range loc {
		cur[i] = int(pe)
	}
	n := len(cur)
	for k, it := 0, every; it < iters; k, it = k+1, it+every {
		mv := map[int]int{}
		a := k % n
		cur[a] = (cur[a] + 1) % pes
		mv[a] = cur[a]
		// The swap: the first pair (b, c), from b = k+1 on, on different
		// PEs and apart from a.
		for d := 1; d < n; d++ {
			b := (a + d) % n
			c := -1
			for e := 1; e < n; e++ {
				if x := (b + e) % n; x != a && cur[x] != cur[b] {
					c = x
					break
				}
			}
			if b != a && c >= 0 {
				cur[b], cur[c] = cur[c], cur[b]
				mv[b], mv[c] = cur[b], cur[c]
				break
			}
		}
		moves[it] = mv
	}
	return moves
}

// Value is the matrix's entry (r, c) in iteration t: iteration t+1's
// matrix is iteration t's transposed, plus 1.
func Value(g, t, r, c int) float64 {
	if t%2 == 1 {
		r, c = c, r
	}
	return float64(r*g+c) + float64(t)
}

// Sequential returns the matrix after iters transposes on one PE (each
// adding 1, as the pencils do), row-major.
func Sequential(g, iters int) []float64 {
	a := make([]float64, g*g)
	for r := 0; r < g; r++ {
		for c := 0; c < g; c++ {
			a[r*g+c] = float64(r*g + c)
		}
	}
	b := make([]float64, g*g)
	for t := 0; t < iters; t++ {
		for r := 0; r < g; r++ {
			for c := 0; c < g; c++ {
				b[c*g+r] = a[r*g+c] + 1
			}
		}
		a, b = b, a
	}
	return a
}

// WhereMsg asks the N pencils where they are.
type WhereMsg struct {
	N  int
	CB chare.Callback
}

// Where reports the pencil's PE: a vector with pencil i's PE at i.
func (q *Pencil) Where(w WhereMsg) {
	v := make([]int64, w.N)
	v[q.ThisIndex()] = int64(q.PE())
	q.must(q.Contribute(v, reducer.SumInt64, w.CB))
}

// Start sets the pencil's rows to iteration 0's and begins.
func (q *Pencil) Start(c Config) {
	q.Cfg, q.Next, q.Got, q.Seen = c, map[int][]float64{}, map[int]int{}, map[[2]int]bool{}
	g, b := c.Params.Grid, c.Params.Grid/c.Params.Pencils
	q.Rows = make([]float64, b*g)
	for r := 0; r < b; r++ {
		for col := 0; col < g; col++ {
			q.Rows[r*g+col] = Value(g, 0, q.ThisIndex()*b+r, col)
		}
	}
	q.Iter = -1
	early := q.Early
	q.Early = nil
	for _, blk := range early {
		q.take(blk)
	}
	q.next()
}

// next begins the next iteration, after migrating if planned; after the
// last it contributes its rows and counts.
func (q *Pencil) next() {
	n := q.Iter + 1
	p := q.Cfg.Params
	if n == p.Iters {
		g := p.Grid
		v := make([]float64, g*g+3)
		copy(v[q.ThisIndex()*len(q.Rows):], q.Rows)
		v[g*g], v[g*g+1], v[g*g+2] = float64(q.Cnt.N), float64(q.Cnt.D), float64(q.Cnt.B)
		q.must(q.Contribute(v, reducer.SumFloat64, q.Cfg.Done))
		return
	}
	if pe, ok := q.Cfg.Moves[n][q.ThisIndex()]; ok && pe != q.PE() {
		q.Migrate(pe)
		// Resume follows the pencil to its new PE.
		q.must(chare.Send0(q, q.ThisProxy().At(q.ThisIndex()), (*Pencil).Resume))
		return
	}
	q.run(n)
}

// Resume runs the next iteration after a migration.
func (q *Pencil) Resume() { q.run(q.Iter + 1) }

// run sends iteration n's blocks in a bracket and keeps its own block.
func (q *Pencil) run(n int) {
	q.Iter = n
	p := q.Cfg.Params
	g, b, me := p.Grid, p.Grid/p.Pencils, q.ThisIndex()
	q.must(chare.BeginIteration(q, q.Cfg.P, n))
	for j := 0; j < p.Pencils; j++ {
		blk := make([]float64, b*b)
		for r := 0; r < b; r++ {
			copy(blk[r*b:(r+1)*b], q.Rows[r*g+j*b:r*g+(j+1)*b])
		}
		if j == me {
			q.place(Block{From: me, Iter: n, Data: blk})
			continue
		}
		q.must(chare.Send(q, q.Cfg.P.At(j), (*Pencil).Block, Block{From: me, Iter: n, Data: blk}))
	}
	q.must(chare.EndIteration(q, q.Cfg.P))
	q.check()
}

// Count contributes the pencil's counts: blocks, duplicates, bad ones.
func (q *Pencil) Count(cb chare.Callback) {
	q.must(q.Contribute([]int64{q.Cnt.N, q.Cnt.D, q.Cnt.B}, reducer.SumInt64, cb))
}

// Block receives a block of another pencil.
func (q *Pencil) Block(blk Block) {
	if q.Seen == nil { // before Start
		q.Early = append(q.Early, blk)
		return
	}
	q.take(blk)
	q.check()
}

// take counts, checks and places a block. A block of an iteration the
// pencil has finished is a duplicate: it had every block of it.
func (q *Pencil) take(blk Block) {
	p := q.Cfg.Params
	k := [2]int{blk.From, blk.Iter}
	switch {
	case q.Seen[k] || (blk.Iter < q.Iter && blk.Iter >= 0):
		q.Cnt.D++
		return
	case blk.From < 0 || blk.From >= p.Pencils || blk.From == q.ThisIndex() || blk.Iter < 0 || blk.Iter >= p.Iters:
		q.Cnt.B++
		return
	}
	q.Seen[k] = true
	q.Cnt.N++
	if !q.valid(blk) {
		q.Cnt.B++ // placed all the same, so that the iteration ends
	}
	q.place(blk)
}

// valid checks a block against the closed form of its iteration's matrix.
func (q *Pencil) valid(blk Block) bool {
	p := q.Cfg.Params
	g, b := p.Grid, p.Grid/p.Pencils
	if len(blk.Data) != b*b {
		return false
	}
	for r := 0; r < b; r++ {
		for c := 0; c < b; c++ {
			if blk.Data[r*b+c] != Value(g, blk.Iter, blk.From*b+r, q.ThisIndex()*b+c) {
				return false
			}
		}
	}
	return true
}

// place puts a block, transposed, into the iteration's new rows: entry
// (r, c) of From's block is entry (c, From·b + r) of this pencil's rows.
func (q *Pencil) place(blk Block) {
	p := q.Cfg.Params
	g, b := p.Grid, p.Grid/p.Pencils
	rows := q.Next[blk.Iter]
	if rows == nil {
		rows = make([]float64, b*g)
		q.Next[blk.Iter] = rows
	}
	q.Got[blk.Iter]++
	if len(blk.Data) != b*b {
		return // counted as bad
	}
	for r := 0; r < b; r++ {
		for c := 0; c < b; c++ {
			rows[c*g+blk.From*b+r] = blk.Data[r*b+c] + 1
		}
	}
}

// check moves on once every block of the current iteration is in: never
// earlier, which would break the bracket's rule (C07).
func (q *Pencil) check() {
	if q.Iter >= 0 && q.Got[q.Iter] == q.Cfg.Params.Pencils {
		q.Rows = q.Next[q.Iter]
		delete(q.Next, q.Iter)
		delete(q.Got, q.Iter)
		for k := range q.Seen {
			if k[1] == q.Iter {
				delete(q.Seen, k)
			}
		}
		q.next()
	}
}

func (q *Pencil) must(err error) {
	if err != nil {
		q.Abort(fmt.Errorf("transpose: pencil %d, iteration %d: %w", q.ThisIndex(), q.Iter, err))
	}
}
