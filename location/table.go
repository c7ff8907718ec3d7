package location

// DefaultMaxHops is how many times a message is forwarded along caches
// before it is sent to the element's home instead.
const DefaultMaxHops = 3

// Action is what to do with a message that reached this PE.
type Action uint8

const (
	// Deliver: the element is here.
	Deliver Action = iota
	// Forward the message to Decision.PE, expecting Decision.Epoch there.
	Forward
	// Hold the message: the element, or news of it, is on its way here.
	Hold
	// Absent: this PE is the element's home and the element does not
	// exist (never inserted, or deleted). The caller holds the message
	// until an insertion, or creates the element on demand.
	Absent
)

func (a Action) String() string {
	switch a {
	case Deliver:
		return "deliver"
	case Forward:
		return "forward"
	case Hold:
		return "hold"
	case Absent:
		return "absent"
	}
	return "action?"
}

// Decision is the answer of Route.
type Decision struct {
	Action Action
	PE     int    // where to forward
	Epoch  uint32 // the epoch to expect there
}

// Loc is a piece of knowledge about an element that is not here.
type Loc struct {
	PE    int
	Epoch uint32
	Gone  bool // deleted at Epoch
}

// Table is one PE's knowledge of one array's elements, and the messages
// it holds for them. M is the type of a held message.
type Table[I comparable, M any] struct {
	here    int
	home    func(I) int
	maxHops int
	local   map[I]uint32 // elements here, with their epoch
	known   map[I]Loc
	held    map[I][]M
	nheld   int
}

// New returns the table of PE here; home gives an element's home PE;
// maxHops ≤ 0 means DefaultMaxHops.
func New[I comparable, M any](here int, home func(I) int, maxHops int) *Table[I, M] {
	if maxHops <= 0 {
		maxHops = DefaultMaxHops
	}
	return &Table[I, M]{here: here, home: home, maxHops: maxHops,
		local: map[I]uint32{}, known: map[I]Loc{}, held: map[I][]M{}}
}

// Here returns the table's PE.
func (t *Table[I, M]) Here() int { return t.here }

// Home returns an element's home PE.
func (t *Table[I, M]) Home(i I) int { return t.home(i) }

// MaxHops returns the forwarding bound.
func (t *Table[I, M]) MaxHops() int { return t.maxHops }

// IsLocal reports whether the element is here, and its epoch.
func (t *Table[I, M]) IsLocal(i I) (uint32, bool) {
	e, ok := t.local[i]
	return e, ok
}

// NumLocal returns how many elements are here.
func (t *Table[I, M]) NumLocal() int { return len(t.local) }

// Known returns what this PE knows of an element that is not here.
func (t *Table[I, M]) Known(i I) (Loc, bool) {
	l, ok := t.known[i]
	return l, ok
}

// Lookup returns where a sender on this PE should send a message for the
// element, and the epoch to expect there.
func (t *Table[I, M]) Lookup(i I) (int, uint32) {
	if pe, e, ok := t.Cached(i); ok {
		return pe, e
	}
	return t.home(i), 0
}

// Cached is Lookup for a caller that knows the element's home itself: it
// returns what Lookup would, or false where Lookup would answer with the
// home at epoch 0.
func (t *Table[I, M]) Cached(i I) (int, uint32, bool) {
	if e, ok := t.local[i]; ok {
		return t.here, e, true
	}
	if l, ok := t.known[i]; ok && !l.Gone {
		return l.PE, l.Epoch, true
	}
	return 0, 0, false
}

// Route decides what to do with a message for element i that expected it
// here at epoch epoch and has been forwarded hops times so far.
func (t *Table[I, M]) Route(i I, epoch uint32, hops int) Decision {
	if e, ok := t.local[i]; ok {
		return Decision{Action: Deliver, PE: t.here, Epoch: e}
	}
	l, ok := t.known[i]
	home := t.home(i)
	if home == t.here {
		switch {
		case !ok || l.Gone:
			return Decision{Action: Absent}
		case l.PE == t.here || l.Epoch < epoch:
			return Decision{Action: Hold}
		}
		return Decision{Action: Forward, PE: l.PE, Epoch: l.Epoch}
	}
	switch {
	case !ok:
		if epoch > 0 {
			return Decision{Action: Hold} // it is coming here
		}
		return Decision{Action: Forward, PE: home}
	case l.Epoch < epoch || l.PE == t.here && !l.Gone:
		return Decision{Action: Hold}
	case l.Gone:
		return Decision{Action: Forward, PE: home, Epoch: l.Epoch}
	case hops >= t.maxHops:
		return Decision{Action: Forward, PE: home, Epoch: l.Epoch}
	}
	return Decision{Action: Forward, PE: l.PE, Epoch: l.Epoch}
}

// Learn records that element i is (or was at epoch) on PE pe, if that is
// newer than what this PE knows; it reports whether anything changed, in
// which case the messages held for i should be routed again.
func (t *Table[I, M]) Learn(i I, pe int, epoch uint32) bool {
	if _, ok := t.local[i]; ok || pe == t.here {
		return false
	}
	if l, ok := t.known[i]; ok && l.Epoch >= epoch {
		return false
	}
	t.known[i] = Loc{PE: pe, Epoch: epoch}
	return true
}

// LearnGone records that element i was deleted at epoch.
func (t *Table[I, M]) LearnGone(i I, epoch uint32) bool {
	if _, ok := t.local[i]; ok {
		return false
	}
	if l, ok := t.known[i]; ok && (l.Epoch > epoch || l.Epoch == epoch && l.Gone) {
		return false
	}
	t.known[i] = Loc{PE: t.home(i), Epoch: epoch, Gone: true}
	return true
}

// Arrive records that element i now lives here at epoch.
func (t *Table[I, M]) Arrive(i I, epoch uint32) {
	t.local[i] = epoch
	delete(t.known, i)
}

// Depart records that element i left for PE to, where it has epoch.
func (t *Table[I, M]) Depart(i I, to int, epoch uint32) {
	delete(t.local, i)
	t.known[i] = Loc{PE: to, Epoch: epoch}
}

// Delete records that element i, which was here, is deleted.
func (t *Table[I, M]) Delete(i I) uint32 {
	e := t.local[i]
	delete(t.local, i)
	t.known[i] = Loc{PE: t.home(i), Epoch: e, Gone: true}
	return e
}

// Exists reports, on the home, whether element i exists somewhere (here,
// or elsewhere as far as the home knows), and the epoch a new incarnation
// of it must have.
func (t *Table[I, M]) Exists(i I) (exists bool, next uint32) {
	if e, ok := t.local[i]; ok {
		return true, e + 1
	}
	if l, ok := t.known[i]; ok {
		return !l.Gone, l.Epoch + 1
	}
	return false, 0
}

// Hold keeps a message for element i.
func (t *Table[I, M]) Hold(i I, m M) {
	t.held[i] = append(t.held[i], m)
	t.nheld++
}

// Release removes and returns the messages held for i, in arrival order.
func (t *Table[I, M]) Release(i I) []M {
	ms := t.held[i]
	if len(ms) > 0 {
		delete(t.held, i)
		t.nheld -= len(ms)
	}
	return ms
}

// NumHeld returns how many messages are held.
func (t *Table[I, M]) NumHeld() int { return t.nheld }

// EachHeld calls fn for every element with held messages.
func (t *Table[I, M]) EachHeld(fn func(i I, n int)) {
	for i, ms := range t.held {
		fn(i, len(ms))
	}
}
