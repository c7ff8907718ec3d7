package tram

import (
	"errors"
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/charmgo/charm/actor"
	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/chare/reducer"
	"github.com/charmgo/charm/group"
	"github.com/charmgo/charm/internal/core"
)

// The streamer: TRAM on the runtime. A Streamer is a group, one branch per
// PE; each branch holds an Aggregator and sends its flushes to peer
// branches as ordinary entry-method messages. Items whose final
// destination is a branch's PE go to the client group's local branch, one
// call of the client's process method per item (T10).
//
// Termination modes (a step runs from Start to the Finished callback):
//   - Completion: Producers contributors across the job each call Done
//     once; a completion detector counts items produced and consumed (T12).
//   - Quiescence: no Done; the program asks for quiescence detection, and
//     items waiting in buffers count as work, so quiescence is not declared
//     while any item is on its way (T15, T23).
// Both need periodic flushing (T25): with Options.FlushPeriod set, a PE
// that neither inserted nor received anything since the last tick sends all
// its buffers (T24).

// Mode is how a step ends.
type Mode int

const (
	Completion Mode = iota + 1 // global contributors and a completion detector
	Quiescence                 // quiescence detection, no Done
	Staged                     // local contributors; dimension by dimension, no detector (T13, T21)
)

// Options configure a streamer.
type Options struct {
	// Dims are the sizes of the virtual grid; nil means a 2-D grid of
	// nodes × PEs per node (DefaultTopology).
	Dims []int
	// Sizing of the buffers; the zero value means 256 items per peer.
	Sizing Sizing
	// FlushPeriod, if set, flushes an idle PE's buffers at this period.
	FlushPeriod time.Duration
	// Cutoff, if set, sends items larger than Cutoff bytes directly to
	// their destination instead of buffering them. An item's size is its
	// Size() int method's if it has one, else the size of its type.
	Cutoff int
	// Yield, if set, makes Insert yield the PE every Yield insertions
	// when it runs in a threaded entry method, so that a long insertion
	// loop lets the PE process incoming messages (T11).
	Yield int
	// Tune, if set, tunes the buffer size (and the flush period, if one
	// is set) from step to step, scoring each step by its time per item
	// (see stepTuner; Streamer.Tuning reports the trajectory). Completion
	// and staged steps are tuned, quiescence steps run at the last size
	// and period (which may be a try's).
	Tune bool
	// TuneMin and TuneMax bound the tuned buffer size (items per peer);
	// 0 means the configured size divided or multiplied by 8 (within 1 and
	// 65536; see tuneBand), but never past the other bound:
	// TuneMin alone above 8× the configured size holds the size at TuneMin.
	// Equal bounds hold the size there, and the flush period at the
	// configured one scaled to it: every step still runs through the
	// tuning (timed, sized by its begin message), a control that measures
	// what tuning itself costs.
	TuneMin, TuneMax int
}

func (m Mode) String() string {
	switch m {
	case Completion:
		return "completion"
	case Quiescence:
		return "quiescence"
	case Staged:
		return "staged"
	}
	return fmt.Sprintf("mode(%d)", int(m))
}

// needsFlushing says whether a step can strand items without periodic
// flushing (T25): a quiescence step always can (deliveries may submit
// items), a completion step when items pass intermediate PEs, whose
// buffers Done does not empty; a staged step never. On a 1-D grid a
// completion step sends what deliveries insert at the end of each
// delivered run (see Recv), so chains of items need no period there.
func needsFlushing(m Mode, t *Topology) bool {
	switch m {
	case Quiescence:
		return true
	case Completion:
		real := 0
		for _, d := range t.Dims() {
			if d > 1 {
				real++
			}
		}
		return real > 1
	}
	return false
}

// Step describes one communication step.
type Step struct {
	Mode      Mode
	Producers int // Completion: contributors across the job; Staged: on each PE
	// Senders, for a staged step, names a chare array whose elements are
	// the producers: each PE counts its local elements itself, and a PE
	// without any is done at once (T14). Set it to senders.Route().Coll.
	Senders  chare.CollID
	Started  chare.Callback // every PE accepts items (T16)
	Finished chare.Callback // every item was delivered (Completion, Staged)
}

// Streamer is a handle to a TRAM instance for items of type T delivered
// to a group client C (T09). It is a value; copy it freely.
type Streamer[C, T any] struct {
	G group.Proxy[branch[C, T]]
	// Dims and Period are the grid and the flush period, set by New; they
	// travel with the streamer so that Start refuses a step that needs
	// flushing in every process alike (T25).
	Dims   []int
	Period time.Duration
	// Tune and Sizing are Options.Tune and the sizing the search starts
	// from: Start, on the starting PE, may run before that PE's set-up.
	Tune   bool
	Sizing Sizing
	// TuneMin and TuneMax are Options.TuneMin and TuneMax, checked (0:
	// resolved from the configured size when the tuner starts).
	TuneMin, TuneMax int
	// local holds the branches of this process by PE, so that Insert
	// needs no lookup; it does not travel, but a streamer decoded from a
	// message finds its process's table (see DecodeMsgpack).
	local *branchTable[C, T]
}

