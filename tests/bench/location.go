package main

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/charmgo/charm/array"
	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/chare/reducer"
	"github.com/charmgo/charm/group"
	"github.com/charmgo/charm/location"
)

// The location benchmarks measure element migration and the location
// manager's forwarding (package location, array/migrate.go):
//
//   - location/migrate/{1proc,2proc}: migrations per second. 256 small
//     elements each hop R times around the ring of PEs (PE p to (p+1)%P),
//     the next hop started in JustMigrated, on 4 PEs in one process or on
//     2 processes × 2 PEs. The baseline, in the same job, is the same
//     pattern without the location manager: 256 tokens, each an entry
//     method message to a group branch carrying the element's packed
//     state (the msgpack bytes of the same struct, so the same size); the
//     receiving branch unpacks it, counts the hop and packs it again for
//     the next PE, as a migration packs on one PE and unpacks on the next.
//     So the ratio is migrations/s ÷ equivalent messages/s: what moving an
//     element costs over sending its state (the move request, the epochs,
//     the new object, the news to the home).
//   - location/send-after-migrate: messages per second to elements that
//     have just moved to a random other PE (the senders' caches are
//     stale, so their first messages are forwarded), against the same
//     sends to an identical array whose elements never moved.
//   - location/hops/{mean,p99,max}: the forwarding hops of one message from
//     every PE to every element after each element migrated 10 times to
//     random PEs; the baseline is the bound MaxHops+2 (MaxHops forwards
//     along caches, one to the home, one from the home), so the ratio says
//     how close to the bound messages come.

func init() {
	chare.Register[migElem](chare.Fast((*migElem).Start))
	chare.Register[migRing](chare.Fast((*migRing).Pass), chare.Fast((*migRing).Begin), chare.Fast((*migRing).Finished))
	// got, want and done are set by Expect after the elements have moved.
	chare.Register[mvElem](chare.Fast((*mvElem).Hit), chare.Transient("got", "want", "done"))
	chare.Register[mvSender]()
	register("location/migrate/1proc", func(cfg config) ([]result, error) { return benchMigrate(cfg, 1, "location/migrate/1proc") })
	register("location/migrate/2proc", func(cfg config) ([]result, error) { return benchMigrate(cfg, 2, "location/migrate/2proc") })
	register("location/send-after-migrate", benchSendAfterMigrate)
	register("location/hops", benchHops)
}

const (
	locPEs       = 4 // of the 2proc job: 2 processes × 2 PEs
	migElems     = 256
	migRounds    = 200 // hops per element per measurement, at scale 1
	mvElems      = 1024
	mvSendRounds = 4  // messages from each PE to each element per phase
	mvIters      = 16 // migrate-then-send phases per measurement, at scale 1
	hopsScatters = 10 // migrations of each element before the hops are counted
)

// ---- location/migrate ----

// migState is a migrating element's state: a few ints, and where to report
// when it has made its hops.
type migState struct {
	Left, Moves int64 // hops to go; hops made
	A, B        int64 // payload, checked at the end
	Done        chare.Callback
}

func (s *migState) intact(index int) bool { return s.A == int64(index)+1 && s.B == ^s.A }

// migElem is the migrating element; its only exported field, hence its
// packed state, is S.
type migElem struct {
	array.Element[migElem, int]
	S migState
}

// migPacked packs as a migElem does: the baseline's messages carry it.
type migPacked struct{ S migState }

type migStart struct {
	Rounds int64
	Done   chare.Callback
}

// Start begins a measurement: R hops around the ring of PEs.
func (e *migElem) Start(m migStart) {
	e.S.Left, e.S.Moves, e.S.Done = m.Rounds, 0, m.Done
	if e.S.A == 0 {
		e.S.A = int64(e.ThisIndex()) + 1
		e.S.B = ^e.S.A
	}
	e.next()
}

// JustMigrated counts the hop and starts the next one.
func (e *migElem) JustMigrated() {
	e.S.Moves++
	e.next()
}

func (e *migElem) next() {
	if e.S.Left == 0 {
		moves := e.S.Moves
		if !e.S.intact(e.ThisIndex()) {
			moves = -1 << 40
		}
		if err := e.S.Done.Send(e, moves); err != nil {
			e.Abort(err)
		}
		return
	}
	e.S.Left--
	if err := e.Migrate((e.PE() + 1) % e.NumPEs()); err != nil {
		e.Abort(err)
	}
}

