// Streamingalltoall is the counterpart of Charm++'s
// benchmarks/charm++/streamingAllToAll (as ported to Charm++ 8.0): an
// all-to-all of 32-byte items, through TRAM and by direct sends, for a
// range of sizes.
//
//	streamingalltoall [minbytes] [maxbytes] [buffer]
//
// takes Charm++'s positional arguments (defaults 32, 16384 and a TRAM
// buffer of 16384/32 = 512 items per peer) and the runtime's flags (-p N,
// -nodes M). For each size from minbytes to maxbytes, doubling, every PE
// sends size/32 items to every PE, itself included, in an order of the
// PEs shuffled once per PE; each test is timed from the broadcast that
// starts the sends to the end:
//
//   - tram: the items go through a tram.Streamer (a grid of nodes × PEs
//     per node, buffer items per peer, flushed every 100 µs) in one staged
//     completion step with one producer per PE, started before the clock
//     starts as Charm++ initialises its streamer before its start
//     callback; as in the port, an item for the PE itself is delivered
//     where it is made;
//   - direct: each item is an entry-method send to the receiver's branch,
//     and a branch joins a barrier once it received size/32 items from
//     every PE.
//
// The sending entry method is threaded, as Charm++'s, and lets its PE run
// other messages every 1024 items. The last line holds every time, in
// seconds:
//
//	streamingalltoall: ok pes=2 item_bytes=32 seconds_tram_32B=... ... seconds_tram_16384B=... seconds_direct_32B=... ...
//
// or "streamingalltoall: FAILED ..." with a non-zero exit code.
//
// What still differs from Charm++: the TRAM parts are ours (routing on
// the same grid, our own buffering and flushing); Charm++ yields in its
// streamer's insertData where ours yields every 1024 insertions
// (tram.Options.Yield); the shuffle is a seeded generator per PE where
// Charm++ calls rand(); items between processes travel in msgpack-encoded
// frames.
package main

import (
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strings"
	"time"

	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/chare/reducer"
	"github.com/charmgo/charm/group"
	"github.com/charmgo/charm/internal/exutil"
	"github.com/charmgo/charm/tram"
)

// out is where the program prints; the test replaces it.
var out io.Writer = os.Stdout

// ItemBytes is the size of an item (Charm++'s DATA_ITEM_SIZE).
const ItemBytes = 32

// Item is Charm++'s DataItem.
type Item [ItemBytes]byte

// yieldEvery is how many sends a sending PE makes before it lets other
// messages run (Charm++'s CthYield every 1024).
const yieldEvery = 1024

// Main is the main chare.
type Main struct {
	chare.Chare[Main]
	sizes  []int
	tram   []time.Duration
	direct []time.Duration
}

// Participant is one PE's sender and receiver (Charm++'s Participant).
type Participant struct {
	group.Branch[Participant]
	neighbours []int
	item       Item
	want, got  int // direct: items to receive in the test, and received
	done       chare.Callback
	processed  int64 // tram: items delivered
}

// CommMsg starts a test on a branch (Charm++'s communicate).
type CommMsg struct {
	Iters int
	TRAM  bool
	S     tram.Streamer[Participant, Item]
	Done  chare.Callback // direct: the barrier
}

func init() {
	chare.Register[Main]()
	chare.Register[Participant](chare.Threaded((*Participant).Communicate))
	tram.Register((*Participant).Process)
}

func main() { os.Exit(chare.Main((*Main).Start)) }

// Sizes returns the sizes of the tests: min, doubling, up to max.
func Sizes(min, max int) []int {
	var s []int
	for b := min; b <= max; b *= 2 {
		s = append(s, b)
	}
	return s
}

// Shuffled returns the PEs 0..npes−1 in the order PE pe sends to them.
func Shuffled(pe, npes int) []int {
	r := rand.New(rand.NewPCG(uint64(pe), 0x5eed))
	nb := make([]int, npes)
	for i := range nb {
		nb[i] = i
	}
	r.Shuffle(npes, func(i, j int) { nb[i], nb[j] = nb[j], nb[i] })
	return nb
}