// branchTable holds a streamer's branches in one process, by PE. Each
// branch stores itself in its PE's slot when it is set up; slots are
// atomic because jobs that run one after the other in a process (tests)
// reuse tables, and a reader checks that a branch belongs to its own PE.
type branchTable[C, T any] struct {
	slots []atomic.Pointer[branch[C, T]]
}

type tableKey struct {
	t    reflect.Type // branch[C, T]
	coll chare.CollID
}

// tables holds the branch tables of this process by streamer group,
// until the job whose branches they hold ends (a table kept after it
// would keep the ended job alive).
var tables sync.Map // tableKey → *branchTable[C, T]

// jobTable is what the end of a job asks of a table.
type jobTable interface{ ofJob(j *chare.Job) bool }

func init() {
	core.OnJobEnd(func(j *chare.Job) {
		tables.Range(func(k, v any) bool {
			if t, ok := v.(jobTable); ok && t.ofJob(j) {
				tables.CompareAndDelete(k, v)
			}
			return true
		})
	})
}

// ofJob says whether the table holds a branch of job j.
func (t *branchTable[C, T]) ofJob(j *chare.Job) bool {
	for i := range t.slots {
		if b := t.slots[i].Load(); b != nil && b.Here().Job() == j {
			return true
		}
	}
	return false
}

// tableFor returns the table of the streamer group coll for a job of n
// PEs, replacing one of another size left by an earlier job.
func tableFor[C, T any](coll chare.CollID, n int) *branchTable[C, T] {
	key := tableKey{reflect.TypeFor[branch[C, T]](), coll}
	for {
		old, ok := tables.Load(key)
		if ok && len(old.(*branchTable[C, T]).slots) == n {
			return old.(*branchTable[C, T])
		}
		fresh := &branchTable[C, T]{slots: make([]atomic.Pointer[branch[C, T]], n)}
		if !ok {
			if got, loaded := tables.LoadOrStore(key, fresh); loaded {
				if t := got.(*branchTable[C, T]); len(t.slots) == n {
					return t
				}
				continue
			}
			return fresh
		}
		if tables.CompareAndSwap(key, old, fresh) {
			return fresh
		}
	}
}

// get returns this PE's branch from the table, or nil if the table (of
// a streamer not decoded in this process, say) does not have it.
func (t *branchTable[C, T]) get(from chare.Context) *branch[C, T] {
	if t == nil {
		return nil
	}
	pe := chare.PEOf(from)
	if pe == nil {
		return nil
	}
	if id := pe.ID(); id < len(t.slots) {
		if b := t.slots[id].Load(); b != nil && b.Here() == pe {
			return b
		}
	}
	return nil // a branch of an earlier job, or none
}

// streamerWire is a streamer as it travels.
type streamerWire[C, T any] struct {
	G       group.Proxy[branch[C, T]]
	Dims    []int
	Period  time.Duration
	Tune    bool
	Sizing  Sizing
	TuneMin int
	TuneMax int
}

// EncodeMsgpack lets a streamer travel in a message.
func (s Streamer[C, T]) EncodeMsgpack(enc *msgpack.Encoder) error {
	return enc.Encode(streamerWire[C, T]{G: s.G, Dims: s.Dims, Period: s.Period, Tune: s.Tune, Sizing: s.Sizing, TuneMin: s.TuneMin, TuneMax: s.TuneMax})
}

// DecodeMsgpack reads a streamer from a message and finds the table of
// its branches in this process, if they are set up already (else Insert
// looks its branch up each time).
func (s *Streamer[C, T]) DecodeMsgpack(dec *msgpack.Decoder) error {
	var w streamerWire[C, T]
	if err := dec.Decode(&w); err != nil {
		return err
	}
	*s = Streamer[C, T]{G: w.G, Dims: w.Dims, Period: w.Period, Tune: w.Tune, Sizing: w.Sizing, TuneMin: w.TuneMin, TuneMax: w.TuneMax}
	if t, ok := tables.Load(tableKey{reflect.TypeFor[branch[C, T]](), w.G.Route().Coll}); ok {
		s.local, _ = t.(*branchTable[C, T])
	}
	return nil
}

// sinks hold, per process method (by entry ID), how a branch delivers
// items of type X to its client: a function that, given the branch as a
// context and the client's proxy, returns the per-item delivery.
var sinks sync.Map // chare.EntryID → sink[C, X] for some C, X

type sink[C, X any] func(ctx chare.Context, client chare.Proxy[C]) (giver[X], error)

