package comlib

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/comlib/selection"
)

// Auto chooses a strategy for every message from a selection tree: the
// one shipped with the package, -comlibselect's, or AutoOptions.Tree.
// When the instance is made, on PE 0, the tree is pruned with what is
// known then (S05, S06, S08): comm_size is the number of participants,
// comm_type is intra with one process and inter with several, collective
// is AutoOptions.Collective, and msg_size is AutoOptions.MsgSize if the
// caller declares it.
//
// With a declared size, or a pruned tree that chooses one container
// whatever the size (selection.Tree.Fixed), Auto is that one strategy:
// a send goes straight to it, with no size estimate and no walk. An
// exchange whose size changes makes an instance per declared size.
//
// Without a declared size every container left becomes a part (an
// instance of its own), and each send goes to the part chosen by its size.
// Every bracketed (each-to-many) part sees every BeginIteration and
// EndIteration and runs its exchange each iteration, empty or not, so
// that its counts stay right across migrations (C06–C12).
//
// A message's size is its Size() if the type has one (Sizer), else an
// estimate from its fixed-size fields and the contents of its top-level
// slices and strings; MessageSize gives it for a sample, for a declaration
// in the same units.
//
// Explain tells, per iteration, which branches of the tree chose which
// part for how many messages; Served counts messages per part. Why Auto
// works this way (and what it does not offer: sizes declared per
// iteration, idle parts skipping their exchange) is in
// docs/design/auto-selection.md.
func Auto(o AutoOptions) Strategy { return autoStrategy{o} }

// AutoOptions configure Auto.
type AutoOptions struct {
	// Sources is the array or group whose members send and call
	// BeginIteration and EndIteration: needed when the pruned tree keeps
	// an each-to-many container.
	Sources interface{ Route() chare.Route }
	// Collective is the kind of exchange the proxy makes (default
	// selection.Alltoall).
	Collective selection.Collective
	// Tree replaces the job's selection tree (-comlibselect FILE, or
	// DefaultSelection). It must accept comlib's containers
	// (ParseSelection makes one that does).
	Tree *selection.Tree
	// CommSize is the number of participants (default: the number of
	// PEs).
	CommSize int
	// MsgSize declares the size, in bytes as Auto counts them
	// (MessageSize), of the messages the instance will carry: the tree is
	// then pruned on msg_size as well when the instance is made, Auto is
	// the one strategy left, and no send is sized or walked. Every PE
	// reads it from the strategy table, so all choose alike without
	// agreeing, as MPI's collectives do from the count every rank passes.
	// Messages of another size go the same way: the declaration is not
	// checked per send. 0 = not declared: each send is sized and walked,
	// and a tree mixing containers by size makes a part of each (see
	// Auto). Negative is an error.
	MsgSize int
}

type autoStrategy struct{ o AutoOptions }

// spec is not used: New makes Auto instances with newAuto.
func (autoStrategy) spec() Spec { return Spec{Kind: "auto"} }

// AutoSpec is an Auto instance's description in the strategy table: the
// whole tree and the creation facts, so that every PE prunes it the same
// way and its traces name the pruned branches too.
type AutoSpec struct {
	Tree       string
	CommSize   int
	CommType   string
	Collective string
	MsgSize    int      // declared (AutoOptions.MsgSize); 0 = sized per send
	Parts      []uint32 // the instances of the pruned tree's containers, in Containers order
}

func (a *AutoSpec) facts() selection.CreationFacts {
	return selection.CreationFacts{CommSize: a.CommSize, CommType: selection.CommType(a.CommType), Collective: selection.Collective(a.Collective),
		MsgSize: a.MsgSize}
}

// parsedTrees holds the trees of AutoSpecs parsed in this process, by
// the SHA-256 of their text (not the text, which may be megabytes): every
// PE of a process prunes the same spec, and a tree of megabytes is parsed
// once per process rather than once per PE. It keeps at most
// maxParsedTrees trees.
var parsedTrees struct {
	mu sync.Mutex
	m  map[[sha256.Size]byte]*parsedTree
}

const maxParsedTrees = 16

type parsedTree struct {
	once sync.Once
	t    *selection.Tree
	err  error
}

