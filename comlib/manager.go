package comlib

import (
	"fmt"
	"sync"

	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/chare/reducer"
	"github.com/charmgo/charm/group"
	"github.com/charmgo/charm/internal/core"
)

// The manager: a group with a branch on every PE (C03). Its state on a PE
// lives in the PE's slot (state), created on first use, so that sends
// through an instance work — by waiting — before the branch exists there.
//
// The strategy table goes out from PE 0 by the protocol of C04:
//
//	PE 0: New marks the entry new; once the manager's set-up barrier has
//	      passed and no table broadcast is under way, it broadcasts every
//	      new entry (Table) and marks them in sync.
//	each PE: takes the entries, marks them in sync, acknowledges (Ack1).
//	PE 0: with every Ack1, marks them ready, releases what it held for
//	      them, and broadcasts Sync.
//	each PE: on Sync marks them ready, releases what it held, and sends a
//	      second acknowledgement (Ack2).
//	PE 0: with every Ack2 the broadcast is over; entries created
//	      meanwhile go out in the next one (C04 step 6).

type status uint8

const (
	stNew status = iota
	stInSync
	stReady
)

// peState holds Comlib's state on every PE.
var peState chare.Slot[*state]

// jobStats keeps the per-process counters of a job's instances, until
// the job ends (its instances keep their own; an entry kept after the
// job would keep the whole job from being collected).
var jobStats sync.Map // *chare.Job → *statsTable

func init() { core.OnJobEnd(func(j *chare.Job) { jobStats.Delete(j) }) }

type statsTable struct {
	mu sync.Mutex
	m  map[uint32]*Stats
}

func statsFor(job *chare.Job, id uint32) *Stats {
	v, _ := jobStats.LoadOrStore(job, &statsTable{m: map[uint32]*Stats{}})
	t := v.(*statsTable)
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.m[id]
	if s == nil {
		s = &Stats{}
		t.m[id] = s
	}
	return s
}

// state is the manager's state on one PE.
type state struct {
	pe    *chare.PE
	g     group.Proxy[branch] // zero until known here
	b     *branch             // this PE's branch, once it exists
	insts map[uint32]*Instance
	table map[uint32]*entry
	held  map[uint32][]op // C05: what waits for an entry to be ready
	order []uint32        // entries with held ops, in the order they began to wait

	root *rootState // PE 0 only

	nextReq uint64
	reqs    map[uint64]*statsReq // Report requests made on this PE
}

// entry is an instance's entry in this PE's table.
type entry struct {
	id     uint32
	spec   Spec
	status status
	strat  peStrategy

	// An Auto instance whose pruned tree is fixed, once its part is
	// ready: sends go to alias's strategy with no work of Auto's beyond
	// a count (autoPE.toPart sets it).
	auto  *autoPE
	alias *entry
}

// rootState is PE 0's side of the table protocol.
type rootState struct {
	next      uint32
	barrier   bool // the manager's set-up barrier has passed
	busy      bool // a table broadcast is under way
	version   int
	acks      int
	inSync    []uint32
	createdAt []uint32 // new entries, in creation order
}

func stateOf(pe *chare.PE) *state {
	if s := peState.Get(pe); s != nil {
		return s
	}
	s := &state{pe: pe, insts: map[uint32]*Instance{}, table: map[uint32]*entry{}, held: map[uint32][]op{}}
	peState.Set(pe, s)
	return s
}

func (s *state) instance(id uint32) *Instance {
	in := s.insts[id]
	if in == nil {
		in = &Instance{id: id, job: s.pe.Job(), st: statsFor(s.pe.Job(), id)}
		s.insts[id] = in
	}
	return in
}

// ctx is the context the manager sends with on this PE.
func (s *state) ctx() chare.Context {
	if s.b != nil {
		return s.b
	}
	return core.ContextOf(s.pe)
}

