package main

import (
	"encoding/binary"
	"flag"
	"fmt"
	"math/rand"
	goruntime "runtime"
	"slices"
	"sync"
	"time"
	"unsafe"

	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/chare/reducer"
	"github.com/charmgo/charm/group"
	"github.com/charmgo/charm/tram"
)

// tram/histogram/<size>B/{1proc,2proc}: every PE sends random items of
// <size> bytes to a table distributed over the PEs, the key of an item
// being its first 8 bytes and its owner key % P. The value is the rate of
// items delivered through a TRAM streamer in a completion step (inserted
// through the PE's tram.Inserter, found once per Feed); the
// baseline is the same items, from the same generators, sent as one
// entry-method message each (chare.Send to the owner's branch), in the
// same job, interleaved with the TRAM runs (direct, TRAM on each grid,
// direct, …; see figure.ratios). 1proc runs on 4 PEs in one process with 1-,
// 2- and 3-D grids ([4], [2,2] and [2,2,1]: with 4 PEs the third dimension
// can only be 1); 2proc runs on 2 processes × 2 PEs with the default grid,
// [2,2]; 8B/1proc/64pe runs on 64 PEs in one process, [64] and [8,8], with
// as many items in all as on 4 PEs.
//
// A .../limit line per grid in one process compares TRAM with the plain-Go
// limit measured in the same pairs: the same items from the same
// generators, one goroutine per PE producing and one consuming, batches of
// 256 items per destination over channels, no framework (histLimit).
//
// With 8-byte items, a .../envelopes line per grid (and across processes)
// compares TRAM with direct sends that each take an envelope of their own
// (the entry method is registered with chare.NoRuns), measured in the same
// pairs: the cost of one message per item that TRAM was built to avoid,
// and the baseline the TRAM/direct targets were set against,
// before consecutive sends to one PE formed runs.
//
// A .../mem line per grid gives the buffer memory a PE reserves: peers ×
// items per peer × the size of an envelope. Its baseline is the flat 1-D
// grid, whose P−1 buffers are what TRAM's routing over a grid saves on
// (so lower is better, and the 1-D line's ratio is 1 by definition).

const (
	histPEs       = 4
	histItems     = 100_000 // per PE, at scale 1
	histSlots     = 4096    // table slots per PE
	histBuffer    = 256     // items per peer (the streamer's default)
	histFlushTime = 2 * time.Millisecond
)

var histSizes = []int{8, 16, 32, 64}

var histOnly = flag.String("hist-only", "", "tram/histogram/*/1proc*: run only TRAM on this grid (1d, 2d, 3d), and print its rates, no figure: to profile TRAM alone with -cpuprofile")

func init() {
	chare.Register[histTable](chare.Fast((*histTable).Add8), chare.Fast((*histTable).Add16),
		chare.Fast((*histTable).Add32), chare.Fast((*histTable).Add64),
		chare.Fast((*histTable).One8), chare.NoRuns((*histTable).One8))
	tram.Register((*histTable).Add8)
	tram.Register((*histTable).Add16)
	tram.Register((*histTable).Add32)
	tram.Register((*histTable).Add64)
	for _, size := range histSizes {
		registerPaired(fmt.Sprintf("tram/histogram/%dB/1proc", size), func(cfg config) ([]figure, error) {
			return benchHist1(cfg, size, histPEs, "", histGrids4)
		})
		name := fmt.Sprintf("tram/histogram/%dB/2proc", size)
		registerPaired(name, func(cfg config) ([]figure, error) { return benchHist2(cfg, size, name) })
	}
	registerPaired("tram/histogram/8B/1proc/64pe", func(cfg config) ([]figure, error) {
		return benchHist1(cfg, 8, 64, "/64pe", []histGrid{{"1d", []int{64}}, {"2d", []int{8, 8}}})
	})
}

// histTable is the distributed table, one branch per PE.
type histTable struct {
	group.Branch[histTable]
	counts    []uint64
	got, want int // direct sends: items received and expected
	done      chare.Callback
	ready     chare.Callback
}

