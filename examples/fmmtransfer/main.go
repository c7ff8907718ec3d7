// Fmmtransfer is the transfer step of the Fast Multipole Method, the
// problem of the EasyMSG paper: the active cells of an oct-tree (a
// spherical shell, levels 2 and up) are spread over the PEs, and each
// cell sums the contributions of its far cells — those of its level that
// are not its neighbours but whose parents neighbour its parent. Far cells
// on another PE send their data through TRAM; each PE runs the overlap
// loop (package overlap) in a threaded entry method: it treats what
// arrived, pushes its cells' data into outgoing buffers that have room,
// else does p local transfers, with p tuned online from iteration to
// iteration (explorative exponential search, package tune).
//
// The program runs -iters iterations tuned, then -iters with the static
// reference p = 1, checks the last against a sequential computation, and
// prints the tuned p and the mean time per iteration of the last fifth of
// each. The default of 100 is the benchmark's (tests/bench, tune/): the
// search moves p by factors and scores each value by the median of 4
// iterations, so it needs most of them to settle (the seeded model,
// overlap's TestE06_…, judges p over iterations 81–100); with fewer, the
// last fifth reports a p still being searched.
//
//	go run ./examples/fmmtransfer -p 4 -size medium
//	go run ./examples/fmmtransfer -p 4 -size large -work 2
//
// Flags: -size small|medium|large, -iters (default 100), -work
// (evaluations of the transfer function per computation, default 1),
// -fast (tune the fast adaptive loop's step instead of p, E11). The last
// line is
//
//	fmmtransfer: ok size=medium pes=4 cells=1968 transfers=170792 remote=47208 wrong=0 p=... tuned_ms=... static_ms=... ratio=...
//
// or "fmmtransfer: FAILED ..." with a non-zero exit code.
package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/internal/exutil"
	"github.com/charmgo/charm/overlap/fmm"
	"github.com/charmgo/charm/tram"
)

// out is where the program prints; the test replaces it.
var out io.Writer = os.Stdout

// Main is the main chare.
type Main struct {
	chare.Chare[Main]
}

func init() { chare.Register[Main]() }

func main() { os.Exit(chare.Main((*Main).Start)) }

func (m *Main) fail(code int, format string, args ...any) {
	exutil.Fail(out, m, "fmmtransfer", code, format, args...)
}

// Start is the program's main function.
func (m *Main) Start(args []string) {
	fs := exutil.NewFlagSet("fmmtransfer")
	sizeName := fs.String("size", "small", "problem size: small, medium or large")
	iters := fs.Int("iters", 100, "iterations tuned, then as many with p = 1; the last fifth of each is reported")
	work := fs.Int("work", 1, "evaluations of the transfer function per local computation")
	fast := fs.Bool("fast", false, "tune the fast adaptive loop (E11) instead of a fixed p")
	if !exutil.ParseNoArgs(out, m, fs, args) {
		return
	}
	size, err := fmm.SizeNamed(*sizeName)
	switch {
	case err != nil:
		m.fail(2, "bad arguments: %v", err)
		return
	case *iters < 1:
		m.fail(2, "bad arguments: -iters %d: want at least 1", *iters)
		return
	case *work < 1:
		m.fail(2, "bad arguments: -work %d: want at least 1", *work)
		return
	}
	g, s, err := fmm.New(m, size, tram.Options{})
	if err != nil {
		m.fail(1, "setting up: %v", err)
		return
	}
	r := fmm.Runner{Ctx: m, G: g, S: s, Size: size}
	mode := fmm.Tuned
	if *fast {
		mode = fmm.Fast
	}
	tail := max(1, *iters/5)
	var tuned, static time.Duration
	var p float64
	it := 0
	scored := -1.0 // every PE scores p by the iteration's time over the job
	for k := 0; k < *iters; k++ {
		res, err := r.Run(fmm.IterMsg{It: it, Mode: mode, Reset: k == 0, Work: *work, Scored: scored})
		scored = res.Wall.Seconds()
		if err != nil {
			m.fail(1, "tuned iteration %d: %v", k, err)
			return
		}
		if k >= *iters-tail {
			tuned += res.Wall
			p += res.P
		}
		it++
	}
	for k := 0; k < *iters; k++ {
		res, err := r.Run(fmm.IterMsg{It: it, Mode: fmm.Static, P: 1, Work: *work})
		if err != nil {
			m.fail(1, "static iteration %d: %v", k, err)
			return
		}
		if k >= *iters-tail {
			static += res.Wall
		}
		it++
	}
	cells, wrong, worst, err := r.Check(it - 1)
	if err != nil {
		m.fail(1, "checking: %v", err)
		return
	}
	plan, err := fmm.NewPlan(size, m.NumPEs())
	if err != nil {
		m.fail(1, "%v", err)
		return
	}
	all, remote := plan.Transfers()
	if cells != len(plan.Cells) || wrong != 0 {
		m.fail(1, "size=%s checked %d of %d cells, %d wrong (largest relative error %.3g)", size.Name, cells, len(plan.Cells), wrong, worst)
		return
	}
	tms := tuned.Seconds() * 1000 / float64(tail)
	sms := static.Seconds() * 1000 / float64(tail)
	fmt.Fprintf(out, "fmmtransfer: ok size=%s pes=%d cells=%d transfers=%d remote=%d wrong=0 p=%.3g tuned_ms=%.3g static_ms=%.3g ratio=%.3f\n",
		size.Name, m.NumPEs(), cells, all, remote, p/float64(tail), tms, sms, tms/sms)
	m.Exit(0)
}
