package reducer

// The logical reducers combine bool contributions, or []bool contributions
// position by position (all slices of one reduction of the same length),
// like Charm++'s logical_and_bool, logical_or_bool and logical_xor_bool.
var (
	// And, named "and", is true if every contribution is true.
	And Reducer = &elementwise[bool]{name: "and", op: func(a, b bool) bool { return a && b }}
	// Or, named "or", is true if some contribution is true.
	Or Reducer = &elementwise[bool]{name: "or", op: func(a, b bool) bool { return a || b }}
	// Xor, named "xor", is true if an odd number of contributions are true.
	Xor Reducer = &elementwise[bool]{name: "xor", op: func(a, b bool) bool { return a != b }}
)

// Nop, named "nop", is the reducer of a barrier (Charm++'s nop reduction):
// the contributions, which may be nil, are ignored, and the result is nil.
var Nop Reducer = nop{}

type nop struct{}

// Name returns "nop".
func (nop) Name() string { return "nop" }

// Lift ignores the contribution.
func (nop) Lift(_, _ any) (any, error) { return nil, nil }

// Combine ignores both partial results.
func (nop) Combine(_, _ any) (any, error) { return nil, nil }

// Result is nil.
func (nop) Result(any) (any, error) { return nil, nil }

func init() { mustRegister(Nop, And, Or, Xor) }