// treeEntry returns the entry of text in parsedTrees, made if needed.
func treeEntry(text string) *parsedTree {
	key := sha256.Sum256([]byte(text))
	parsedTrees.mu.Lock()
	defer parsedTrees.mu.Unlock()
	e := parsedTrees.m[key]
	if e == nil {
		if len(parsedTrees.m) >= maxParsedTrees || parsedTrees.m == nil {
			parsedTrees.m = map[[sha256.Size]byte]*parsedTree{}
		}
		e = &parsedTree{}
		parsedTrees.m[key] = e
	}
	return e
}

// parseTree parses text as ParseSelection does, once per process.
func parseTree(text string) (*selection.Tree, error) {
	e := treeEntry(text)
	e.once.Do(func() { e.t, e.err = ParseSelection([]byte(text)) })
	return e.t, e.err
}

// rememberTree records t, which ParseSelection made, as the tree of text,
// its JSON.
func rememberTree(text string, t *selection.Tree) {
	e := treeEntry(text)
	e.once.Do(func() { e.t = t })
}

// prune parses and prunes the tree of an AutoSpec.
func (a *AutoSpec) prune() (*selection.Tree, error) {
	t, err := parseTree(a.Tree)
	if err != nil {
		return nil, err
	}
	p, err := t.Prune(a.facts())
	if err != nil {
		return nil, err
	}
	if n := len(autoContainers(p)); n != len(a.Parts) {
		return nil, fmt.Errorf("auto: the pruned tree has %d containers and the instance %d parts", n, len(a.Parts))
	}
	return p, nil
}

// autoContainers are the parts an Auto instance makes for a pruned tree:
// its containers, or only the one it always chooses when it is fixed
// (selection.Tree.Fixed), since the others are never chosen.
func autoContainers(pruned *selection.Tree) []selection.Container {
	if c, _, ok := pruned.Fixed(); ok {
		return []selection.Container{c}
	}
	return pruned.Containers()
}

// newAuto makes an Auto instance and its parts on PE 0.
func newAuto(from chare.Context, pe *chare.PE, o AutoOptions) (*Instance, error) {
	if o.MsgSize < 0 {
		return nil, fmt.Errorf("comlib: auto: AutoOptions.MsgSize %d is negative (0 = not declared: each send is sized)", o.MsgSize)
	}
	tree, checked := o.Tree, false
	if tree == nil {
		var err error
		if tree, err = jobSelection(pe.Job()); err != nil {
			return nil, fmt.Errorf("comlib: auto: %w", err)
		}
		checked = true // by ParseSelection
	}
	as := &AutoSpec{CommSize: o.CommSize, CommType: string(selection.Intra), Collective: string(o.Collective), MsgSize: o.MsgSize}
	if as.CommSize <= 0 {
		as.CommSize = pe.NumPEs()
	}
	if pe.Job().Runtime().NumNodes() > 1 {
		as.CommType = string(selection.Inter)
	}
	if as.Collective == "" {
		as.Collective = string(selection.Alltoall)
	}
	js, err := tree.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("comlib: auto: %w", err)
	}
	as.Tree = string(js)
	if checked {
		rememberTree(as.Tree, tree)
	}
	pruned, err := tree.Prune(as.facts())
	if err != nil {
		return nil, fmt.Errorf("comlib: auto: %w", err)
	}
	// Every part is checked before any is made.
	conts := autoContainers(pruned)
	specs := make([]Spec, len(conts))
	for i, c := range conts {
		sp, err := ContainerSpec(c)
		if err == nil && sp.Kind == "each-to-many" {
			if o.Sources == nil {
				err = errors.New("an each-to-many container needs AutoOptions.Sources: the array or group whose members send")
			} else {
				sp.EachToMany.Sources = o.Sources.Route().Coll
			}
		}
		if err == nil {
			sp, err = sp.resolve(pe.NumPEs())
		}
		if err != nil {
			return nil, fmt.Errorf("comlib: auto: container %s (for comm_size=%d comm_type=%s collective=%s%s): %w",
				c, as.CommSize, as.CommType, as.Collective, declared(as.MsgSize), err)
		}
		specs[i] = sp
	}
	s := stateOf(pe)
	for _, sp := range specs {
		in, err := s.create(from, sp)
		if err != nil {
			return nil, err
		}
		as.Parts = append(as.Parts, in.id)
	}
	return s.create(from, Spec{Kind: "auto", Auto: as})
}