// create runs New on PE 0.
func (s *state) create(from chare.Context, sp Spec) (*Instance, error) {
	if s.root == nil {
		s.root = &rootState{next: 1}
		g, err := group.NewWith(from, (*branch).Init, setup{})
		if err != nil {
			return nil, fmt.Errorf("comlib: creating the manager group: %w", err)
		}
		s.g = g
	}
	r := s.root
	id := r.next
	r.next++
	s.table[id] = &entry{id: id, spec: sp, status: stNew}
	r.createdAt = append(r.createdAt, id)
	s.maybeBroadcast()
	return s.instance(id), nil
}

// ---- the manager group ----

type setup struct{ Unused bool }

// branch is the manager's branch on one PE.
type branch struct {
	group.Branch[branch]
	st *state
}

func init() {
	chare.Register[branch]()
}

// Pack and Unpack: the manager keeps nothing a checkpoint needs; a
// restarted job makes its strategies again.
func (b *branch) Pack() ([]byte, error) { return nil, nil }
func (b *branch) Unpack([]byte) error   { return nil }

// Init joins the branch to its PE's state and passes the set-up barrier.
func (b *branch) Init(setup) {
	s := stateOf(b.Here())
	s.b, s.g, b.st = b, b.ThisProxy(), s
	cb := chare.EntryCallback0(b.ThisProxy().At(0), (*branch).SetupDone)
	if err := b.Contribute(nil, reducer.Nop, cb); err != nil {
		b.Abort(fmt.Errorf("comlib: set-up barrier: %w", err))
	}
}

// SetupDone runs on PE 0 once every branch exists (C03).
func (b *branch) SetupDone() {
	b.st.root.barrier = true
	b.st.maybeBroadcast()
}

type tableMsg struct {
	Version int
	IDs     []uint32
	Specs   []Spec
}

// maybeBroadcast sends the new entries if nothing stands in the way.
func (s *state) maybeBroadcast() {
	r := s.root
	if !r.barrier || r.busy || len(r.createdAt) == 0 {
		return
	}
	r.busy, r.version, r.acks = true, r.version+1, 0
	m := tableMsg{Version: r.version}
	for _, id := range r.createdAt {
		e := s.table[id]
		e.status = stInSync
		m.IDs, m.Specs = append(m.IDs, id), append(m.Specs, e.spec)
	}
	r.inSync, r.createdAt = r.createdAt, nil
	if err := chare.Send(s.ctx(), s.g, (*branch).Table, m); err != nil {
		s.pe.Fail(fmt.Errorf("comlib: table broadcast: %w", err))
	}
}

// Table takes the new entries (C04 step 3).
func (b *branch) Table(m tableMsg) {
	s := b.st
	if len(m.IDs) != len(m.Specs) {
		b.Abort(fmt.Errorf("comlib: a strategy table with %d ids and %d strategies", len(m.IDs), len(m.Specs)))
		return
	}
	for i, id := range m.IDs {
		e := s.table[id]
		if e == nil {
			e = &entry{id: id, spec: m.Specs[i]}
			s.table[id] = e
		}
		if e.strat == nil {
			// Made now, so that messages from PEs that are ready before
			// this one find it.
			strat, err := newStrategy(s, s.instance(id), e.spec)
			if err != nil {
				b.Abort(fmt.Errorf("comlib: instance %d on PE %d: %w", id, b.PE(), err))
				return
			}
			e.strat = strat
		}
		if e.status == stNew {
			e.status = stInSync
		}
	}
	if err := chare.Send(b, b.ThisProxy().At(0), (*branch).Ack1, m.Version); err != nil {
		b.Abort(err)
	}
}

// Ack1 counts the first acknowledgements on PE 0 (C04 step 4).
func (b *branch) Ack1(version int) {
	s, r := b.st, b.st.root
	if version != r.version {
		b.Abort(fmt.Errorf("comlib: acknowledgement of table %d while table %d is out", version, r.version))
		return
	}
	if r.acks++; r.acks < b.NumPEs() {
		return
	}
	r.acks = 0
	for _, id := range r.inSync {
		s.ready(id)
	}
	if err := chare.Send(b, b.ThisProxy(), (*branch).Sync, version); err != nil {
		b.Abort(err)
	}
}

