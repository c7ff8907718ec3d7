package lb

import (
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/charmgo/charm/actor"
	"github.com/charmgo/charm/array"
	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/internal/core"
	"github.com/charmgo/charm/internal/wirekind"
)

// The load-balancing manager: one per PE, set up when the PE starts.
//
// A step gathers, on PE 0, every PE's objects (array elements) with their
// loads since the last step and the PE's background load and idle time;
// runs the strategy of that step on the snapshot; checks the placement
// (an invalid one is reported and ignored: nothing moves); sends every PE
// the moves of its objects; and resets the measurements. Steps start in
// three ways:
//
//   - AtSync: once every element of an array (whose type has a
//     ResumeFromSync method) has called AtSync, wherever it is, the step
//     runs over that array; its elements resume where they end up. A PE
//     without elements does not hold it up: PE 0 counts the elements that
//     wait, against the number the array has.
//   - periodic (-lbperiod D): PE 0 starts a step over every array each D;
//     elements move whenever the step reaches them (anytime migration),
//     except those waiting in AtSync, which their AtSync step moves.
//   - manual: StartStep, from code.
//
// -balancer A[,B...] names the strategies: the first runs at the first
// step, the last at every later one. Without it, AtSync elements resume at
// once and no step runs.

// Flags this package adds to the runtime's command line.
const (
	FlagBalancer = "balancer" // -balancer greedy[,refine]
	FlagPeriod   = "lbperiod" // -lbperiod 500ms
	FlagDebug    = "lbdebug"  // -lbdebug: a report line per step
	FlagCSV      = "lbcsv"    // -lbcsv FILE: the reports as CSV
	FlagSVG      = "lbsvg"    // -lbsvg FILE: a chart of the PE loads
	FlagComm     = "lbcomm"   // -lbcomm: count messages between elements for the graph
	// -lbobjonly: the strategies see the objects' loads alone, each PE's
	// background load as 0 (Charm++'s +LBObjOnly). For loads given with
	// SetLoad in model units, or a machine whose other work would swamp
	// small measured loads.
	FlagObjOnly = "lbobjonly"
)

func parsePeriod(v string) (time.Duration, error) {
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("bad period %q: want a positive duration such as 500ms", v)
	}
	return d, nil
}

func init() {
	core.RegisterFlag(FlagBalancer, true, func(v string) error { _, err := ParseBalancer(v); return err })
	core.RegisterFlag(FlagPeriod, true, func(v string) error { _, err := parsePeriod(v); return err })
	core.RegisterFlag(FlagDebug, false, nil)
	core.RegisterFlag(FlagCSV, true, nil)
	core.RegisterFlag(FlagSVG, true, nil)
	core.RegisterFlag(FlagComm, false, nil)
	core.RegisterFlag(FlagObjOnly, false, nil)
	chare.OnPEStart(setup)
	core.OnBoot(boot)
	actor.RegisterStruct[syncReady](wirekind.LBSyncReady, "lb AtSync ready")
	actor.RegisterStruct[stepCollect](wirekind.LBCollect, "lb collect")
	actor.RegisterStruct[peReport](wirekind.LBReport, "lb PE report")
	actor.RegisterStruct[stepOrders](wirekind.LBOrders, "lb orders")
	actor.RegisterStruct[stepDone](wirekind.LBDone, "lb step done")
	actor.RegisterStruct[stepRequest](wirekind.LBRequest, "lb step request")
	actor.RegisterStruct[notifyMsg](wirekind.LBNotify, "lb report subscription")
	actor.RegisterStruct[distStat](wirekind.LBDistStat, "lb distributed reduction")
	actor.RegisterStruct[distPeer](wirekind.LBDistPeer, "lb distributed gossip")
	actor.RegisterStruct[distRound](wirekind.LBDistRound, "lb distributed round")
	actor.RegisterStruct[distAck](wirekind.LBDistAck, "lb distributed round end")
}

// peStates holds the manager's state on every PE.
var peStates chare.Slot[*peState]

