package core

import (
	"fmt"
	"reflect"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
)

// TypeID numbers a registered chare type; Register assigns them in call
// order, so every process running the same binary agrees on them.
type TypeID uint32

// EntryID numbers an entry method across the program: the type's ID in the
// high half, the method's position (by name) in the low half.
type EntryID uint32

// Type describes a registered chare type.
type Type struct {
	ID      TypeID
	Name    string // package-qualified, as "main.Worker"
	rtype   reflect.Type
	entries []*Entry
	byName  map[string]*Entry

	migrates  bool     // its objects migrate (array elements)
	packer    bool     // it implements Packer
	losses    []loss   // the fields packing does not carry faithfully
	transient []string // the names given to Transient
	// packable: every lossy field is declared Transient (PackError is
	// nil). Set at registration; read on every migration.
	packable atomic.Bool
}

// Entry describes one entry method of a chare type.
type Entry struct {
	ID       EntryID
	Type     *Type
	Name     string       // the method's name
	Msg      reflect.Type // nil for a method without a message
	Result   reflect.Type // nil unless the method returns a value (a sync entry)
	Threaded bool
	// NoRuns: every message of the entry method travels in an envelope of
	// its own, never in a run (NoRuns).
	NoRuns bool
	fn     reflect.Value // the method expression, func(*T[, M])[R]

	// invoke calls the method with a message held in an any. Generic code
	// (Send, EntryCallback) installs a typed version; until then reflection
	// is used.
	invoke atomic.Pointer[func(obj, msg any) any]
	// wireEnv decodes a message for this entry from another process into a
	// typed envelope, which calls the method without reflection. Send and
	// Fast install it; without it, decoding and the call use reflection.
	wireEnv atomic.Pointer[wireDecoder]
	// wireRun decodes a whole run of messages for this entry from another
	// process into one typed run (run.go); installed with wireEnv for
	// entries that take a message and return nothing.
	wireRun atomic.Pointer[runDecoder]
	// delegate, if set, receives every send of this entry method made
	// through an undelegated proxy (MarkEntry), in its job.
	delegate atomic.Pointer[entryMark]
	// runs and runsN hold delivered runs of this entry method, of one
	// message (*runOfOne) and of more (*run1 with its slices), for newRun
	// to reuse (run.go).
	runs, runsN sync.Pool
}

// entryMark is an entry method's delegate and the job whose sends it takes
// (nil: every job).
type entryMark struct {
	d   Delegate
	rd  RunDelegate // d, if it is one: converted once, not per send
	job *Job
}

// markFor returns the delegate e is marked for in job, or nil.
func (e *Entry) markFor(job *Job) Delegate {
	if m := e.markIn(job); m != nil {
		return m.d
	}
	return nil
}

// markIn returns e's mark if it holds for job, or nil.
func (e *Entry) markIn(job *Job) *entryMark {
	m := e.delegate.Load()
	if m == nil || m.job != nil && m.job != job {
		return nil // unmarked, or a mark an earlier job left in this process
	}
	return m
}

// MarkEntry makes every send of the entry method behind method, through
// any proxy that is not delegated otherwise, go to d (nil unmarks it): the
// way a library such as TRAM aggregates an entry method "tagged for
// aggregation" without touching the code that sends. The mark holds for
// every job the process runs; MarkEntryID can limit it to one.
func MarkEntry(method any, d Delegate) error {
	e, err := lookupEntry(method)
	if err != nil {
		return err
	}
	e.mark(nil, d)
	return nil
}

// MarkEntryID is MarkEntry for the entry method numbered id: a delegate
// that marks an entry method in every process names it by its number,
// which is the same in every process of the job. The mark holds for the
// sends of job only (nil: every job): a delegate that belongs to one job
// passes its job, so that a later job of the process sends the entry
// method directly until it marks it again.
func MarkEntryID(job *Job, id EntryID, d Delegate) error {
	e, err := EntryByID(id)
	if err != nil {
		return err
	}
	e.mark(job, d)
	return nil
}