// giver delivers items to the client on one PE: one item, or the items
// of a received run in one loop (one call per item less than calling
// one for each).
type giver[X any] struct {
	one  func(item X)
	run  func(items []Envelope[X])
	bare func(items []X) // a message's last-hop items (batch.Final)
}

// Register makes a TRAM instance type for a group client C and items T,
// with the client's process method (an entry method of C taking a T).
// Call it in an init function, in the same order in every process.
func Register[C, T any](process func(*C, T)) {
	chare.Register[branch[C, T]]()
	storeSink(process, sink[C, T](func(ctx chare.Context, client chare.Proxy[C]) (giver[T], error) {
		c := group.LocalBranch(ctx, group.Proxy[C]{Proxy: client})
		if c == nil {
			return giver[T]{}, fmt.Errorf("tram: the client group has no branch on PE %d", chare.PEOf(ctx).ID())
		}
		return giver[T]{
			one: func(item T) { process(c, item) },
			run: func(items []Envelope[T]) {
				for i := range items {
					process(c, items[i].Item)
				}
			},
			bare: func(items []T) {
				for _, it := range items {
					process(c, it)
				}
			},
		}, nil
	}))
}

func storeSink[C, T, X any](process func(*C, T), s sink[C, X]) {
	e, err := chare.EntryOf(process)
	if err != nil {
		panic(fmt.Errorf("tram: the process method: %w", err))
	}
	sinks.Store(e.ID, s)
}

// registered checks that a process method was registered.
func registered(process any) (chare.EntryID, error) {
	e, err := chare.EntryOf(process)
	if err != nil {
		return 0, fmt.Errorf("tram: the process method: %w", err)
	}
	if _, ok := sinks.Load(e.ID); !ok {
		return 0, fmt.Errorf("tram: %s is not registered: call tram.Register or tram.RegisterArray with it in an init function", e)
	}
	return e.ID, nil
}

// New creates a streamer for a group client.
func New[C, T any](from chare.Context, client group.Proxy[C], process func(*C, T), o Options) (Streamer[C, T], error) {
	id, err := registered(process)
	if err != nil {
		return Streamer[C, T]{}, err
	}
	return create[C, T](from, client.Proxy, id, o)
}

// create makes the group of branches of a streamer whose items of type X
// go to client through the sink registered under entry.
func create[C, X any](from chare.Context, client chare.Proxy[C], entry chare.EntryID, o Options) (Streamer[C, X], error) {
	pe := chare.PEOf(from)
	if pe == nil {
		return Streamer[C, X]{}, chare.ErrNoContext
	}
	rt := pe.Job().Runtime()
	dims := o.Dims
	if dims == nil {
		nodes := rt.NumNodes()
		dims = []int{nodes, rt.NumPEs() / nodes}
	}
	topo, err := NewTopology(dims, rt.NumPEs())
	if err != nil {
		return Streamer[C, X]{}, err
	}
	if o.Sizing == (Sizing{}) {
		o.Sizing = Sizing{BufferItems: 256}
	}
	if _, err := NewAggregator(Config[X]{Topology: topo, PE: 0, Sizing: o.Sizing}); err != nil {
		return Streamer[C, X]{}, err
	}
	if o.FlushPeriod < 0 || o.Cutoff < 0 || o.Yield < 0 {
		return Streamer[C, X]{}, fmt.Errorf("tram: negative option in %+v", o)
	}
	if err := checkTuneBounds(o.TuneMin, o.TuneMax); err != nil {
		return Streamer[C, X]{}, err
	}
	tmin, tmax := o.TuneMin, o.TuneMax
	ms, err := methodsOf[C, X]()
	if err != nil {
		return Streamer[C, X]{}, err
	}
	g, err := group.New[branch[C, X]](from)
	if err != nil {
		return Streamer[C, X]{}, err
	}
	// The set-up goes down the same tree as every later broadcast from
	// here, so it reaches each branch first.
	local := tableFor[C, X](g.Route().Coll, rt.NumPEs())
	err = ms.init.Send(from, g, Setup[C]{Client: client, Entry: entry, Dims: dims, Sizing: o.Sizing, Period: o.FlushPeriod, Yield: o.Yield, Cutoff: o.Cutoff, Tune: o.Tune})
	return Streamer[C, X]{G: g, Dims: topo.Dims(), Period: o.FlushPeriod, Tune: o.Tune, Sizing: o.Sizing, TuneMin: tmin, TuneMax: tmax, local: local}, err
}

// methods are the branch's entry methods, bound by name: inside generic
// code, Go makes (*branch[C, T]).Recv a closure that chare.Send cannot
// recognize (see chare.Bind).
type methods[C, T any] struct {
	init   chare.Bound[branch[C, T], Setup[C]]
	begin  chare.Bound[branch[C, T], beginMsg]
	recv   chare.Bound[branch[C, T], batch[T]]
	marker chare.Bound[branch[C, T], markerMsg]
	drain  chare.Bound[branch[C, T], drainMsg]
	count  chare.Bound[branch[C, T], request]
	answer chare.Bound[branch[C, T], statsAnswer]
}

