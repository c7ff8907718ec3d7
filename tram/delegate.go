package tram

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/group"
	"github.com/charmgo/charm/internal/core"
)

// The aggregation interface (T28): a proxy delegated to a Delegate sends
// its entry-method invocations as TRAM items, so that existing send code
// is aggregated unchanged:
//
//	d, _ := tram.NewDelegate(self, tram.Options{FlushPeriod: time.Millisecond})
//	peers := cells.Delegate(d)
//	chare.Send(self, peers.At(i), (*Cell).Ghost, msg) // aggregated
//
// Element sends (to chares, group branches and array elements) are
// routed over the grid; broadcasts and multicasts go directly. Items wait
// in buffers until they fill or a periodic flush sends them, and count as
// work for quiescence detection meanwhile. A delegate is a
// core.RunDelegate: a Send of an entry method that can travel in runs
// (not threaded, not NoRuns, no result), to a group branch or an array
// element, from a PE that is not traced, is taken as a message appended
// to the run buffered for its PE if that PE is a peer on the grid (the
// last hop), and a full buffer is posted to the peer's mailbox as it is;
// a send whose target is placed on the sending PE joins the run of that
// PE's own mailbox, as an undelegated send does. Other element sends (to
// PEs that are not peers, of other entry methods, through a proxy decoded
// from another process) are envelopes, routed over the grid through the
// delegate's branches: handed over inside one process, msgpack-encoded
// (core.WireEnvelope) between processes. The run and the envelope of a
// send to one PE are buffered apart, so a program that mixes both kinds
// of sends to one target may see them in another order than it sent
// them.
//
// A delegate is job-wide, like the group of branches behind it: it is a
// chare.PortableDelegate named by its group, so a delegated proxy sent to
// another process (in a message, in migrated or checkpointed state, in a
// callback made from it) arrives delegated to the same delegate, whose
// object in that process carries its sends there. Aggregate marks an
// entry method in every process.

// delegateKind is the kind TRAM's delegates travel as.
const delegateKind = "tram"

// DefaultDelegateFlush is the flush period of a delegate whose
// Options.FlushPeriod is zero. A delegate has no Done that could empty its
// buffers (nothing says when a program's sends are over), so only a
// periodic flush sends the items of buffers that never fill: without one,
// such items would wait forever and quiescence would never come.
const DefaultDelegateFlush = time.Millisecond

// Delegate carries the sends of delegated proxies over TRAM. Each process
// of the job has one object per delegate; its counters are that
// process's.
type Delegate struct {
	job    *chare.Job // marks outlive jobs: sends of another job go directly
	g      group.Proxy[delegateBranch]
	direct atomic.Int64 // broadcasts and multicasts passed on directly
	// local holds, by PE, this process's branches once built, so that a
	// send does not look the group up each time; their counters are the
	// process's items and messages.
	local []atomic.Pointer[delegateBranch]
}

// newDelegateObject makes a delegate's object for group coll in job.
func newDelegateObject(job *chare.Job, coll chare.CollID) *Delegate {
	d := &Delegate{job: job, g: delegateGroup(coll)}
	if job != nil && job.Runtime() != nil {
		d.local = make([]atomic.Pointer[delegateBranch], job.Runtime().NumPEs())
	}
	return d
}

// DelegateStats counts what a delegate carried: Items, the element sends
// it took; Messages, the messages its branches sent (batches of envelopes
// to one another, and the runs buffered for a peer, each posting one);
// Direct, the broadcasts and multicasts it passed on unaggregated.
type DelegateStats struct {
	Items, Messages, Direct int64
}

func (s DelegateStats) add(o DelegateStats) DelegateStats {
	return DelegateStats{s.Items + o.Items, s.Messages + o.Messages, s.Direct + o.Direct}
}

// delegateKey names a delegate's object in this process.
type delegateKey struct {
	job  *chare.Job
	coll chare.CollID
}

// delegates holds this process's delegate objects until their job ends.
var delegates sync.Map // delegateKey → *Delegate