func (e *Entry) mark(job *Job, d Delegate) {
	if d == nil {
		e.delegate.Store(nil)
		return
	}
	rd, _ := d.(RunDelegate)
	e.delegate.Store(&entryMark{d: d, rd: rd, job: job})
}

// EntryIDOf returns the number of the entry method behind method, the
// same in every process of the job.
func EntryIDOf(method any) (EntryID, error) {
	e, err := lookupEntry(method)
	if err != nil {
		return 0, err
	}
	return e.ID, nil
}

func (e *Entry) String() string { return e.Type.Name + "." + e.Name }

// Option configures a chare type at registration.
type Option func(*registration)

type registration struct {
	threaded  []any
	noRuns    []any
	fast      []func(*Type) error
	transient []string
}

// Fast declares an entry method whose messages from other processes are
// decoded and delivered without reflection (about twice as fast). A
// process of a job of several processes that sends to the method itself
// gets this by its first Send (a job of one process receives from no
// other process, and builds none); Fast is for processes that only
// receive, or that decode envelopes themselves. It is an optimization
// only.
func Fast[T, M any](method func(*T, M)) Option {
	return func(r *registration) {
		r.fast = append(r.fast, func(t *Type) error {
			e, err := entryOfLocked(t, method)
			if err != nil {
				return err
			}
			(&env1[T, M]{fn: method}).installWire(e)
			return nil
		})
	}
}

// Threaded marks entry methods (given as method expressions, such as
// (*Worker).Run) as threaded: they run in their own goroutine and may block
// on futures without blocking their PE (Charm++ [threaded]).
func Threaded(methods ...any) Option {
	return func(r *registration) { r.threaded = append(r.threaded, methods...) }
}

// NoRuns marks entry methods whose messages each travel in an envelope of
// their own: consecutive sends to one group branch, or to array elements
// on one PE, do not share a run
// (run.go). Nothing but the cost changes — the order and the delivery are
// the same — so this is for measuring what runs save, or for comparing
// with a runtime that sends one message per call, as Charm++ does.
func NoRuns(methods ...any) Option {
	return func(r *registration) { r.noRuns = append(r.noRuns, methods...) }
}

type registry struct {
	mu     sync.Mutex
	types  []*Type
	byType map[reflect.Type]*Type
	// byPC maps a method expression's code pointer to its entry. It is
	// copied on write, so lookups on the message path take no lock.
	byPC atomic.Pointer[map[uintptr]*Entry]
	// snapshot is types, copied on write, for lock-free lookups by ID.
	snapshot atomic.Pointer[[]*Type]
}

var reg = func() *registry {
	r := &registry{byType: map[reflect.Type]*Type{}}
	m := map[uintptr]*Entry{}
	r.byPC.Store(&m)
	r.snapshot.Store(&[]*Type{})
	return r
}()

// Register makes T a chare type: its exported methods that take a pointer
// receiver and at most one argument become entry methods. Register types
// in the same order in every process (in init functions or at the start of
// main); registering a type again returns the same description.
//
// Register records which fields of T would not survive packing
// (unexported, interface, func and channel fields not declared with
// Transient nor tagged `msgpack:"-"`, unless T implements Packer). A type
// with such fields registers and runs, but its objects cannot migrate nor
// be checkpointed: both are refused with an error naming the type and the
// fields (Type.PackError), and load balancers leave its elements where
// they are. Register panics only on a mistake in the options: a name given
// to Transient that is not a field of T, or a method given to Threaded,
// NoRuns or Fast that is not an entry method of T.
func Register[T any](opts ...Option) *Type {
	t, err := register(reflect.TypeFor[T](), opts...)
	if err != nil {
		panic(err)
	}
	return t
}