// peState is the manager on one PE.
type peState struct {
	pe         *chare.PE
	strategies []Strategy
	period     time.Duration
	debug      bool
	objOnly    bool // -lbobjonly: report no background load
	csv, svg   string
	last       time.Time // the last step here
	syncs      map[chare.CollID]*array.Sync
	syncTold   map[chare.CollID]int // elements of syncs told to PE 0
	reported   []array.LocalElement // this PE's objects in the current step
	root       *rootState           // on PE 0
	// a distributed step (distrun.go)
	dist     *distPE
	distObjs []DistObj
	distBG   float64
}

// rootState is the manager's state on PE 0.
type rootState struct {
	step    int // steps done
	running bool
	coll    chare.CollID // the array of an AtSync step (0: all)
	done    chare.Callback
	hasDone bool
	queue   []stepRequest
	ready   map[chare.CollID]int // elements waiting in AtSync, per array
	steps   map[chare.CollID]int // AtSync steps done, per array
	reports []*peReport
	dones   int // PEs that sent their objects on their way
	history []Report
	notify  []chare.Callback
	dist    *distRoot       // a distributed step under way
	warned  map[string]bool // the types of elements told to stay (unmovable)
}

func state(pe *chare.PE) *peState {
	return peStates.Get(pe)
}

func setup(pe *chare.PE) {
	job := pe.Job()
	st := &peState{pe: pe, last: time.Now(), syncs: map[chare.CollID]*array.Sync{}, syncTold: map[chare.CollID]int{}}
	if v, ok := job.Flag(FlagBalancer); ok {
		st.strategies, _ = ParseBalancer(v) // checked when the flag was parsed
	}
	if v, ok := job.Flag(FlagPeriod); ok {
		st.period, _ = parsePeriod(v)
	}
	_, st.debug = job.Flag(FlagDebug)
	_, st.objOnly = job.Flag(FlagObjOnly)
	st.csv, _ = job.Flag(FlagCSV)
	st.svg, _ = job.Flag(FlagSVG)
	if pe.ID() == 0 {
		st.root = &rootState{ready: map[chare.CollID]int{}, steps: map[chare.CollID]int{}, warned: map[string]bool{}}
	}
	peStates.Set(pe, st)
	array.SetSyncHook(pe, onSync)
	if len(st.strategies) > 0 {
		pe.SetMeasure(true)
		if _, ok := job.Flag(FlagComm); ok {
			core.SetCommGraph(pe, true)
		}
	}
}

// boot starts the periodic steps, on PE 0 once the job runs.
func boot(pe *chare.PE) {
	if st := state(pe); st != nil && st.period > 0 && len(st.strategies) > 0 {
		st.tick()
	}
}

// tick starts a periodic step and schedules the next.
func (st *peState) tick() {
	st.pe.Actor().After(st.period, func(*actor.PE) {
		st.request(stepRequest{})
		st.tick()
	})
}

// StartStep starts a load-balancing step over every array from code (the
// manual mode); done receives nil once every PE has sent its elements on
// their way. The job must have a strategy (-balancer).
func StartStep(from chare.Context, done chare.Callback) error {
	pe := chare.PEOf(from)
	if pe == nil {
		return chare.ErrNoContext
	}
	st := state(pe)
	if st == nil || len(st.strategies) == 0 {
		return fmt.Errorf("lb: no strategy for a load-balancing step: set -balancer (known: %s)", strings.Join(Names(), ", "))
	}
	pe.Actor().Send(0, &stepRequest{Done: done, HasDone: true})
	return nil
}

// Reports returns the reports of the steps so far; they are kept on PE 0,
// and the call must run there.
func Reports(from chare.Context) ([]Report, error) {
	pe := chare.PEOf(from)
	if pe == nil {
		return nil, chare.ErrNoContext
	}
	st := state(pe)
	if st == nil || st.root == nil {
		return nil, fmt.Errorf("lb: reports are kept on PE 0, not %d", pe.ID())
	}
	return append([]Report(nil), st.root.history...), nil
}

// Notify asks for each step's Report, sent to cb on PE 0 once the step's
// moves are decided (examples print them; tests check them). The value cb
// receives is an lb.Report (the struct, not a pointer), once per step:
// an entry method taking an lb.Report (NotifyEntry checks its type when
// the program compiles), a Go function on PE 0 (NotifyFunc), or a
// chare.Future[lb.Report] — which takes one value, so it suits a job
// with a single step: the second report for it aborts the job.
func Notify(from chare.Context, cb chare.Callback) error {
	pe := chare.PEOf(from)
	if pe == nil {
		return chare.ErrNoContext
	}
	pe.Actor().Send(0, &notifyMsg{CB: cb})
	return nil
}