func init() {
	core.OnJobEnd(func(j *chare.Job) {
		delegates.Range(func(k, _ any) bool {
			if k.(delegateKey).job == j {
				delegates.Delete(k)
			}
			return true
		})
	})
	chare.RegisterDelegateKind(delegateKind, func(pe *chare.PE, id uint64) (chare.Delegate, error) {
		return resolveDelegate(pe.Job(), chare.CollID(id)), nil
	})
}

// resolveDelegate returns the delegate a proxy from another process names
// (coll came from the wire). Only a collection this process knows gets an
// object kept until the job ends; for another, whose announcement may be
// on its way, or that does not exist, it returns an object of its own:
// a send through it waits for the group, or fails naming it, and then
// goes on with the kept object.
func resolveDelegate(job *chare.Job, coll chare.CollID) *Delegate {
	if d, ok := delegates.Load(delegateKey{job, coll}); ok {
		return d.(*Delegate)
	}
	if _, err := core.JobCollection(job, coll); err == nil {
		return delegateOf(job, coll)
	}
	return &Delegate{job: job, g: delegateGroup(coll)} // not kept: no branches to remember
}

func delegateGroup(coll chare.CollID) group.Proxy[delegateBranch] {
	return group.Proxy[delegateBranch]{Proxy: chare.NewProxy[delegateBranch](chare.Route{Kind: chare.KindGroupAll, Coll: coll})}
}

// delegateOf returns the object of delegate coll in this process.
func delegateOf(job *chare.Job, coll chare.CollID) *Delegate {
	k := delegateKey{job, coll}
	if d, ok := delegates.Load(k); ok {
		return d.(*Delegate)
	}
	d, _ := delegates.LoadOrStore(k, newDelegateObject(job, coll))
	return d.(*Delegate)
}

// NewDelegate creates the group of branches behind a delegate, on every
// PE of the job. Options.Dims, Sizing and FlushPeriod apply; a zero
// FlushPeriod means DefaultDelegateFlush.
func NewDelegate(from chare.Context, o Options) (*Delegate, error) {
	pe := chare.PEOf(from)
	if pe == nil {
		return nil, chare.ErrNoContext
	}
	rt := pe.Job().Runtime()
	dims := o.Dims
	if dims == nil {
		nodes := rt.NumNodes()
		dims = []int{nodes, rt.NumPEs() / nodes}
	}
	if _, err := NewTopology(dims, rt.NumPEs()); err != nil {
		return nil, err
	}
	if o.Sizing == (Sizing{}) {
		o.Sizing = Sizing{BufferItems: 256}
	}
	if err := o.Sizing.Validate(); err != nil {
		return nil, err
	}
	switch {
	case o.FlushPeriod < 0:
		return nil, fmt.Errorf("tram: NewDelegate: FlushPeriod %v; a delegate needs a period > 0 to send buffers that do not fill (0 means %v)", o.FlushPeriod, DefaultDelegateFlush)
	case o.FlushPeriod == 0:
		o.FlushPeriod = DefaultDelegateFlush
	}
	g, err := group.NewWith(from, (*delegateBranch).Init, delegateSetup{Dims: dims, Sizing: o.Sizing, Period: o.FlushPeriod})
	if err != nil {
		return nil, err
	}
	return delegateOf(pe.Job(), g.Route().Coll), nil
}

// DelegateRef implements chare.PortableDelegate: a delegate travels as
// the identity of its group.
func (d *Delegate) DelegateRef() (string, uint64) { return delegateKind, uint64(d.g.Route().Coll) }

func (d *Delegate) String() string { return fmt.Sprintf("TRAM delegate %v", d.g.Route().Coll) }

// Stats returns what the delegate carried so far in this process: the
// sends made on this process's PEs, and the messages its branches here
// sent. Report gathers the figures of every PE of the job.
func (d *Delegate) Stats() DelegateStats {
	s := DelegateStats{Direct: d.direct.Load()}
	for i := range d.local {
		if b := d.local[i].Load(); b != nil {
			s.Items += b.shared.items.Load()
			s.Messages += b.shared.frames.Load()
		}
	}
	return s
}

