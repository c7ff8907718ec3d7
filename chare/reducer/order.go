package reducer

import (
	"cmp"
	"fmt"
	"math"
	"reflect"
	"strings"
)

// Lesser is implemented by index and set-element types that define their
// own order. Gather and Set call a.Less(b) only when a and b have the same
// dynamic type; Less must be a strict weak order.
type Lesser interface {
	Less(other any) bool
}

// The classes of compareAny, in the order they sort.
const (
	classNumber = iota // integers and floats, by value
	classArray         // arrays of integers ([2]int .. [6]int indices), lexicographically
	classString        // strings, lexicographically
	classLesser        // Lesser types, by Less
	classOther         // anything else, by type name then fmt.Sprint
)

// compareAny is the total order of Gather's indices and Set's elements. It
// must not depend on anything but the two values, so that results do not
// depend on the order in which partial results were combined. Values of
// different classes sort by class; ties between types (int 1 and int64 1)
// break by type name.
func compareAny(a, b any) int {
	// Fast paths for the usual array indices.
	switch x := a.(type) {
	case int:
		if y, ok := b.(int); ok {
			return cmp.Compare(x, y)
		}
	case string:
		if y, ok := b.(string); ok {
			return strings.Compare(x, y)
		}
	}
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	ca, cb := classOf(a, va), classOf(b, vb)
	if ca != cb {
		return cmp.Compare(ca, cb)
	}
	c := 0
	switch ca {
	case classNumber:
		c = compareNumbers(va, vb)
	case classArray:
		for i := 0; i < va.Len() && i < vb.Len() && c == 0; i++ {
			c = compareNumbers(va.Index(i), vb.Index(i))
		}
		if c == 0 {
			c = cmp.Compare(va.Len(), vb.Len())
		}
	case classString:
		c = strings.Compare(va.String(), vb.String())
	case classLesser:
		if va.Type() == vb.Type() {
			if a.(Lesser).Less(b) {
				return -1
			}
			if b.(Lesser).Less(a) {
				return 1
			}
			return 0
		}
	}
	if c != 0 {
		return c
	}
	if c = strings.Compare(typeString(va), typeString(vb)); c != 0 || ca != classOther {
		return c
	}
	return strings.Compare(fmt.Sprint(a), fmt.Sprint(b))
}

func classOf(x any, v reflect.Value) int {
	if _, ok := x.(Lesser); ok {
		// Checked first: a type that defines Less wants that order, even
		// if it is an integer or string type underneath.
		return classLesser
	}
	if !v.IsValid() {
		return classOther // nil
	}
	switch k := v.Kind(); {
	case isInt(k) || isUint(k) || isFloat(k):
		return classNumber
	case k == reflect.Array && (isInt(v.Type().Elem().Kind()) || isUint(v.Type().Elem().Kind())):
		return classArray
	case k == reflect.String:
		return classString
	}
	return classOther
}

func typeString(v reflect.Value) string {
	if !v.IsValid() {
		return "<nil>"
	}
	return v.Type().String()
}

// compareNumbers compares two numbers of any kinds by value: exactly
// between integers, through float64 when a float is involved. NaN sorts
// after every number and -0 before +0, to keep the order total.
func compareNumbers(a, b reflect.Value) int {
	ka, kb := a.Kind(), b.Kind()
	switch {
	case isFloat(ka) || isFloat(kb):
		x, y := toFloat(a), toFloat(b)
		xn, yn := math.IsNaN(x), math.IsNaN(y)
		switch {
		case xn || yn:
			return cmp.Compare(b2i(xn), b2i(yn))
		case x != y:
			return cmp.Compare(x, y)
		}
		return cmp.Compare(b2i(!math.Signbit(x)), b2i(!math.Signbit(y)))
	case isInt(ka) && isInt(kb):
		return cmp.Compare(a.Int(), b.Int())
	case isUint(ka) && isUint(kb):
		return cmp.Compare(a.Uint(), b.Uint())
	case isInt(ka): // b unsigned
		if a.Int() < 0 {
			return -1
		}
		return cmp.Compare(uint64(a.Int()), b.Uint())
	default: // a unsigned, b signed
		if b.Int() < 0 {
			return 1
		}
		return cmp.Compare(a.Uint(), uint64(b.Int()))
	}
}

func toFloat(v reflect.Value) float64 {
	switch k := v.Kind(); {
	case isInt(k):
		return float64(v.Int())
	case isUint(k):
		return float64(v.Uint())
	}
	return v.Float()
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func isInt(k reflect.Kind) bool { return k >= reflect.Int && k <= reflect.Int64 }

func isUint(k reflect.Kind) bool { return k >= reflect.Uint && k <= reflect.Uintptr }

func isFloat(k reflect.Kind) bool { return k == reflect.Float32 || k == reflect.Float64 }
