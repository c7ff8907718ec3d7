package reducer

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// label is a string type, which sorts with strings.
type label string

func TestOrderPairs(t *testing.T) {
	for _, tc := range []struct {
		name string
		a, b any // a sorts strictly before b
	}{
		{"Ints", -5, 3},
		{"NegativeIntBeforeUint", int64(-1), uint64(0)},
		{"IntBeforeLargerUint", 3, uint8(4)},
		{"UintBeforeLargerInt", uint64(2), int8(3)},
		{"HugeUints", uint64(math.MaxUint64 - 1), uint64(math.MaxUint64)},
		{"IntBeforeFloat", 2, 2.5},
		{"FloatBeforeInt", -0.5, 0},
		{"EqualNumbersByTypeName", 1.0, 1},
		{"NegativeZeroFirst", math.Copysign(0, -1), 0.0},
		{"NaNAfterNumbers", math.Inf(1), math.NaN()},
		{"Duration", time.Second, 2 * time.Second},
		{"NumberBeforeArray", 1 << 40, [2]int{0, 0}},
		{"ArraysLexicographic", [3]int{1, 2, 3}, [3]int{1, 3, 0}},
		{"ShorterArrayFirst", [2]int{1, 2}, [3]int{1, 2, 0}},
		{"ArrayBeforeString", [2]int{9, 9}, ""},
		{"Strings", "abc", "abd"},
		{"NamedStrings", label("a"), "b"},
		{"EqualStringsByTypeName", label("a"), "a"}, // "reducer.label" < "string"
		{"StringBeforeLesser", "zzz", rev(0)},
		{"LesserOwnOrder", rev(5), rev(1)},
		{"LesserBeforeOther", rev(0), point{}},
		{"OtherByTypeName", true, point{}},
		{"OtherBySprintText", point{1, 10}, point{1, 2}}, // "{1 10}" < "{1 2}"
		{"NilBeforeOtherTypes", nil, point{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, -1, compareAny(tc.a, tc.b))
			require.Equal(t, 1, compareAny(tc.b, tc.a))
			require.Equal(t, 0, compareAny(tc.a, tc.a))
			require.Equal(t, 0, compareAny(tc.b, tc.b))
		})
	}
}

func TestOrderIsTotalOnAMixedSample(t *testing.T) {
	// compareAny must be a total order for sorting to be deterministic:
	// antisymmetric and transitive on every triple of this sample.
	sample := []any{
		-3, 0, 7, int8(-3), uint(7), uint64(math.MaxUint64), 2.5, -0.0, math.Copysign(0, -1),
		math.Inf(-1), math.NaN(), float32(7), time.Duration(0),
		[2]int{0, 1}, [2]int{1, 0}, [3]int{0, 1, 0}, [2]uint8{0, 1},
		"", "a", "b", rev(1), rev(2), point{}, point{1, 1}, true, false, nil, struct{}{},
	}
	for _, a := range sample {
		for _, b := range sample {
			ab, ba := compareAny(a, b), compareAny(b, a)
			require.Equal(t, -ab, ba, "%#v vs %#v", a, b)
			for _, c := range sample {
				if ab <= 0 && compareAny(b, c) <= 0 {
					require.LessOrEqual(t, compareAny(a, c), 0, "%#v <= %#v <= %#v", a, b, c)
				}
			}
		}
	}
}