// DelegateReport is what Report gathers: the delegate's figures over the
// whole job, and per PE and per process.
type DelegateReport struct {
	Job     DelegateStats   // the sum over every PE
	PE      []DelegateStats // by PE: the sends made on it, the messages it sent
	Process []DelegateStats // by process (node), the sums of its PEs
}

// Report gathers the delegate's figures from every PE of the job and
// sends a DelegateReport to cb. The figures of a PE are read when the
// request reaches it: wait for quiescence first for final ones.
func (d *Delegate) Report(from chare.Context, cb chare.Callback) error {
	pe := chare.PEOf(from)
	if pe == nil {
		return chare.ErrNoContext
	}
	b := d.branch(from)
	if b == nil {
		return fmt.Errorf("tram: %v has no branch on PE %d yet", d, pe.ID())
	}
	id := b.request(&pending{report: true, cb: cb, stats: make([]DelegateStats, pe.NumPEs())})
	return chare.Send(from, d.g, (*delegateBranch).Count, request{PE: pe.ID(), ID: id})
}

// branch returns the delegate's branch on the PE of from, or nil if it
// does not exist there yet.
func (d *Delegate) branch(from chare.Context) *delegateBranch {
	return group.LocalBranch(from, d.g)
}

// Send implements chare.Delegate: the envelope becomes an item for the PE
// of its target. In a process where the delegate's group is not known yet
// (its announcement is on its way), the send waits for it.
func (d *Delegate) Send(from chare.Context, e chare.Envelope) error {
	pe := chare.PEOf(from)
	if pe == nil {
		return chare.ErrNoContext
	}
	if err := d.sameJob(pe); err != nil {
		return err
	}
	if id := pe.ID(); id < len(d.local) {
		if b := d.local[id].Load(); b != nil {
			return b.insert(from, e)
		}
	}
	part, err := core.PartOrHold(pe, d.g.Route().Coll, e, func() {
		pe.Actor().Release(1)
		// The group is known here now: go on with the object kept for it.
		if err := delegateOf(d.job, d.g.Route().Coll).Send(core.ContextOf(pe), e); err != nil {
			pe.Fail(fmt.Errorf("tram: %v: a send that waited for the delegate's group: %w", d, err))
		}
	})
	if err != nil {
		return fmt.Errorf("tram: %v on PE %d: %w", d, pe.ID(), err)
	}
	if part == nil {
		pe.Actor().Hold(1) // work for quiescence detection while it waits
		return nil
	}
	b, _ := part.(interface{ Object(any) any }).Object(nil).(*delegateBranch)
	if b == nil || b.agg == nil {
		return fmt.Errorf("tram: %v has no branch on PE %d", d, pe.ID())
	}
	if id := pe.ID(); id < len(b.d.local) {
		b.d.local[id].Store(b) // on the object kept for the group
	}
	return b.insert(from, e)
}

// insert takes a send as an item for the PE of its target.
func (b *delegateBranch) insert(from chare.Context, e chare.Envelope) error {
	dest, err := destination(from, e)
	if err != nil {
		return err
	}
	out, err := b.agg.Insert(core.WireEnvelope{E: e}, dest)
	if err != nil {
		return err
	}
	b.count()
	b.Here().Actor().Hold(1)
	b.idle.busy = true
	b.handle(out)
	b.tick()
	return nil
}

// Broadcast implements chare.Delegate: broadcasts are not aggregated.
func (d *Delegate) Broadcast(from chare.Context, e chare.Envelope) error {
	return d.forward(from, e)
}

// Multicast implements chare.Delegate: multicasts are not aggregated.
func (d *Delegate) Multicast(from chare.Context, e chare.Envelope) error {
	return d.forward(from, e)
}

func (d *Delegate) forward(from chare.Context, e chare.Envelope) error {
	pe := chare.PEOf(from)
	if pe == nil {
		return chare.ErrNoContext
	}
	if err := d.sameJob(pe); err != nil {
		return err
	}
	d.direct.Add(1)
	if b := d.branch(from); b != nil {
		b.counts.Direct++
	}
	return chare.Forward(from, e)
}

