package reducer

import (
	"math"
	"reflect"
)

// Stats, named "stats", computes the count, mean and variance of number
// contributions (of any integer or float type, converted to float64). Its
// result is a Statistics. Partial results are Moments, combined with the
// pairwise formula of Chan, Golub and LeVeque, which stays accurate where
// summing squares would cancel, and gives the same result (to rounding)
// whatever the order of combination.
var Stats Reducer = stats{}

// Statistics is the result of Stats.
type Statistics struct {
	Count    int64
	Mean     float64
	Variance float64 // population variance: the mean squared deviation
}

// SampleVariance is the unbiased estimate of the variance of the
// population the contributions were drawn from (dividing by Count-1), or
// NaN for fewer than two contributions, where it is undefined.
func (s Statistics) SampleVariance() float64 {
	if s.Count < 2 {
		return math.NaN()
	}
	n := float64(s.Count)
	return s.Variance * n / (n - 1)
}

// Moments is the partial result of Stats: the count, the mean, and M2, the
// sum of squared deviations from the mean.
type Moments struct {
	Count int64
	Mean  float64
	M2    float64
}

type stats struct{}

// Name returns "stats".
func (stats) Name() string { return "stats" }

// Lift turns a number into the Moments of a single value.
func (stats) Lift(value, _ any) (any, error) {
	x, ok := toFloat64(value)
	if !ok {
		return nil, errorf(ErrType, "reducer stats: contribution of type %T, want an integer or float type", value)
	}
	return Moments{Count: 1, Mean: x}, nil
}

// Combine merges two Moments (Chan et al.).
func (stats) Combine(a, b any) (any, error) {
	x, err := moments(a)
	if err != nil {
		return nil, err
	}
	y, err := moments(b)
	if err != nil {
		return nil, err
	}
	switch {
	case x.Count == 0:
		return y, nil
	case y.Count == 0:
		return x, nil
	}
	n := x.Count + y.Count
	nx, ny, nn := float64(x.Count), float64(y.Count), float64(n)
	delta := y.Mean - x.Mean
	return Moments{
		Count: n,
		Mean:  x.Mean + delta*(ny/nn),
		M2:    x.M2 + y.M2 + delta*delta*(nx*ny/nn),
	}, nil
}

// Result turns Moments into Statistics.
func (stats) Result(partial any) (any, error) {
	m, err := moments(partial)
	if err != nil {
		return nil, err
	}
	s := Statistics{Count: m.Count, Mean: m.Mean}
	if m.Count > 0 {
		s.Variance = m.M2 / float64(m.Count)
	}
	return s, nil
}

func moments(partial any) (Moments, error) {
	m, ok := partial.(Moments)
	if !ok {
		return Moments{}, errorf(ErrType, "reducer stats: partial result of type %T, want reducer.Moments", partial)
	}
	return m, nil
}

// toFloat64 converts any integer or float value to float64, through
// reflection for types defined on them (time.Duration...).
func toFloat64(value any) (float64, bool) {
	switch x := value.(type) {
	case float64:
		return x, true
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case float32:
		return float64(x), true
	}
	v := reflect.ValueOf(value)
	if !v.IsValid() {
		return 0, false
	}
	if k := v.Kind(); isInt(k) || isUint(k) || isFloat(k) {
		return toFloat(v), true
	}
	return 0, false
}

func init() { mustRegister(Stats) }