// NotifyEntry is Notify to an entry method that takes a Report, of a
// chare, group branch or array element (through a group or array proxy,
// each report is broadcast):
//
//	lb.NotifyEntry(m, m.ThisProxy(), (*Main).Report) // func (m *Main) Report(r lb.Report)
func NotifyEntry[T any](from chare.Context, to chare.Target[T], method func(*T, Report)) error {
	return Notify(from, chare.EntryCallback(to, method))
}

// NotifyFunc is Notify to a Go function, which runs on PE 0 with each
// step's Report. The function lives in this process, so the caller must
// be in PE 0's (node 0 of a job of several processes).
func NotifyFunc(from chare.Context, fn func(ctx chare.Context, r Report)) error {
	pe := chare.PEOf(from)
	if pe == nil {
		return chare.ErrNoContext
	}
	if rt := pe.Job().Runtime(); !rt.IsLocal(0) {
		return fmt.Errorf("lb: NotifyFunc from PE %d: a Go function runs only in its own process, and PE 0 is on node 0, not on node %d", pe.ID(), rt.NodeOf(pe.ID()))
	}
	return Notify(from, chare.FuncCallback(from, 0, func(ctx chare.Context, v any) {
		r, ok := v.(Report)
		if !ok { // only record sends here, always a Report
			panic(fmt.Sprintf("lb: NotifyFunc got a %T, not an lb.Report", v))
		}
		fn(ctx, r)
	}))
}

type notifyMsg struct{ CB chare.Callback }

func (m *notifyMsg) Describe() string { return "a load-balancing report subscription" }
func (m *notifyMsg) Deliver(ap *actor.PE) {
	if st := stateOf(ap, m, true); st != nil {
		st.root.notify = append(st.root.notify, m.CB)
	}
}

// onSync is the array package's AtSync hook.
func onSync(s *array.Sync) {
	st := state(s.PE)
	if st == nil || len(st.strategies) == 0 {
		s.Resume() // no balancer: resume at once, as Charm++ does
		return
	}
	if st.syncs[s.Coll] != s {
		st.syncs[s.Coll], st.syncTold[s.Coll] = s, 0
	}
	// PE 0 counts the elements that wait; tell it of those not told yet
	// (the hook runs again when late ones join the step here).
	if n := len(s.Indices()) - st.syncTold[s.Coll]; n > 0 {
		st.syncTold[s.Coll] += n
		s.PE.Actor().Send(0, &syncReady{Coll: s.Coll, N: n})
	}
}

// ---- messages ----

// syncReady tells PE 0 that N elements of an array wait on a PE.
type syncReady struct {
	Coll chare.CollID
	N    int
}

func (m *syncReady) Describe() string { return fmt.Sprintf("AtSync of %d elements of %v", m.N, m.Coll) }
func (m *syncReady) Deliver(ap *actor.PE) {
	st := stateOf(ap, m, true)
	if st == nil {
		return
	}
	r := st.root
	r.ready[m.Coll] += m.N
	total, err := array.NumElements(st.pe, m.Coll)
	if err != nil {
		st.pe.Fail(err)
		return
	}
	if r.ready[m.Coll] < total {
		return
	}
	delete(r.ready, m.Coll)
	st.request(stepRequest{Coll: m.Coll})
}

// stepRequest asks PE 0 for a step (over Coll, or every array).
type stepRequest struct {
	Coll    chare.CollID
	Done    chare.Callback
	HasDone bool
}

func (m *stepRequest) Describe() string { return "a load-balancing step request" }
func (m *stepRequest) Deliver(ap *actor.PE) {
	if st := stateOf(ap, m, true); st != nil {
		st.request(*m)
	}
}

// request starts a step on PE 0, or queues it behind the running one.
func (st *peState) request(m stepRequest) {
	r := st.root
	if r.running {
		r.queue = append(r.queue, m)
		return
	}
	r.running, r.coll, r.done, r.hasDone, r.reports = true, m.Coll, m.Done, m.HasDone, nil
	if _, ok := ForStep(st.strategies, r.step).(Distributed); ok {
		st.distStart()
		return
	}
	for p := range st.pe.NumPEs() {
		st.pe.Actor().Send(p, &stepCollect{Step: r.step, Coll: m.Coll})
	}
}