func (t *histTable) Add8(it [8]byte)   { t.add(it[:]) }
func (t *histTable) Add16(it [16]byte) { t.add(it[:]) }
func (t *histTable) Add32(it [32]byte) { t.add(it[:]) }
func (t *histTable) Add64(it [64]byte) { t.add(it[:]) }

// One8 is Add8 registered with chare.NoRuns: every item sent to it takes
// an envelope of its own, as one message per call does in Charm++.
func (t *histTable) One8(it [8]byte) { t.add(it[:]) }

func (t *histTable) add(b []byte) {
	if t.counts == nil {
		t.ensure() // items may come before this branch's Feed or Expect
	}
	// The slot as the plain-Go limit computes it: a constant table size
	// (a mask, not a second 64-bit division per item; len(t.counts) cost
	// every framework side about 4 ns an item that the limit did not pay).
	// Nothing else is counted per item (the limit counts per batch):
	// Total sums the table.
	p := uint64(t.NumPEs())
	t.counts[histKey(b)/p%histSlots]++
	if t.want > 0 {
		t.gotOne()
	}
}

// gotOne counts an item of a direct run, which ends when every branch
// has its items.
func (t *histTable) gotOne() {
	if t.got++; t.got == t.want {
		t.want = 0
		_ = t.Contribute(nil, reducer.Nop, t.done)
	}
}

func histKey(b []byte) uint64 { return binary.LittleEndian.Uint64(b) }

// histFeed tells every branch to send its items; for a TRAM run, the
// streamer of the item size is set (the others are zero).
type histFeed struct {
	Size   int
	N      int
	Seed   int64
	Direct bool
	Alone  bool // direct sends of 8-byte items to One8 (an envelope each)
	S8     tram.Streamer[histTable, [8]byte]
	S16    tram.Streamer[histTable, [16]byte]
	S32    tram.Streamer[histTable, [32]byte]
	S64    tram.Streamer[histTable, [64]byte]
}

// histGen returns the generator of PE pe's items.
func histGen(seed int64, pe int) *rand.Rand { return rand.New(rand.NewSource(seed + int64(pe)*7919)) }

// histFill fills an item with random bytes, eight at a time (len(b) is
// a multiple of 8). math/rand's Read took two draws and a byte loop per
// 8 bytes: about 24 ns an item on 64 PEs, more than a quarter of a TRAM
// item's CPU, paid alike by every side of a pair, so that it hid what
// the framework costs in each ratio.
func histFill(r *rand.Rand, b []byte) {
	for i := 0; i+8 <= len(b); i += 8 {
		binary.LittleEndian.PutUint64(b[i:], r.Uint64())
	}
}

// histExpect prepares a branch for a direct run: every branch counts its
// own items per destination, and a sum reduction tells each how many it
// will receive (one pass over N items per PE, whatever the number of PEs).
type histExpect struct {
	Feed  histFeed
	Ready chare.Callback // a barrier: every branch knows its count
	Done  chare.Callback // a barrier: every branch got its items
}

func (t *histTable) Expect(m histExpect) {
	t.ensure()
	p := uint64(t.NumPEs())
	b := make([]byte, m.Feed.Size)
	counts := make([]int64, t.NumPEs())
	r := histGen(m.Feed.Seed, t.PE())
	for i := 0; i < m.Feed.N; i++ {
		histFill(r, b)
		counts[histKey(b)%p]++
	}
	t.got, t.done, t.ready = 0, m.Done, m.Ready
	_ = t.Contribute(counts, reducer.SumInt64, chare.EntryCallback(t.ThisProxy(), (*histTable).Want))
}

// Want receives the items every branch will receive in a direct run.
// Every branch contributes to ready before done, in the same order: a
// branch that expects nothing is done at once, and contributing to done
// first crossed the two barriers (the runtime now refuses that).
func (t *histTable) Want(counts []int64) {
	_ = t.Contribute(nil, reducer.Nop, t.ready)
	if t.want = int(counts[t.PE()]); t.want == 0 {
		_ = t.Contribute(nil, reducer.Nop, t.done)
	}
}