func register(rt reflect.Type, opts ...Option) (*Type, error) {
	if rt.Kind() != reflect.Struct {
		return nil, fmt.Errorf("chare: %v is not a struct type and cannot be a chare", rt)
	}
	var o registration
	for _, opt := range opts {
		opt(&o)
	}
	moves := migrates(rt) // before taking the lock: it may look at registered types
	reg.mu.Lock()
	defer reg.mu.Unlock()
	t := reg.byType[rt]
	if t != nil && len(o.transient) > 0 {
		names := append(append([]string(nil), t.transient...), o.transient...)
		plan, err := checkTransient(t, names)
		if err != nil {
			return nil, err
		}
		t.transient = names
		t.setPlan(plan)
	}
	if t == nil {
		// The options are checked before the type is added: a type
		// refused leaves the registry (and so every type's ID) as it was.
		probe := &Type{Name: typeName(rt), rtype: rt, migrates: moves, transient: o.transient,
			packer: reflect.PointerTo(rt).Implements(packerType), losses: stateLosses(rt)}
		plan, err := checkTransient(probe, o.transient)
		if err != nil {
			return nil, err
		}
		t = probe
		t.setPlan(plan)
		t.ID, t.byName = TypeID(len(reg.types)+1), map[string]*Entry{}
		pt := reflect.PointerTo(rt)
		var names []string
		for i := 0; i < pt.NumMethod(); i++ {
			names = append(names, pt.Method(i).Name)
		}
		sort.Strings(names)
		pcs := map[uintptr]*Entry{}
		for k, v := range *reg.byPC.Load() {
			pcs[k] = v
		}
		for _, name := range names {
			m, _ := pt.MethodByName(name)
			ft := m.Func.Type() // func(*T, args...) results...
			if ft.NumIn() > 2 || ft.NumOut() > 1 || ft.IsVariadic() {
				continue
			}
			e := &Entry{ID: EntryID(uint32(t.ID)<<16 | uint32(len(t.entries)+1)), Type: t, Name: name, fn: m.Func}
			if ft.NumIn() == 2 {
				e.Msg = ft.In(1)
			}
			if ft.NumOut() == 1 {
				e.Result = ft.Out(0)
			}
			t.entries = append(t.entries, e)
			t.byName[name] = e
			pcs[m.Func.Pointer()] = e
		}
		reg.types = append(reg.types, t)
		snap := append([]*Type(nil), reg.types...)
		reg.snapshot.Store(&snap)
		reg.byType[rt] = t
		reg.byPC.Store(&pcs)
	}
	for _, f := range o.fast {
		if err := f(t); err != nil {
			return nil, err
		}
	}
	for _, m := range o.threaded {
		e, err := entryOfLocked(t, m)
		if err != nil {
			return nil, err
		}
		e.Threaded = true
	}
	for _, m := range o.noRuns {
		e, err := entryOfLocked(t, m)
		if err != nil {
			return nil, err
		}
		e.NoRuns = true
	}
	return t, nil
}

func entryOfLocked(t *Type, method any) (*Entry, error) {
	e, err := lookupEntry(method)
	if err != nil {
		return nil, err
	}
	if e.Type != t {
		return nil, fmt.Errorf("chare: %s is an entry method of %s, not of %s", e, e.Type.Name, t.Name)
	}
	return e, nil
}

// lookupEntry finds the entry method behind a method expression.
func lookupEntry(method any) (*Entry, error) {
	v := reflect.ValueOf(method)
	if v.Kind() != reflect.Func || v.IsNil() {
		return nil, fmt.Errorf("chare: %s is not a method expression", valueTypeName(method))
	}
	if e := (*reg.byPC.Load())[v.Pointer()]; e != nil {
		return e, nil
	}
	name := "a function"
	if f := runtime.FuncForPC(v.Pointer()); f != nil {
		name = f.Name()
	}
	if strings.Contains(name, ".func") {
		return nil, fmt.Errorf("chare: %s is a function literal, not an entry method: pass a method expression such as (*Worker).Step", name)
	}
	return nil, fmt.Errorf("chare: %s is not an entry method of a registered chare type: call chare.Register for its type (entry methods are exported, take a pointer receiver and at most one argument)", name)
}

// TypeOf returns the registered description of T, or an error naming T if
// it was not registered.
func TypeOf[T any]() (*Type, error) {
	return typeOf(reflect.TypeFor[T]())
}

func typeOf(rt reflect.Type) (*Type, error) {
	reg.mu.Lock()
	defer reg.mu.Unlock()
	if t := reg.byType[rt]; t != nil {
		return t, nil
	}
	return nil, fmt.Errorf("chare: type %s is not registered: call chare.Register[%s]() in an init function", typeName(rt), rt.Name())
}