// stepCollect asks a PE for its objects and loads.
type stepCollect struct {
	Step int
	Coll chare.CollID
	Dist bool // a distributed step: the objects stay here
}

func (m *stepCollect) Describe() string { return fmt.Sprintf("load-balancing step %d", m.Step) }
func (m *stepCollect) Deliver(ap *actor.PE) {
	st := stateOf(ap, m, false)
	if st == nil {
		return
	}
	now := time.Now()
	st.reported = array.LocalElements(st.pe, m.Coll)
	rep := &peReport{PE: st.pe.ID(), Step: m.Step, Objs: make([]objReport, len(st.reported))}
	var wall float64
	for k, e := range st.reported {
		l := e.Base.Load()
		rep.Objs[k] = objReport{Coll: e.Coll, Index: fmt.Sprint(e.Index), Load: l.Seconds(), CPU: l.CPU.Seconds(),
			Fixed: e.Waiting && m.Coll == 0 || e.Stays, Stays: e.Stays}
		wall += l.Wall.Seconds()
	}
	if core.Measuring(st.pe) {
		for _, e := range core.TakeComm(st.pe) {
			if m.Coll == 0 || e.FromColl == m.Coll && e.ToColl == m.Coll {
				rep.Edges = append(rep.Edges, edgeReport{FromColl: e.FromColl, From: fmt.Sprint(e.From), ToColl: e.ToColl, To: fmt.Sprint(e.To), Msgs: e.Msgs})
			}
		}
	}
	busy := ap.Busy().Seconds()
	if !st.objOnly {
		rep.Background = max(0, busy-wall)
	}
	rep.Idle = max(0, now.Sub(st.last).Seconds()-busy)
	st.last = now
	if m.Dist {
		st.distCollect(rep)
		return
	}
	ap.Send(0, rep)
}

type objReport struct {
	Coll  chare.CollID
	Index string
	Load  float64
	CPU   float64
	Fixed bool // a step must leave it: it waits in AtSync (periodic and manual steps), or Stays
	Stays bool // its state would not survive migration
}

// staysIn adds to stays the arrays of objs whose elements stay (Stays),
// each once.
func staysIn(objs []objReport, stays []chare.CollID) []chare.CollID {
	for _, o := range objs {
		if o.Stays && !slices.Contains(stays, o.Coll) {
			stays = append(stays, o.Coll)
		}
	}
	return stays
}

type edgeReport struct {
	FromColl, ToColl chare.CollID
	From, To         string
	Msgs             int
}

// peReport carries a PE's objects and loads to PE 0.
type peReport struct {
	PE               int
	Step             int
	Objs             []objReport
	Edges            []edgeReport `msgpack:",omitempty"`
	Background, Idle float64
}

func (m *peReport) Describe() string { return fmt.Sprintf("PE %d's load report", m.PE) }
func (m *peReport) Deliver(ap *actor.PE) {
	st := stateOf(ap, m, true)
	if st == nil {
		return
	}
	r := st.root
	if m.PE < 0 || m.PE >= st.pe.NumPEs() || r == nil || !r.running {
		st.pe.Fail(fmt.Errorf("lb: an unexpected load report from PE %d", m.PE))
		return
	}
	r.reports = append(r.reports, m)
	if len(r.reports) < st.pe.NumPEs() {
		return
	}
	st.decide()
}