// migRing is the baseline's group; branch 0 also counts the elements (or
// tokens) that have finished, for both measurements.
type migRing struct {
	group.Branch[migRing]
	finished, want int
	moves          int64
	done           chare.Callback
}

type migExpect struct {
	N    int
	Done chare.Callback
}

// Expect (on branch 0) sets up the count of a measurement.
func (r *migRing) Expect(m migExpect) int {
	r.finished, r.want, r.moves, r.done = 0, m.N, 0, m.Done
	return 0
}

// Finished (on branch 0) counts an element or token that has made its
// hops; after the last it sends the total of the hops made.
func (r *migRing) Finished(moves int64) {
	r.finished++
	r.moves += moves
	if r.finished == r.want {
		if err := r.done.Send(r, r.moves); err != nil {
			r.Abort(err)
		}
	}
}

type migBegin struct {
	Index  int
	Rounds int64
	Done   chare.Callback
}

// Begin starts token Index on this PE, as Start starts an element.
func (r *migRing) Begin(m migBegin) {
	a := int64(m.Index) + 1
	r.forward(m.Index, migPacked{S: migState{Left: m.Rounds, A: a, B: ^a, Done: m.Done}})
}

type migToken struct {
	Index int
	Data  []byte
}

// Pass receives a token: unpack, count the hop, go on.
func (r *migRing) Pass(t migToken) {
	var p migPacked
	if err := msgpack.Unmarshal(t.Data, &p); err != nil {
		r.Abort(err)
		return
	}
	p.S.Moves++
	r.forward(t.Index, p)
}

func (r *migRing) forward(index int, p migPacked) {
	if p.S.Left == 0 {
		moves := p.S.Moves
		if !p.S.intact(index) {
			moves = -1 << 40
		}
		if err := p.S.Done.Send(r, moves); err != nil {
			r.Abort(err)
		}
		return
	}
	p.S.Left--
	b, err := msgpack.Marshal(&p)
	if err != nil {
		r.Abort(err)
		return
	}
	if err := chare.Send(r, r.ThisProxy().At((r.PE()+1)%r.NumPEs()), (*migRing).Pass, migToken{Index: index, Data: b}); err != nil {
		r.Abort(err)
	}
}

