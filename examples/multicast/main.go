// Multicast sends section multicasts of small and large messages through
// each of Comlib's multicast strategies and checks that every member of
// the section gets each message exactly once, with the right content, and
// that no other element gets any.
//
// The main chare creates an array of -n elements and a section of those
// whose index is not 1 modulo 3. For each strategy (comlib.Multicast with
// Kind direct, ring, multiring, tree, dim and node, and tree with Chunk
// -chunk, which cuts the large messages into fragments that are pipelined
// along the tree and reassembled), it creates an instance, delegates the
// section proxy to it, and multicasts -msgs messages of -small bytes and
// -msgs of -large bytes from two roots: the main chare on PE 0 and the
// last element of the array (on the last PE). Each message's bytes are a
// function of (strategy, root, sequence number, size), so a corrupted or
// misdelivered message is noticed. The main chare waits for quiescence
// after each strategy, and at the end every element reports, per
// strategy, what it received, the duplicates, the bad messages (wrong
// content, or received by a non-member) and the messages it lacks.
//
// Run it with
//
//	go run ./examples/multicast -p 4
//	go run ./examples/multicast -p 4 -nodes 2
//	go run ./examples/multicast -p 8 -n 64 -msgs 8 -large 1048576 -chunk 16384
//
// The runtime takes its flags (-p N, -nodes M) anywhere on the line;
// -strategies picks some of the strategies (comma-separated names from
// direct, ring, multiring, tree, dim, node, tree-chunk). The last line is
//
//	multicast: ok pes=4 elements=24 members=16 strategies=7 msgs=4 small=16 large=65536 chunk=4096 delivered=1792 lost=0 duplicated=0 bad=0 direct_ms=... ring_ms=... ...
//
// with, per strategy, the milliseconds from the first send to quiescence;
// or "multicast: FAILED ..." with a non-zero exit code.
package main