// decide runs the strategy on PE 0 and sends the moves.
func (st *peState) decide() {
	r := st.root
	np := st.pe.NumPEs()
	snap := &Snapshot{PEs: make([]PEStats, np), Step: r.step, Seed: uint64(r.step) + 1}
	byPE := make([]*peReport, np)
	for _, rep := range r.reports {
		byPE[rep.PE] = rep
	}
	type ref struct{ pe, k int }
	var refs []ref
	for p, rep := range byPE {
		snap.PEs[p] = PEStats{Background: rep.Background, Idle: rep.Idle, Speed: 1, Available: true}
		for k, o := range rep.Objs {
			snap.Objects = append(snap.Objects, Object{ID: len(snap.Objects), Coll: uint64(o.Coll), Index: o.Index,
				Load: o.Load, CPU: o.CPU, PE: p, Migratable: !o.Fixed})
			refs = append(refs, ref{p, k})
		}
	}
	type objKey struct {
		coll  chare.CollID
		index string
	}
	ids := map[objKey]int{}
	for _, o := range snap.Objects {
		ids[objKey{chare.CollID(o.Coll), o.Index}] = o.ID
	}
	for _, rep := range byPE {
		for _, e := range rep.Edges {
			from, ok1 := ids[objKey{e.FromColl, e.From}]
			to, ok2 := ids[objKey{e.ToColl, e.To}]
			if ok1 && ok2 && from != to {
				snap.Comm = append(snap.Comm, Edge{From: from, To: to, Msgs: e.Msgs})
			}
		}
	}
	strat := ForStep(st.strategies, r.step)
	t0 := time.Now()
	place, err := strat.Place(snap)
	took := time.Since(t0)
	if err == nil {
		err = Validate(snap, place)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "lb step %d: strategy %s gave no valid placement, nothing moves: %v\n", r.step, strat.Name(), err)
		place = make(Placement, len(snap.Objects))
		for i, o := range snap.Objects {
			place[i] = o.PE
		}
	}
	rep := NewReport(snap, place, strat.Name(), took)
	if err != nil {
		rep.Error = err.Error()
	}
	var stays []chare.CollID
	for _, rep := range byPE {
		stays = staysIn(rep.Objs, stays)
	}
	rep.Unmovable = st.unmovable(stays)
	st.record(rep)
	moves := make([][]move, np)
	for i, to := range place {
		if to != snap.Objects[i].PE {
			moves[refs[i].pe] = append(moves[refs[i].pe], move{K: refs[i].k, To: to})
		}
	}
	r.reports = nil
	syncStep := 0
	if r.coll != 0 {
		r.steps[r.coll]++
		syncStep = r.steps[r.coll]
	}
	for p := range np {
		st.pe.Actor().Send(p, &stepOrders{Step: r.step, Coll: r.coll, SyncStep: syncStep, Moves: moves[p]})
	}
}

// unmovable names the element types of colls (arrays with elements that
// stay because their state would not survive migration), each with the
// fields that would be lost, for the report. The first time a type is
// seen in the job, it says so on stderr: a balancer that cannot move a
// type's elements should not be a mystery.
func (st *peState) unmovable(colls []chare.CollID) []string {
	var out []string
	seen := map[string]bool{}
	for _, id := range colls {
		c, err := core.JobCollection(st.pe.Job(), id)
		if err != nil || c.Type == nil || seen[c.Type.Name] {
			continue
		}
		seen[c.Type.Name] = true
		why := c.Type.PackError("migration")
		if why == nil {
			continue // registered with more Transient fields meanwhile
		}
		out = append(out, c.Type.Name)
		if r := st.root; !r.warned[c.Type.Name] {
			r.warned[c.Type.Name] = true
			fmt.Fprintf(os.Stderr, "lb: the elements of %s stay on their PEs: %v\n", c.Type.Name, why)
		}
	}
	sort.Strings(out)
	return out
}

// record keeps a step's report, prints it with -lbdebug, writes the
// files, and sends it to whoever asked (Notify).
func (st *peState) record(rep Report) {
	r := st.root
	r.history = append(r.history, rep)
	st.pe.TraceInstant("lb", "load-balancing step", "step", rep.Step, "strategy", rep.Strategy, "migrations", rep.Migrations)
	if st.debug {
		fmt.Println(rep.LogLine())
	}
	st.writeFiles()
	for _, cb := range r.notify {
		if err := cb.Send(core.ContextOf(st.pe), rep); err != nil {
			st.pe.Fail(fmt.Errorf("lb: sending the report of step %d: %w", r.step, err))
			return
		}
	}
}

// writeFiles writes the reports so far as CSV and SVG, if asked.
func (st *peState) writeFiles() {
	write := func(path string, fn func(f *os.File) error) {
		if path == "" {
			return
		}
		f, err := os.Create(path)
		if err == nil {
			err = fn(f)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "lb: writing %s: %v\n", path, err)
		}
	}
	write(st.csv, func(f *os.File) error { return WriteCSV(f, st.root.history) })
	write(st.svg, func(f *os.File) error { return WriteSVG(f, st.root.history) })
}