// sameJob says why a delegate cannot carry a send of pe's job: it was
// created in an earlier job of the process (and kept, in a package
// variable say), and its group ended with that job.
func (d *Delegate) sameJob(pe *chare.PE) error {
	if pe.Job() != d.job {
		return fmt.Errorf("tram: %v belongs to an earlier job of this process; create a delegate in this job (NewDelegate) and delegate the proxy to it", d)
	}
	return nil
}

// destination finds the PE an element send goes to.
func destination(from chare.Context, e chare.Envelope) (int, error) {
	h := e.Header()
	switch h.Kind {
	case chare.KindChare, chare.KindBranch:
		if h.Index == nil {
			return h.PE, nil
		}
	}
	part, err := core.PartOf(chare.PEOf(from), h.Coll)
	if err != nil {
		return 0, err
	}
	return part.Locate(h.Index)
}

type delegateSetup struct {
	Dims   []int
	Sizing Sizing
	Period time.Duration
}

// delegateBranch is a delegate's part on one PE.
type delegateBranch struct {
	group.Branch[delegateBranch]
	d      *Delegate // this process's object
	setup  delegateSetup
	agg    *Aggregator[core.WireEnvelope]
	idle   idleFlusher
	runs   *core.RunBuffer // the sends taken as messages in runs (RunBuffer), for peers
	peers  []int           // this PE's peers
	flush  func()          // flushes every buffer (made once: tick runs per send)
	keep   func() bool     // whether anything is buffered
	counts DelegateStats   // this PE's
	shared branchCounts    // this PE's items and messages, for Stats on any goroutine
	next   uint64
	reqs   map[uint64]*pending // requests made on this PE, waiting for every PE's answer
}

// branchCounts are a branch's counters that Delegate.Stats reads from
// any goroutine: each branch has its own, so that the PEs of a process do
// not write one cache line per send.
type branchCounts struct {
	items, frames atomic.Int64
	_             [48]byte // a cache line of its own
}

// count counts an item the branch took.
func (b *delegateBranch) count() {
	b.counts.Items++
	b.shared.items.Add(1)
}

// counted counts a message the branch sent.
func (b *delegateBranch) counted() {
	b.counts.Messages++
	b.shared.frames.Add(1)
}

// pending is a request (Report, Aggregate) waiting for every branch.
type pending struct {
	report bool
	cb     chare.Callback
	got    int
	stats  []DelegateStats // by PE (Report)
}

// request is a request sent to every branch; answers go to the branch on
// PE.
type request struct {
	PE int
	ID uint64
}

type markMsg struct {
	Req   request
	Entry chare.EntryID
	On    bool
}

type answer struct {
	ID    uint64
	PE    int
	Stats DelegateStats
}

func init() { chare.Register[delegateBranch]() }

// Init builds the branch's aggregator.
func (b *delegateBranch) Init(s delegateSetup) {
	if err := b.build(s); err != nil {
		b.Abort(err)
	}
}

func (b *delegateBranch) build(s delegateSetup) error {
	topo, err := NewTopology(s.Dims, b.NumPEs())
	if err != nil {
		return err
	}
	// Not Bare: a delegate's messages are envelopes alone (Flush.Final stays empty).
	if b.agg, err = NewAggregator(Config[core.WireEnvelope]{Topology: topo, PE: b.PE(), Sizing: s.Sizing}); err != nil {
		return err
	}
	b.setup = s
	b.d, b.idle.period = delegateOf(b.Here().Job(), core.CollectionOf(&b.Base).ID), s.Period
	prev := b.runs // a branch built again (a restart builds it in Init, then in Restore)
	if b.runs, err = core.NewRunBuffer(b, b.buffered, b.called); err != nil {
		return err
	}
	if prev != nil {
		prev.Retire() // sends of marked methods may have kept it (core.RunDelegate)
	}
	// Runs go to peers, the last hop of whatever is sent to them; items
	// for other PEs are envelopes routed over the grid.
	b.peers = b.agg.Peers().Peers()
	for _, p := range b.peers {
		b.runs.Take(p, true)
	}
	if id := b.PE(); id < len(b.d.local) {
		if old := b.d.local[id].Swap(b); old != nil && old != b && old.runs != nil && old.runs != b.runs {
			old.runs.Retire() // sends of marked methods kept it (core.RunDelegate)
		}
	}
	return nil
}