var boundMethods sync.Map // reflect.Type of branch[C, T] → methods[C, T]

func methodsOf[C, T any]() (methods[C, T], error) {
	key := reflect.TypeFor[branch[C, T]]()
	if m, ok := boundMethods.Load(key); ok {
		return m.(methods[C, T]), nil
	}
	var ms methods[C, T]
	var e1, e2, e3, e4, e5, e6, e7 error
	ms.init, e1 = chare.Bind("Init", (*branch[C, T]).Init)
	ms.begin, e2 = chare.Bind("Begin", (*branch[C, T]).Begin)
	ms.recv, e3 = chare.Bind("Recv", (*branch[C, T]).Recv)
	ms.marker, e4 = chare.Bind("Marker", (*branch[C, T]).Marker)
	ms.drain, e5 = chare.Bind("Drain", (*branch[C, T]).Drain)
	ms.count, e6 = chare.Bind("Count", (*branch[C, T]).Count)
	ms.answer, e7 = chare.Bind("Answer", (*branch[C, T]).Answer)
	if err := errors.Join(e1, e2, e3, e4, e5, e6, e7); err != nil {
		return ms, fmt.Errorf("tram: %w (was tram.Register called?)", err)
	}
	boundMethods.Store(key, ms)
	return ms, nil
}

// Setup is the constructor message of a streamer's branches.
type Setup[C any] struct {
	Client chare.Proxy[C]
	Entry  chare.EntryID
	Dims   []int
	Sizing Sizing
	Period time.Duration
	Yield  int
	Cutoff int
	Tune   bool
}

// branch is a streamer's part on one PE.
type branch[C, T any] struct {
	group.Branch[branch[C, T]]
	setup Setup[C]
	ms    methods[C, T]
	agg   *Aggregator[T]
	me    int // this PE, for the per-item test of insert
	// quick says that Inserter.Insert may take its fast path (setQuick).
	quick    bool
	ap       *actor.PE // this PE's actor, for the per-item Hold
	out      Output[T] // what an insertion triggers, reused (see insert)
	sink     sink[C, T]
	give     giver[T] // the delivery to the client on this PE, made on first use
	step     int
	mode     Mode
	det      chare.Detector
	active   bool // between Begin and Done (or the end of a quiescence step)
	idle     idleFlusher
	done     bool // this PE's producers are done (Completion, Staged)
	produced int  // items produced, not yet told to the detector
	inserts  int  // insertions, for Options.Yield
	// delivering counts nested deliveries to the client; strand says that
	// one of them inserted items in a completion step without a flush
	// period, which leave at the end of the delivered run.
	delivering int
	strand     bool
	// draining says that every producer of this completion step called
	// Done: what a received message leaves in the buffers is sent at its
	// end, instead of waiting for the periodic flush (see Drain).
	draining bool
	drainCB  chare.Callback // on the PE that calls Start, made once
	stg      staged
	tuner    *stepTuner // Options.Tune, on the PE that calls Start
	reports  reports    // Report requests made on this PE
}

// Init builds the branch's aggregator.
func (b *branch[C, T]) Init(s Setup[C]) {
	b.setup, b.idle.period = s, s.Period
	b.me, b.ap = b.PE(), b.Here().Actor()
	topo, err := NewTopology(s.Dims, b.NumPEs())
	if err == nil {
		size, fixed := itemSize[T]()
		b.agg, err = NewAggregator(Config[T]{Topology: topo, PE: b.PE(), Sizing: s.Sizing, Size: size, DirectCutoff: s.Cutoff, Bare: true})
		if err == nil && size == nil {
			b.agg.setFixedSize(fixed)
		}
	}
	p, ok := sinks.Load(s.Entry)
	if err == nil && !ok {
		err = fmt.Errorf("tram: process method #%d is not registered in this process", s.Entry)
	}
	if err == nil {
		b.ms, err = methodsOf[C, T]()
	}
	if err != nil {
		b.Abort(err)
		return
	}
	if b.sink, ok = p.(sink[C, T]); !ok {
		b.Abort(fmt.Errorf("tram: process method #%d was registered for other types", s.Entry))
		return
	}
	tableFor[C, T](b.ThisProxy().Route().Coll, b.NumPEs()).slots[b.PE()].Store(b)
}

// beginMsg starts step Step on every branch.
type beginMsg struct {
	Step      int
	Mode      Mode
	Det       chare.Detector
	Started   chare.Callback
	Finished  chare.Callback // Staged
	Producers int            // Staged: local contributors
	Senders   chare.CollID   // Staged: count the local elements of this array
	// BufferItems and Period, if set, are a tuned size and flush period
	// for this step (Options.Tune).
	BufferItems int
	Period      time.Duration
}

