package bracket

import (
	"fmt"
	"slices"
	"sort"
)

// Key names a source across the job (its index in a form that is the
// same in every process).
type Key string

// Router is what the exchange needs of a store-and-forward router over
// the participants, numbered 0..n−1 (package comlib/route provides them).
type Router interface {
	Stages() int
	SendTo(self, stage int) []int
	RecvFrom(self, stage int) []int
	NextHop(at, dest, stage int) int
}

// Msg is one message on its way to the PE Dest. Src is the source that
// sent it and DestKey the source it is for, when the destination is itself
// a source (empty otherwise); both serve the checks of C07.
type Msg[T any] struct {
	Dest    int
	Src     Key
	DestKey Key
	Iter    int
	Payload T
}

// Packet is one stage's combined message from one PE to another.
// Variant is the router variant its sender exchanges the iteration with
// (Options.Variant): a receiver that runs it with another one fails the
// job (Effects.Errors) instead of misrouting — every packet checks the
// PEs' agreement, whether or not the iteration is reported anywhere.
type Packet[T any] struct {
	From, To   int
	Iter, Step int
	Stage      int
	Variant    int `msgpack:",omitempty"`
	Msgs       []Msg[T]
}

// Note tells PE 0 that a PE found its list wrong at an iteration.
type Note struct {
	PE, Iter int
	Reason   string
}

// Enter is PE 0's word that an iteration is in error everywhere.
type Enter struct{ Iter, Step int }

// Progress is how far a source has come: the last iteration it began,
// and whether it has ended it.
type Progress struct {
	Iter  int
	Ended bool
}

func (p Progress) after(q Progress) bool {
	return p.Iter > q.Iter || p.Iter == q.Iter && p.Ended && !q.Ended
}

// Report tells PE 0 which sources on a PE have ended the iteration under
// recovery.
type Report struct {
	PE, Iter, Step int
	Sources        map[Key]Progress
}

// List is where the sources are, made by PE 0 after a recovery.
type List struct {
	Step  int // the recovery that made it
	Iter  int // the iteration it recovered
	Where map[Key]int
}

// Participants returns the PEs that have sources, sorted.
func (l *List) Participants() []int {
	seen := map[int]bool{}
	var out []int
	for _, pe := range l.Where {
		if !seen[pe] {
			seen[pe] = true
			out = append(out, pe)
		}
	}
	sort.Ints(out)
	return out
}

// Effects are what the runtime must do after an event.
type Effects[T any] struct {
	Packets []Packet[T] // to other PEs
	Direct  []Msg[T]    // straight to Dest, outside the exchange
	Deliver []Msg[T]    // here (Dest is this PE)
	// Runs are more messages to deliver here, after Deliver, each run in
	// the array of the packet that brought it (Dest is this PE): the last
	// stage's packets, whose messages are not copied again.
	Runs    [][]Msg[T]
	Notes   []Note   // to PE 0
	Reports []Report // to PE 0
	Errors  []error  // broken restrictions (C07), to report and abort
	// Exchanges lists the iterations whose exchange started (statistics).
	Exchanges []int
	// Finished lists the exchanges that ended here, with the variant of
	// the router they ran with (Options.Variant).
	Finished []Finished
	// Wait lists iterations ready to exchange whose variant is not known
	// here yet: they start on a later Resume.
	Wait []int
	// Ack, if not 0, is the step of a list to acknowledge to PE 0.
	Ack int
}

// maxSpare bounds the lists of each kind that Recycle keeps: one per call
// into the PE under way at once (a delivery may call the PE again).
const maxSpare = 8

// spares holds the lists Recycle gave back, by kind.
type spares[T any] struct {
	packets   [][]Packet[T]
	deliver   [][]Msg[T]
	runs      [][][]Msg[T]
	exchanges [][]int
	finished  [][]Finished
}

// Recycle gives back the lists of fx, which the caller no longer reads:
// later events fill them again, as etcd's raft reuses a Ready once it is
// advanced. The messages' arrays that the packets carry (Packet.Msgs),
// and that Runs point into, are not reused: they belong to their
// receivers. Direct, Notes, Reports,
// Errors and Wait are left to the caller, which may keep them. Calling
// Recycle is optional; fx must not be read after.
func (p *PE[T]) Recycle(fx Effects[T]) {
	give(&p.spare.packets, fx.Packets)
	give(&p.spare.deliver, fx.Deliver)
	give(&p.spare.runs, fx.Runs)
	give(&p.spare.exchanges, fx.Exchanges)
	give(&p.spare.finished, fx.Finished)
}

// give keeps s, emptied, for take.
func give[E any](spare *[][]E, s []E) {
	if cap(s) == 0 || len(*spare) >= maxSpare {
		return
	}
	clear(s) // no references kept to what was delivered or sent
	*spare = append(*spare, s[:0])
}

// take returns s if it has room, else a list given back, if any.
func take[E any](spare *[][]E, s []E) []E {
	n := len(*spare)
	if cap(s) > 0 || n == 0 {
		return s
	}
	s = (*spare)[n-1]
	*spare = (*spare)[:n-1] // the slot still points at s: harmless, overwritten by the next give
	return s
}

// Finished is an exchange that ended on this PE: its iteration, the list
// step and number of participants it ran with, and its router's variant.
type Finished struct {
	Iter, Step, Parts, Variant int
}

type status uint8