// Sync marks the entries ready on every PE (C04 step 5).
func (b *branch) Sync(version int) {
	s := b.st
	for id, e := range s.table {
		if e.status == stInSync {
			s.ready(id)
		}
	}
	if err := chare.Send(b, b.ThisProxy().At(0), (*branch).Ack2, version); err != nil {
		b.Abort(err)
	}
}

// Ack2 ends a table broadcast on PE 0 (C04 step 6).
func (b *branch) Ack2(version int) {
	r := b.st.root
	if r.acks++; r.acks < b.NumPEs() {
		return
	}
	r.busy = false
	b.st.maybeBroadcast()
}

// ready marks an entry ready and releases what waited for it.
func (s *state) ready(id uint32) {
	e := s.table[id]
	if e.status == stReady || e.strat == nil {
		return
	}
	e.status = stReady
	s.release(id)
}

// ---- held operations (C05) ----

type opKind uint8

const (
	opSend opKind = iota
	opBroadcast
	opMulticast
	opBegin
	opEnd
	opFlush
	opScore
)

// op is a send or a bracket call made through an instance, kept with
// the identity of its caller when it must wait.
type op struct {
	kind  opKind
	env   chare.Envelope
	iter  int
	coll  chare.CollID // the caller (bracketed strategies check it)
	index any
	isObj bool
	cost  float64 // opScore
	// size is the message's msgSize, measured once by the first run of a
	// message op (an Auto instance's run, then its part's, share it).
	size  int
	sized bool
}

func opFrom(from chare.Context, k opKind, e chare.Envelope, iter int) op {
	o := op{kind: k, env: e, iter: iter}
	o.coll, o.index, o.isObj = core.Identity(from)
	return o
}

// do runs an op through the instance's strategy, or holds it while the
// instance is not ready here or earlier ops wait.
func (s *state) do(in *Instance, o op) error {
	e := s.table[in.id]
	if e != nil && e.alias != nil && o.kind <= opMulticast && !e.auto.busy {
		e.auto.countFixed()
		return s.run(e.alias, e.auto.parts[0], o)
	}
	if e == nil || e.status != stReady || len(s.held[in.id]) > 0 {
		if s.root != nil && e == nil && in.id >= s.root.next {
			return fmt.Errorf("comlib: %v does not exist (PE 0 made %d instances)", in, s.root.next-1)
		}
		if len(s.held[in.id]) == 0 {
			s.order = append(s.order, in.id)
		}
		s.held[in.id] = append(s.held[in.id], o)
		s.pe.Actor().Hold(1)
		if o.kind != opFlush && o.kind != opScore { // messages held, not calls
			in.st.held.Add(1)
		}
		return nil
	}
	return s.run(e, in, o)
}

func (s *state) run(e *entry, in *Instance, o op) error {
	// An Auto instance's messages are its parts' (Instance.Stats): one
	// shared counter less per send.
	if o.kind <= opMulticast {
		if !o.sized {
			o.size, o.sized = msgSize(o.env), true
		}
		if _, isAuto := e.strat.(*autoPE); !isAuto {
			in.st.messages.Add(1)
			in.st.bytes.Add(int64(o.size))
		}
	}
	switch o.kind {
	case opSend:
		return e.strat.send(o)
	case opBroadcast:
		return e.strat.broadcast(o)
	case opMulticast:
		return e.strat.multicast(o)
	case opBegin, opEnd:
		b, ok := e.strat.(bracketed)
		if !ok {
			return nil // not a bracketed strategy: nothing to do
		}
		if o.kind == opBegin {
			return b.begin(o)
		}
		return b.end(o)
	case opFlush:
		switch t := e.strat.(type) {
		case *stream:
			t.flushAll()
		case *e2m:
			t.flushReports()
		case *autoPE:
			return t.run(o) // to every part
		}
		return nil
	case opScore:
		if a, ok := e.strat.(*autoPE); ok {
			return a.run(o) // to its scored parts
		}
		t, ok := e.strat.(*stream)
		if !ok || t.tuner == nil || !t.sp.Scored {
			return fmt.Errorf("comlib: Score on %v, which is not Streaming with StreamOptions{Tune: true, Scored: true}", in)
		}
		return t.tuner.observe(o.cost)
	}
	return fmt.Errorf("comlib: unknown operation %d", o.kind)
}