// Start begins a communication step (init, T12/T15/T27): the Started
// callback runs once every PE accepts items.
func (s Streamer[C, T]) Start(from chare.Context, st Step) error {
	b := group.LocalBranch(from, s.G)
	if b == nil {
		return errors.New("tram: Start needs a context on a PE of the job")
	}
	m := beginMsg{Step: b.step + 1, Mode: st.Mode, Started: st.Started}
	topo, err := NewTopology(s.Dims, b.NumPEs())
	if err != nil {
		return fmt.Errorf("tram: Start: %w", err)
	}
	if s.Period <= 0 && needsFlushing(st.Mode, topo) {
		return fmt.Errorf("tram: a %s step on a %v grid needs periodic flushing (Options.FlushPeriod, claim T25): items would wait in buffers forever", st.Mode, topo)
	}
	if s.Tune && st.Mode != Quiescence {
		items := s.Sizing.resolve(topo.NumPeers(b.PE())).BufferItems
		if st.Finished, err = b.tuneStep(&m, st.Finished, items, s.Period, s.TuneMin, s.TuneMax); err != nil {
			return fmt.Errorf("tram: Start: tuning: %w", err)
		}
	}
	switch st.Mode {
	case Staged:
		if st.Producers < 0 {
			return fmt.Errorf("tram: a staged step with %d local producers", st.Producers)
		}
		m.Producers, m.Finished, m.Senders = st.Producers, st.Finished, st.Senders
	case Completion:
		if st.Producers < 1 {
			return fmt.Errorf("tram: a completion step needs at least one producer, not %d", st.Producers)
		}
		c := chare.Completion{Producers: st.Producers, Finished: st.Finished}
		if needsFlushing(st.Mode, topo) {
			c.AllProduced = b.drainCallback()
		}
		det, err := chare.StartCompletion(from, c)
		if err != nil {
			return err
		}
		m.Det = det
	case Quiescence:
	default:
		return fmt.Errorf("tram: unknown termination mode %d", st.Mode)
	}
	ms, err := methodsOf[C, T]()
	if err != nil {
		return err
	}
	return ms.begin.Send(from, s.G, m)
}

// Begin starts a step on this PE.
func (b *branch[C, T]) Begin(m beginMsg) {
	b.step, b.mode, b.det, b.active, b.done = m.Step, m.Mode, m.Det, true, false
	b.draining = false
	b.resize(m.BufferItems, m.Period)
	b.setQuick()
	b.tick()
	_ = b.Contribute(nil, reducer.Nop, m.Started)
	if m.Mode == Staged {
		producers := m.Producers
		if m.Senders != 0 {
			n, err := b.localElements(m.Senders)
			if err != nil {
				b.Abort(err)
				return
			}
			producers = n
		}
		b.stg.begin(b.step, b.agg.cfg.Topology.NumDims(), producers, m.Finished)
		b.advance() // a PE without producers is done at once (T14)
	}
}

// Insert submits an item for PE dest (insertData, T17). It must be called
// on a PE of the job, between the Started callback and this PE's Done.
// A loop that inserts many items on one PE does better with the PE's
// Inserter (Local), which finds the branch once.
func (s Streamer[C, T]) Insert(from chare.Context, item T, dest int) error {
	b := s.local.get(from)
	if b == nil || !b.active || b.done || b.agg == nil {
		var err error
		if b, err = acceptingBranch(b, from, s.G); err != nil {
			return err
		}
	}
	in := Inserter[C, T]{b: b}
	return in.Insert(item, dest)
}

// Inserter is a streamer's branch on one PE, found once for a loop of
// insertions: what Charm++ programs reach with ckLocalBranch() before
// calling insertData in a loop. Its Insert is Streamer.Insert without the
// look-up of the branch and the context's checks. It belongs to its PE:
// use it only in entry methods that run there (a PE runs one at a time),
// never from another goroutine. It stays valid from step to step; Insert
// refuses items outside a step as Streamer.Insert does. It does not
// travel: keep the Streamer in a chare's fields (it migrates and is
// checkpointed) and call Local again where the object lands; a zero
// Inserter (one decoded from a message or a checkpoint) refuses items.
type Inserter[C, T any] struct{ b *branch[C, T] }

// Local returns the Inserter of the streamer's branch on from's PE. The
// branch must be set up there (as it is once Start's Started callback ran).
func (s Streamer[C, T]) Local(from chare.Context) (*Inserter[C, T], error) {
	b, err := s.branchAny(from)
	if err != nil {
		return nil, err
	}
	if b.agg == nil {
		return nil, errors.New("tram: the streamer is not set up on this PE")
	}
	return &Inserter[C, T]{b: b}, nil
}