func (t *histTable) ensure() {
	if t.counts == nil {
		t.counts = make([]uint64, histSlots)
	}
}

// Feed sends this PE's items, through TRAM or directly.
func (t *histTable) Feed(f histFeed) {
	t.ensure()
	var err error
	switch f.Size {
	case 8:
		add := (*histTable).Add8
		if f.Alone {
			add = (*histTable).One8
		}
		err = histFeedOf(t, f, f.S8, add)
	case 16:
		err = histFeedOf(t, f, f.S16, (*histTable).Add16)
	case 32:
		err = histFeedOf(t, f, f.S32, (*histTable).Add32)
	case 64:
		err = histFeedOf(t, f, f.S64, (*histTable).Add64)
	default:
		err = fmt.Errorf("no histogram items of %d bytes", f.Size)
	}
	if err != nil {
		t.Abort(err)
	}
}

func histFeedOf[T ~[8]byte | ~[16]byte | ~[32]byte | ~[64]byte](t *histTable, f histFeed, s tram.Streamer[histTable, T], add func(*histTable, T)) error {
	p := uint64(t.NumPEs())
	r := histGen(f.Seed, t.PE())
	g := t.ThisProxy()
	var in *tram.Inserter[histTable, T]
	if !f.Direct {
		var err error
		if in, err = s.Local(t); err != nil {
			return err
		}
	}
	var it T
	for i := 0; i < f.N; i++ {
		b := unsafe.Slice((*byte)(unsafe.Pointer(&it)), unsafe.Sizeof(it))
		histFill(r, b)
		dest := int(histKey(b) % p)
		var err error
		if f.Direct {
			err = chare.Send(t, g.At(dest), add, it)
		} else {
			err = in.Insert(it, dest)
		}
		if err != nil {
			return err
		}
	}
	if f.Direct {
		return nil
	}
	return s.Done(t, 1)
}

// Total contributes the items counted since the last Total (the sum of
// the table) and starts counting afresh.
func (t *histTable) Total(cb chare.Callback) {
	var n int64
	for _, c := range t.counts {
		n += int64(c)
	}
	clear(t.counts)
	_ = t.Contribute(n, reducer.SumInt64, cb)
}

// histJob runs the histogram in a job's main function.
type histJob struct {
	m    *benchMain
	g    group.Proxy[histTable]
	size int
	n    int // items per PE
	seed int64
}

// checkTotal verifies that every item arrived once.
func (h *histJob) checkTotal(what string) error {
	f := chare.NewFuture[int64](h.m)
	if err := chare.Send(h.m, h.g, (*histTable).Total, f.Callback()); err != nil {
		return err
	}
	n, err := f.Get(h.m)
	if err != nil {
		return err
	}
	if want := int64(h.m.NumPEs()) * int64(h.n); n != want {
		return fmt.Errorf("%s: the table counted %d items, want %d", what, n, want)
	}
	return nil
}

// direct measures the baseline: one message per item (chare.Send), which
// consecutive sends to one PE carry in a run (internal/core/run.go).
func (h *histJob) direct() (float64, error) { return h.directSends(false) }

// alone measures one envelope per item: the 8-byte items sent to One8,
// registered with chare.NoRuns.
func (h *histJob) alone() (float64, error) { return h.directSends(true) }

func (h *histJob) directSends(alone bool) (float64, error) {
	h.seed++
	feed := histFeed{Size: h.size, N: h.n, Seed: h.seed, Direct: true, Alone: alone}
	ready, done := chare.NewFuture[any](h.m), chare.NewFuture[any](h.m)
	if err := chare.Send(h.m, h.g, (*histTable).Expect, histExpect{Feed: feed, Ready: ready.Callback(), Done: done.Callback()}); err != nil {
		return 0, err
	}
	if _, err := ready.Get(h.m); err != nil {
		return 0, err
	}
	t0 := time.Now()
	if err := chare.Send(h.m, h.g, (*histTable).Feed, feed); err != nil {
		return 0, err
	}
	if _, err := done.Get(h.m); err != nil {
		return 0, err
	}
	rate := float64(h.m.NumPEs()*h.n) / time.Since(t0).Seconds()
	return rate, h.checkTotal("direct sends")
}