// declared writes a declared message size for an error, "" for none.
func declared(size int) string {
	if size == 0 {
		return ""
	}
	return fmt.Sprintf(" msg_size=%d", size)
}

// autoStats is what an Auto instance chose in this process: the parts,
// which never change, and one log per PE of this process. Each PE writes
// only its own log, at every EndIteration (or every autoFlushEvery
// messages without brackets), so that its lock is not contended there;
// Explain and Served merge the logs when they are asked. A fixed tree's
// counts are kept in a ring rather than one Choice per iteration, so that
// an Auto that is Direct costs about what Direct costs.
type autoStats struct {
	fixedTrace string      // the trace of a fixed tree's sends ("" if not fixed)
	containers []string    // by part
	parts      []*Instance // by part
	bracketed  []int       // the parts that are each-to-many

	mu   sync.Mutex
	logs []*autoLog // one per PE of this process that made the instance
}

// autoLog is what one PE's Auto instance counted.
type autoLog struct {
	mu     sync.Mutex
	served []int64 // messages by part
	iters  map[int][]Choice
	order  []int // iterations in the order first seen, to bound iters

	// A fixed tree's sends are counted per iteration only, in a ring of
	// at most maxExplained: no Choice, map entry or allocation per
	// iteration once it is full.
	ring []iterCount
	next int // where the next iteration goes once ring is full
}

// iterCount is a fixed tree's sends in one iteration.
type iterCount struct {
	iter int
	n    int64
}

// addFixed counts n sends of a fixed tree in iteration it.
func (l *autoLog) addFixed(it int, n int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.served[0] += n
	last := l.next - 1
	if last < 0 {
		last = len(l.ring) - 1
	}
	switch {
	case last >= 0 && l.ring[last].iter == it:
		l.ring[last].n += n
	case len(l.ring) < maxExplained:
		l.ring = append(l.ring, iterCount{it, n})
		l.next = len(l.ring) % maxExplained
	default:
		l.ring[l.next] = iterCount{it, n}
		l.next = (l.next + 1) % maxExplained
	}
}

// newLog gives a PE its log.
func (a *autoStats) newLog() *autoLog {
	l := &autoLog{served: make([]int64, len(a.containers)), iters: map[int][]Choice{}}
	a.mu.Lock()
	a.logs = append(a.logs, l)
	a.mu.Unlock()
	return l
}

// logList returns the logs so far.
func (a *autoStats) logList() []*autoLog {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]*autoLog(nil), a.logs...)
}

// maxExplained bounds the iterations Explain remembers (the latest).
const maxExplained = 4096

// Choice is what an Auto instance did in one iteration, for one way
// through the tree, on the PEs of this process.
type Choice struct {
	Iteration int    // the iteration of the latest BeginIteration on the sending PE (0 without brackets)
	Part      int    // the part's index in Parts
	Container string // the container chosen, as "strategy=eachtomany(router=mesh)"
	Trace     string // the branches taken, those pruned at creation marked
	Messages  int64
	// The message sizes seen; both −1 when the pruned tree is fixed (it
	// chooses one container whatever the size), so that sends skip the
	// size estimate.
	MinBytes int
	MaxBytes int
}

func (c Choice) String() string {
	size := fmt.Sprintf("of %d B", c.MinBytes)
	switch {
	case c.MinBytes < 0:
		size = "of any size"
	case c.MaxBytes != c.MinBytes:
		size = fmt.Sprintf("of %d–%d B", c.MinBytes, c.MaxBytes)
	}
	return fmt.Sprintf("iteration %d: %d messages %s -> %s via %s", c.Iteration, c.Messages, size, c.Container, c.Trace)
}

func (l *autoLog) add(cs []Choice) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, c := range cs {
		l.served[c.Part] += c.Messages
		list, seen := l.iters[c.Iteration]
		if !seen {
			l.order = append(l.order, c.Iteration)
			if len(l.order) > maxExplained {
				delete(l.iters, l.order[0])
				l.order = l.order[1:]
			}
		}
		l.iters[c.Iteration] = mergeChoice(list, c)
	}
}