// Insert submits an item for PE dest (insertData, T17), between the
// Started callback and this PE's Done.
func (in *Inserter[C, T]) Insert(item T, dest int) error {
	b := in.b
	if b == nil {
		return errors.New("tram: an Inserter that was not made by Streamer.Local here (it does not travel)")
	}
	a := b.agg
	// The usual item in one function: a step open for it (quick), another
	// PE of the grid, a buffer slot from the hop table. What
	// Aggregator.InsertTo and buffered do, with the loads they share made
	// once: a copy on purpose, since one shared placement (used by
	// InsertTo and add as well) costs a call per item on this path.
	if b.quick && uint(dest) < uint(len(a.hop)) && dest != b.me {
		h := a.hop[dest]
		slot, n := int(h>>1), 0
		// (x = append(x, …) with the same x on both sides: Go stores
		// only the new length while the buffer has room.)
		if h&1 != 0 { // the last hop: the item alone
			if len(a.fin[slot]) == cap(a.fin[slot]) {
				a.fin[slot] = a.moreFinal(a.fin[slot])
			}
			a.fin[slot] = append(a.fin[slot], item)
			n = len(a.fin[slot]) + len(a.bufs[slot])
		} else {
			if len(a.bufs[slot]) == cap(a.bufs[slot]) {
				a.bufs[slot] = a.moreBuffer(a.bufs[slot])
			}
			a.bufs[slot] = append(a.bufs[slot], Envelope[T]{Dest: dest, Item: item})
			n = len(a.bufs[slot]) + len(a.fin[slot])
		}
		a.buffered++
		a.stats.Inserted++
		b.ap.Hold(1) // the item is work until it is delivered (T23)
		if b.mode == Completion {
			b.produced++ // told to the detector before the item can be consumed
		}
		b.idle.busy = true
		if n >= a.sizing.BufferItems || a.buffered >= a.sizing.TotalCapacity {
			a.full(slot, &b.out)
			b.sendOut()
		}
		if b.setup.Yield > 0 {
			return b.yield()
		}
		return nil
	}
	if b.quick && dest == b.me && b.give.one != nil {
		// The local fast path of insert (the client is found).
		a.InsertLocal()
		b.idle.busy = true
		b.delivering++
		b.give.one(item)
		b.delivering--
		if b.setup.Yield > 0 {
			return b.yield()
		}
		return nil
	}
	if !b.active || b.done {
		return fmt.Errorf("tram: no step accepts items on PE %d (insert after Started and before Done, T20, T27)", b.me)
	}
	return b.insertItem(item, dest)
}

// setQuick decides whether Inserter.Insert may take its fast path: in a
// step open for items, with the aggregator's fast path (a hop table, one
// size, no cutoff), and no strand to watch for (a completion step without
// a flush period, whose deliveries' insertions must be noticed). Run it
// wherever one of those changes.
func (b *branch[C, T]) setQuick() {
	b.quick = b.active && !b.done && b.agg != nil && b.agg.fast &&
		!(b.mode == Completion && b.setup.Period <= 0)
}

// insertItem is Insert on a branch that accepts items.
func (b *branch[C, T]) insertItem(item T, dest int) error {
	// b.insert written out for the usual item, for another PE: the item
	// is passed on the stack at each call, so one call less counts.
	if dest != b.me {
		if err := b.agg.InsertTo(item, dest, &b.out); err != nil {
			return err
		}
		b.buffered()
	} else if err := b.insert(item, dest); err != nil {
		return err
	}
	if b.setup.Yield > 0 {
		return b.yield()
	}
	return nil
}

// yield counts an insertion and lets the PE run other messages every
// Options.Yield of them (in a threaded entry method).
func (b *branch[C, T]) yield() error {
	if b.inserts++; b.inserts%b.setup.Yield == 0 {
		if err := chare.Yield(b); err != nil && err != chare.ErrNotThreaded {
			return err
		}
	}
	return nil
}

// Broadcast submits an item for every PE (T18).
func (s Streamer[C, T]) Broadcast(from chare.Context, item T) error {
	b, err := s.branchOn(from)
	if err != nil {
		return err
	}
	for pe := 0; pe < b.NumPEs(); pe++ {
		if err := b.insert(item, pe); err != nil {
			return err
		}
	}
	return nil
}

// Done records that n of this PE's producers finished (T19); after it, no
// item may be inserted on this PE (T20).
func (s Streamer[C, T]) Done(from chare.Context, n int) error {
	b, err := s.branchOn(from)
	if err != nil {
		return err
	}
	switch b.mode {
	case Staged:
		if n > b.stg.left {
			return fmt.Errorf("tram: Done(%d) on PE %d, which has %d producers left", n, b.PE(), b.stg.left)
		}
		b.stg.left -= n
		b.done = b.stg.left == 0
		b.setQuick()
		b.advance()
		return nil
	case Completion:
		// The producers are counted across the job (T19): other producers
		// on this PE may still insert, so the PE stays open (T20).
		b.syncProduced()
		b.flush() // T26: what this PE holds leaves now
		return b.det.Done(b, n)
	}
	return errors.New("tram: Done belongs to completion and staged steps; a quiescence step has no Done (T15)")
}

