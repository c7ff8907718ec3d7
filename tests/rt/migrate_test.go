package rt_test

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/array"
	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/group"
	"github.com/charmgo/charm/location"
)

// Migration of array elements: state, hooks, messages that chase moving
// elements, broadcasts and reductions that count every element once.

// mover is an element whose exported fields migrate and whose unexported
// one does not.
type mover struct {
	array.Element[mover, int]
	Count   int
	Left    int // AboutToMigrate calls
	Arrived int // JustMigrated calls
	Got     int // Note messages received
	scratch int
}

type whereMsg struct{ PE, Count, Left, Arrived, Got, Scratch int }

func (e *mover) Move(to int) {
	e.Count++
	e.scratch = 7
	inJob.NoError(e.Migrate(to))
}

func (e *mover) AboutToMigrate() { e.Left++ }
func (e *mover) JustMigrated()   { e.Arrived++ }
func (e *mover) Note(int)        { e.Got++ }
func (e *mover) Where(int) whereMsg {
	return whereMsg{e.PE(), e.Count, e.Left, e.Arrived, e.Got, e.scratch}
}

// BadMove asks for a PE that does not exist and returns the error's text.
func (e *mover) BadMove(to int) string {
	err := e.Migrate(to)
	if err == nil {
		return ""
	}
	return err.Error()
}

// scratch is left behind on purpose: the test checks that it arrives zero.
func init() { chare.Register[mover](chare.Transient("scratch")) }

func where(m *tmain, a array.Proxy[mover, int], i int) whereMsg {
	f, err := chare.Call(m, a.At(i), (*mover).Where, 0)
	inJob.NoError(err)
	return get(m, f)
}

func TestMigrateMovesStateAndRunsHooks(t *testing.T) {
	const n, pes = 8, 4
	runMain(t, pes, func(m *tmain) {
		a, err := array.New[mover](m, array.Dims(n))
		inJob.NoError(err)
		home := func(i int) int { return i * pes / n }
		for i := range n {
			inJob.NoError(chare.Send(m, a.At(i), (*mover).Move, (home(i)+1)%pes))
			// Sent right behind the move: it reaches the element
			// wherever it is by then.
			inJob.NoError(chare.Send(m, a.At(i), (*mover).Note, 1))
		}
		quiesce(m)
		for i := range n {
			w := where(m, a, i)
			inJob.Equal(whereMsg{PE: (home(i) + 1) % pes, Count: 1, Left: 1, Arrived: 1, Got: 1}, w, "element %d", i)
		}
		// Back home, twice over: the caches of PE 0 are stale now.
		for i := range n {
			inJob.NoError(chare.Send(m, a.At(i), (*mover).Move, home(i)))
		}
		quiesce(m)
		for i := range n {
			w := where(m, a, i)
			inJob.Equal(home(i), w.PE, "element %d", i)
			inJob.Equal(2, w.Count)
			inJob.Equal(2, w.Arrived)
		}
		inJob.Nil(chare.Local(m, a.At(n-1)), "element %d is not on PE 0", n-1)
		inJob.NotNil(chare.Local(m, a.At(0)), "element 0 is back on PE 0")
	})
}

func TestMigrateToMissingPE(t *testing.T) {
	runMain(t, 2, func(m *tmain) {
		a, err := array.New[mover](m, array.Dims(2))
		inJob.NoError(err)
		for _, bad := range []int{2, -1} {
			f, err := chare.Call(m, a.At(1), (*mover).BadMove, bad)
			inJob.NoError(err)
			msg := get(m, f)
			inJob.Contains(msg, "cannot migrate element 1")
			inJob.Contains(msg, "PEs 0..1")
		}
		inJob.Equal(1, where(m, a, 1).PE, "a refused migration leaves the element where it was")
	})
}

// ---- the storm ----

// stormElem sends pings to random elements and migrates at random while
// broadcasts and reductions go on.
type stormElem struct {
	array.Element[stormElem, int]
	Seen     map[int64]bool
	Sent     int
	Recv     int
	Dups     int
	SentSum  int64
	RecvSum  int64
	Ticks    int
	BadTicks int
	Moves    int
	Rng      uint64
	P        stormParams
}

type stormParams struct {
	N, PEs int
	Move   uint64 // migrate with probability Move/1000 after each message
}

type stormStart struct {
	Params     stormParams
	Msgs, TTL  int
	Seed       uint64
	TickTarget chare.Callback
}

// ping carries the storm's parameters: it may reach an element before the
// broadcast that starts the storm does.
type ping struct {
	ID  int64
	TTL int
	Val int64
	P   stormParams
}