// mergeChoice adds c to list: to the Choice of the same iteration, part
// and trace if there is one.
func mergeChoice(list []Choice, c Choice) []Choice {
	for i := range list {
		x := &list[i]
		if x.Iteration == c.Iteration && x.Part == c.Part && x.Trace == c.Trace {
			x.Messages += c.Messages
			if c.MinBytes >= 0 {
				x.MinBytes = min(x.MinBytes, c.MinBytes)
				x.MaxBytes = max(x.MaxBytes, c.MaxBytes)
			}
			return list
		}
	}
	return append(list, c)
}

func (in *Instance) autoStats() *autoStats {
	if in == nil || in.st == nil {
		return nil
	}
	in.st.mu.Lock()
	defer in.st.mu.Unlock()
	return in.st.auto
}

// Explain returns, for an Auto instance, what it chose in each iteration
// on the PEs of this process (the latest 4096 iterations), by iteration,
// then part, then trace. It is empty for other instances, and for an
// iteration until its EndIteration on the PEs that sent.
func (in *Instance) Explain() []Choice {
	a := in.autoStats()
	if a == nil {
		return nil
	}
	// Merged across the PEs' logs, and bounded as each log is: the
	// latest maxExplained iterations.
	byIter := map[int][]Choice{}
	for _, l := range a.logList() {
		l.mu.Lock()
		for it, cs := range l.iters {
			for _, c := range cs {
				byIter[it] = mergeChoice(byIter[it], c)
			}
		}
		for _, ic := range l.ring {
			byIter[ic.iter] = mergeChoice(byIter[ic.iter], Choice{Iteration: ic.iter, Part: 0, Container: a.containers[0],
				Trace: a.fixedTrace, Messages: ic.n, MinBytes: -1, MaxBytes: -1})
		}
		l.mu.Unlock()
	}
	if len(byIter) > maxExplained {
		its := make([]int, 0, len(byIter))
		for it := range byIter {
			its = append(its, it)
		}
		sort.Ints(its)
		for _, it := range its[:len(its)-maxExplained] {
			delete(byIter, it)
		}
	}
	var out []Choice
	for _, cs := range byIter {
		out = append(out, cs...)
	}
	sort.Slice(out, func(i, j int) bool {
		x, y := out[i], out[j]
		if x.Iteration != y.Iteration {
			return x.Iteration < y.Iteration
		}
		if x.Part != y.Part {
			return x.Part < y.Part
		}
		return x.Trace < y.Trace
	})
	return out
}

// Served returns, for an Auto instance, how many messages each container
// of its pruned tree carried in this process (those that carried some) (counted at EndIteration,
// or every 256 messages without brackets).
func (in *Instance) Served() map[string]int64 {
	a := in.autoStats()
	if a == nil {
		return nil
	}
	out := make(map[string]int64, len(a.containers))
	for _, l := range a.logList() {
		l.mu.Lock()
		for i, n := range l.served {
			if n > 0 {
				out[a.containers[i]] += n
			}
		}
		l.mu.Unlock()
	}
	return out
}

// Parts returns an Auto instance's parts: one instance per container of
// its pruned tree, in the tree's order (nil for other instances, and
// until the strategy table reached this process).
func (in *Instance) Parts() []*Instance {
	a := in.autoStats()
	if a == nil {
		return nil
	}
	return append([]*Instance(nil), a.parts...)
}

// firstBracketed returns an Auto instance's first each-to-many part, if
// it has one: every such part sees the same brackets, so its recoveries
// are the instance's.
func (in *Instance) firstBracketed() *Instance {
	a := in.autoStats()
	if a == nil || len(a.bracketed) == 0 {
		return nil
	}
	return a.parts[a.bracketed[0]]
}

// ---- on a PE ----

// pick is a container chosen for a message size: the part, and the trace
// by number.
type pick struct{ part, trace int32 }