// Start runs the TRAM tests and then the direct ones.
func (m *Main) Start(args []string) {
	fs := exutil.NewFlagSet("streamingalltoall")
	if !exutil.Parse(out, m, fs, args) {
		return
	}
	v, err := exutil.Positional(fs.Args(), []string{"minbytes", "maxbytes", "buffer"}, []int{32, 16384, 16 * 1024 / ItemBytes}, 1)
	switch {
	case err != nil:
		m.fail(2, "bad arguments: %v", err)
		return
	case v[0] < ItemBytes || v[1] < v[0]:
		m.fail(2, "bad arguments: minbytes %d maxbytes %d: want %d ≤ minbytes ≤ maxbytes", v[0], v[1], ItemBytes)
		return
	}
	m.sizes = Sizes(v[0], v[1])
	parts, err := group.NewWith(m, (*Participant).Init, struct{}{})
	if err != nil {
		m.fail(1, "creating the group: %v", err)
		return
	}
	s, err := tram.New(m, parts, (*Participant).Process, tram.Options{
		Sizing: tram.Sizing{BufferItems: v[2]}, FlushPeriod: 100 * time.Microsecond, Yield: yieldEvery})
	if err != nil {
		m.fail(1, "creating the streamer: %v", err)
		return
	}
	for _, b := range m.sizes {
		finished, err := exutil.StartStep(m, s, tram.Staged, 1, "")
		if err != nil {
			m.fail(1, "TRAM test of %d bytes: %v", b, err)
			return
		}
		began := time.Now()
		if err := chare.Send(m, parts, (*Participant).Communicate, CommMsg{Iters: b / ItemBytes, TRAM: true, S: s}); err != nil {
			m.fail(1, "TRAM test of %d bytes: %v", b, err)
			return
		}
		if _, err := finished.Get(m); err != nil {
			m.fail(1, "TRAM test of %d bytes: %v", b, err)
			return
		}
		m.tram = append(m.tram, time.Since(began))
	}
	for _, b := range m.sizes {
		done := chare.NewFuture[any](m)
		began := time.Now()
		if err := chare.Send(m, parts, (*Participant).Communicate, CommMsg{Iters: b / ItemBytes, Done: done.Callback()}); err != nil {
			m.fail(1, "direct test of %d bytes: %v", b, err)
			return
		}
		if _, err := done.Get(m); err != nil {
			m.fail(1, "direct test of %d bytes: %v", b, err)
			return
		}
		m.direct = append(m.direct, time.Since(began))
	}
	var line strings.Builder
	fmt.Fprintf(&line, "streamingalltoall: ok pes=%d item_bytes=%d", m.NumPEs(), ItemBytes)
	for i, b := range m.sizes {
		fmt.Fprintf(&line, " seconds_tram_%dB=%.6g", b, m.tram[i].Seconds())
	}
	for i, b := range m.sizes {
		fmt.Fprintf(&line, " seconds_direct_%dB=%.6g", b, m.direct[i].Seconds())
	}
	fmt.Fprintln(out, line.String())
	m.Exit(0)
}

func (m *Main) fail(code int, format string, args ...any) {
	exutil.Fail(out, m, "streamingalltoall", code, format, args...)
}

// Init shuffles the order of the receivers.
func (p *Participant) Init(struct{}) { p.neighbours = Shuffled(p.PE(), p.NumPEs()) }

// Communicate sends this PE's items of a test.
func (p *Participant) Communicate(c CommMsg) {
	if c.TRAM {
		p.viaTRAM(c)
		return
	}
	// Items of this test may have come before this message: they count.
	p.want, p.done = c.Iters*p.NumPEs(), c.Done
	to := p.ThisProxy()
	sent := 0
	for range c.Iters {
		for _, nb := range p.neighbours {
			if err := chare.Send(p, to.At(nb), (*Participant).Receive, p.item); err != nil {
				p.Abort(err)
				return
			}
			if sent++; sent == yieldEvery {
				sent = 0
				if err := chare.Yield(p); err != nil {
					p.Abort(err)
					return
				}
			}
		}
	}
	p.check()
}

func (p *Participant) viaTRAM(c CommMsg) {
	in, err := c.S.Local(p)
	if err != nil {
		p.Abort(err)
		return
	}
	me := p.PE()
	for range c.Iters {
		for _, nb := range p.neighbours {
			if nb == me {
				p.Process(p.item)
			} else if err := in.Insert(p.item, nb); err != nil {
				p.Abort(err)
				return
			}
		}
	}
	if err := c.S.Done(p, 1); err != nil {
		p.Abort(err)
	}
}

// Process takes an item through TRAM: nothing is done with it, as in
// Charm++.
func (p *Participant) Process(Item) { p.processed++ }

// Receive takes an item sent directly (Charm++'s receive).
func (p *Participant) Receive(Item) {
	p.got++
	p.check()
}

// check joins the barrier once every item of the test came.
func (p *Participant) check() {
	if p.want == 0 || p.got < p.want {
		return
	}
	p.got -= p.want
	p.want = 0
	if err := p.Contribute(nil, reducer.Nop, p.done); err != nil {
		p.Abort(err)
	}
}