type tick struct {
	K  int
	CB chare.Callback
}

type stormReport struct {
	Sent, Recv, Dups, Ticks, BadTicks, Moves int
	SentSum, RecvSum                         int64
}

func (e *stormElem) rand() uint64 {
	e.Rng += 0x9e3779b97f4a7c15
	z := e.Rng
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

func (e *stormElem) Start(s stormStart) {
	e.setup(s.Params, s.Seed)
	for range s.Msgs {
		e.send(s.TTL)
	}
	e.maybeMove()
}

func (e *stormElem) send(ttl int) {
	e.Sent++
	p := ping{ID: int64(e.ThisIndex())<<32 | int64(e.Sent), TTL: ttl, Val: int64(e.rand() % 1000003), P: e.P}
	e.SentSum += p.Val
	inJob.NoError(chare.Send(e, e.ThisProxy().At(int(e.rand()%uint64(e.P.N))), (*stormElem).Ping, p))
}

func (e *stormElem) setup(p stormParams, seed uint64) {
	if e.P.N == 0 {
		e.P = p
		e.Rng = seed*1000003 + uint64(e.ThisIndex())
	}
}

func (e *stormElem) Ping(p ping) {
	e.setup(p.P, 1)
	if e.Seen == nil {
		e.Seen = map[int64]bool{}
	}
	if e.Seen[p.ID] {
		e.Dups++
	}
	e.Seen[p.ID] = true
	e.Recv++
	e.RecvSum += p.Val
	if p.TTL > 0 {
		e.send(p.TTL - 1)
	}
	e.maybeMove()
}

func (e *stormElem) maybeMove() {
	if e.P.PEs > 1 && e.rand()%1000 < e.P.Move {
		to := int(e.rand() % uint64(e.P.PEs))
		if to != e.PE() {
			inJob.NoError(e.Migrate(to))
		}
	}
}

func (e *stormElem) AboutToMigrate() { e.Moves++ }

// Tick is a broadcast: each element must see tick k as its k-th, once.
func (e *stormElem) Tick(t tick) {
	if t.K != e.Ticks {
		e.BadTicks++
	}
	e.Ticks++
	inJob.NoError(e.Contribute(e.ThisIndex(), sumInt{}, t.CB))
	e.maybeMove()
}

func (e *stormElem) Report(int) stormReport {
	return stormReport{e.Sent, e.Recv, e.Dups, e.Ticks, e.BadTicks, e.Moves, e.SentSum, e.RecvSum}
}

// statBranch reads the location manager's counts on its PE and pokes
// every element from there.
type statBranch struct{ group.Branch[statBranch] }

func (b *statBranch) Read(a array.Proxy[stormElem, int]) array.Stats {
	s, err := array.LocalStats(b, a)
	inJob.NoError(err)
	return s
}

type pokeMsg struct {
	A array.Proxy[stormElem, int]
	N int
	P stormParams
}

func (b *statBranch) Poke(p pokeMsg) {
	for i := range p.N {
		inJob.NoError(chare.Send(b, p.A.At(i), (*stormElem).Ping, ping{ID: -int64(b.PE()<<32 | i), Val: 1, P: p.P}))
	}
}

func init() {
	chare.Register[stormElem]()
	chare.Register[statBranch]()
}

// readStats sums the location manager's counts over all PEs.
func readStats(m *tmain, g group.Proxy[statBranch], a array.Proxy[stormElem, int], pes int) array.Stats {
	var total array.Stats
	for pe := range pes {
		f, err := chare.Call(m, g.At(pe), (*statBranch).Read, a)
		inJob.NoError(err)
		total = total.Add(get(m, f))
	}
	return total
}

// TestMigrationStorm: elements send to random elements while migrating at
// random, and broadcasts with reductions run meanwhile. Every message is
// delivered exactly once (counts, sums and IDs), every element sees every
// broadcast once and in order, every reduction counts every element once,
// nothing is held at the end, and once the storm is over, messages from
// stale caches take at most MaxHops+2 hops.
func TestMigrationStorm(t *testing.T) {
	const n, pes, ticks = 48, 4, 6
	runMain(t, pes, func(m *tmain) {
		a, err := array.New[stormElem](m, array.Dims(n), array.WithMap(array.RoundRobin))
		inJob.NoError(err)
		g, err := group.New[statBranch](m)
		inJob.NoError(err)
		params := stormParams{N: n, PEs: pes, Move: 150}
		inJob.NoError(chare.Send(m, a, (*stormElem).Start, stormStart{Params: params, Msgs: 3, TTL: 25, Seed: 7}))
		var sums []chare.Future[int]
		for k := range ticks {
			f := chare.NewFuture[int](m)
			sums = append(sums, f)
			inJob.NoError(chare.Send(m, a, (*stormElem).Tick, tick{K: k, CB: f.Callback()}))
			chare.Yield(m) // let the storm run between broadcasts
		}
		for k, f := range sums {
			inJob.Equal(n*(n-1)/2, get(m, f), "reduction %d counts every element once", k)
		}
		quiesce(m)

		var tot stormReport
		for i := range n {
			f, err := chare.Call(m, a.At(i), (*stormElem).Report, 0)
			inJob.NoError(err)
			r := get(m, f)
			inJob.Equal(ticks, r.Ticks, "element %d saw every broadcast once", i)
			tot.Sent += r.Sent
			tot.Recv += r.Recv
			tot.Dups += r.Dups
			tot.BadTicks += r.BadTicks
			tot.Moves += r.Moves
			tot.SentSum += r.SentSum
			tot.RecvSum += r.RecvSum
		}
		inJob.Equal(n*3*26, tot.Sent)
		inJob.Equal(tot.Sent, tot.Recv, "received = sent")
		inJob.Zero(tot.Dups, "duplicates")
		inJob.Equal(tot.SentSum, tot.RecvSum, "checksums")
		inJob.Zero(tot.BadTicks, "broadcasts out of order")
		inJob.Greater(tot.Moves, n, "the elements migrated")

		before := readStats(m, g, a, pes)
		inJob.Equal(n, before.Local)
		inJob.Zero(before.Held, "messages left held")
		inJob.Equal(tot.Moves, before.MigratedOut)
		inJob.Equal(tot.Moves, before.MigratedIn)

		// Quiet now: every PE sends to every element from its stale cache.
		inJob.NoError(chare.Send(m, g, (*statBranch).Poke, pokeMsg{A: a, N: n, P: stormParams{N: n, PEs: pes}}))
		quiesce(m)
		after := readStats(m, g, a, pes)
		inJob.Equal(pes*n, after.Delivered-before.Delivered)
		bound := location.DefaultMaxHops + 2
		for h := bound + 1; h < len(after.Hops); h++ {
			inJob.Equal(before.Hops[h], after.Hops[h], "a message took %d hops after the storm (bound %d)", h, bound)
		}
		t.Logf("storm: %d messages, %d migrations, %d forwards; hops %v", tot.Sent, tot.Moves, before.Forwarded, before.Hops)
	})
}

// ---- insertion and deletion ----

type ins struct {
	array.Element[ins, int]
	Hellos int
	Init   string
}

func (e *ins) Hello(int) { e.Hellos++ }
func (e *ins) Setup(s string) {
	if e.Hellos != 0 {
		panic("the constructor ran after a message")
	}
	e.Init = s
}
func (e *ins) Sum(cb chare.Callback) {
	inJob.NoError(e.Contribute(e.ThisIndex(), sumInt{}, cb))
}
func (e *ins) Where(int) whereMsg { return whereMsg{PE: e.PE(), Got: e.Hellos} }
func (e *ins) InitOf(int) string  { return e.Init }
func (e *ins) Die()               { e.Destroy() }

func init() { chare.Register[ins]() }

func sumOf(m *tmain, a array.Proxy[ins, int]) int {
	f := chare.NewFuture[int](m)
	inJob.NoError(chare.Send(m, a, (*ins).Sum, f.Callback()))
	return get(m, f)
}

func insWhere(m *tmain, a array.Proxy[ins, int], i int) whereMsg {
	f, err := chare.Call(m, a.At(i), (*ins).Where, 0)
	inJob.NoError(err)
	return get(m, f)
}

func TestInsertDeleteAndReductions(t *testing.T) {
	const pes = 4
	runMain(t, pes, func(m *tmain) {
		a, err := array.New[ins](m, array.Sparse[int]())
		inJob.NoError(err)
		// A message before the element exists waits on its home.
		inJob.NoError(chare.Send(m, a.At(20), (*ins).Hello, 1))
		inJob.NoError(a.Insert(m, 20, 3))
		for i := range 10 {
			inJob.NoError(a.Insert(m, i, array.AtHome))
		}
		inJob.NoError(array.InsertWith(m, a, 30, 1, (*ins).Setup, "made"))
		inJob.NoError(chare.Send(m, a.At(30), (*ins).Hello, 1))
		inJob.NoError(a.DoneInserting(m))

		inJob.Equal(whereMsg{PE: 3, Got: 1}, insWhere(m, a, 20), "the early message was held, then delivered")
		inJob.Equal(whereMsg{PE: 1, Got: 1}, insWhere(m, a, 30))
		f, err := chare.Call(m, a.At(30), (*ins).InitOf, 0)
		inJob.NoError(err)
		inJob.Equal("made", get(m, f), "the constructor ran first")
		want := 45 + 20 + 30
		inJob.Equal(want, sumOf(m, a), "the reduction counts the inserted elements")

		// Deletion: reductions stop counting the element, messages to it
		// wait for its next insertion.
		inJob.NoError(chare.Send0(m, a.At(20), (*ins).Die))
		quiesce(m)
		inJob.Equal(want-20, sumOf(m, a))
		inJob.NoError(chare.Send(m, a.At(20), (*ins).Hello, 1))
		quiesce(m)
		inJob.NoError(a.Insert(m, 20, 2))
		inJob.Equal(whereMsg{PE: 2, Got: 1}, insWhere(m, a, 20), "the new element got the message sent while it did not exist")
		inJob.Equal(want, sumOf(m, a))
	})
}

var allOnPE1 = array.NamedMap("rt-all-on-pe-1", array.MapFunc(func(int, int) int { return 1 }))

func TestInsertTwiceElsewhereAborts(t *testing.T) {
	_, err := runJob(t, 2, func(m *tmain, _ []string) {
		a, err := array.New[ins](m, array.Sparse[int](), array.WithMap(allOnPE1))
		inJob.NoError(err)
		inJob.NoError(a.Insert(m, 5, 0))
		inJob.NoError(a.Insert(m, 5, 0)) // the home (PE 1) finds out
		quiesce(m)
		m.Exit(0)
	})
	require.Error(t, err)
	require.Contains(t, err.Error(), "element 5 of rt_test.ins")
	require.Contains(t, err.Error(), "inserted twice")
}

func TestInsertBadInput(t *testing.T) {
	runMain(t, 2, func(m *tmain) {
		a, err := array.New[ins](m, array.Dims(4))
		inJob.NoError(err)
		err = a.Insert(m, 9, 0)
		inJob.ErrorContains(err, "index 9 is out of range")
		err = a.Insert(m, 1, 5)
		inJob.ErrorContains(err, "on PE 5")
		err = a.Insert(m, 0, 1)
		inJob.ErrorContains(err, "inserted twice", "element 0 exists from the start, and PE 0 is its home")
		_, err = array.New[ins](m, array.Sparse[int](), array.WithMap(array.Block))
		inJob.ErrorContains(err, "needs a shape")
	})
}

func TestDemandCreation(t *testing.T) {
	const pes = 3
	runMain(t, pes, func(m *tmain) {
		a, err := array.New[ins](m, array.Sparse[int](), array.WithDemandCreation())
		inJob.NoError(err)
		for i := range 6 {
			inJob.NoError(chare.Send(m, a.At(i*7), (*ins).Hello, 1))
			inJob.NoError(chare.Send(m, a.At(i*7), (*ins).Hello, 1))
		}
		quiesce(m)
		sum := 0
		for i := range 6 {
			w := insWhere(m, a, i*7)
			inJob.Equal(2, w.Got, "element %d created once, on its first message", i*7)
			sum += i * 7
		}
		inJob.Equal(sum, sumOf(m, a), "demand-created elements take part in reductions")
	})
}

// ---- AtSync ----

type syncer struct {
	array.Element[syncer, int]
	Start   int
	Resumed int
	cb      chare.Callback
	CB      chare.Callback
}

func (e *syncer) Go(cb chare.Callback) {
	e.Start, e.CB = e.PE(), cb
	e.AtSync()
}

func (e *syncer) ResumeFromSync() {
	e.Resumed++
	// Where it resumed, against where it started, and how often.
	inJob.NoError(e.Contribute(syncOut{Idx: e.ThisIndex(), From: e.Start, To: e.PE(), N: e.Resumed}, gather[int, syncOut]{}, e.CB))
}

type syncOut struct{ Idx, From, To, N int }

func init() {
	chare.Register[syncer](chare.Transient("cb")) // left behind on purpose
	registerReducers(gather[int, syncOut]{})
}

// testSyncHook, if set, replaces lb's AtSync hook on every PE of the jobs
// started meanwhile (array.SetSyncHook is per PE).
var testSyncHook array.SyncHook

func init() {
	chare.OnPEStart(func(pe *chare.PE) {
		if testSyncHook != nil {
			array.SetSyncHook(pe, testSyncHook)
		}
	})
}

func TestAtSyncHookMigrates(t *testing.T) {
	const n, pes = 12, 3
	testSyncHook = func(s *array.Sync) {
		for _, i := range s.Indices() {
			if err := s.Migrate(i, (s.PE.ID()+1)%pes); err != nil {
				panic(err)
			}
		}
		s.Resume()
	}
	defer func() { testSyncHook = nil }()
	runMain(t, pes, func(m *tmain) {
		a, err := array.New[syncer](m, array.Dims(n))
		inJob.NoError(err)
		f := chare.NewFuture[map[int]syncOut](m)
		inJob.NoError(chare.Send(m, a, (*syncer).Go, f.Callback()))
		out := get(m, f)
		inJob.Len(out, n)
		for i, o := range out {
			inJob.Equal((o.From+1)%pes, o.To, "element %d resumed on the next PE", i)
			inJob.Equal(1, o.N, "element %d resumed once", i)
		}
	})
}

// ---- sections whose members move ----

type secMover struct {
	array.Element[secMover, int]
	Got int
}

func (e *secMover) Go(to int)          { inJob.NoError(e.Migrate(to)) }
func (e *secMover) Hit(int)            { e.Got++ }
func (e *secMover) Count(int) whereMsg { return whereMsg{PE: e.PE(), Got: e.Got} }

type secSum struct {
	S  *chare.Section
	CB chare.Callback
}

func (e *secMover) Sum(m secSum) { inJob.NoError(e.ContributeTo(m.S, e.ThisIndex(), sumInt{}, m.CB)) }

func init() { chare.Register[secMover]() }

// TestSectionMembersMigrate: a multicast reaches members that moved after
// the section was made, once each, and a section reduction counts them
// once wherever they contribute.
func TestSectionMembersMigrate(t *testing.T) {
	const n, pes = 16, 4
	runMain(t, pes, func(m *tmain) {
		a, err := array.New[secMover](m, array.Dims(n))
		inJob.NoError(err)
		members := []int{1, 4, 6, 9, 13, 15}
		s, err := a.Section(m, members)
		inJob.NoError(err)
		for _, i := range members {
			inJob.NoError(chare.Send(m, a.At(i), (*secMover).Go, (i+2)%pes))
		}
		inJob.NoError(chare.Send(m, s, (*secMover).Hit, 1)) // races the moves
		quiesce(m)
		inJob.NoError(chare.Send(m, s, (*secMover).Hit, 1)) // from stale caches
		quiesce(m)
		for i := range n {
			f, err := chare.Call(m, a.At(i), (*secMover).Count, 0)
			inJob.NoError(err)
			w := get(m, f)
			want := 0
			if slices.Contains(members, i) {
				want = 2
				inJob.Equal((i+2)%pes, w.PE, "member %d moved", i)
			}
			inJob.Equal(want, w.Got, "element %d", i)
		}
		// Move them again, and reduce over the section while they move.
		for _, i := range members {
			inJob.NoError(chare.Send(m, a.At(i), (*secMover).Go, (i+3)%pes))
		}
		for range 3 {
			f := chare.NewFuture[int](m)
			inJob.NoError(chare.Send(m, s, (*secMover).Sum, secSum{S: s.Info(), CB: f.Callback()}))
			inJob.Equal(1+4+6+9+13+15, get(m, f))
		}
	})
}

// TestBroadcastRightAfterInsert: a broadcast sent right after insertions
// (no wait in between) reaches the new elements, and a reduction over it
// counts them: both are numbered after the insertions at the root.
func TestBroadcastRightAfterInsert(t *testing.T) {
	const pes = 4
	runMain(t, pes, func(m *tmain) {
		a, err := array.New[ins](m, array.Sparse[int]())
		inJob.NoError(err)
		want := 0
		for i := range 12 {
			pe := array.AtHome
			if i%3 == 0 {
				pe = i % pes
			}
			inJob.NoError(a.Insert(m, i, pe))
			want += i
		}
		inJob.Equal(want, sumOf(m, a))
		inJob.NoError(chare.Send(m, a, (*ins).Hello, 1))
		inJob.NoError(a.Insert(m, 40, 2))
		inJob.NoError(chare.Send(m, a, (*ins).Hello, 1))
		inJob.Equal(want+40, sumOf(m, a))
		for i := range 12 {
			inJob.Equal(2, insWhere(m, a, i).Got, "element %d got both broadcasts, once each", i)
		}
		inJob.Equal(1, insWhere(m, a, 40).Got, "element 40 got the broadcast sent after its insertion only")
	})
}
