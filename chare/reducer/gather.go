package reducer

// Pair is one contribution with the index of its contributor (an array
// index, or the PE of a group branch): the result of GatherOf[I, T] is a
// []Pair[I, T].
type Pair[I, T any] struct {
	Index I
	Value T
}

// Item is one contribution to a Gather reduction, whose indices and values
// have no fixed type.
type Item = Pair[any, any]

// Gather, named "gather", collects every contribution with its index
// (Charm++'s concat, keeping the order of contributors). The result is an
// []Item sorted by index: integers by value, then arrays of integers
// ([2]int .. [6]int indices) lexicographically, then strings, then types
// implementing Lesser, then any other type by type name and fmt.Sprint.
// Items with equal indices, which a well-formed reduction does not have,
// are ordered by value the same way, so the result is the same whatever
// the order of combination.
//
// Partial results are []Item, kept sorted so that Combine is a merge.
var Gather Reducer = &gather{name: "gather"}

// Concat, named "concat", is Gather without the indices: its result is the
// contributed values, as an []any in index order.
var Concat Reducer = &gather{name: "concat", valuesOnly: true}

type gather struct {
	name       string
	valuesOnly bool
}

// Name returns the reducer's registered name.
func (g *gather) Name() string { return g.name }

// Lift pairs the contribution with its index; any value is accepted.
func (g *gather) Lift(value, index any) (any, error) {
	return []Item{{Index: index, Value: value}}, nil
}

// Combine merges two sorted partial results into a new one.
func (g *gather) Combine(a, b any) (any, error) {
	x, err := g.items(a)
	if err != nil {
		return nil, err
	}
	y, err := g.items(b)
	if err != nil {
		return nil, err
	}
	return merge(x, y, compareItems), nil
}

// Result returns the items, or for Concat their values.
func (g *gather) Result(partial any) (any, error) {
	items, err := g.items(partial)
	if err != nil || !g.valuesOnly {
		return items, err
	}
	return collect[any](g.name, items, func(it Item) any { return it.Value })
}

// whyNoCodec says what to use to cross processes.
func (g *gather) whyNoCodec() string {
	return "its values have no fixed type; use " + typedName(g.name) + "[I, T]"
}

func (g *gather) items(partial any) ([]Item, error) {
	items, ok := partial.([]Item)
	if !ok {
		return nil, errorf(ErrType, "reducer %s: partial result of type %T, want []reducer.Item", g.name, partial)
	}
	return items, nil
}

func compareItems(a, b Item) int {
	if c := compareAny(a.Index, b.Index); c != 0 {
		return c
	}
	return compareAny(a.Value, b.Value)
}

// merge merges two sorted slices into a new one, taking from a on ties.
func merge[E any](a, b []E, cmp func(x, y E) int) []E {
	out := make([]E, 0, len(a)+len(b))
	for len(a) > 0 && len(b) > 0 {
		if cmp(b[0], a[0]) < 0 {
			out, b = append(out, b[0]), b[1:]
		} else {
			out, a = append(out, a[0]), a[1:]
		}
	}
	return append(append(out, a...), b...)
}

func init() { mustRegister(Gather, Concat) }
