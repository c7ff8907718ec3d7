package rt_test

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/charmgo/charm/array"
	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/group"
)

// Sends of one entry method to array elements on one PE travel as element
// runs (internal/core/run.go): one header, then each message with its element's
// index and epoch. A run must keep every sender's order to each element,
// across entry methods and elements; a message in it for an element that
// is no longer on the run's PE must be forwarded as a single message
// would be, never dropped or delivered twice; and a run must cost the
// sender less memory than an envelope per message.

type erSeq struct{ From, Seq int }

type erMark struct {
	From, Seq int
	Tag       string
}

type erGo struct {
	N, M    int   // the array's size; rounds
	From    int   // the first round to send
	Chunk   int   // rounds per entry method (0: all); Go sends itself the rest
	Targets []int // the elements sent to (nil: all N)
	Measure bool  // time entry methods on the receiving PEs (runs unrolled)
	MoveAt  int   // in round MoveAt (> 0), send MoveTo to element MoveWho first
	MoveWho int
	MoveTo  int
	Pause   bool // and go on with round MoveAt once the element has arrived
	Raw     bool // send through proxies as another process gets them (viaWire)
	Section bool // send each round through a section of the targets instead
}

type erMove struct {
	To     int
	Done   chare.Callback
	Notify bool
}

type erReport struct {
	Got, Late, PE int
}

type erElem struct {
	array.Element[erElem, int]
	Seen   [][]bool // the messages received, by sender and sequence number
	Got    int
	Late   int            // messages that arrived after a later one of their sender
	Done   chare.Callback // called on arrival after a Move, if Notify
	Notify bool
	Paused erGo // the rounds that a paused Go still has to send
}

var erBound = func() chare.Bound[erElem, erSeq] {
	chare.Register[erElem]()
	b, err := chare.Bind("Bound", (*erElem).Bound)
	if err != nil {
		panic(err)
	}
	return b
}()

func init() { registerReducers(gather[int, erReport]{}) }

// take records message seq of sender from: a duplicate fails the job; one
// that arrives after a later one of its sender is counted (Late), since a
// message forwarded through an element's old PE may be overtaken by one
// sent later to its new PE.
func (e *erElem) take(from, seq int) {
	for len(e.Seen) <= from {
		e.Seen = append(e.Seen, nil)
	}
	for len(e.Seen[from]) <= seq {
		e.Seen[from] = append(e.Seen[from], false)
	}
	inJob.False(e.Seen[from][seq], "element %d on PE %d: message %d of sender %d delivered twice", e.ThisIndex(), e.PE(), seq, from)
	e.Seen[from][seq] = true
	if seq+1 < len(e.Seen[from]) {
		e.Late++
	}
	e.Got++
}

func (e *erElem) Recv(m erSeq)  { e.take(m.From, m.Seq) }
func (e *erElem) Bound(m erSeq) { e.take(m.From, m.Seq) }
func (e *erElem) Mark(m erMark) {
	inJob.Equal(fmt.Sprint("mark ", m.Seq), m.Tag)
	e.take(m.From, m.Seq)
}

