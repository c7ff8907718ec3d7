package schedule

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// Linear is a parameter that grows with the packet size: Base + PerByte·bytes.
type Linear struct {
	Base    time.Duration // the value for an empty packet
	PerByte float64       // nanoseconds per byte
}

// At is the value for packets of the given size, never below zero (a fit on noisy timings can
// put a small parameter's Base slightly below zero).
func (l Linear) At(bytes int) time.Duration {
	ns := float64(l.Base) + l.PerByte*float64(bytes)
	if ns < 0 {
		return 0
	}
	return time.Duration(math.Round(ns))
}

// Model gives the Params for any packet size, each parameter linear in the size.
type Model struct {
	Os, Or, Ur, G, L Linear
}

// At is the model's Params for packets of the given size in bytes. Their T_w is never below
// zero: Fit keeps it ≥ 0 over the sizes it measured, but beyond them a line can cross zero, and
// rounding each parameter to the nanosecond can leave a T_w of 0 a few nanoseconds below; L,
// the parameter only end-to-end timings see, takes up the difference.
func (m Model) At(bytes int) Params {
	p := Params{Os: m.Os.At(bytes), Or: m.Or.At(bytes), Ur: m.Ur.At(bytes), G: m.G.At(bytes), L: m.L.At(bytes)}
	if tw := p.Tw(); tw < 0 {
		p.L -= tw
	}
	return p
}

// Kind says what a timing Sample measured.
type Kind int

const (
	// Send: the sender's time to post one packet: O_s.
	Send Kind = iota + 1
	// Receive: the runtime's time to take one packet off the network: O_r.
	Receive
	// Handle: the user's time to handle one received packet: U_r.
	Handle
	// OneWay: from posting the first of Count packets sent back to back until the receiver has
	// handled the last: O_s + (Count−1)g + L + O_r + U_r.
	OneWay
	// PingPong: the round trip of one packet each way: 2(O_s + L + O_r + U_r).
	PingPong
)