import (
	"fmt"
	"io"
	"os"
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

// Strategy is one multicast strategy of the run.
type Strategy struct {
	Name string
	Opt  comlib.MulticastOptions
}

// Strategies returns the strategies the program knows, in order; chunk is
// the fragment size of tree-chunk.
func Strategies(chunk int) []Strategy {
	var s []Strategy
	for _, k := range []string{"direct", "ring", "multiring", "tree", "dim", "node"} {
		s = append(s, Strategy{Name: k, Opt: comlib.MulticastOptions{Kind: k}})
	}
	return append(s, Strategy{Name: "tree-chunk", Opt: comlib.MulticastOptions{Kind: "tree", Chunk: chunk}})
}

// Params are the program's parameters.
type Params struct {
	N, Msgs, Small, Large, Chunk int
	Strategies                   []Strategy
}

// IsMember says whether element i is in the section.
func IsMember(i int) bool { return i%3 != 1 }

// Msg is one multicast message.
type Msg struct {
	Strat, Root, Seq int
	Data             []byte
}

// Payload returns the bytes of message seq of the given size from root
// through strategy strat.
func Payload(strat, root, seq, size int) []byte {
	st := exutil.Mix(uint64(strat)<<48 ^ uint64(root)<<32 ^ uint64(seq)<<16 ^ uint64(size))
	b := make([]byte, size)
	for i := 0; i < size; i += 8 {
		v := exutil.SplitMix64(&st)
		for j := 0; j < 8 && i+j < size; j++ {
			b[i+j] = byte(v >> (8 * j))
		}
	}
	return b
}

// sizeOf is the size of message seq: the first msgs are small, the rest
// large.
func (p Params) sizeOf(seq int) int {
	if seq < p.Msgs {
		return p.Small
	}
	return p.Large
}

// Roots are the roots of each strategy's multicasts: the main chare
// (root 0) and the last element (root 1).
const Roots = 2

// Main is the main chare.
type Main struct {
	chare.Chare[Main]
	p       Params
	elapsed []time.Duration
	stats   []comlib.StatsSnapshot // per strategy, this process's
	res     []int64                // per strategy: received, duplicated, bad, lost
}

// Member is an element of the array.
type Member struct {
	array.Element[Member, int]
	Seen map[[3]int]int // (strategy, root, seq) → copies received
	Bad  map[int]int64  // strategy → bad messages
}

// SendMsg asks the last element to multicast to the section. Section
// proxies do not travel between processes, so it carries the array's
// proxy, delegated to the strategy, and the element makes the section.
type SendMsg struct {
	Arr     array.Proxy[Member, int] // delegated
	Members []int
	Strat   int
	Params  Params
}

// ReportMsg asks every element for its figures.
type ReportMsg struct {
	Params Params
	CB     chare.Callback
}

func init() {
	chare.Register[Main]()
	chare.Register[Member]()
}

func main() { os.Exit(chare.Main((*Main).Start)) }

// Start parses the flags, runs every strategy and checks the deliveries.
func (m *Main) Start(args []string) {
	fs := exutil.NewFlagSet("multicast")
	fs.IntVar(&m.p.N, "n", 24, "array elements (a third of them are not in the section)")
	fs.IntVar(&m.p.Msgs, "msgs", 4, "messages of each size from each root per strategy")
	fs.IntVar(&m.p.Small, "small", 16, "bytes of a small message")
	fs.IntVar(&m.p.Large, "large", 64<<10, "bytes of a large message")
	fs.IntVar(&m.p.Chunk, "chunk", 4<<10, "fragment size of tree-chunk")
	only := fs.String("strategies", "", "comma-separated strategies to run (default: all)")
	if !exutil.ParseNoArgs(out, m, fs, args) {
		return
	}
	p := &m.p
	switch {
	case p.N < 2:
		m.fail(2, "bad arguments: -n %d: want at least 2 elements", p.N)
		return
	case p.Msgs < 1:
		m.fail(2, "bad arguments: -msgs %d: want at least 1", p.Msgs)
		return
	case p.Small < 0 || p.Large < 0:
		m.fail(2, "bad arguments: -small %d -large %d: want sizes ≥ 0", p.Small, p.Large)
		return
	case p.Chunk < 1:
		m.fail(2, "bad arguments: -chunk %d: want a fragment size > 0", p.Chunk)
		return
	}
	all := Strategies(p.Chunk)
	if *only == "" {
		p.Strategies = all
	} else {
		for _, name := range strings.Split(*only, ",") {
			found := false
			for _, s := range all {
				if s.Name == name {
					p.Strategies, found = append(p.Strategies, s), true
				}
			}
			if !found {
				var names []string
				for _, s := range all {
					names = append(names, s.Name)
				}
				m.fail(2, "bad arguments: -strategies: unknown strategy %q (valid: %s)", name, strings.Join(names, ", "))
				return
			}
		}
	}
	if err := m.run(); err != nil {
		m.fail(1, "%v", err)
		return
	}
	members := 0
	for i := 0; i < p.N; i++ {
		if IsMember(i) {
			members++
		}
	}
	var delivered, dups, bad, lost int64
	var per, failed []string
	for k, s := range p.Strategies {
		r := m.res[4*k : 4*k+4]
		delivered, dups, bad, lost = delivered+r[0], dups+r[1], bad+r[2], lost+r[3]
		if r[1] != 0 || r[2] != 0 || r[3] != 0 {
			failed = append(failed, fmt.Sprintf("%s: received=%d duplicated=%d bad=%d lost=%d", s.Name, r[0], r[1], r[2], r[3]))
		}
		per = append(per, fmt.Sprintf("%s_ms=%.3g", s.Name, float64(m.elapsed[k].Microseconds())/1000))
	}
	want := int64(members * Roots * 2 * p.Msgs * len(p.Strategies))
	if len(failed) > 0 || delivered != want {
		m.fail(1, "delivered=%d of %d; %s", delivered, want, strings.Join(failed, "; "))
		return
	}
	fmt.Fprintf(out, "multicast: ok pes=%d elements=%d members=%d strategies=%d msgs=%d small=%d large=%d chunk=%d delivered=%d lost=0 duplicated=0 bad=0 %s\n",
		m.NumPEs(), p.N, members, len(p.Strategies), p.Msgs, p.Small, p.Large, p.Chunk, delivered, strings.Join(per, " "))
	m.Exit(0)
}

func (m *Main) fail(code int, format string, args ...any) {
	exutil.Fail(out, m, "multicast", code, format, args...)
}

// run multicasts through each strategy in turn, each ending at
// quiescence, and gathers the elements' figures.
func (m *Main) run() error {
	p := m.p
	arr, err := array.New[Member](m, array.Dims(p.N))
	if err != nil {
		return fmt.Errorf("creating the array: %w", err)
	}
	var idx []int
	for i := 0; i < p.N; i++ {
		if IsMember(i) {
			idx = append(idx, i)
		}
	}
	sec, err := arr.Section(m, idx)
	if err != nil {
		return fmt.Errorf("creating the section: %w", err)
	}
	for k, s := range p.Strategies {
		inst, err := comlib.New(m, comlib.Multicast(s.Opt))
		if err != nil {
			return fmt.Errorf("strategy %s: %w", s.Name, err)
		}
		d := sec.Delegate(inst)
		began := time.Now()
		for seq := 0; seq < 2*p.Msgs; seq++ {
			msg := Msg{Strat: k, Root: 0, Seq: seq, Data: Payload(k, 0, seq, p.sizeOf(seq))}
			if err := chare.Send(m, d, (*Member).Take, msg); err != nil {
				return fmt.Errorf("strategy %s, multicast %d from the main chare: %w", s.Name, seq, err)
			}
		}
		if err := chare.Send(m, arr.At(p.N-1), (*Member).Multicast, SendMsg{Arr: arr.Delegate(inst), Members: idx, Strat: k, Params: p}); err != nil {
			return err
		}
		quiet := chare.NewFuture[any](m)
		m.DetectQuiescence(quiet.Callback())
		if _, err := quiet.Get(m); err != nil {
			return fmt.Errorf("strategy %s: waiting for quiescence: %w", s.Name, err)
		}
		m.elapsed = append(m.elapsed, time.Since(began))
		m.stats = append(m.stats, inst.Stats())
	}
	f := chare.NewFuture[[]int64](m)
	if err := chare.Send(m, arr, (*Member).Report, ReportMsg{Params: p, CB: f.Callback()}); err != nil {
		return err
	}
	if m.res, err = f.Get(m); err != nil {
		return fmt.Errorf("gathering the figures: %w", err)
	}
	return nil
}

// Multicast sends this element's multicasts of a strategy (root 1).
func (e *Member) Multicast(s SendMsg) {
	sec, err := s.Arr.Section(e, s.Members) // keeps the delegation
	if err != nil {
		e.Abort(fmt.Errorf("multicast: element %d: making the section: %w", e.ThisIndex(), err))
		return
	}
	for seq := 0; seq < 2*s.Params.Msgs; seq++ {
		msg := Msg{Strat: s.Strat, Root: 1, Seq: seq, Data: Payload(s.Strat, 1, seq, s.Params.sizeOf(seq))}
		if err := chare.Send(e, sec, (*Member).Take, msg); err != nil {
			e.Abort(fmt.Errorf("multicast: element %d, strategy %d, multicast %d: %w", e.ThisIndex(), s.Strat, seq, err))
			return
		}
	}
}

// Take receives a multicast; its content is checked at once.
func (e *Member) Take(msg Msg) {
	if e.Seen == nil {
		e.Seen, e.Bad = map[[3]int]int{}, map[int]int64{}
	}
	e.Seen[[3]int{msg.Strat, msg.Root, msg.Seq}]++
	if !IsMember(e.ThisIndex()) || msg.Root < 0 || msg.Root >= Roots ||
		string(msg.Data) != string(Payload(msg.Strat, msg.Root, msg.Seq, len(msg.Data))) {
		e.Bad[msg.Strat]++
	}
}

// Report contributes, per strategy, what the element received, the
// duplicates, the bad messages and the ones it lacks.
func (e *Member) Report(r ReportMsg) {
	p := r.Params
	v := make([]int64, 4*len(p.Strategies))
	for k := range p.Strategies {
		for root := 0; root < Roots; root++ {
			for seq := 0; seq < 2*p.Msgs; seq++ {
				n := int64(e.Seen[[3]int{k, root, seq}])
				if n > 0 {
					v[4*k] += n
					v[4*k+1] += n - 1
				} else if IsMember(e.ThisIndex()) {
					v[4*k+3]++
				}
			}
		}
		v[4*k+2] = e.Bad[k]
	}
	// Anything outside the expected keys (a wrong sequence number or
	// strategy) is bad too.
	for key, n := range e.Seen {
		if key[0] < 0 || key[0] >= len(p.Strategies) || key[1] < 0 || key[1] >= Roots || key[2] < 0 || key[2] >= 2*p.Msgs {
			v[2] += int64(n)
		}
	}
	if err := e.Contribute(v, reducer.SumInt64, r.CB); err != nil {
		e.Abort(err)
	}
}