// Go sends M rounds to the targets: mostly Recv, a Mark every 7th round
// and a bound send every 11th, so that runs break and start again.
func (e *erElem) Go(g erGo) {
	chare.PEOf(e).SetMeasure(g.Measure)
	targets := g.Targets
	if targets == nil {
		targets = upTo(g.N)
	}
	me, a := e.ThisIndex(), e.ThisProxy()
	to := make([]chare.Proxy[erElem], len(targets))
	for k, j := range targets {
		if to[k] = a.At(j); g.Raw {
			to[k] = viaWire(to[k])
		}
	}
	var sec array.Section[erElem, int]
	if g.Section {
		var err error
		sec, err = a.Section(e, targets)
		inJob.NoError(err)
	}
	end := g.M
	if g.Chunk > 0 {
		end = min(g.M, g.From+g.Chunk)
	}
	for s := g.From; s < end; s++ {
		if g.MoveAt > 0 && s == g.MoveAt {
			mv := erMove{To: g.MoveTo}
			if g.Pause {
				// Go on from here once the element has arrived.
				g.From, g.MoveAt = s, 0
				mv.Notify, mv.Done = true, chare.EntryCallback(a.At(me), (*erElem).Resume)
				e.Paused = g
			}
			inJob.NoError(chare.Send(e, a.At(g.MoveWho), (*erElem).Move, mv))
			if g.Pause {
				return
			}
		}
		if g.Section {
			if s%7 == 3 {
				inJob.NoError(chare.Send(e, sec, (*erElem).Mark, erMark{me, s, fmt.Sprint("mark ", s)}))
			} else {
				inJob.NoError(chare.Send(e, sec, (*erElem).Recv, erSeq{me, s}))
			}
			continue
		}
		for _, to := range to {
			switch {
			case s%7 == 3:
				inJob.NoError(chare.Send(e, to, (*erElem).Mark, erMark{me, s, fmt.Sprint("mark ", s)}))
			case s%11 == 5:
				inJob.NoError(erBound.Send(e, to, erSeq{me, s}))
			default:
				inJob.NoError(chare.Send(e, to, (*erElem).Recv, erSeq{me, s}))
			}
		}
	}
	if end < g.M {
		g.From = end
		inJob.NoError(chare.Send(e, a.At(me), (*erElem).Go, g))
	}
}

// viaWire returns a proxy as a message from another process brings it:
// its index still in its wire bytes, decoded where it is used.
func viaWire(p chare.Proxy[erElem]) chare.Proxy[erElem] {
	b, err := msgpack.Marshal(p)
	inJob.NoError(err)
	var q chare.Proxy[erElem]
	inJob.NoError(msgpack.Unmarshal(b, &q))
	inJob.Equal("core.rawIndex", fmt.Sprintf("%T", q.Route().Index), "the index of a proxy from another process")
	return q
}

// Resume goes on with the rounds that Go paused, once the element it moved
// has arrived on PE pe.
func (e *erElem) Resume(pe int) {
	inJob.Equal(e.Paused.MoveTo, pe, "the moved element's PE")
	e.Go(e.Paused)
}

func (e *erElem) Move(m erMove) {
	e.Done, e.Notify = m.Done, m.Notify
	inJob.NoError(e.Migrate(m.To))
}

func (e *erElem) JustMigrated() {
	if e.Notify {
		e.Notify = false
		inJob.NoError(e.Done.Send(e, e.PE()))
	}
}

func (e *erElem) Report(cb chare.Callback) {
	inJob.NoError(e.Contribute(erReport{e.Got, e.Late, e.PE()}, gather[int, erReport]{}, cb))
}

// erCost is what a flood of sends cost its sender.
type erCost struct {
	Sends          int
	Bytes, Objects uint64
}

// Flood sends n messages round-robin to the targets, after a warm-up,
// and returns what the timed part allocated (in the whole process: the
// job has one PE, which is busy here).
func (e *erElem) Flood(targets []int) erCost { return e.flood(targets, false) }

// FloodRaw is Flood through proxies as another process gets them.
func (e *erElem) FloodRaw(targets []int) erCost { return e.flood(targets, true) }

// FloodSection is Flood through a section of the targets: a send per
// round, a message per target.
func (e *erElem) FloodSection(targets []int) erCost {
	a, me := e.ThisProxy(), e.ThisIndex()
	sec, err := a.Section(e, targets)
	inJob.NoError(err)
	send := func(from, end int) {
		for s := from; s < end; s++ {
			inJob.NoError(chare.Send(e, sec, (*erElem).Recv, erSeq{me, s}))
		}
	}
	return sendCost(send, len(targets))
}

// sendCost runs send over a warm-up and then a timed stretch of rounds
// (perRound messages each), and returns the timed messages and what they
// allocated.
func sendCost(send func(from, end int), perRound int) erCost {
	const warm, timed = 500, 10_000
	send(0, warm)
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	send(warm, warm+timed)
	runtime.ReadMemStats(&m1)
	return erCost{Sends: timed * perRound, Bytes: m1.TotalAlloc - m0.TotalAlloc, Objects: m1.Mallocs - m0.Mallocs}
}