// autoPE is an Auto instance on one PE.
//
// What a send costs here depends on the pruned tree. A fixed tree (one
// container whatever the size) makes one part, and once that part is
// ready on this PE the instance's table entry points at it (entry.alias):
// a send then goes to the part's strategy from state.do with one counter
// increment, no size estimate and no walk — Auto is the strategy it
// chose. Otherwise a send estimates its size, looks the choice up in a
// cache (the last size, then a small map; the walk on a miss) and goes to
// the part's entry directly once that is ready.
type autoPE struct {
	s         *state
	in        *Instance
	tree      *selection.Tree // pruned: msg_size operators only
	parts     []*Instance
	ready     []*entry // the parts' entries, once ready here (nil until then)
	bracketed []int
	index     map[string]int // container → part
	traces    []string
	streams   []int // the parts that are Streaming (Buffering)
	scored    []int // the Streaming parts with tune=true, scored=true (Score)

	// A fixed tree: the trace every send has, and the sends since the
	// last flush (counted here or by state.do through the alias).
	fixed      bool
	fixedTrace string
	sent       int64

	// The walk's cache: the last size, then a small map.
	lastSize int
	last     pick
	haveLast bool
	cache    map[int]pick

	// Ops through the instance run one at a time: a bracket reaches every
	// part before the next op, even one its delivery causes.
	queue []op
	busy  bool

	cur       int // iteration of the latest BeginIteration here
	local     []Choice
	lastLocal int // index in local of the latest send's Choice, −1 for none
	n         int // messages in local
	st        *autoStats
	log       *autoLog // this PE's
}

const autoCacheMax = 256

// autoFlushEvery: without brackets, what a PE counted reaches Served and
// Explain every so many messages.
const autoFlushEvery = 256

func newAutoPE(s *state, in *Instance, sp Spec) (*autoPE, error) {
	if sp.Auto == nil {
		return nil, errors.New("auto: no tree in the strategy table entry")
	}
	tree, err := sp.Auto.prune()
	if err != nil {
		return nil, err
	}
	a := &autoPE{s: s, in: in, tree: tree, index: map[string]int{}, cache: map[int]pick{}, lastLocal: -1}
	if _, tr, ok := tree.Fixed(); ok {
		a.fixed, a.fixedTrace = true, tr.String()
	}
	conts := autoContainers(tree)
	names := make([]string, len(conts))
	for i, c := range conts {
		names[i] = c.String()
		a.index[names[i]] = i
		a.parts = append(a.parts, s.instance(sp.Auto.Parts[i]))
		csp, err := ContainerSpec(c)
		if err != nil {
			return nil, err
		}
		switch csp.Kind {
		case "each-to-many":
			a.bracketed = append(a.bracketed, i)
		case "streaming":
			a.streams = append(a.streams, i)
			if csp.Streaming.Tune && csp.Streaming.Scored {
				a.scored = append(a.scored, i)
			}
		}
	}
	a.ready = make([]*entry, len(a.parts))
	in.st.mu.Lock()
	if in.st.auto == nil {
		in.st.auto = &autoStats{fixedTrace: a.fixedTrace, containers: names, parts: a.parts, bracketed: a.bracketed}
	}
	a.st = in.st.auto
	in.st.mu.Unlock()
	a.log = a.st.newLog()
	return a, nil
}

// choose walks the pruned tree for a message of size bytes.
func (a *autoPE) choose(size int) (pick, error) {
	if a.haveLast && size == a.lastSize {
		return a.last, nil
	}
	p, ok := a.cache[size]
	if !ok {
		c, tr, err := a.tree.Select(selection.CallFacts{MsgSize: size})
		if err != nil {
			return pick{}, fmt.Errorf("comlib: %v: %w", a.in, err)
		}
		part, ok := a.index[c.String()]
		if !ok {
			return pick{}, fmt.Errorf("comlib: %v: the tree chose %s, which is none of its parts", a.in, c)
		}
		t := tr.String()
		ti := -1
		for i, x := range a.traces {
			if x == t {
				ti = i
				break
			}
		}
		if ti < 0 {
			ti = len(a.traces)
			a.traces = append(a.traces, t)
		}
		p = pick{part: int32(part), trace: int32(ti)}
		if len(a.cache) >= autoCacheMax {
			clear(a.cache)
		}
		a.cache[size] = p
	}
	a.lastSize, a.last, a.haveLast = size, p, true
	return p, nil
}

// count records a send of a walked tree: the latest Choice first, since
// an iteration's sends mostly take one way.
func (a *autoPE) count(p pick, size int) {
	a.n++
	if i := a.lastLocal; i >= 0 && a.matches(i, p) {
		c := &a.local[i]
		c.Messages++
		c.MinBytes, c.MaxBytes = min(c.MinBytes, size), max(c.MaxBytes, size)
		return
	}
	for i := range a.local {
		if a.matches(i, p) {
			c := &a.local[i]
			c.Messages++
			c.MinBytes, c.MaxBytes = min(c.MinBytes, size), max(c.MaxBytes, size)
			a.lastLocal = i
			return
		}
	}
	a.local = append(a.local, Choice{Iteration: a.cur, Part: int(p.part), Container: a.st.containers[p.part],
		Trace: a.traces[p.trace], Messages: 1, MinBytes: size, MaxBytes: size})
	a.lastLocal = len(a.local) - 1
}