// streamer creates a TRAM instance for the item size on the grid dims.
func (h *histJob) streamer(dims []int) (histFeed, error) {
	feed := histFeed{Size: h.size, N: h.n}
	o := tram.Options{Dims: dims, Sizing: tram.Sizing{BufferItems: histBuffer}, FlushPeriod: histFlushTime}
	var err error
	switch h.size {
	case 8:
		feed.S8, err = tram.New(h.m, h.g, (*histTable).Add8, o)
	case 16:
		feed.S16, err = tram.New(h.m, h.g, (*histTable).Add16, o)
	case 32:
		feed.S32, err = tram.New(h.m, h.g, (*histTable).Add32, o)
	case 64:
		feed.S64, err = tram.New(h.m, h.g, (*histTable).Add64, o)
	}
	return feed, err
}

// start begins a completion step on the feed's streamer.
func (h *histJob) start(feed histFeed, st tram.Step) error {
	switch h.size {
	case 8:
		return feed.S8.Start(h.m, st)
	case 16:
		return feed.S16.Start(h.m, st)
	case 32:
		return feed.S32.Start(h.m, st)
	default:
		return feed.S64.Start(h.m, st)
	}
}

// viaTRAM measures one step through the streamer of feed: from the start
// of the step to the completion detector's Finished.
func (h *histJob) viaTRAM(feed histFeed) (float64, error) {
	h.seed++
	feed.Seed = h.seed
	started, finished := chare.NewFuture[any](h.m), chare.NewFuture[any](h.m)
	t0 := time.Now()
	if err := h.start(feed, tram.Step{Mode: tram.Completion, Producers: h.m.NumPEs(), Started: started.Callback(), Finished: finished.Callback()}); err != nil {
		return 0, err
	}
	if _, err := started.Get(h.m); err != nil {
		return 0, err
	}
	if err := chare.Send(h.m, h.g, (*histTable).Feed, feed); err != nil {
		return 0, err
	}
	if _, err := finished.Get(h.m); err != nil {
		return 0, err
	}
	rate := float64(h.m.NumPEs()*h.n) / time.Since(t0).Seconds()
	return rate, h.checkTotal("TRAM")
}

// bufferBytes is the buffer memory of one PE on the grid dims.
func bufferBytes(size int, dims []int, pes int) (float64, error) {
	topo, err := tram.NewTopology(dims, pes)
	if err != nil {
		return 0, err
	}
	env := 8 + size // tram.Envelope: an int destination and the item
	return float64(topo.NumPeers(0) * histBuffer * env), nil
}

func newHistJob(m *benchMain, cfg config, size, items int) (*histJob, error) {
	g, err := group.New[histTable](m)
	if err != nil {
		return nil, err
	}
	return &histJob{m: m, g: g, size: size, n: max(1, int(float64(items)*cfg.scale))}, nil
}

type histGrid struct {
	name string
	dims []int
}

var histGrids4 = []histGrid{{"1d", []int{4}}, {"2d", []int{2, 2}}, {"3d", []int{2, 2, 1}}}