// RunBuffer implements core.RunDelegate: sends made on pe through the
// delegate are appended to runs for their peer, or called at once on pe,
// once its branch is there.
func (d *Delegate) RunBuffer(pe *chare.PE) *core.RunBuffer {
	if pe.Job() != d.job {
		return nil
	}
	if id := pe.ID(); id < len(d.local) {
		if b := d.local[id].Load(); b != nil {
			return b.runs
		}
	}
	return nil
}

// buffered counts a send appended to the runs for peer dest, and posts
// them when they are full (T06), or the fullest runs when the PE's items
// reach its total capacity (T07).
func (b *delegateBranch) buffered(dest int) {
	b.count()
	b.idle.busy = true
	switch sz := &b.agg.sizing; {
	case b.runs.Len(dest) >= sz.BufferItems:
		b.post(dest)
	case b.runs.Buffered()+b.agg.buffered >= sz.TotalCapacity:
		best, most := dest, 0
		for _, p := range b.peers {
			if n := b.runs.Len(p); n > most {
				best, most = p, n
			}
		}
		b.post(best)
	}
	if !b.idle.ticking {
		b.tick()
	}
}

// called counts a send that ran at once on this PE.
func (b *delegateBranch) called() {
	b.count()
	b.agg.InsertLocal()
}

// post sends the runs buffered for peer dest, as one message.
func (b *delegateBranch) post(dest int) {
	if b.runs.Post(dest) > 0 {
		b.counted()
	}
}

// Pack implements chare.Packer: a checkpoint keeps the branch's set-up
// (taken at quiescence, its buffers are empty), so that proxies
// delegated to it in restored state find it again after a restart.
func (b *delegateBranch) Pack() ([]byte, error) { return msgpack.Marshal(&b.setup) }

// Unpack implements chare.Packer: it rebuilds the branch from its set-up,
// on the PE and in the job it is restored in.
func (b *delegateBranch) Unpack(data []byte) error {
	var s delegateSetup
	if err := chare.UnmarshalState(data, &s); err != nil {
		return fmt.Errorf("tram: a delegate's branch: %w", err)
	}
	return b.build(s)
}

func (b *delegateBranch) request(p *pending) uint64 {
	if b.reqs == nil {
		b.reqs = map[uint64]*pending{}
	}
	b.next++
	b.reqs[b.next] = p
	return b.next
}

// Count answers a Report request with this PE's figures.
func (b *delegateBranch) Count(r request) {
	if err := chare.Send(b, b.ThisProxy().At(r.PE), (*delegateBranch).Answer, answer{ID: r.ID, PE: b.PE(), Stats: b.counts}); err != nil {
		b.Abort(err)
	}
}

// Mark marks or unmarks an entry method for the delegate in this process
// (every branch does; marking twice is harmless) and answers.
func (b *delegateBranch) Mark(m markMsg) {
	var d chare.Delegate
	if m.On {
		d = b.d
	}
	if err := core.MarkEntryID(b.d.job, m.Entry, d); err != nil {
		b.Abort(fmt.Errorf("tram: %v: marking entry %d: %w", b.d, m.Entry, err))
		return
	}
	if err := chare.Send(b, b.ThisProxy().At(m.Req.PE), (*delegateBranch).Answer, answer{ID: m.Req.ID, PE: b.PE()}); err != nil {
		b.Abort(err)
	}
}

// Answer collects the answers to a request made on this PE; the last one
// completes it.
func (b *delegateBranch) Answer(a answer) {
	p := b.reqs[a.ID]
	if p == nil {
		b.Abort(fmt.Errorf("tram: %v: an answer from PE %d to request %d, which PE %d did not make", b.d, a.PE, a.ID, b.PE()))
		return
	}
	if p.report {
		if a.PE < 0 || a.PE >= len(p.stats) {
			b.Abort(fmt.Errorf("tram: %v: an answer from PE %d, which does not exist", b.d, a.PE))
			return
		}
		p.stats[a.PE] = a.Stats
	}
	if p.got++; p.got < b.NumPEs() {
		return
	}
	delete(b.reqs, a.ID)
	var v any
	if p.report {
		v = newReport(p.stats, b.Here().Job().Runtime().NodeOf)
	}
	if err := p.cb.Send(b, v); err != nil {
		b.Abort(err)
	}
}