const (
	open    status = iota // optimized: queued until the exchange
	pending               // after an iteration under recovery: waits for its list
	suspect               // this PE found the list wrong: held, waiting for PE 0
	direct                // in error everywhere: everything goes directly
)

var statusNames = [...]string{"open", "pending", "suspect", "direct"}

func (s status) String() string { return statusNames[s] }

// iter is one iteration on one PE.
type iter[T any] struct {
	n      int
	status status
	began  map[Key]bool
	// checked is the step of the list every source in began passed check
	// against (0: none yet).
	checked int
	ended   int
	queued  []Msg[T] // routed once the exchange starts
	held    []Msg[T] // sent directly once the list is back
	// byDest holds, on a one-hop router (stages.oneHop), the messages
	// queued for each participant, by its rank among the participants of
	// the list of step byStep: the exchange sends each as its packet as
	// it is, where queued is sorted by next hop and copied first. They
	// share one array, in regions sized by the last exchange's counts; a
	// region that fills up moves on alone. byStep 0 means none are queued
	// this way (lists begin at step 1).
	byDest [][]Msg[T]
	byStep int
	// straight is the step of the list under which the iteration's
	// messages go straight to their destinations as they are sent
	// (Options.Straight), 0 if they do not.
	straight int

	started bool
	step    int // the list the exchange runs with
	rank    int
	parts   []int
	router  *stages
	variant int
	stage   int
	got     int         // packets of the current stage received
	recvN   int         // packets the current stage receives (the router's RecvFrom)
	inbox   []Packet[T] // packets not consumed yet
	have    []Msg[T]    // messages here during the exchange
	cur     [][]Msg[T]  // the messages of the current stage's packets consumed so far
}

// Options set what a PE checks.
type Options struct {
	// CountOnly turns off the identity check (C13), leaving the
	// original's count check (C10) alone: for showing what it misses.
	CountOnly bool
	// Name, if set, names a source in error messages (keys are bytes).
	Name func(Key) string
	// Variant, if set, says which variant of the router an iteration's
	// exchange runs with (a parameter tuned while the program runs, such as
	// a fan-out), and whether it is known yet; every PE must answer the
	// same for the same iteration (package comlib/agree sees to it). An
	// iteration whose variant is not known waits (Effects.Wait) until a
	// Resume finds it. Without Variant every exchange uses variant 0.
	Variant func(iter int) (variant int, ok bool)
	// Straight says that one-hop exchanges carry their messages straight
	// to their destinations instead of in packets: for a caller whose own
	// way of sending a message costs what a packet would (the whole job
	// is one process). Every PE of an exchange must be given the same
	// Straight, for the instance's life: a PE that ended an iteration
	// straight never sends that iteration's packet, so one that expects
	// it would wait for ever. On a one-hop list an optimized iteration
	// that has nothing queued, with no earlier iteration under way on the
	// PE, lets each message go straight as it is sent (PE.Straight); its
	// exchange sends and waits for no packet, and ends on the PE once its
	// sources there have ended the iteration; what an iteration queued
	// leaves then, in Effects.Direct even for this PE, so that it follows
	// the messages that went straight before it. A message that went
	// straight is not in the PE, so a late one (C07) is not reported. Not
	// with Variant.
	Straight bool
}

func (p *PE[T]) nm(k Key) string {
	if p.opt.Name != nil {
		return p.opt.Name(k)
	}
	return string(k)
}

// PE is one PE's part of a bracketed instance.
type PE[T any] struct {
	id int
	// sendStage's scratch: counts and positions per hop, hop per message
	hops, hopAt, hopOf []int
	queuedHint         int   // the messages the last exchange here started with
	destHint           []int // per participant, the messages the last one-hop exchange sent it
	opt                Options
	newRouter          func(n, variant int) (Router, error)
	spare              spares[T]       // lists given back by Recycle
	spareIter          *iter[T]        // the last iteration whose exchange ended here
	variants           map[int]*stages // routers of the current list, by variant

	list    *List
	known   map[Key]bool // the list's sources here
	parts   []int
	rank    int // this PE among the participants, or −1
	router  *stages
	errIter int // the iteration under recovery; valid while inErr
	errStep int
	inErr   bool
	done    map[int]bool // iterations recovered: late packets go directly
	iters   map[int]*iter[T]
	elems   map[Key]Progress // sources seen here
	// The last source looked up in elems, and its entry: a source's
	// sends, and the deliveries to it, come one after another.
	lastK  Key
	lastP  Progress
	lastOK bool
	doneHi int // the highest iteration in done
	// reported holds what this PE told PE 0 in the current recovery.
	reported map[Key]Progress
}

// NewPE returns PE id's machine; newRouter makes the router over n
// participants once a list is known, for a variant (0 without
// Options.Variant).
func NewPE[T any](id int, opt Options, newRouter func(n, variant int) (Router, error)) *PE[T] {
	return &PE[T]{id: id, opt: opt, newRouter: newRouter, rank: -1,
		done: map[int]bool{}, iters: map[int]*iter[T]{}, elems: map[Key]Progress{}}
}

// InError reports whether the PE is in error mode.
func (p *PE[T]) InError() bool {
	for _, it := range p.iters {
		if it.status == suspect || it.status == direct {
			return true
		}
	}
	return false
}

// Known returns the number of sources the list puts here, and whether
// there is a list.
func (p *PE[T]) Known() (int, bool) { return len(p.known), p.list != nil }