// benchHist1 measures, in each of the pairs, the direct sends, TRAM on
// every grid, and the plain-Go limit, on pes PEs in one process.
func benchHist1(cfg config, size, pes int, suffix string, grids []histGrid) ([]figure, error) {
	prefix := fmt.Sprintf("tram/histogram/%dB/1proc%s", size, suffix)
	figs := make([]figure, len(grids))
	limits := make([]figure, len(grids))
	envs := make([]figure, len(grids)) // 8-byte items only
	for i, gr := range grids {
		figs[i] = figure{name: prefix + "/" + gr.name, unit: "items/s"}
		limits[i] = figure{name: prefix + "/" + gr.name + "/limit", unit: "items/s"}
		envs[i] = figure{name: prefix + "/" + gr.name + "/envelopes", unit: "items/s"}
	}
	items := histItems * histPEs / pes // per PE: as many in all as on 4 PEs
	if *histOnly != "" {
		return nil, histAlone(cfg, size, pes, items, prefix, grids)
	}
	err := runJob(pes, func(m *benchMain) error {
		h, err := newHistJob(m, cfg, size, items)
		if err != nil {
			return err
		}
		feeds := make([]histFeed, len(grids))
		for i, gr := range grids {
			if feeds[i], err = h.streamer(gr.dims); err != nil {
				return err
			}
		}
		// The sides of a pair: direct sends, the plain-Go limit, an
		// envelope per item (8-byte items), TRAM on each grid. They run
		// in an order that rotates from pair to pair, so that no side
		// always follows the same one (what ran before — a direct run's
		// garbage, the limit's goroutines — weighed on the side after
		// it), and all on the same items (one seed per pair).
		rates := make([]float64, 3+len(grids))
		var sides []func() (float64, error)
		sides = append(sides, h.direct, func() (float64, error) { return histLimit(size, pes, h.n, h.seed+1) })
		if size == 8 {
			sides = append(sides, h.alone)
		} else {
			sides = append(sides, func() (float64, error) { return 0, nil })
		}
		for i := range grids {
			sides = append(sides, func() (float64, error) {
				rate, err := h.viaTRAM(feeds[i])
				if err != nil {
					return 0, fmt.Errorf("%v: %w", grids[i].dims, err)
				}
				return rate, nil
			})
		}
		for r := 0; r < pairsOf(cfg); r++ {
			seed := h.seed + 1
			for k := range sides {
				j := (k + r) % len(sides)
				goruntime.GC()
				h.seed = seed - 1 // each side draws the pair's items
				if rates[j], err = sides[j](); err != nil {
					return err
				}
			}
			h.seed = seed
			base, limit, alone := rates[0], rates[1], rates[2]
			for i := range grids {
				rate := rates[3+i]
				figs[i].value, figs[i].baseline = append(figs[i].value, rate), append(figs[i].baseline, base)
				limits[i].value, limits[i].baseline = append(limits[i].value, rate), append(limits[i].baseline, limit)
				envs[i].value, envs[i].baseline = append(envs[i].value, rate), append(envs[i].baseline, alone)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	flat, err := bufferBytes(size, []int{pes}, pes)
	if err != nil {
		return nil, err
	}
	var fs []figure
	for i, gr := range grids {
		mem, err := bufferBytes(size, gr.dims, pes)
		if err != nil {
			return nil, err
		}
		fs = append(fs, figs[i], limits[i])
		if size == 8 {
			fs = append(fs, envs[i])
		}
		fs = append(fs, figure{name: figs[i].name + "/mem", unit: "bytes", value: []float64{mem}, baseline: []float64{flat}})
	}
	return fs, nil
}

// histAlone runs TRAM alone on the grid -hist-only names (-hist-only).
func histAlone(cfg config, size, pes, items int, prefix string, grids []histGrid) error {
	i := slices.IndexFunc(grids, func(g histGrid) bool { return g.name == *histOnly })
	if i < 0 {
		return fmt.Errorf("-hist-only %q: no such grid in %s", *histOnly, prefix)
	}
	return runJob(pes, func(m *benchMain) error {
		h, err := newHistJob(m, cfg, size, items)
		if err != nil {
			return err
		}
		feed, err := h.streamer(grids[i].dims)
		if err != nil {
			return err
		}
		rates := make([]float64, pairsOf(cfg))
		for r := range rates {
			goruntime.GC()
			if rates[r], err = h.viaTRAM(feed); err != nil {
				return err
			}
		}
		fmt.Printf("# %s/%s (-hist-only): median %.4g items/s, min %.4g, %d runs\n", prefix, grids[i].name, median(rates), slices.Min(rates), len(rates))
		return nil
	})
}

func benchHist2(cfg config, size int, name string) ([]figure, error) {
	fig := figure{name: name, unit: "items/s"}
	env := figure{name: name + "/envelopes", unit: "items/s"} // 8-byte items only
	err := runNodes(histPEs, 2, name, func(m *benchMain) error {
		h, err := newHistJob(m, cfg, size, histItems)
		if err != nil {
			return err
		}
		feed, err := h.streamer(nil) // the default grid: [2 nodes, 2 PEs]
		if err != nil {
			return err
		}
		for r := 0; r < pairsOf(cfg); r++ {
			goruntime.GC()
			base, err := h.direct()
			if err != nil {
				return err
			}
			alone := 0.0
			if size == 8 {
				goruntime.GC()
				if alone, err = h.alone(); err != nil {
					return err
				}
			}
			goruntime.GC()
			rate, err := h.viaTRAM(feed)
			if err != nil {
				return err
			}
			fig.value, fig.baseline = append(fig.value, rate), append(fig.baseline, base)
			env.value, env.baseline = append(env.value, rate), append(env.baseline, alone)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if size == 8 {
		return []figure{fig, env}, nil
	}
	return []figure{fig}, nil
}

// histLimit is the plain-Go limit: pes producer goroutines generate the
// same items as the PEs (seed as in the direct run just measured) and send
// them in batches of histBuffer per destination over channels to pes
// consumer goroutines, which count them into their tables.
func histLimit(size, pes, n int, seed int64) (float64, error) {
	switch size {
	case 8:
		return histLimitOf[[8]byte](pes, n, seed)
	case 16:
		return histLimitOf[[16]byte](pes, n, seed)
	case 32:
		return histLimitOf[[32]byte](pes, n, seed)
	case 64:
		return histLimitOf[[64]byte](pes, n, seed)
	}
	return 0, fmt.Errorf("no histogram items of %d bytes", size)
}

func histLimitOf[T ~[8]byte | ~[16]byte | ~[32]byte | ~[64]byte](pes, n int, seed int64) (float64, error) {
	chans := make([]chan []T, pes)
	for i := range chans {
		chans[i] = make(chan []T, 64)
	}
	counted := make([]int64, pes)
	var prod, cons sync.WaitGroup
	t0 := time.Now()
	for c := 0; c < pes; c++ {
		cons.Add(1)
		go func() {
			defer cons.Done()
			table := make([]uint64, histSlots)
			p := uint64(pes)
			for batch := range chans[c] {
				for i := range batch {
					b := unsafe.Slice((*byte)(unsafe.Pointer(&batch[i])), unsafe.Sizeof(batch[i]))
					table[histKey(b)/p%histSlots]++
				}
				counted[c] += int64(len(batch))
			}
		}()
	}
	for pe := 0; pe < pes; pe++ {
		prod.Add(1)
		go func() {
			defer prod.Done()
			r := histGen(seed, pe)
			p := uint64(pes)
			bufs := make([][]T, pes)
			var it T
			for i := 0; i < n; i++ {
				b := unsafe.Slice((*byte)(unsafe.Pointer(&it)), unsafe.Sizeof(it))
				histFill(r, b)
				d := histKey(b) % p
				if bufs[d] == nil {
					bufs[d] = make([]T, 0, histBuffer)
				}
				bufs[d] = append(bufs[d], it)
				if len(bufs[d]) == histBuffer {
					chans[d] <- bufs[d]
					bufs[d] = nil
				}
			}
			for d, b := range bufs {
				if len(b) > 0 {
					chans[d] <- b
				}
			}
		}()
	}
	prod.Wait()
	for _, c := range chans {
		close(c)
	}
	cons.Wait()
	el := time.Since(t0)
	var total int64
	for _, c := range counted {
		total += c
	}
	if want := int64(pes) * int64(n); total != want {
		return 0, fmt.Errorf("plain-Go histogram counted %d items, want %d", total, want)
	}
	return float64(total) / el.Seconds(), nil
}