// release runs, in order, what waited for an instance: the one place
// held messages leave from (C05).
func (s *state) release(id uint32) {
	ops := s.held[id]
	delete(s.held, id)
	e, in := s.table[id], s.instance(id)
	for i, o := range ops {
		s.pe.Actor().Release(1)
		if err := s.run(e, in, o); err != nil {
			s.pe.Fail(fmt.Errorf("comlib: %v: a held %s: %w", in, opNames[o.kind], err))
			for range ops[i+1:] {
				s.pe.Actor().Release(1)
			}
			return
		}
	}
}

var opNames = [...]string{"send", "broadcast", "multicast", "BeginIteration", "EndIteration", "Flush", "Score"}

// ---- the delegate ----

func (in *Instance) do(from chare.Context, k opKind, e chare.Envelope, iter int) error {
	return in.doOp(from, opFrom(from, k, e, iter))
}

func (in *Instance) doOp(from chare.Context, o op) error {
	pe := chare.PEOf(from)
	if pe == nil {
		return chare.ErrNoContext
	}
	if in == nil || in.id == 0 {
		return fmt.Errorf("comlib: a proxy delegated to an instance that comlib.New did not make")
	}
	if pe.Job() != in.job {
		return fmt.Errorf("comlib: %v belongs to another job", in)
	}
	return stateOf(pe).do(in, o)
}

// Send implements chare.Delegate.
func (in *Instance) Send(from chare.Context, e chare.Envelope) error {
	return in.do(from, opSend, e, 0)
}

// Broadcast implements chare.Delegate.
func (in *Instance) Broadcast(from chare.Context, e chare.Envelope) error {
	return in.do(from, opBroadcast, e, 0)
}

// Multicast implements chare.Delegate.
func (in *Instance) Multicast(from chare.Context, e chare.Envelope) error {
	return in.do(from, opMulticast, e, 0)
}

// BeginIteration implements chare.Bracketed (C06).
func (in *Instance) BeginIteration(from chare.Context, iteration int) error {
	return in.do(from, opBegin, nil, iteration)
}

// EndIteration implements chare.Bracketed (C06).
func (in *Instance) EndIteration(from chare.Context) error {
	return in.do(from, opEnd, nil, 0)
}

// ---- strategies on a PE ----

// peStrategy is an instance's strategy on one PE.
type peStrategy interface {
	send(o op) error
	broadcast(o op) error
	multicast(o op) error
}

// bracketed strategies also see the brackets.
type bracketed interface {
	begin(o op) error
	end(o op) error
}

func newStrategy(s *state, in *Instance, sp Spec) (peStrategy, error) {
	switch sp.Kind {
	case "direct":
		return &direct{s: s, in: in}, nil
	case "streaming":
		st, err := newStream(s, in, sp.Streaming)
		if err != nil {
			return nil, err
		}
		return st, nil
	case "each-to-many":
		return newE2M(s, in, sp.EachToMany)
	case "multicast":
		return newMcast(s, in, sp.Multicast)
	case "auto":
		return newAutoPE(s, in, sp)
	}
	return nil, fmt.Errorf("unknown strategy %q", sp.Kind)
}

// strategyOf returns the ready strategy of an instance on this PE.
func (s *state) strategyOf(id uint32) (peStrategy, error) {
	e := s.table[id]
	if e == nil || e.strat == nil {
		return nil, fmt.Errorf("comlib: a message for instance %d reached PE %d before its strategy table entry", id, s.pe.ID())
	}
	return e.strat, nil
}

// direct sends everything directly.
type direct struct {
	s  *state
	in *Instance
}

func (d *direct) send(o op) error      { return chare.Forward(d.s.ctx(), o.env) }
func (d *direct) broadcast(o op) error { return chare.Forward(d.s.ctx(), o.env) }
func (d *direct) multicast(o op) error { return chare.Forward(d.s.ctx(), o.env) }