// TypeByID returns the type registered under id. It takes no lock: the
// message path of other processes calls it for every message.
func TypeByID(id TypeID) (*Type, error) {
	types := *reg.snapshot.Load()
	if id == 0 || int(id) > len(types) {
		return nil, fmt.Errorf("chare: no chare type #%d is registered", id)
	}
	return types[id-1], nil
}

// EntryByID returns the entry method numbered id.
func EntryByID(id EntryID) (*Entry, error) {
	t, err := TypeByID(TypeID(id >> 16))
	if err != nil {
		return nil, fmt.Errorf("chare: unknown entry method #%#x: %w", uint32(id), err)
	}
	i := int(id & 0xffff)
	if i == 0 || i > len(t.entries) {
		return nil, fmt.Errorf("chare: %s has no entry method #%d", t.Name, i)
	}
	return t.entries[i-1], nil
}

// setPlan installs the type's Transient fields: what packing leaves out,
// and whether its state then packs whole.
func (t *Type) setPlan(plan *dropPlan) {
	key := reflect.PointerTo(t.rtype)
	if plan != nil && !t.packer {
		dropPlans.Store(key, plan)
	} else {
		dropPlans.Delete(key)
	}
	t.packable.Store(len(t.unaccepted()) == 0)
}

// New returns a new zero object of the type.
func (t *Type) New() any { return reflect.New(t.rtype).Interface() }

// Entries lists the type's entry methods in ID order.
func (t *Type) Entries() []*Entry { return t.entries }

// Entry returns the entry method with the given name.
func (t *Type) Entry(name string) (*Entry, error) {
	if e := t.byName[name]; e != nil {
		return e, nil
	}
	return nil, fmt.Errorf("chare: %s has no entry method %q", t.Name, name)
}

// Invoke calls the entry method on obj with msg (nil for a method without a
// message) and returns its result, if any. The message's type is checked.
func (e *Entry) Invoke(obj, msg any) (any, error) {
	if inv := e.invoke.Load(); inv != nil {
		if e.Msg == nil && msg == nil || msg != nil && reflect.TypeOf(msg) == e.Msg {
			return (*inv)(obj, msg), nil
		}
	}
	args := []reflect.Value{reflect.ValueOf(obj)}
	if e.Msg != nil {
		mv, err := convertArg(e, msg)
		if err != nil {
			return nil, err
		}
		args = append(args, mv)
	} else if msg != nil {
		return nil, fmt.Errorf("chare: %s takes no message, got %s", e, valueTypeName(msg))
	}
	out := e.fn.Call(args)
	if len(out) == 1 {
		return out[0].Interface(), nil
	}
	return nil, nil
}

func convertArg(e *Entry, msg any) (reflect.Value, error) {
	if msg == nil {
		switch e.Msg.Kind() {
		case reflect.Pointer, reflect.Interface, reflect.Slice, reflect.Map:
			return reflect.Zero(e.Msg), nil
		}
		return reflect.Value{}, fmt.Errorf("chare: %s needs a message of type %s, got none", e, typeName(e.Msg))
	}
	v := reflect.ValueOf(msg)
	if v.Type().AssignableTo(e.Msg) {
		return v, nil
	}
	if v.Type().ConvertibleTo(e.Msg) && sameKindFamily(v.Type(), e.Msg) {
		return v.Convert(e.Msg), nil
	}
	return reflect.Value{}, fmt.Errorf("chare: %s needs a message of type %s, got %s", e, typeName(e.Msg), valueTypeName(msg))
}

// sameKindFamily allows numeric conversions between numbers only (an int64
// reduction result to an int parameter), never number to string.
func sameKindFamily(a, b reflect.Type) bool {
	num := func(k reflect.Kind) bool { return k >= reflect.Int && k <= reflect.Float64 }
	return num(a.Kind()) && num(b.Kind())
}

// EntryOf returns the entry method behind a method expression, or an error
// naming what was passed instead.
func EntryOf(method any) (*Entry, error) { return lookupEntry(method) }