func benchMigrate(cfg config, nodes int, name string) ([]result, error) {
	pes := cfg.pes
	if nodes > 1 {
		pes = locPEs
	}
	if pes < 2 {
		return nil, fmt.Errorf("%s needs at least 2 PEs", name)
	}
	rounds := max(int64(migRounds*cfg.scale), 1)
	total := float64(migElems) * float64(rounds)
	var rate, base float64
	err := runNodes(pes, nodes, name, func(m *benchMain) error {
		a, err := array.New[migElem](m, array.Dims(migElems))
		if err != nil {
			return err
		}
		g, err := group.New[migRing](m)
		if err != nil {
			return err
		}
		// The packed sizes must agree for the baseline to be the same
		// messages (the array packs a *migElem with msgpack).
		pe, pb := packedSize(&migElem{S: migState{Left: rounds, A: 1, B: ^1}}), packedSize(&migPacked{S: migState{Left: rounds, A: 1, B: ^1}})
		if pe != pb {
			return fmt.Errorf("a migElem packs into %d bytes, the baseline's state into %d", pe, pb)
		}
		// expect readies branch 0 for a measurement and returns the future
		// of its total.
		expect := func() (chare.Future[int64], chare.Callback, error) {
			f := chare.NewFuture[int64](m)
			ack, err := chare.Call(m, g.At(0), (*migRing).Expect, migExpect{N: migElems, Done: f.Callback()})
			if err == nil {
				_, err = ack.Get(m)
			}
			return f, chare.EntryCallback(g.At(0), (*migRing).Finished), err
		}
		check := func(f chare.Future[int64], what string) error {
			got, err := f.Get(m)
			if err != nil {
				return err
			}
			if got != int64(total) {
				return fmt.Errorf("%s: %d hops made in all, want %d (a negative total means a state arrived damaged)", what, got, int64(total))
			}
			return nil
		}
		// Alternate the two measurements, rep by rep.
		for i := 0; i < cfg.reps; i++ {
			f, done, err := expect()
			if err != nil {
				return err
			}
			t0 := time.Now()
			for e := 0; e < migElems; e++ {
				if err := chare.Send(m, a.At(e), (*migElem).Start, migStart{Rounds: rounds, Done: done}); err != nil {
					return err
				}
			}
			if err := check(f, "migrations"); err != nil {
				return err
			}
			rate = max(rate, total/time.Since(t0).Seconds())

			if f, done, err = expect(); err != nil {
				return err
			}
			t0 = time.Now()
			for e := 0; e < migElems; e++ {
				// token e starts on the PE where element e started
				if err := chare.Send(m, g.At(e*pes/migElems), (*migRing).Begin, migBegin{Index: e, Rounds: rounds, Done: done}); err != nil {
					return err
				}
			}
			if err := check(f, "baseline"); err != nil {
				return err
			}
			base = max(base, total/time.Since(t0).Seconds())
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return []result{{name, rate, "migrations/s", base}}, nil
}

func packedSize(v any) int {
	b, err := msgpack.Marshal(v)
	if err != nil {
		return -1
	}
	return len(b)
}

// ---- location/send-after-migrate and location/hops ----

// mvElem is an element that migrates to random PEs and counts messages.
type mvElem struct {
	array.Element[mvElem, int]
	Moves     int64 // migrations made (the packed state)
	got, want int
	done      chare.Callback
}

// scatterTarget is the PE element i moves to in scatter round r from PE
// pe: a pseudo-random PE other than pe.
func scatterTarget(i, r, pe, npes int) int {
	h := uint64(i)*0x9e3779b97f4a7c15 ^ uint64(r)*0xbf58476d1ce4e5b9
	h ^= h >> 31
	h *= 0x94d049bb133111eb
	h ^= h >> 29
	return (pe + 1 + int(h%uint64(npes-1))) % npes
}

// Scatter migrates the element to a random other PE.
func (e *mvElem) Scatter(round int) {
	e.Moves++
	if err := e.Migrate(scatterTarget(e.ThisIndex(), round, e.PE(), e.NumPEs())); err != nil {
		e.Abort(err)
	}
}

type mvExpect struct {
	Want        int
	Ready, Done chare.Callback
}

// Expect sets up the count of a send phase and joins a barrier.
func (e *mvElem) Expect(m mvExpect) {
	e.got, e.want, e.done = 0, m.Want, m.Done
	if err := e.Contribute(nil, reducer.Nop, m.Ready); err != nil {
		e.Abort(err)
	}
}

// Hit counts a message; after the last of the phase the element joins a
// barrier.
func (e *mvElem) Hit(m m2mMsg) {
	e.got++
	if e.got == e.want {
		if err := e.Contribute(nil, reducer.Nop, e.done); err != nil {
			e.Abort(err)
		}
	}
}

// Count contributes the migrations made.
func (e *mvElem) Count(cb chare.Callback) {
	if err := e.Contribute(e.Moves, reducer.SumInt64, cb); err != nil {
		e.Abort(err)
	}
}

// mvSender is the group that sends to the elements, and reads the
// location manager's counts on its PE.
type mvSender struct {
	group.Branch[mvSender]
}

type mvRound struct {
	To   array.Proxy[mvElem, int]
	N    int // elements
	K, M int // this round, and the number of rounds
}

// Round sends one message to every element, then asks for the next round
// with a message to itself: the cache corrections that came meanwhile are
// taken first.
func (s *mvSender) Round(r mvRound) {
	for i := 0; i < r.N; i++ {
		if err := chare.Send(s, r.To.At(i), (*mvElem).Hit, m2mMsg{From: int64(s.PE()), Seq: int64(r.K)}); err != nil {
			s.Abort(err)
			return
		}
	}
	if r.K+1 < r.M {
		r.K++
		if err := chare.Send(s, s.ThisProxy().At(s.PE()), (*mvSender).Round, r); err != nil {
			s.Abort(err)
		}
	}
}

// Stats returns the location manager's counts for an array on this PE.
func (s *mvSender) Stats(a array.Proxy[mvElem, int]) array.Stats {
	st, err := array.LocalStats(s, a)
	if err != nil {
		s.Abort(err)
	}
	return st
}

// mvJob is the main function's side of the two benchmarks.
type mvJob struct {
	m     *benchMain
	g     group.Proxy[mvSender]
	pes   int
	round int // scatter rounds so far (a different random PE each)
}

// quiesce waits until nothing runs and nothing is in flight.
func (j *mvJob) quiesce() error {
	f := chare.NewFuture[any](j.m)
	j.m.DetectQuiescence(f.Callback())
	_, err := f.Get(j.m)
	return err
}

// scatter migrates every element of a to a random other PE and waits for
// quiescence.
func (j *mvJob) scatter(a array.Proxy[mvElem, int]) error {
	j.round++
	if err := chare.Send(j.m, a, (*mvElem).Scatter, j.round); err != nil {
		return err
	}
	return j.quiesce()
}

// send runs a send phase: m rounds, each a message from every PE to every
// element of a. It returns the time from the first send to the last
// delivery.
func (j *mvJob) send(a array.Proxy[mvElem, int], n, m int) (time.Duration, error) {
	ready, done := chare.NewFuture[any](j.m), chare.NewFuture[any](j.m)
	if err := chare.Send(j.m, a, (*mvElem).Expect, mvExpect{Want: m * j.pes, Ready: ready.Callback(), Done: done.Callback()}); err != nil {
		return 0, err
	}
	if _, err := ready.Get(j.m); err != nil {
		return 0, err
	}
	t0 := time.Now()
	if err := chare.Send(j.m, j.g, (*mvSender).Round, mvRound{To: a, N: n, M: m}); err != nil {
		return 0, err
	}
	if _, err := done.Get(j.m); err != nil {
		return 0, err
	}
	return time.Since(t0), nil
}

// stats adds up the location manager's counts for a over the PEs.
func (j *mvJob) stats(a array.Proxy[mvElem, int]) (array.Stats, error) {
	var sum array.Stats
	for pe := 0; pe < j.pes; pe++ {
		f, err := chare.Call(j.m, j.g.At(pe), (*mvSender).Stats, a)
		if err != nil {
			return sum, err
		}
		s, err := f.Get(j.m)
		if err != nil {
			return sum, err
		}
		sum = sum.Add(s)
	}
	return sum, nil
}

// checkMoves verifies that a's elements made want migrations in all and
// that every one is in place.
func (j *mvJob) checkMoves(a array.Proxy[mvElem, int], n int, want int64) error {
	f := chare.NewFuture[int64](j.m)
	if err := chare.Send(j.m, a, (*mvElem).Count, f.Callback()); err != nil {
		return err
	}
	got, err := f.Get(j.m)
	if err != nil {
		return err
	}
	if got != want {
		return fmt.Errorf("the elements count %d migrations, want %d", got, want)
	}
	st, err := j.stats(a)
	if err != nil {
		return err
	}
	if st.Local != n || st.Held != 0 || int64(st.MigratedIn) != want || int64(st.MigratedOut) != want {
		return fmt.Errorf("after %d migrations of %d elements the PEs count %d elements, %d held messages, %d in, %d out", want, n, st.Local, st.Held, st.MigratedIn, st.MigratedOut)
	}
	return nil
}

func diffHops(after, before array.Stats) (d [8]int64) {
	for h := range d {
		d[h] = after.Hops[h] - before.Hops[h]
	}
	return d
}

func benchSendAfterMigrate(cfg config) ([]result, error) {
	iters := max(int(mvIters*cfg.scale), 1)
	pes := cfg.pes
	if pes < 2 {
		return nil, errors.New("location/send-after-migrate needs at least 2 PEs")
	}
	msgs := float64(iters * mvSendRounds * pes * mvElems)
	var rate, base float64
	var fwd, delivered int
	var hist [8]int64
	err := runJob(pes, func(m *benchMain) error {
		moved, err := array.New[mvElem](m, array.Dims(mvElems))
		if err != nil {
			return err
		}
		still, err := array.New[mvElem](m, array.Dims(mvElems))
		if err != nil {
			return err
		}
		j := &mvJob{m: m, pes: pes}
		if j.g, err = group.New[mvSender](m); err != nil {
			return err
		}
		for r := 0; r < cfg.reps; r++ {
			before, err := j.stats(moved)
			if err != nil {
				return err
			}
			var tMoved, tStill time.Duration
			for i := 0; i < iters; i++ {
				if err := j.scatter(moved); err != nil {
					return err
				}
				t, err := j.send(moved, mvElems, mvSendRounds)
				if err != nil {
					return err
				}
				tMoved += t
				if t, err = j.send(still, mvElems, mvSendRounds); err != nil {
					return err
				}
				tStill += t
			}
			rate = max(rate, msgs/tMoved.Seconds())
			base = max(base, msgs/tStill.Seconds())
			after, err := j.stats(moved)
			if err != nil {
				return err
			}
			fwd, delivered, hist = after.Forwarded-before.Forwarded, after.Delivered-before.Delivered, diffHops(after, before)
		}
		if err := j.checkMoves(moved, mvElems, int64(cfg.reps*iters*mvElems)); err != nil {
			return err
		}
		st, err := j.stats(still)
		if err != nil {
			return err
		}
		if st.Forwarded != 0 || st.Hops[0] != int64(st.Delivered) {
			return fmt.Errorf("the stationary array forwarded %d messages", st.Forwarded)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	fmt.Printf("# location/send-after-migrate: per rep %d phases of %d rounds (PEs × elements each); to the moved elements %d of %d messages were forwarded %d times in all; hops %s\n",
		iters, mvSendRounds, delivered-int(hist[0]), delivered, fwd, fmtHist(hist))
	return []result{{"location/send-after-migrate", rate, "msgs/s", base}}, nil
}

func fmtHist(h [8]int64) string {
	var b strings.Builder
	for i, n := range h {
		if i > 0 {
			b.WriteByte(' ')
		}
		if i == len(h)-1 {
			fmt.Fprintf(&b, "%d+:%d", i, n)
		} else {
			fmt.Fprintf(&b, "%d:%d", i, n)
		}
	}
	return b.String()
}

// benchHops: each rep makes a fresh array, migrates every element
// hopsScatters times to random PEs with quiescence between the rounds (so
// that the caches are the same from run to run, bar the corrections made
// during the send), then sends one message from every PE to every element
// and reads the hops they took from every PE's counts. The histograms of
// the reps are pooled.
func benchHops(cfg config) ([]result, error) {
	pes := cfg.pes
	if pes < 2 {
		return nil, errors.New("location/hops needs at least 2 PEs")
	}
	var hist [8]int64
	err := runJob(pes, func(m *benchMain) error {
		j := &mvJob{m: m, pes: pes}
		var err error
		if j.g, err = group.New[mvSender](m); err != nil {
			return err
		}
		for r := 0; r < cfg.reps; r++ {
			a, err := array.New[mvElem](m, array.Dims(mvElems))
			if err != nil {
				return err
			}
			j.round = 0 // the same migrations in every rep
			for s := 0; s < hopsScatters; s++ {
				if err := j.scatter(a); err != nil {
					return err
				}
			}
			before, err := j.stats(a)
			if err != nil {
				return err
			}
			if _, err := j.send(a, mvElems, 1); err != nil {
				return err
			}
			after, err := j.stats(a)
			if err != nil {
				return err
			}
			d := diffHops(after, before)
			var n int64
			for h := range d {
				hist[h] += d[h]
				n += d[h]
			}
			if n != int64(pes*mvElems) {
				return fmt.Errorf("%d messages delivered, want %d", n, pes*mvElems)
			}
			if err := j.checkMoves(a, mvElems, hopsScatters*mvElems); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	var n, sum int64
	maxH := 0
	for h, c := range hist {
		n += c
		sum += int64(h) * c
		if c > 0 {
			maxH = h
		}
	}
	if n == 0 {
		return nil, errors.New("no messages counted")
	}
	p99, seen := 0, int64(0)
	for h, c := range hist {
		seen += c
		if float64(seen) >= 0.99*float64(n) {
			p99 = h
			break
		}
	}
	bound := float64(location.DefaultMaxHops + 2)
	fmt.Printf("# location/hops: %d messages (%d reps × %d PEs × %d elements, after %d random migrations each), by hops (7+ = 7 or more): %s\n",
		n, cfg.reps, pes, mvElems, hopsScatters, fmtHist(hist))
	if maxH == len(hist)-1 {
		fmt.Printf("# location/hops: some messages took 7 or more hops, beyond the bound of %d; max is reported as 7\n", int(bound))
	}
	mean := float64(sum) / float64(n)
	return []result{
		{"location/hops/mean", mean, "hops", bound},
		{"location/hops/p99", float64(p99), "hops", bound},
		{"location/hops/max", float64(maxH), "hops", bound},
	}, nil
}
