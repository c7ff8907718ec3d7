package reducer

// The bit-vector reducers combine uint64 contributions, or []uint64
// contributions word by word (all slices of one reduction of the same
// length), like Charm++'s bitvec_and, bitvec_or and bitvec_xor. A []uint64
// holds a bit vector of any size, bit i being word i/64, bit i%64.
var (
	// BitAnd, named "bitand", keeps the bits set in every contribution.
	BitAnd Reducer = &elementwise[uint64]{name: "bitand", op: func(a, b uint64) uint64 { return a & b }}
	// BitOr, named "bitor", keeps the bits set in some contribution.
	BitOr Reducer = &elementwise[uint64]{name: "bitor", op: func(a, b uint64) uint64 { return a | b }}
	// BitXor, named "bitxor", keeps the bits set in an odd number of
	// contributions.
	BitXor Reducer = &elementwise[uint64]{name: "bitxor", op: func(a, b uint64) uint64 { return a ^ b }}
)

func init() { mustRegister(BitAnd, BitOr, BitXor) }