func (a *autoPE) matches(i int, p pick) bool {
	c := &a.local[i]
	return c.Part == int(p.part) && c.Iteration == a.cur && c.Trace == a.traces[p.trace]
}

func (a *autoPE) flush() {
	if a.sent > 0 {
		a.log.addFixed(a.cur, a.sent)
		a.sent = 0
	}
	if len(a.local) > 0 {
		a.log.add(a.local)
		a.local, a.n, a.lastLocal = a.local[:0], 0, -1
	}
}

// countFixed counts a send of a fixed tree (from do, or from state.do
// through the alias).
func (a *autoPE) countFixed() {
	if a.sent++; a.sent >= autoFlushEvery && len(a.bracketed) == 0 {
		a.flush()
	}
}

func (a *autoPE) send(o op) error      { return a.run(o) }
func (a *autoPE) broadcast(o op) error { return a.run(o) }
func (a *autoPE) multicast(o op) error { return a.run(o) }
func (a *autoPE) begin(o op) error     { return a.run(o) }
func (a *autoPE) end(o op) error       { return a.run(o) }

// run queues o and, unless an op is under way on this PE (o came from a
// delivery it caused), runs the queue. An error of o is returned; one of
// an op queued meanwhile fails the job.
func (a *autoPE) run(o op) error {
	if a.busy {
		a.queue = append(a.queue, o)
		return nil
	}
	a.busy = true
	first := a.do(o)
	for i := 0; i < len(a.queue); i++ {
		if err := a.do(a.queue[i]); err != nil {
			a.s.pe.Fail(fmt.Errorf("comlib: %v: %w", a.in, err))
		}
	}
	clear(a.queue)
	a.queue = a.queue[:0]
	a.busy = false
	return first
}

func (a *autoPE) do(o op) error {
	switch o.kind {
	case opBegin, opEnd:
		if o.kind == opBegin {
			a.cur = o.iter
		}
		for _, i := range a.bracketed {
			if err := a.toPart(i, o); err != nil {
				return err
			}
		}
		if o.kind == opEnd {
			a.flush()
		}
		return nil
	case opFlush: // each part sends what it holds (a stream's buffers, a tuned ω's reports)
		for i := range a.parts {
			if err := a.toPart(i, o); err != nil {
				return err
			}
		}
		return nil
	case opScore:
		// The program's cost covers whichever parts carried its
		// messages: every scored part ends its evaluation with it.
		if len(a.scored) == 0 {
			return fmt.Errorf("comlib: Score on %v, none of whose parts (%s) is a streaming container with tune=true and scored=true",
				a.in, strings.Join(a.st.containers, ", "))
		}
		for _, i := range a.scored {
			if err := a.toPart(i, o); err != nil {
				return err
			}
		}
		return nil
	}
	if a.fixed {
		a.countFixed()
		return a.toPart(0, o)
	}
	size := o.size
	p, err := a.choose(size)
	if err != nil {
		return err
	}
	a.count(p, size)
	if a.n >= autoFlushEvery && len(a.bracketed) == 0 {
		a.flush()
	}
	return a.toPart(int(p.part), o)
}

// toPart runs o through part i: straight into its strategy once its
// entry is ready here with nothing held (it stays so), else through
// state.do, which holds o until then. A fixed tree's instance then
// becomes its part for sends (alias).
func (a *autoPE) toPart(i int, o op) error {
	e := a.ready[i]
	if e == nil {
		id := a.parts[i].id
		if pe := a.s.table[id]; pe != nil && pe.status == stReady && len(a.s.held[id]) == 0 {
			e, a.ready[i] = pe, pe
			if a.fixed {
				if self := a.s.table[a.in.id]; self != nil {
					self.auto, self.alias = a, pe
				}
			}
		}
	}
	if e == nil {
		return a.s.do(a.parts[i], o)
	}
	return a.s.run(e, a.parts[i], o)
}