// branchAny returns this PE's branch, in or out of a step.
func (s Streamer[C, T]) branchAny(from chare.Context) (*branch[C, T], error) {
	b := s.local.get(from)
	if b == nil {
		b = group.LocalBranch(from, s.G)
	}
	if b == nil {
		return nil, errors.New("tram: no streamer branch here")
	}
	return b, nil
}

// branchOn returns this PE's branch if it accepts items.
func (s Streamer[C, T]) branchOn(from chare.Context) (*branch[C, T], error) {
	return acceptingBranch(s.local.get(from), from, s.G)
}

// acceptingBranch checks b, found in the table, or else looked up in g.
func acceptingBranch[C, T any](b *branch[C, T], from chare.Context, g group.Proxy[branch[C, T]]) (*branch[C, T], error) {
	if b != nil && b.active && !b.done && b.agg != nil {
		return b, nil // the usual case, decided here
	}
	if b == nil {
		b = group.LocalBranch(from, g)
	}
	switch {
	case b == nil:
		return nil, errors.New("tram: no streamer branch here (a context on a PE of the job is needed)")
	case b.agg == nil:
		return nil, errors.New("tram: the streamer is not set up on this PE")
	case !b.active || b.done:
		return nil, fmt.Errorf("tram: no step accepts items on PE %d (insert after Started and before Done, T20, T27)", b.PE())
	}
	return b, nil
}

func (b *branch[C, T]) insert(item T, dest int) error {
	if dest == b.me {
		// The local fast path: produced and consumed at once, so neither
		// the detector nor quiescence detection needs to hear of it.
		if b.give.one == nil && !b.makeGive() {
			return fmt.Errorf("tram: no client to deliver to on PE %d", dest)
		}
		b.agg.InsertLocal()
		b.idle.busy = true
		b.delivering++
		b.give.one(item)
		b.delivering--
		return nil
	}
	if err := b.agg.InsertTo(item, dest, &b.out); err != nil {
		return err
	}
	b.buffered()
	return nil
}

// buffered counts an item put in a buffer and sends what it made leave.
func (b *branch[C, T]) buffered() {
	b.ap.Hold(1) // the item is work until it is delivered (T23)
	if b.mode == Completion {
		b.produced++ // told to the detector before the item can be consumed
	}
	b.idle.busy = true
	if b.delivering > 0 && b.mode == Completion && b.setup.Period <= 0 {
		// A delivery inserts after its PE's Done may have flushed for the
		// last time: on a 1-D grid (the only one such a step may use, T25)
		// nothing else would ever send it.
		b.strand = true
	}
	b.sendOut()
}

// sendOut sends what the last insertion made leave (b.out).
func (b *branch[C, T]) sendOut() {
	if !b.out.Empty() {
		// A delivery that handle makes may insert again: it gets an
		// empty Output, and the slices come back for reuse afterwards.
		out := b.out
		b.out = Output[T]{}
		b.handle(out)
		if b.out.Empty() {
			clear(out.Flushes) // sent: the buffers belong to the messages
			clear(out.Direct)
			clear(out.Local)
			b.out = Output[T]{Flushes: out.Flushes[:0], Direct: out.Direct[:0], Local: out.Local[:0]}
		}
	}
}

// syncProduced tells the detector about the items produced so far; it
// runs before any item leaves the PE or is delivered.
func (b *branch[C, T]) syncProduced() {
	if b.produced > 0 {
		_ = b.det.Produce(b, b.produced)
		b.produced = 0
	}
}

// batch is the message between branches: items to route, items for the
// receiver itself (their last hop, without a destination: a Flush's
// Final), the step's detector and, for staged completion, the sender.
type batch[T any] struct {
	Items []Envelope[T]
	Final []T
	Det   chare.Detector
	From  int
}

// Recv routes a message from a peer (T08). The items for this PE are
// delivered as they come, and counted once for the whole run: one
// Release, one Consume and so at most one poke of the detector's root per
// message instead of one per item.
func (b *branch[C, T]) Recv(m batch[T]) {
	b.idle.busy = true
	if m.Det.ID != 0 {
		b.det = m.Det // items may come before this PE's Begin
	}
	var out Output[T]
	local, err := b.agg.RouteSplit(m.Items, &out)
	n := 0
	// The client's branch is found on the first delivery: a PE that
	// only passes items on may not have one yet.
	if len(local)+len(m.Final) > 0 && (b.give.one != nil || b.makeGive()) {
		b.delivering++
		if len(local) > 0 {
			b.give.run(local)
		}
		if len(m.Final) > 0 {
			b.agg.Arrived(len(m.Final))
			b.give.bare(m.Final)
		}
		n = len(local) + len(m.Final)
		b.delivering--
	}
	b.agg.Recycle(m.Items)
	b.agg.RecycleFinal(m.Final)
	if err != nil {
		b.Abort(err)
		return
	}
	if n > 0 {
		b.consumed(n)
	}
	b.handle(out)
	if b.strand || b.draining {
		b.strand = false
		b.flush()
	}
	if b.mode == Staged {
		b.stg.received(m.From)
		b.advance()
	}
}