func (e *erElem) flood(targets []int, raw bool) erCost {
	a, me := e.ThisProxy(), e.ThisIndex()
	to := make([]chare.Proxy[erElem], len(targets))
	for k, j := range targets {
		if to[k] = a.At(j); raw {
			to[k] = viaWire(to[k])
		}
	}
	send := func(from, end int) {
		for s := from; s < end; s++ {
			for _, p := range to {
				inJob.NoError(chare.Send(e, p, (*erElem).Recv, erSeq{me, s}))
			}
		}
	}
	return sendCost(send, len(targets))
}

// erStats reads the location manager's counts on its PE.
type erStats struct{ group.Branch[erStats] }

func (b *erStats) Read(a array.Proxy[erElem, int]) array.Stats {
	s, err := array.LocalStats(b, a)
	inJob.NoError(err)
	return s
}

func init() { chare.Register[erStats]() }

func erReports(m *tmain, a array.Proxy[erElem, int]) map[int]erReport {
	f := chare.NewFuture[map[int]erReport](m)
	inJob.NoError(chare.Send(m, a, (*erElem).Report, f.Callback()))
	return get(m, f)
}

func erStatsOf(m *tmain, g group.Proxy[erStats], a array.Proxy[erElem, int], pe int) array.Stats {
	f, err := chare.Call(m, g.At(pe), (*erStats).Read, a)
	inJob.NoError(err)
	return get(m, f)
}

// Every element sends to every element, interleaving entry methods: each
// receiver sees each sender's messages once, all of them, in order.
func TestDeliveryElementRuns(t *testing.T) {
	cases := []struct {
		pes, n, m int
		measure   bool
		rr        bool
		raw       bool
		section   bool
	}{
		{1, 5, 300, false, false, false, false},
		{2, 8, 400, false, false, false, false}, // several buffers' worth to each PE
		{3, 9, 200, false, true, false, false},  // round-robin: consecutive sends change PE
		{4, 12, 150, false, false, false, false},
		{3, 7, 200, true, false, false, false}, // runs unrolled into envelopes on arrival
		{3, 9, 200, false, true, true, false},  // through proxies from another process
		{3, 7, 200, true, false, true, false},
		{3, 9, 200, false, true, false, true}, // through a section of all elements
		{4, 12, 150, true, false, false, true},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%dPEs_%dx%d_measure=%v_rr=%v_raw=%v_section=%v", c.pes, c.n, c.m, c.measure, c.rr, c.raw, c.section), func(t *testing.T) {
			runMain(t, c.pes, func(m *tmain) {
				var opts []array.Option
				if c.rr {
					opts = append(opts, array.WithMap(array.RoundRobin))
				}
				a, err := array.New[erElem](m, array.Dims(c.n), opts...)
				inJob.NoError(err)
				inJob.NoError(chare.Send(m, a, (*erElem).Go, erGo{N: c.n, M: c.m, Measure: c.measure, Raw: c.raw, Section: c.section}))
				quiesce(m)
				got := erReports(m, a)
				inJob.Len(got, c.n)
				for j := range c.n {
					inJob.Equal(c.n*c.m, got[j].Got, "messages received by element %d", j)
					inJob.Zero(got[j].Late, "messages out of their sender's order at element %d", j)
				}
			})
		})
	}
}

// An element that moved before a run reached its old PE: the run's
// messages for it are forwarded there, each once and in order, while the
// run's messages for the element that stayed are delivered; once the
// sender's cache is corrected, its runs go straight to the new PE.
func TestElementRunForwarded(t *testing.T) {
	for _, raw := range []bool{false, true} {
		t.Run(fmt.Sprint("raw=", raw), func(t *testing.T) { testElementRunForwarded(t, raw) })
	}
}