func (k Kind) String() string {
	switch k {
	case Send:
		return "Send"
	case Receive:
		return "Receive"
	case Handle:
		return "Handle"
	case OneWay:
		return "OneWay"
	case PingPong:
		return "PingPong"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Sample is one measured timing of packets of Bytes bytes.
type Sample struct {
	Kind  Kind
	Bytes int
	Count int // packets back to back, for OneWay (0 means 1); must be 0 or 1 otherwise
	Time  time.Duration
}

// The unknowns of the fit, in the order their columns are orthogonalised: a parameter that the
// samples do not separate from earlier ones is reported by name. L comes last because only the
// end-to-end samples see it.
var unknowns = [10]string{
	"Os", "Os per byte", "Or", "Or per byte", "Ur", "Ur per byte",
	"G", "G per byte", "L", "L per byte",
}

// row is the sample's time as a linear combination of the unknowns.
func row(s Sample) [10]float64 {
	b := float64(s.Bytes)
	var r [10]float64
	set := func(i int, c float64) { r[2*i] += c; r[2*i+1] += c * b }
	const os, or, ur, g, l = 0, 1, 2, 3, 4
	switch s.Kind {
	case Send:
		set(os, 1)
	case Receive:
		set(or, 1)
	case Handle:
		set(ur, 1)
	case OneWay:
		n := max(s.Count, 1)
		set(os, 1)
		set(g, float64(n-1))
		set(l, 1)
		set(or, 1)
		set(ur, 1)
	case PingPong:
		set(os, 2)
		set(l, 2)
		set(or, 2)
		set(ur, 2)
	}
	return r
}

// Fit estimates a Model from measured timings by linear least squares on relative residuals
// (each sample weighted by 1/Time). Each parameter has a
// base and a per-byte part, so the samples must cover at least two sizes, and enough kinds to
// tell the parameters apart: Send, Receive and Handle pin O_s, O_r and U_r; OneWay samples with
// at least two Counts pin g; then OneWay or PingPong pin L. (Only g and T_w enter the
// predictions, but T_w's split is what makes a fit on one system say something about another.)
// T_w = O_s + L − g + O_r + U_r is kept ≥ 0 at every size from the smallest measured to the
// largest: where noise would put it below, the fit is the best one with T_w ≥ 0 there.
// The error names the first parameter the samples leave undetermined, or the first bad sample.
func Fit(samples []Sample) (Model, error) {
	if len(samples) == 0 {
		return Model{}, fmt.Errorf("schedule: fit: no samples")
	}
	rows := make([][len(unknowns)]float64, len(samples))
	y := make([]float64, len(samples))
	for i, s := range samples {
		switch {
		case s.Kind < Send || s.Kind > PingPong:
			return Model{}, fmt.Errorf("schedule: fit: sample %d: unknown kind %v", i, s.Kind)
		case s.Bytes < 0:
			return Model{}, fmt.Errorf("schedule: fit: sample %d (%v): negative size %d bytes", i, s.Kind, s.Bytes)
		case s.Count < 0 || (s.Kind != OneWay && s.Count > 1):
			return Model{}, fmt.Errorf("schedule: fit: sample %d (%v): count %d (only OneWay samples have a count above 1)", i, s.Kind, s.Count)
		case s.Time < 0:
			return Model{}, fmt.Errorf("schedule: fit: sample %d (%v): negative time %v", i, s.Kind, s.Time)
		}
		// Weighted by 1/time: timing noise grows with the time measured, so relative residuals
		// are the ones to minimise, and a long burst must not drown the short overheads.
		w := 1 / max(float64(s.Time), 1)
		rows[i] = row(s)
		for j := range rows[i] {
			rows[i][j] *= w
		}
		y[i] = float64(s.Time) * w
	}
	x, bad, r := lsq(rows, y)
	switch {
	case bad >= 0 && r == nil:
		return Model{}, undetermined(bad)
	case bad >= 0:
		return Model{}, confounded(bad, r)
	}
	lo, hi := samples[0].Bytes, samples[0].Bytes
	for _, s := range samples {
		lo, hi = min(lo, s.Bytes), max(hi, s.Bytes)
	}
	if twAt(x, lo) < 0 || twAt(x, hi) < 0 {
		x = fitTwNonNegative(rows, y, float64(lo), float64(hi))
	}
	lin := func(i int) Linear {
		return Linear{Base: time.Duration(math.Round(x[2*i])), PerByte: x[2*i+1]}
	}
	return Model{Os: lin(0), Or: lin(1), Ur: lin(2), G: lin(3), L: lin(4)}, nil
}

// The columns of the unknowns.
const (
	colOs, colOr, colUr, colG, colL = 0, 2, 4, 6, 8 // bases; per byte at +1
)

// twAt is T_w = O_s + L − g + O_r + U_r of a solution for packets of the given size.
func twAt(x []float64, bytes int) float64 {
	b := float64(bytes)
	tw := 0.0
	for k, c := range [...]float64{colOs: 1, colOr: 1, colUr: 1, colG: -1, colL: 1} {
		if k%2 == 0 {
			tw += c * (x[k] + b*x[k+1])
		}
	}
	return tw
}

// fitTwNonNegative refits with T_w ≥ 0 at every packet size from lo to hi, the sizes measured
// (T_w is linear in the size, so at lo and at hi). A flow's fixed cost cannot be negative, yet
// when the true T_w is small next to g (one process: L ≈ 0) timing noise can push the
// unconstrained fit below zero, and every prediction with it. Beyond the sizes measured the fit
// says nothing, so nothing is imposed there (Model.At keeps T_w ≥ 0 by raising L).
//
// The unknowns are rewritten with T_w(lo) and T_w(hi) in place of L's base and per-byte part (an
// invertible change when lo < hi, which a fit that determined the per-byte parts has), and the
// least-squares problem with those two bounded below by zero is solved exactly: each set of
// bounds that may hold with equality is tried and the best feasible solution kept (a convex
// problem's optimum is the equality-constrained optimum of its active set). Called only when the
// unconstrained solution is infeasible, so some bound is active; both active (T_w ≡ 0 on the
// range) is always feasible.
func fitTwNonNegative(rows [][len(unknowns)]float64, y []float64, lo, hi float64) []float64 {
	const n = len(unknowns)
	const colA, colC = colL, colL + 1 // T_w(lo), T_w(hi) in the new unknowns
	d := hi - lo
	// toX: T_w's base and per-byte part from T_w(lo) and T_w(hi); then
	// L = T_w − O_s − O_r − U_r + g, for the base and per byte alike.
	toX := func(u []float64) []float64 {
		x := append([]float64(nil), u...)
		tw := [2]float64{(u[colA]*hi - u[colC]*lo) / d, (u[colC] - u[colA]) / d}
		for k := 0; k < 2; k++ {
			x[colL+k] = tw[k] - u[colOs+k] - u[colOr+k] - u[colUr+k] + u[colG+k]
		}
		return x
	}
	var best []float64
	bestRSS := math.Inf(1)
	for _, fixed := range [][]int{{colA}, {colC}, {colA, colC}} {
		var cols []int
		for j := 0; j < n; j++ {
			if j != fixed[0] && (len(fixed) == 1 || j != fixed[1]) {
				cols = append(cols, j)
			}
		}
		sub := make([][]float64, len(rows))
		for i, r := range rows {
			// The row in the new unknowns: L's coefficients move onto the parameters L is
			// written with, and onto T_w(lo) and T_w(hi).
			ru := r
			for k := 0; k < 2; k++ {
				cl := r[colL+k]
				ru[colOs+k] -= cl
				ru[colOr+k] -= cl
				ru[colUr+k] -= cl
				ru[colG+k] += cl
			}
			ru[colA] = (r[colL]*hi - r[colL+1]) / d
			ru[colC] = (r[colL+1] - r[colL]*lo) / d
			sub[i] = make([]float64, len(cols))
			for c, j := range cols {
				sub[i][c] = ru[j]
			}
		}
		z, bad, _ := lsqSlices(sub, y)
		if bad >= 0 {
			continue // not expected: a subset of independent columns
		}
		u := make([]float64, n)
		for c, j := range cols {
			u[j] = z[c]
		}
		if u[colA] < 0 || u[colC] < 0 {
			continue
		}
		x := toX(u)
		rss := 0.0
		for i, r := range rows {
			e := y[i]
			for j := range r {
				e -= r[j] * x[j]
			}
			rss += e * e
		}
		if rss < bestRSS {
			best, bestRSS = x, rss
		}
	}
	return best
}

// lsq solves the least-squares problem rows·x ≈ y; see lsqSlices.
func lsq(rows [][len(unknowns)]float64, y []float64) ([]float64, int, [][]float64) {
	a := make([][]float64, len(rows))
	for i := range rows {
		a[i] = rows[i][:]
	}
	return lsqSlices(a, y)
}

// lsqSlices solves a·x ≈ y in the least-squares sense by modified Gram–Schmidt QR on a's
// columns scaled to unit norm. If a column is zero it returns its index and a nil R; if the
// earlier columns explain it, its index and R (for confounded).
func lsqSlices(a [][]float64, y []float64) ([]float64, int, [][]float64) {
	m := len(a)
	n := 0
	if m > 0 {
		n = len(a[0])
	}
	q := make([][]float64, n) // columns
	scale := make([]float64, n)
	for j := 0; j < n; j++ {
		q[j] = make([]float64, m)
		for i := range m {
			q[j][i] = a[i][j]
		}
		scale[j] = norm(q[j])
		if scale[j] == 0 {
			return nil, j, nil
		}
		for i := range q[j] {
			q[j][i] /= scale[j]
		}
	}
	r := make([][]float64, n)
	for i := range r {
		r[i] = make([]float64, n)
	}
	for j := 0; j < n; j++ {
		for i := 0; i < j; i++ {
			r[i][j] = dot(q[i], q[j])
			for t := range q[j] {
				q[j][t] -= r[i][j] * q[i][t]
			}
		}
		r[j][j] = norm(q[j])
		// The scaled column had norm 1; what remains is its part the earlier ones do not explain.
		if r[j][j] < 1e-9 {
			return nil, j, r
		}
		for t := range q[j] {
			q[j][t] /= r[j][j]
		}
	}
	x := make([]float64, n)
	for j := n - 1; j >= 0; j-- {
		v := dot(q[j], y)
		for t := j + 1; t < n; t++ {
			v -= r[j][t] * x[t]
		}
		x[j] = v / r[j][j]
	}
	for j := range x {
		x[j] /= scale[j]
	}
	return x, -1, nil
}

// direct says which samples pin an unknown on its own.
var direct = [5]string{"Send samples", "Receive samples", "Handle samples", "OneWay samples with two or more different Counts", "OneWay or PingPong samples"}

func undetermined(j int) error {
	hint := "add " + direct[j/2]
	if j%2 == 1 {
		hint += " at two or more sizes"
	}
	return fmt.Errorf("schedule: fit: the samples do not determine %s: %s", unknowns[j], hint)
}

// confounded reports column j, which the earlier columns explain: it names the earlier
// unknowns it moves together with, found by solving R[:j,:j]·c = R[:j,j].
func confounded(j int, r [][]float64) error {
	c := make([]float64, j)
	for i := j - 1; i >= 0; i-- {
		v := r[i][j]
		for t := i + 1; t < j; t++ {
			v -= r[i][t] * c[t]
		}
		c[i] = v / r[i][i]
	}
	var with []string
	hints := map[string]bool{}
	var hint []string
	add := func(u int) {
		h := direct[u/2]
		if u%2 == 1 {
			h += " at two or more sizes"
		}
		if !hints[h] {
			hints[h] = true
			hint = append(hint, h)
		}
	}
	add(j)
	for i := j - 1; i >= 0; i-- {
		if math.Abs(c[i]) > 1e-6 {
			with = append(with, unknowns[i])
			add(i)
		}
	}
	if len(with) == 0 {
		return undetermined(j)
	}
	return fmt.Errorf("schedule: fit: the samples do not determine %s apart from %s: add %s",
		unknowns[j], strings.Join(with, ", "), strings.Join(hint, " or "))
}

func dot(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

func norm(a []float64) float64 { return math.Sqrt(dot(a, a)) }
