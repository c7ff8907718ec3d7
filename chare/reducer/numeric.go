package reducer

// Number is the constraint of the numeric reducers: every Go integer and
// floating-point type, and types defined on them (so that Sum[Meters]
// works for a type Meters float64).
type Number interface {
	~int | ~int8 | ~int16 | ~int32 | ~int64 |
		~uint | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~uintptr |
		~float32 | ~float64
}

// Sum returns the reducer named "sum_T" (e.g. "sum_int64") that adds
// contributions of type T, or of type []T element-wise (all slices of one
// reduction must have the same length). Integer sums wrap on overflow, as
// Go arithmetic does; float sums may differ in the last bits with the
// order of combination, as in Charm++.
//
// Every call for the same T returns the same registered reducer. Sum
// panics if "sum_T" is registered to a reducer of another kind (see User).
func Sum[T Number]() Reducer { return arith("sum", func(a, b T) T { return a + b }) }

// Product returns the reducer named "product_T" that multiplies
// contributions of type T or []T element-wise; see Sum.
func Product[T Number]() Reducer { return arith("product", func(a, b T) T { return a * b }) }

// Min returns the reducer named "min_T" that keeps the least contribution
// of type T, or the least value at each position of []T; see Sum. A NaN
// makes the result NaN, whatever the order of combination.
func Min[T Number]() Reducer { return arith("min", func(a, b T) T { return min(a, b) }) }

// Max returns the reducer named "max_T" that keeps the greatest
// contribution of type T, or the greatest value at each position of []T;
// see Sum and Min.
func Max[T Number]() Reducer { return arith("max", func(a, b T) T { return max(a, b) }) }

// arith interns the element-wise reducer op_T, so that the name, which is
// what crosses processes, always means the same function.
func arith[T Number](op string, f func(a, b T) T) Reducer {
	name := op + "_" + typeName[T]()
	return intern(name,
		func() Reducer { return &elementwise[T]{name: name, op: f} },
		func(r Reducer) bool { _, ok := r.(*elementwise[T]); return ok })
}

// The numeric reducers for the common types, named "sum_int", "max_float64"
// and so on. Others are one call away, e.g. Sum[uint8]().
var (
	SumInt     = Sum[int]()     // "sum_int"
	SumInt32   = Sum[int32]()   // "sum_int32"
	SumInt64   = Sum[int64]()   // "sum_int64"
	SumUint64  = Sum[uint64]()  // "sum_uint64"
	SumFloat32 = Sum[float32]() // "sum_float32"
	SumFloat64 = Sum[float64]() // "sum_float64"

	ProductInt     = Product[int]()     // "product_int"
	ProductInt32   = Product[int32]()   // "product_int32"
	ProductInt64   = Product[int64]()   // "product_int64"
	ProductUint64  = Product[uint64]()  // "product_uint64"
	ProductFloat32 = Product[float32]() // "product_float32"
	ProductFloat64 = Product[float64]() // "product_float64"

	MinInt     = Min[int]()     // "min_int"
	MinInt32   = Min[int32]()   // "min_int32"
	MinInt64   = Min[int64]()   // "min_int64"
	MinUint64  = Min[uint64]()  // "min_uint64"
	MinFloat32 = Min[float32]() // "min_float32"
	MinFloat64 = Min[float64]() // "min_float64"

	MaxInt     = Max[int]()     // "max_int"
	MaxInt32   = Max[int32]()   // "max_int32"
	MaxInt64   = Max[int64]()   // "max_int64"
	MaxUint64  = Max[uint64]()  // "max_uint64"
	MaxFloat32 = Max[float32]() // "max_float32"
	MaxFloat64 = Max[float64]() // "max_float64"
)

func init() {
	// The variables registered themselves when built; registering them
	// again is a no-op that keeps this list the one place to see them.
	mustRegister(
		SumInt, SumInt32, SumInt64, SumUint64, SumFloat32, SumFloat64,
		ProductInt, ProductInt32, ProductInt64, ProductUint64, ProductFloat32, ProductFloat64,
		MinInt, MinInt32, MinInt64, MinUint64, MinFloat32, MinFloat64,
		MaxInt, MaxInt32, MaxInt64, MaxUint64, MaxFloat32, MaxFloat64,
	)
}