// testElementRunForwarded sends through typed proxies, or (raw) through
// proxies as another process gets them.
func testElementRunForwarded(t *testing.T, raw bool) {
	const pes, n, rounds = 3, 6, 500
	runMain(t, pes, func(m *tmain) {
		a, err := array.New[erElem](m, array.Dims(n)) // block: 0,1 on PE 0; 2,3 on PE 1; 4,5 on PE 2
		inJob.NoError(err)
		g, err := group.New[erStats](m)
		inJob.NoError(err)
		arrived := chare.NewFuture[int](m)
		inJob.NoError(chare.Send(m, a.At(2), (*erElem).Move, erMove{To: 2, Done: arrived.Callback(), Notify: true}))
		inJob.Equal(2, get(m, arrived), "element 2 arrived on PE 2")

		// Element 0's PE has never heard of the move: it sends to PE 1.
		inJob.NoError(chare.Send(m, a.At(0), (*erElem).Go, erGo{N: n, M: rounds, Targets: []int{2, 3}, Raw: raw}))
		quiesce(m)
		got := erReports(m, a)
		// One loop of sends, all forwarded by one PE: still in order.
		inJob.Equal(erReport{Got: rounds, PE: 2}, got[2])
		inJob.Equal(erReport{Got: rounds, PE: 1}, got[3])
		on1, on2 := erStatsOf(m, g, a, 1), erStatsOf(m, g, a, 2)
		inJob.Equal(rounds, on1.Forwarded, "PE 1 forwards every message for element 2")
		inJob.Equal(int64(rounds), on2.Hops[1], "PE 2 gets them after one hop")
		inJob.Equal(rounds+1, on1.Delivered, "PE 1 delivers element 3's (and the move order)")

		// The forwards corrected PE 0's cache: the next runs go direct.
		inJob.NoError(chare.Send(m, a.At(0), (*erElem).Go, erGo{N: n, From: rounds, M: 3 * rounds, Targets: []int{2, 3}, Raw: raw}))
		quiesce(m)
		got = erReports(m, a)
		inJob.Equal(rounds+2*rounds, got[2].Got)
		inJob.Equal(rounds, erStatsOf(m, g, a, 1).Forwarded, "no forwards once the cache is corrected")
		inJob.Equal(int64(2*rounds), erStatsOf(m, g, a, 2).Hops[0]-on2.Hops[0], "delivered without a hop")
	})
}

// Elements leave while runs for them are on their way: the sender, an
// entry method per 20 rounds, tells one to move in the middle of its
// rounds (to a third PE, or to the sender's own), and either waits for it
// to arrive before it goes on (then the next rounds' messages for it are
// forwarded by its old PE until the sender's cache is corrected), or goes
// on at once, so that the move overtakes some runs and not others. Every
// message arrives exactly once wherever the element ends up (a forwarded
// one may be overtaken, as a single message may: see Order in docs/guide/arrays-migration-checkpoints.md).
func TestElementRunMigrateInFlight(t *testing.T) {
	const pes, n, rounds, at = 3, 6, 2000, 700
	cases := []struct {
		name     string
		who, to  int
		pause    bool
		forwards int  // at least
		raw      bool // through proxies from another process
		section  bool // through a section of the targets
	}{
		{"to a third PE, paused", 2, 2, true, 20, false, false}, // the first 20 rounds after it at least
		{"to the sender's PE, paused", 3, 0, true, 0, false, false},
		{"to a third PE, streaming", 2, 2, false, 0, false, false},
		{"to the sender's PE, streaming", 3, 0, false, 0, false, false},
		{"to a third PE, paused, raw proxies", 2, 2, true, 20, true, false},
		{"to the sender's PE, streaming, raw proxies", 3, 0, false, 0, true, false},
		{"to a third PE, paused, section", 2, 2, true, 20, false, true},
		{"to the sender's PE, streaming, section", 3, 0, false, 0, false, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			runMain(t, pes, func(m *tmain) {
				a, err := array.New[erElem](m, array.Dims(n)) // block: 2 and 3 on PE 1
				inJob.NoError(err)
				g, err := group.New[erStats](m)
				inJob.NoError(err)
				inJob.NoError(chare.Send(m, a.At(0), (*erElem).Go, erGo{N: n, M: rounds, Chunk: 20, Targets: []int{2, 3},
					MoveAt: at, MoveWho: c.who, MoveTo: c.to, Pause: c.pause, Raw: c.raw, Section: c.section}))
				quiesce(m)
				got := erReports(m, a)
				inJob.Equal(rounds, got[2].Got, "element 2")
				inJob.Equal(rounds, got[3].Got, "element 3")
				inJob.Equal(c.to, got[c.who].PE, "element %d moved", c.who)
				inJob.Zero(got[5-c.who].Late, "element %d, which stayed, received its messages in order", 5-c.who)
				var total array.Stats
				for pe := range pes {
					total = total.Add(erStatsOf(m, g, a, pe))
				}
				inJob.Zero(total.Held, "messages left held")
				inJob.GreaterOrEqual(total.Forwarded, c.forwards, "messages forwarded")
				t.Logf("%s: %d forwards, hops %v, %d late", c.name, total.Forwarded, total.Hops, got[c.who].Late)
			})
		})
	}
}