func (b *branch[C, T]) handle(out Output[T]) {
	for _, f := range out.Flushes {
		b.send(f)
	}
	for _, e := range out.Direct {
		b.send(Flush[T]{To: e.Dest, Items: []Envelope[T]{e}})
	}
	for _, e := range out.Local {
		b.deliver(e.Item)
	}
}

// send sends one buffer's items (f.Final: those for f.To itself) to f.To.
func (b *branch[C, T]) send(f Flush[T]) {
	b.syncProduced()
	if b.mode == Staged {
		b.stg.sent[f.To]++
	}
	if err := b.ms.recv.Send(b, b.ThisProxy().At(f.To), batch[T]{Items: f.Items, Final: f.Final, Det: b.det, From: b.PE()}); err != nil {
		b.Abort(err)
	}
}

// deliver hands one item to the client's local branch (T10).
func (b *branch[C, T]) deliver(item T) {
	if b.give.one == nil && !b.makeGive() {
		return
	}
	b.delivering++
	b.give.one(item)
	b.delivering--
	b.consumed(1)
}

// makeGive finds the client's branch on this PE, on first use.
func (b *branch[C, T]) makeGive() bool {
	give, err := b.sink(b, b.setup.Client)
	if err != nil {
		b.Abort(err)
		return false
	}
	b.give = give
	return true
}

// consumed counts n items delivered: what their deliveries inserted is
// told to the detector first, so that it never sees them consumed before
// what they caused was produced.
func (b *branch[C, T]) consumed(n int) {
	b.syncProduced()
	b.Here().Actor().Release(n)
	if b.det.ID != 0 {
		_ = b.det.Consume(b, n)
	}
}

func (b *branch[C, T]) flush() {
	fs := b.agg.FlushAll()
	if pe := b.Here(); len(fs) > 0 && core.Tracing(pe) {
		pe.TraceInstant("tram", "tram flush", "buffers", len(fs))
	}
	for _, f := range fs {
		b.send(f)
	}
}

// drainMsg tells every branch that all producers of step Step are done.
type drainMsg struct{ Step int }

// drainCallback is the AllProduced callback of this PE's completion
// steps on a grid of several dimensions: it tells every branch to drain.
// It is made once per branch: function callbacks are kept until the job ends.
func (b *branch[C, T]) drainCallback() chare.Callback {
	if b.drainCB.Kind == 0 {
		b.drainCB = chare.FuncCallback(b, b.PE(), func(ctx chare.Context, _ any) {
			// Straight to each branch, not down the broadcast tree: the
			// drain ends the step, and every hop of the tree waits behind
			// the batches queued at that PE.
			m, g := drainMsg{Step: b.step}, b.ThisProxy()
			for pe := range b.NumPEs() {
				if err := b.ms.drain.Send(ctx, g.At(pe), m); err != nil {
					b.Abort(err)
					return
				}
			}
		})
	}
	return b.drainCB
}

// Drain: every producer of the step called Done, so no item is inserted
// any more but by deliveries. Items that pass this PE on a grid of
// several dimensions would wait in its buffers for the periodic flush
// (T24, T25); from now on they leave at the end of each received
// message, and what is buffered leaves now (T26). An old step's drain is
// ignored.
func (b *branch[C, T]) Drain(m drainMsg) {
	if m.Step != b.step || !b.active || b.mode != Completion {
		return
	}
	b.draining = true
	b.flush()
}

// tick keeps the periodic flush going while a step is active (T24).
func (b *branch[C, T]) tick() {
	b.idle.arm(b.Here().Actor(), b.flush, func() bool { return b.active })
}

// itemSize measures items for the direct-send cutoff: their own Size
// method, or else (a nil function) the size of their type, fixed.
func itemSize[T any]() (size func(T) int, fixed int) {
	if _, ok := any(*new(T)).(interface{ Size() int }); ok {
		return func(item T) int { return any(item).(interface{ Size() int }).Size() }, 0
	}
	return nil, int(reflect.TypeFor[T]().Size())
}

// localElements counts the elements of an array on this PE (the senders
// of a staged step, T14).
func (b *branch[C, T]) localElements(coll chare.CollID) (int, error) {
	part, err := core.PartOf(b.Here(), coll)
	if err != nil {
		return 0, fmt.Errorf("tram: the senders of a staged step: %w", err)
	}
	n, ok := part.(interface{ NumLocal() int })
	if !ok {
		return 0, fmt.Errorf("tram: the senders of a staged step (%v) are not a chare array", coll)
	}
	return n.NumLocal(), nil
}