type move struct{ K, To int }

// stepOrders tells a PE where its objects go.
type stepOrders struct {
	Step     int
	Coll     chare.CollID // an AtSync step's array, or 0
	SyncStep int          // the number of that array's AtSync step
	Moves    []move
}

func (m *stepOrders) Describe() string {
	return fmt.Sprintf("the moves of load-balancing step %d", m.Step)
}
func (m *stepOrders) Deliver(ap *actor.PE) {
	st := stateOf(ap, m, false)
	if st == nil {
		return
	}
	if m.apply(st) {
		ap.Send(0, &stepDone{PE: st.pe.ID(), Step: m.Step})
	}
}

// apply moves this PE's objects, resets their loads and ends an AtSync
// step here; false if it failed (the job aborts).
func (m *stepOrders) apply(st *peState) bool {
	for _, e := range st.reported {
		e.Base.ResetLoad() // a new period; the load of one that moves travels with it
	}
	for _, mv := range m.Moves {
		if mv.K < 0 || mv.K >= len(st.reported) {
			st.pe.Fail(fmt.Errorf("lb: step %d moves object %d of PE %d, which reported %d", m.Step, mv.K, st.pe.ID(), len(st.reported)))
			return false
		}
		e := st.reported[mv.K]
		var err error
		if s := st.syncs[e.Coll]; s != nil && m.Coll == e.Coll {
			err = s.Migrate(e.Index, mv.To) // it resumes where it arrives
		} else {
			err = array.MigrateLocal(st.pe, e.Coll, e.Index, mv.To)
		}
		if err != nil {
			st.pe.Fail(fmt.Errorf("lb: step %d: %w", m.Step, err))
			return false
		}
	}
	st.reported = nil
	if m.Coll != 0 {
		delete(st.syncs, m.Coll) // before: finishing may start the next step here
		delete(st.syncTold, m.Coll)
		if err := array.FinishStep(st.pe, m.Coll, m.SyncStep); err != nil {
			st.pe.Fail(fmt.Errorf("lb: step %d: %w", m.Step, err))
			return false
		}
	}
	return true
}

// stepDone tells PE 0 a PE has sent its objects on their way.
type stepDone struct{ PE, Step int }

func (m *stepDone) Describe() string { return fmt.Sprintf("the end of step %d on PE %d", m.Step, m.PE) }
func (m *stepDone) Deliver(ap *actor.PE) {
	st := stateOf(ap, m, true)
	if st == nil {
		return
	}
	r := st.root
	if r.dones++; r.dones < st.pe.NumPEs() {
		return
	}
	r.dones = 0
	st.stepDone()
}

// stepDone ends a step on PE 0, once every PE has sent its objects on
// their way.
func (st *peState) stepDone() {
	r := st.root
	r.running = false
	r.step++
	if r.hasDone {
		if err := r.done.Send(core.ContextOf(st.pe), nil); err != nil {
			st.pe.Fail(fmt.Errorf("lb: the step's callback: %w", err))
		}
	}
	if len(r.queue) > 0 {
		next := r.queue[0]
		r.queue = r.queue[1:]
		st.request(next)
	}
}

// stateOf returns load balancing's state on PE ap, where message m
// arrived; root says m is for PE 0's coordinator. A message that reached
// a PE that runs no chares, or a coordinator's message that reached
// another PE than 0 (a damaged or misaddressed frame), aborts the job with
// an error naming it, and stateOf returns nil.
func stateOf(ap *actor.PE, m interface{ Describe() string }, root bool) *peState {
	pe := core.PEForMessage(ap, "lb", m)
	if pe == nil {
		return nil
	}
	st := state(pe)
	switch {
	case st == nil:
		ap.Runtime().Abort(fmt.Errorf("lb: %s reached PE %d, which runs no load balancing", m.Describe(), ap.ID()))
		return nil
	case root && st.root == nil:
		ap.Runtime().Abort(fmt.Errorf("lb: %s reached PE %d, but only PE 0 coordinates load balancing", m.Describe(), ap.ID()))
		return nil
	}
	return st
}

// ---- wire ----

// The messages above travel as msgpack structs (actor.RegisterStruct);
// their kinds are in package internal/wirekind.