// The sender's memory: element runs take the message and its index and
// epoch per send (about 40 bytes here), where an envelope per message
// took about 130 with its share of the batches. Proxies that came from
// another process (their index still in its bytes) form runs too, and so
// do section sends in a job of one process (a message per member).
func TestElementRunSendAllocations(t *testing.T) {
	inProcessOnly(t, "it measures the sending process's allocations on one PE")
	if raceOn {
		t.Skip("allocation counts under -race are not the program's")
	}
	for _, c := range []struct {
		name  string
		flood func(*erElem, []int) erCost
	}{
		{"typed proxies", (*erElem).Flood},
		{"proxies from another process", (*erElem).FloodRaw}, // one envelope each before
		{"a section", (*erElem).FloodSection},                // a multicast per send before
	} {
		flood := c.flood
		t.Run(c.name, func(t *testing.T) {
			runMain(t, 1, func(m *tmain) {
				a, err := array.New[erElem](m, array.Dims(5))
				inJob.NoError(err)
				f, err := chare.Call(m, a.At(0), flood, []int{1, 2, 3, 4})
				inJob.NoError(err)
				c := get(m, f)
				perSend := float64(c.Bytes) / float64(c.Sends)
				objs := float64(c.Objects) / float64(c.Sends)
				t.Logf("%d sends: %.1f bytes and %.4f objects per send", c.Sends, perSend, objs)
				inJob.LessOrEqual(perSend, 64.0, "bytes allocated per element send")
				inJob.LessOrEqual(objs, 0.02, "objects allocated per element send")
			})
		})
	}
}

// Measured is the element's load so far.
func (e *erElem) Measured() chare.ObjLoad { return e.Load() }

// With load measurement on, an element run is not unrolled into an
// envelope per message: each element's message is timed in turn, and its
// time is charged to that element. The same rounds are sent without and
// with measurement: measuring may not add an allocation per message.
func TestElementRunMeasuredInPlace(t *testing.T) {
	inProcessOnly(t, "it counts the process's allocations")
	if raceOn {
		t.Skip("allocation counts under -race are not the program's")
	}
	const n, rounds = 5, 4000
	runMain(t, 1, func(m *tmain) {
		a, err := array.New[erElem](m, array.Dims(n))
		inJob.NoError(err)
		perMsg := func(measure bool, from int) float64 {
			var m0, m1 runtime.MemStats
			runtime.ReadMemStats(&m0)
			inJob.NoError(chare.Send(m, a.At(0), (*erElem).Go, erGo{N: n, From: from, M: from + rounds, Targets: []int{1, 2, 3, 4}, Measure: measure}))
			quiesce(m)
			runtime.ReadMemStats(&m1)
			objs := float64(m1.Mallocs-m0.Mallocs) / (4 * rounds)
			t.Logf("measure=%v: %.1f bytes and %.4f objects per message", measure, float64(m1.TotalAlloc-m0.TotalAlloc)/(4*rounds), objs)
			return objs
		}
		plain := perMsg(false, 0)
		measured := perMsg(true, rounds)
		inJob.LessOrEqual(measured-plain, 0.3, "objects that measurement adds per element message (an envelope each when unrolled)")
		got := erReports(m, a)
		for j := 1; j < n; j++ {
			inJob.Equal(2*rounds, got[j].Got, "messages received by element %d", j)
			inJob.Zero(got[j].Late, "element %d", j)
			f, err := chare.Call0(m, a.At(j), (*erElem).Measured)
			inJob.NoError(err)
			inJob.Positive(get(m, f).Wall, "element %d's measured wall time", j)
		}
	})
}