// Local returns the sources the list puts here (C09).
func (p *PE[T]) Local() []Key {
	out := make([]Key, 0, len(p.known))
	for k := range p.known {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// Iterations returns the iterations still under way here.
func (p *PE[T]) Iterations() int { return len(p.iters) }

func (p *PE[T]) iter(n int) *iter[T] {
	if it := p.iters[n]; it != nil {
		return it
	}
	// queued starts at the size the last iteration's reached: an
	// all-to-all queues as many messages in each.
	var it *iter[T]
	if old := p.spareIter; old != nil {
		p.spareIter = nil
		// Nothing of an ended exchange is left in its arrays: its messages
		// went out as effects, its packets' messages with them.
		clear(old.began)
		have, inbox, cur := old.have[:cap(old.have)], old.inbox[:cap(old.inbox)], old.cur[:cap(old.cur)]
		clear(have)
		clear(inbox)
		clear(cur)
		if cap(have) < p.queuedHint {
			have = make([]Msg[T], 0, p.queuedHint)
		}
		byDest := old.byDest[:cap(old.byDest)]
		clear(byDest)
		*old = iter[T]{n: n, began: old.began, queued: have[:0], inbox: inbox[:0], cur: cur[:0], byDest: byDest[:0]}
		it = old
	} else {
		it = &iter[T]{n: n, began: map[Key]bool{}, queued: make([]Msg[T], 0, p.queuedHint)}
	}
	switch {
	case p.isDone(n) || p.inErr && n == p.errIter:
		it.status = direct
	case p.inErr && n > p.errIter || p.suspectBelow(n):
		it.status = pending
	}
	if it.status == open && p.router != nil && p.router.straight && !p.before(n) {
		it.straight = p.list.Step
	}
	p.iters[n] = it
	return it
}

// before reports whether an iteration before n is under way here: what
// it queued must leave before anything of n goes straight.
func (p *PE[T]) before(n int) bool {
	for m := range p.iters {
		if m < n {
			return true
		}
	}
	return false
}

// Straight reports whether the message that source k sends next, in its
// current iteration, goes straight to its destination outside the
// exchange (Options.Straight), in which case the caller sends it itself
// and does not call Send. It does when the iteration is optimized on a
// list whose exchange sends no packets, its exchange has not started,
// nothing of it is queued, and no earlier iteration was under way here
// when it began: so each pair's messages keep the order they were sent
// in. Otherwise, or if the source is not in its bracket here, the
// caller calls Send (which reports the latter).
func (p *PE[T]) Straight(k Key) bool {
	if p.router == nil || !p.router.straight {
		return false
	}
	pr, ok := p.elem(k)
	if !ok || pr.Ended {
		return false
	}
	it := p.iters[pr.Iter]
	return it != nil && it.straight != 0 && it.straight == p.list.Step && it.status == open && !it.started &&
		len(it.queued) == 0 && it.byStep == 0
}

// isDone reports whether iteration n was recovered here.
func (p *PE[T]) isDone(n int) bool { return len(p.done) > 0 && n <= p.doneHi && p.done[n] }

// elem returns source k's progress, and whether it was seen here.
func (p *PE[T]) elem(k Key) (Progress, bool) {
	if p.lastOK && k == p.lastK {
		return p.lastP, true
	}
	pr, ok := p.elems[k]
	if ok {
		p.lastK, p.lastP, p.lastOK = k, pr, true
	}
	return pr, ok
}

func (p *PE[T]) setElem(k Key, pr Progress) {
	p.elems[k] = pr
	p.lastK, p.lastP, p.lastOK = k, pr, true
}

// suspectBelow reports whether an iteration before n is in error on this
// PE alone: a recovery is coming, so n waits for its list.
func (p *PE[T]) suspectBelow(n int) bool {
	for m, it := range p.iters {
		if m < n && it.status == suspect {
			return true
		}
	}
	return false
}

// Begin is a source's BeginIteration(n).
func (p *PE[T]) Begin(k Key, n int) (Effects[T], error) {
	var fx Effects[T]
	if pr, ok := p.elem(k); ok {
		if !pr.Ended {
			return fx, fmt.Errorf("source %s began iteration %d on PE %d while its iteration %d is not ended (call EndIteration first)", p.nm(k), n, p.id, pr.Iter)
		}
		if n <= pr.Iter {
			return fx, fmt.Errorf("source %s began iteration %d on PE %d after iteration %d: iterations must grow", p.nm(k), n, p.id, pr.Iter)
		}
	}
	p.setElem(k, Progress{Iter: n})
	if p.isDone(n) {
		return fx, fmt.Errorf("source %s began iteration %d on PE %d after that iteration was recovered without it: every source must take part in every iteration", p.nm(k), n, p.id)
	}
	it := p.iter(n)
	it.began[k] = true
	if p.inErr && n > p.errIter {
		p.report(&fx, k) // it ended the iteration under recovery somewhere
	}
	if it.status == open {
		p.checkBegan(it, k, &fx)
	}
	return fx, nil
}

// check runs the tests of C10 and C13 on an open iteration.
func (p *PE[T]) check(it *iter[T], fx *Effects[T]) {
	reason := ""
	switch {
	case p.list == nil:
		reason = "no list of sources yet (the first iteration teaches it)"
	case len(it.began) > len(p.known):
		reason = fmt.Sprintf("%d sources began iteration %d here, the list has %d (C10)", len(it.began), it.n, len(p.known))
	case !p.opt.CountOnly:
		for k := range it.began {
			if !p.known[k] {
				reason = fmt.Sprintf("source %s began iteration %d here, the list puts it elsewhere (C13)", p.nm(k), it.n)
				break
			}
		}
	}
	if reason != "" {
		p.suspect(it, reason, fx)
		return
	}
	if p.list != nil {
		it.checked = p.list.Step
	}
}

// checkBegan is check after source k began an open iteration: if the
// others passed against the current list, only k is new to test (check
// would test them all again at every Begin, quadratic in the sources here).
func (p *PE[T]) checkBegan(it *iter[T], k Key, fx *Effects[T]) {
	if p.list == nil || it.checked != p.list.Step {
		p.check(it, fx)
		return
	}
	reason := ""
	switch {
	case len(it.began) > len(p.known):
		reason = fmt.Sprintf("%d sources began iteration %d here, the list has %d (C10)", len(it.began), it.n, len(p.known))
	case !p.opt.CountOnly && !p.known[k]:
		reason = fmt.Sprintf("source %s began iteration %d here, the list puts it elsewhere (C13)", p.nm(k), it.n)
	}
	if reason != "" {
		p.suspect(it, reason, fx)
	}
}

// suspect puts an iteration in error mode on this PE (C11): what is
// queued or under way goes directly, new messages are held, PE 0 hears.
func (p *PE[T]) suspect(it *iter[T], reason string, fx *Effects[T]) {
	it.status = suspect
	p.flush(it, fx)
	for n, later := range p.iters {
		if n > it.n && later.status == open && !later.started {
			later.status = pending
		}
	}
	fx.Notes = append(fx.Notes, Note{PE: p.id, Iter: it.n, Reason: reason})
}

// flush sends directly every message of the iteration that is here.
func (p *PE[T]) flush(it *iter[T], fx *Effects[T]) {
	if it.byStep != 0 {
		p.unbucket(it)
	}
	for _, m := range it.queued {
		p.out(m, fx)
	}
	for _, m := range it.have {
		p.out(m, fx)
	}
	for _, ms := range it.cur {
		for _, m := range ms {
			p.out(m, fx)
		}
	}
	for _, pk := range it.inbox {
		for _, m := range pk.Msgs {
			p.out(m, fx)
		}
	}
	it.queued, it.have, it.cur, it.inbox = nil, nil, nil, nil
}

func (p *PE[T]) out(m Msg[T], fx *Effects[T]) {
	if m.Dest == p.id {
		p.deliver(m, fx)
		return
	}
	fx.Direct = append(fx.Direct, m)
}

func (p *PE[T]) deliver(m Msg[T], fx *Effects[T]) {
	p.late(&m, fx)
	fx.Deliver = append(take(&p.spare.deliver, fx.Deliver), m)
}

// late reports a message delivered after its destination source began a
// later iteration (C07).
func (p *PE[T]) late(m *Msg[T], fx *Effects[T]) {
	if m.DestKey != "" {
		if pr, ok := p.elem(m.DestKey); ok && pr.Iter > m.Iter {
			fx.Errors = append(fx.Errors, fmt.Errorf("source %s began iteration %d before a message of iteration %d from %s reached it: a source must receive every message of an iteration before beginning the next (C07)", p.nm(m.DestKey), pr.Iter, m.Iter, p.nm(m.Src)))
		}
	}
}

// deliverRun delivers the messages of a packet's array here as one run
// (Effects.Runs), or one by one if some are not for this PE.
func (p *PE[T]) deliverRun(ms []Msg[T], fx *Effects[T]) {
	for i := range ms {
		if ms[i].Dest != p.id {
			for _, m := range ms {
				p.out(m, fx)
			}
			return
		}
	}
	for i := range ms {
		p.late(&ms[i], fx)
	}
	fx.Runs = append(take(&p.spare.runs, fx.Runs), ms)
}

// Send is a message from source k, in its current iteration, for the PE
// dest (where the runtime believes its destination is).
func (p *PE[T]) Send(k Key, dest int, destKey Key, payload T) (Effects[T], error) {
	var fx Effects[T]
	pr, ok := p.elem(k)
	if !ok || pr.Ended {
		return fx, fmt.Errorf("source %s sent on PE %d outside BeginIteration/EndIteration (or it migrated inside its bracket, C08)", p.nm(k), p.id)
	}
	it := p.iters[pr.Iter]
	if it == nil {
		return fx, fmt.Errorf("source %s sent in iteration %d on PE %d, which has no state for it", p.nm(k), pr.Iter, p.id)
	}
	m := Msg[T]{Dest: dest, Src: k, DestKey: destKey, Iter: it.n, Payload: payload}
	switch it.status {
	case suspect, direct:
		it.held = append(it.held, m)
	default:
		d := -1
		if p.router != nil && it.status == open {
			if d = p.partIndex(dest); d < 0 {
				p.out(m, &fx) // a destination without sources: not on the router
				return fx, nil
			}
		}
		if it.started { // the exchange has begun: too late to combine
			p.out(m, &fx)
			return fx, nil
		}
		if d >= 0 && p.router.oneHop && p.opt.Variant == nil && len(it.queued) == 0 {
			p.bucket(it, d, m)
			return fx, nil
		}
		if it.byStep != 0 { // the iteration went pending after some were queued by destination
			p.unbucket(it) // they go first: each pair keeps its order
		}
		it.queued = append(it.queued, m)
	}
	return fx, nil
}

// partIndex returns the rank of PE pe among the participants, or −1.
func (p *PE[T]) partIndex(pe int) int {
	i := sort.SearchInts(p.parts, pe)
	if i < len(p.parts) && p.parts[i] == pe {
		return i
	}
	return -1
}

// bucket queues m for participant d of the current list on a one-hop
// router (iter.byDest).
func (p *PE[T]) bucket(it *iter[T], d int, m Msg[T]) {
	if it.byStep != 0 && it.byStep != p.list.Step { // queued under an older list
		p.unbucket(it)
		it.queued = append(it.queued, m)
		return
	}
	if it.byStep == 0 {
		n := len(p.parts)
		if len(p.destHint) != n {
			p.destHint = make([]int, n)
		}
		if cap(it.byDest) < n {
			it.byDest = make([][]Msg[T], n)
		}
		it.byDest = it.byDest[:n]
		total := 0
		for _, h := range p.destHint {
			total += h
		}
		if total > 0 {
			arr, off := make([]Msg[T], total), 0
			for i, h := range p.destHint {
				it.byDest[i] = arr[off : off : off+h]
				off += h
			}
		}
		it.byStep = p.list.Step
	}
	it.byDest[d] = append(it.byDest[d], m)
}

// unbucket moves the messages of iter.byDest to iter.queued.
func (p *PE[T]) unbucket(it *iter[T]) {
	for i, ms := range it.byDest {
		it.queued = append(it.queued, ms...)
		clear(ms)
		it.byDest[i] = nil
	}
	it.byStep = 0
}

// sendBuckets sends the one stage of a one-hop router from iter.byDest:
// each participant's messages are its packet as they are.
func (p *PE[T]) sendBuckets(it *iter[T], fx *Effects[T]) {
	peers, recvN := it.router.at(0)
	it.recvN = recvN
	for d, ms := range it.byDest {
		p.destHint[d] = min(len(ms), maxQueuedHint)
	}
	self := it.byDest[it.rank]
	for _, m := range self {
		p.out(m, fx)
	}
	clear(self) // its region stays in the array the packets share
	fx.Packets = slices.Grow(take(&p.spare.packets, fx.Packets), len(peers))
	for _, peer := range peers {
		ms := it.byDest[peer]
		if len(ms) == 0 {
			ms = nil
		}
		fx.Packets = append(fx.Packets, Packet[T]{From: p.id, To: it.parts[peer], Iter: it.n, Step: it.step, Stage: it.stage, Variant: it.variant, Msgs: ms})
	}
	clear(it.byDest)
	it.byStep = 0
}

// End is a source's EndIteration.
func (p *PE[T]) End(k Key) (Effects[T], error) {
	var fx Effects[T]
	pr, ok := p.elem(k)
	if !ok || pr.Ended {
		return fx, fmt.Errorf("source %s ended an iteration on PE %d without beginning it here (did it migrate inside its bracket? C08)", p.nm(k), p.id)
	}
	p.setElem(k, Progress{Iter: pr.Iter, Ended: true})
	it := p.iters[pr.Iter]
	it.ended++
	if p.inErr && pr.Iter >= p.errIter {
		p.report(&fx, k)
	}
	p.maybeStart(it, &fx)
	return fx, nil
}

// report tells PE 0 of source k, if the recovery does not know it yet.
func (p *PE[T]) report(fx *Effects[T], k Key) {
	pr, _ := p.elem(k)
	if pr.Iter < p.errIter || pr.Iter == p.errIter && !pr.Ended {
		return // not ended the iteration under recovery yet
	}
	if old, ok := p.reported[k]; ok && !pr.after(old) {
		return
	}
	p.reported[k] = pr
	fx.Reports = append(fx.Reports, Report{PE: p.id, Iter: p.errIter, Step: p.errStep, Sources: map[Key]Progress{k: pr}})
}

// maybeStart starts the exchange of an open iteration once every source
// of the list here has ended it.
func (p *PE[T]) maybeStart(it *iter[T], fx *Effects[T]) {
	if it.status != open || it.started || p.list == nil || it.ended < len(p.known) || len(it.began) != len(p.known) {
		return
	}
	if p.rank < 0 { // sources here that the list does not know: check says so
		return
	}
	r, v := p.router, 0
	if p.opt.Variant != nil {
		var ok bool
		if v, ok = p.opt.Variant(it.n); !ok {
			fx.Wait = append(fx.Wait, it.n)
			return
		}
		if r = p.variants[v]; r == nil {
			nr, err := p.newRouter(len(p.parts), v)
			if err != nil {
				// The list's default router still runs the exchange, but the
				// PEs disagree now: say so, the job ends.
				fx.Errors = append(fx.Errors, fmt.Errorf("router variant %d over %d PEs: %w", v, len(p.parts), err))
				return
			}
			r = newStages(nr, p.rank, len(p.parts))
			p.variants[v] = r
		}
	}
	it.started, it.step, it.rank, it.parts, it.router, it.variant = true, p.list.Step, p.rank, p.parts, r, v
	for _, pk := range it.inbox { // packets that came before the start
		p.checkVariant(it, pk, fx)
	}
	fx.Exchanges = append(take(&p.spare.exchanges, fx.Exchanges), it.n)
	if r.straight {
		p.endStraight(it, fx)
		return
	}
	if it.byStep != 0 {
		if it.byStep == it.step && r == p.router && len(it.queued) == 0 {
			p.sendBuckets(it, fx)
			p.advance(it, fx)
			return
		}
		p.unbucket(it)
	}
	p.queuedHint = min(len(it.queued), maxQueuedHint)
	it.have, it.queued = it.queued, nil
	p.sendStage(it, fx)
	p.advance(it, fx)
}

// endStraight is the exchange of an iteration on a list whose exchange
// sends no packets (Options.Straight): every participant's messages went
// straight or go now, so the exchange ends here at once. What the
// iteration queued (it went pending, or an earlier iteration was under
// way when it began) goes directly now, in the order it was sent, and in
// Effects.Direct even for this PE: messages that went straight before it
// were sent the caller's way (its mailbox), and a delivery here now would
// overtake them.
func (p *PE[T]) endStraight(it *iter[T], fx *Effects[T]) {
	if it.byStep != 0 {
		p.unbucket(it)
	}
	fx.Direct = append(fx.Direct, it.queued...)
	for _, pk := range it.inbox { // of an older list: not this exchange's
		for _, m := range pk.Msgs {
			p.out(m, fx)
		}
	}
	fx.Finished = append(take(&p.spare.finished, fx.Finished), Finished{Iter: it.n, Step: it.step, Parts: len(it.parts), Variant: it.variant})
	clear(it.queued)
	it.have, it.queued = it.queued[:0], nil // its room serves the next iteration
	delete(p.iters, it.n)
	p.spareIter = it
}

// sendStage delivers what has arrived and sends the current stage's
// packets.
func (p *PE[T]) sendStage(it *iter[T], fx *Effects[T]) {
	peers, recvN := it.router.at(it.stage)
	it.recvN = recvN
	// The stage's messages are sorted by their next hop (a counting sort
	// over the participants) into one array that the packets share in
	// disjoint, capacity-capped parts: one allocation for the stage, where
	// a slice per peer and a map of them cost a dozen.
	const gone, stays = -2, -1 // hopOf of a message delivered or sent out, kept
	hops := p.scratch(&p.hops, len(it.parts)+1)
	hopOf := p.scratch(&p.hopOf, len(it.have))
	routed := 0
	for i, m := range it.have {
		hopOf[i] = gone
		if m.Dest == p.id {
			p.deliver(m, fx)
			continue
		}
		d := sort.SearchInts(it.parts, m.Dest)
		if d == len(it.parts) || it.parts[d] != m.Dest { // queued under an older list
			p.out(m, fx)
			continue
		}
		hop := it.router.NextHop(it.rank, d, it.stage)
		switch {
		case hop == it.rank:
			hopOf[i] = stays
		case hop < 0 || hop >= len(it.parts):
			fx.Errors = append(fx.Errors, fmt.Errorf("router sent a message from participant %d to %d at stage %d, which is not a participant", it.rank, hop, it.stage))
			p.out(m, fx)
		default:
			hopOf[i] = hop
			hops[hop+1]++
			routed++
		}
	}
	var buf []Msg[T]
	at := p.scratch(&p.hopAt, len(hops)) // then the end of hop h's messages not yet in a packet
	if routed > 0 {
		buf = make([]Msg[T], routed)
		for i := 1; i < len(hops); i++ {
			hops[i] += hops[i-1] // hops[h] is where hop h's messages start
		}
		copy(at, hops)
		for i, m := range it.have {
			if h := hopOf[i]; h >= 0 {
				buf[at[h]] = m
				at[h]++
			}
		}
	}
	keep := it.have[:0]
	for i, m := range it.have {
		if hopOf[i] == stays {
			keep = append(keep, m)
		}
	}
	clear(it.have[len(keep):]) // what left: no references kept
	it.have = keep
	fx.Packets = slices.Grow(take(&p.spare.packets, fx.Packets), len(peers))
	for _, peer := range peers {
		var ms []Msg[T]
		if peer >= 0 && peer < len(it.parts) && hops[peer] < at[peer] {
			ms = buf[hops[peer]:at[peer]:at[peer]]
			at[peer] = hops[peer] // taken
		}
		fx.Packets = append(fx.Packets, Packet[T]{From: p.id, To: it.parts[peer], Iter: it.n, Step: it.step, Stage: it.stage, Variant: it.variant, Msgs: ms})
	}
	for hop := 0; hop < len(it.parts); hop++ { // a router that breaks its own contract
		if hops[hop] >= at[hop] {
			continue
		}
		ms := buf[hops[hop]:at[hop]]
		fx.Errors = append(fx.Errors, fmt.Errorf("router sent %d messages from participant %d to %d at stage %d, not one of its stage peers", len(ms), it.rank, hop, it.stage))
		for _, m := range ms {
			p.out(m, fx)
		}
	}
}

// stages is a router with the lists of one participant (this PE's rank)
// kept per stage: a router may build them on every call, and an
// exchange asks for them at every stage of every iteration.
type stages struct {
	Router
	rank int
	// oneHop: one stage in which this PE sends to every other participant
	// and every message goes straight to its destination (the direct
	// router): messages can be sorted by destination as they are queued.
	oneHop bool
	// straight: a one-hop exchange that sends no packets (Options.Straight).
	straight bool
	send     [][]int // per stage, in the order to send (the router's SendOrder if it has one)
	recv     []int   // per stage, how many packets come; −1 until asked
}

func newStages(r Router, rank, n int) *stages {
	st := &stages{Router: r, rank: rank}
	if rank >= 0 && r.Stages() == 1 {
		peers, _ := st.at(0)
		st.oneHop = len(peers) == n-1
		seen := make([]bool, n)
		for _, d := range peers {
			if d < 0 || d >= n || d == rank || seen[d] {
				st.oneHop = false
				break
			}
			seen[d] = true
		}
		for d := 0; d < n && st.oneHop; d++ {
			st.oneHop = d == rank || r.NextHop(rank, d, 0) == d
		}
	}
	return st
}

// at returns the peers this PE sends to at stage s, in order, and the
// number of packets it receives then.
func (r *stages) at(s int) (send []int, recvN int) {
	if s >= len(r.recv) {
		n := max(s+1, r.Stages())
		r.send = append(r.send, make([][]int, n-len(r.send))...)
		for len(r.recv) < n {
			r.recv = append(r.recv, -1)
		}
	}
	if r.recv[s] < 0 {
		if o, ok := r.Router.(interface{ SendOrder(self, stage int) []int }); ok {
			r.send[s] = o.SendOrder(r.rank, s) // the schedule's contention-free order
		} else {
			r.send[s] = r.SendTo(r.rank, s)
		}
		r.recv[s] = len(r.RecvFrom(r.rank, s))
	}
	return r.send[s], r.recv[s]
}

// maxQueuedHint bounds the room a new iteration is given for its messages
// from the last one's count.
const maxQueuedHint = 1 << 12

// scratch returns *s resized to n zeroed ints: the PE's reusable scratch
// of sendStage.
func (p *PE[T]) scratch(s *[]int, n int) []int {
	if cap(*s) < n {
		*s = make([]int, n)
	}
	*s = (*s)[:n]
	clear(*s)
	return *s
}

// advance consumes the packets of the current stage; when all are in, it
// moves to the next stage, and after the last it ends the exchange.
func (p *PE[T]) advance(it *iter[T], fx *Effects[T]) {
	for it.started && it.status == open {
		rest := it.inbox[:0]
		for _, pk := range it.inbox {
			switch {
			case pk.Step < it.step:
				for _, m := range pk.Msgs {
					p.out(m, fx)
				}
			case pk.Step == it.step && pk.Stage == it.stage:
				it.got++
				if len(pk.Msgs) > 0 {
					it.cur = append(it.cur, pk.Msgs)
				}
			default:
				rest = append(rest, pk)
			}
		}
		it.inbox = rest
		if it.got < it.recvN {
			return
		}
		it.got = 0
		it.stage++
		if it.stage >= it.router.Stages() { // ≥: a router may have no stage for one participant
			fx.Finished = append(take(&p.spare.finished, fx.Finished), Finished{Iter: it.n, Step: it.step, Parts: len(it.parts), Variant: it.variant})
			fx.Deliver = slices.Grow(take(&p.spare.deliver, fx.Deliver), len(it.have)) // most are for here
			for _, m := range it.have {
				p.out(m, fx) // every message should be here by now
			}
			for _, ms := range it.cur { // straight from the last stage's packets
				p.deliverRun(ms, fx)
			}
			for _, pk := range it.inbox { // from a later list: not ours
				for _, m := range pk.Msgs {
					p.out(m, fx)
				}
			}
			delete(p.iters, it.n)
			p.spareIter = it // its room serves the next iteration
			return
		}
		for _, ms := range it.cur {
			it.have = append(it.have, ms...)
		}
		clear(it.cur)
		it.cur = it.cur[:0]
		p.sendStage(it, fx)
	}
}

// Packet is a stage packet from another PE.
func (p *PE[T]) Packet(pk Packet[T]) Effects[T] {
	var fx Effects[T]
	it := p.iters[pk.Iter]
	if it == nil {
		if p.isDone(pk.Iter) || p.list != nil && pk.Step < p.list.Step {
			for _, m := range pk.Msgs {
				p.out(m, &fx)
			}
			return fx
		}
		it = p.iter(pk.Iter)
	}
	if it.status == direct || it.status == suspect || it.started && pk.Step < it.step {
		for _, m := range pk.Msgs {
			p.out(m, &fx)
		}
		return fx
	}
	if it.started {
		p.checkVariant(it, pk, &fx)
		if it.status == open && pk.Step == it.step && pk.Stage == it.stage && len(it.inbox) == 0 {
			// The packet the current stage waits for: consumed
			// here rather than through the inbox.
			it.got++
			if len(pk.Msgs) > 0 {
				it.cur = append(it.cur, pk.Msgs)
			}
			if it.got >= it.recvN {
				p.advance(it, &fx)
			}
			return fx
		}
	}
	it.inbox = append(it.inbox, pk)
	p.advance(it, &fx)
	return fx
}

// checkVariant fails the job if a packet of the step an iteration runs
// was sent with another router variant: checked as the packet comes (or
// as the iteration starts), whatever its stage, since a packet of a
// router this PE does not run may never be consumed, and the exchange
// would hang rather than fail.
func (p *PE[T]) checkVariant(it *iter[T], pk Packet[T], fx *Effects[T]) {
	if pk.Step == it.step && pk.Variant != it.variant {
		fx.Errors = append(fx.Errors, fmt.Errorf("iteration %d: PE %d exchanges it with router variant %d, PE %d with %d: the PEs disagree", it.n, pk.From, pk.Variant, p.id, it.variant))
	}
}

// Enter is PE 0's word that iteration e.Iter is in error everywhere.
func (p *PE[T]) Enter(e Enter) Effects[T] {
	var fx Effects[T]
	if p.inErr && e.Step <= p.errStep || p.list != nil && e.Step <= p.list.Step {
		return fx // stale
	}
	p.inErr, p.errIter, p.errStep, p.reported = true, e.Iter, e.Step, map[Key]Progress{}
	for n, it := range p.iters {
		switch {
		case n == e.Iter:
			it.status = direct
			p.flush(it, &fx)
		case n > e.Iter && it.status == open:
			if it.started { // running with the list that is being replaced
				p.suspect(it, fmt.Sprintf("iteration %d was exchanging when iteration %d went into error", n, e.Iter), &fx)
			} else {
				it.status = pending
			}
		}
	}
	for k := range p.elems {
		p.report(&fx, k)
	}
	if len(fx.Reports) > 1 { // one report for all
		all := Report{PE: p.id, Iter: e.Iter, Step: e.Step, Sources: map[Key]Progress{}}
		for _, r := range fx.Reports {
			for k, v := range r.Sources {
				all.Sources[k] = v
			}
		}
		fx.Reports = []Report{all}
	}
	return fx
}

// NewList is PE 0's new list after the recovery of l.Iter. The PE takes
// it and acknowledges (Effects.Ack); it stays in error mode, holding what
// it held, until PE 0 has every acknowledgement and says Release: a PE
// whose sources get their held messages must already have the new list,
// or it would start the next iteration with the old one.
func (p *PE[T]) NewList(l *List) (Effects[T], error) {
	var fx Effects[T]
	if l.Step < 1 {
		return fx, fmt.Errorf("a list of step %d: steps begin at 1", l.Step)
	}
	if p.list != nil && l.Step <= p.list.Step {
		return fx, nil // stale
	}
	p.list, p.known = l, map[Key]bool{}
	for k, pe := range l.Where {
		if pe == p.id {
			p.known[k] = true
		}
	}
	p.parts = l.Participants()
	p.rank, p.router, p.variants = -1, nil, map[int]*stages{}
	if i := sort.SearchInts(p.parts, p.id); i < len(p.parts) && p.parts[i] == p.id {
		p.rank = i
	}
	if len(p.parts) > 0 {
		r, err := p.newRouter(len(p.parts), 0)
		if err != nil {
			return fx, fmt.Errorf("router over %d PEs: %w", len(p.parts), err)
		}
		p.router = newStages(r, p.rank, len(p.parts))
		p.router.straight = p.router.oneHop && p.opt.Variant == nil && p.opt.Straight
	}
	if len(p.done) == 0 || l.Iter > p.doneHi {
		p.doneHi = l.Iter
	}
	p.done[l.Iter] = true
	fx.Ack = l.Step
	return fx, nil
}

// Release is PE 0's word that every PE has the list of recovery step: the
// PE leaves error mode, sends what it held directly, and checks the later
// iterations against the new list.
func (p *PE[T]) Release(step int) Effects[T] {
	var fx Effects[T]
	if p.list == nil || step != p.list.Step || !p.inErr || p.errStep != step {
		return fx // stale
	}
	l := p.list
	p.inErr, p.reported = false, nil
	for k, pr := range p.elems { // forget sources that left, keep newcomers
		if !p.known[k] && pr.Iter <= l.Iter && pr.Ended {
			delete(p.elems, k)
			if k == p.lastK {
				p.lastOK = false
			}
		}
	}
	ns := make([]int, 0, len(p.iters))
	for n := range p.iters {
		ns = append(ns, n)
	}
	sort.Ints(ns)
	blocked := false // by an iteration still in error here
	for _, n := range ns {
		it := p.iters[n]
		switch {
		case blocked:
		case n <= l.Iter:
			if it.status == open && it.started {
				continue // an earlier list's exchange, still running
			}
			it.status = direct
			p.flush(it, &fx)
			for _, m := range it.held {
				p.out(m, &fx)
			}
			it.held = nil
			delete(p.iters, n)
		case it.status == suspect:
			// Its messages went directly already: PE 0 must recover it.
			blocked = true
			fx.Notes = append(fx.Notes, Note{PE: p.id, Iter: n, Reason: fmt.Sprintf("iteration %d was in error when the list of iteration %d came", n, l.Iter)})
		case it.status == pending || it.status == open && !it.started:
			it.status = open
			p.check(it, &fx)
			if it.status == open {
				p.maybeStart(it, &fx)
			}
		}
	}
	return fx
}

// Resume starts the exchanges that waited for their variant (Effects.Wait),
// once the Variant function knows more; it does nothing to the others.
func (p *PE[T]) Resume() Effects[T] {
	var fx Effects[T]
	ns := make([]int, 0, len(p.iters))
	for n, it := range p.iters {
		if it.status == open && !it.started {
			ns = append(ns, n)
		}
	}
	sort.Ints(ns)
	for _, n := range ns {
		if it := p.iters[n]; it != nil {
			p.maybeStart(it, &fx)
		}
	}
	return fx
}