// newReport sums the figures of every PE per process and over the job.
func newReport(perPE []DelegateStats, nodeOf func(pe int) int) DelegateReport {
	job, proc := sumByProcess(perPE, nodeOf)
	return DelegateReport{Job: job, PE: perPE, Process: proc}
}

// Recv routes a message of envelopes from a peer.
func (b *delegateBranch) Recv(items []Envelope[core.WireEnvelope]) {
	out, err := b.agg.Route(items)
	if err != nil {
		b.Abort(err)
		return
	}
	b.idle.busy = true
	b.handle(out)
	b.tick()
}

func (b *delegateBranch) handle(out Output[core.WireEnvelope]) {
	for _, f := range out.Flushes {
		b.send(f.To, f.Items)
	}
	for _, e := range out.Direct {
		b.send(e.Dest, []Envelope[core.WireEnvelope]{e})
	}
	// The items for this PE are released together, as a streamer's
	// delivered run is: quiescence detection reads the counts between
	// messages, never during this loop (a threaded entry method it
	// delivers runs in a thread of its own).
	if len(out.Local) > 0 {
		b.Here().Actor().Release(len(out.Local))
	}
	for _, e := range out.Local {
		if err := chare.Deliver(b, e.Item.E); err != nil {
			b.Abort(err)
		}
	}
}

func (b *delegateBranch) send(to int, items []Envelope[core.WireEnvelope]) {
	b.counted()
	if err := chare.Send(b, b.ThisProxy().At(to), (*delegateBranch).Recv, items); err != nil {
		b.Abort(err)
	}
}

// tick keeps the periodic flush going while the branch holds items (T24).
func (b *delegateBranch) tick() {
	if b.idle.ticking || b.idle.period <= 0 {
		return
	}
	if b.flush == nil {
		b.flush = func() {
			for _, f := range b.agg.FlushAll() {
				b.send(f.To, f.Items)
			}
			for _, p := range b.peers {
				b.post(p)
			}
		}
		b.keep = func() bool { return b.agg.Stats().Buffered > 0 || b.runs.Buffered() > 0 }
	}
	b.idle.arm(b.Here().Actor(), b.flush, b.keep)
}

var _ core.RunDelegate = (*Delegate)(nil)

// Aggregate tags an entry method for aggregation (the second interface of
// T28): every send of it, through any proxy that is not delegated
// otherwise, travels over this delegate, in every process of the job. It
// takes effect at once on the calling PE's process and as the mark
// reaches the others; done is called (with nil) once every PE has it, and
// sends made after that, anywhere, are aggregated. Unaggregate undoes it
// the same way.
func (d *Delegate) Aggregate(from chare.Context, method any, done chare.Callback) error {
	return d.mark(from, method, true, done)
}

// Unaggregate stops routing an entry method's sends over the delegate, in
// every process; done is called once every PE has stopped.
func (d *Delegate) Unaggregate(from chare.Context, method any, done chare.Callback) error {
	return d.mark(from, method, false, done)
}

func (d *Delegate) mark(from chare.Context, method any, on bool, done chare.Callback) error {
	pe := chare.PEOf(from)
	if pe == nil {
		return chare.ErrNoContext
	}
	if err := d.sameJob(pe); err != nil {
		return err
	}
	id, err := core.EntryIDOf(method)
	if err != nil {
		return err
	}
	var md chare.Delegate
	if on {
		md = d
	}
	if err := core.MarkEntryID(d.job, id, md); err != nil {
		return err
	}
	b := d.branch(from)
	if b == nil {
		return fmt.Errorf("tram: %v has no branch on PE %d yet", d, pe.ID())
	}
	rid := b.request(&pending{cb: done})
	return chare.Send(from, d.g, (*delegateBranch).Mark, markMsg{Req: request{PE: pe.ID(), ID: rid}, Entry: id, On: on})
}

var _ chare.PortableDelegate = (*Delegate)(nil)
