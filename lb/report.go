package lb

import (
	"bytes"
	"encoding/csv"
	"encoding/xml"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"log/slog"
	"math"
	"strconv"
	"strings"
	"time"
)

// LoadStats sums up a set of loads (seconds): all zero for an empty set.
type LoadStats struct {
	Min, Mean, Max float64
}

func loadStatsOf(v []float64) LoadStats {
	if len(v) == 0 {
		return LoadStats{}
	}
	st := LoadStats{Min: v[0], Max: v[0]}
	var sum float64
	for _, x := range v {
		st.Min = min(st.Min, x)
		st.Max = max(st.Max, x)
		sum += x
	}
	st.Mean = sum / float64(len(v))
	return st
}

// Report is what one load-balancing step did, in figures: the object
// loads, the PE loads before and after the new placement, the imbalance,
// the migrations and the strategy's own time. It is what Charm++ prints
// with +LBDebug, as data.
type Report struct {
	Step     int
	Strategy string
	// Objects is the number of objects in the snapshot; ObjLoad sums up
	// their loads.
	Objects int
	ObjLoad LoadStats
	// PELoadBefore and PELoadAfter sum up Before and After.
	PELoadBefore, PELoadAfter LoadStats
	// MaxAvgBefore and MaxAvgAfter are the imbalance (MaxOverAvg) of
	// Before and After.
	MaxAvgBefore, MaxAvgAfter float64
	Migrations                int
	StrategyTime              time.Duration
	// Before and After are each PE's load (objects and background,
	// divided by the PE's speed) under the current and the new placement;
	// Idle is each PE's measured idle time.
	Before, After, Idle []float64
	// Fixed is the number of objects the strategy was not allowed to move
	// (Object.Migratable false); distributed steps leave it 0.
	Fixed int
	// Unmovable names, sorted, the element types whose state would not
	// survive migration (chare.Type.PackError): their elements were left
	// where they are, and are among Fixed.
	Unmovable []string
	// Error is why the strategy's own placement was not used (it failed,
	// or Validate rejected it) and nothing moved; empty if it was used.
	Error string
}

// NewReport computes the report of a step that moves the objects of s to
// p (nil: leave them where they are) with the named strategy, which took
// the given time to decide. p must fit s (Validate accepts it): like
// Snapshot.PELoads, NewReport indexes the PEs by p. A nil s gives an
// empty report whose Error says so.
func NewReport(s *Snapshot, p Placement, strategy string, took time.Duration) Report {
	if s == nil {
		return Report{Strategy: strategy, StrategyTime: took, Error: errNilSnapshot.Error()}
	}
	r := Report{
		Step:         s.Step,
		Strategy:     strategy,
		Objects:      len(s.Objects),
		StrategyTime: took,
		Before:       s.PELoads(nil),
		After:        s.PELoads(p),
		Idle:         make([]float64, len(s.PEs)),
	}
	objLoads := make([]float64, len(s.Objects))
	for i, o := range s.Objects {
		objLoads[i] = o.Load
		if !o.Migratable {
			r.Fixed++
		}
	}
	for i, pe := range s.PEs {
		r.Idle[i] = pe.Idle
	}
	r.ObjLoad = loadStatsOf(objLoads)
	r.PELoadBefore = loadStatsOf(r.Before)
	r.PELoadAfter = loadStatsOf(r.After)
	r.MaxAvgBefore = MaxOverAvg(r.Before)
	r.MaxAvgAfter = MaxOverAvg(r.After)
	if p != nil {
		r.Migrations = s.Migrations(p)
	}
	return r
}

// LogLine returns the report as one line of key=value pairs, for a log
// or for grep:
//
//	lb step=3 strategy=greedy pes=8 objects=1024 obj_load=0.001/0.002/0.004 pe_before=0.1/0.25/0.48 pe_after=0.24/0.25/0.26 maxavg_before=1.930 maxavg_after=1.010 migrations=512 fixed=0 strategy_time=4.213ms
//
// The triples are min/mean/max in seconds; strategy_time is a Go duration
// (time.ParseDuration reads it back). fixed counts the objects the
// strategy could not move; unmovable=T1,T2 follows if element types stayed
// because their state would not survive migration. A quoted error=... ends
// the line if the strategy's placement was not used.
func (r Report) LogLine() string {
	var b strings.Builder
	fmt.Fprintf(&b, "lb step=%d strategy=%s pes=%d objects=%d", r.Step, logWord(r.Strategy), len(r.Before), r.Objects)
	fmt.Fprintf(&b, " obj_load=%s pe_before=%s pe_after=%s", r.ObjLoad.triple(), r.PELoadBefore.triple(), r.PELoadAfter.triple())
	fmt.Fprintf(&b, " maxavg_before=%.3f maxavg_after=%.3f migrations=%d fixed=%d strategy_time=%s",
		r.MaxAvgBefore, r.MaxAvgAfter, r.Migrations, r.Fixed, r.StrategyTime.Round(time.Microsecond))
	if len(r.Unmovable) > 0 {
		fmt.Fprintf(&b, " unmovable=%s", logWord(strings.Join(r.Unmovable, ",")))
	}
	if r.Error != "" {
		fmt.Fprintf(&b, " error=%s", strconv.Quote(r.Error))
	}
	return b.String()
}

// String is LogLine.
func (r Report) String() string { return r.LogLine() }

// LogValue makes a report a group of attributes in log/slog.
func (r Report) LogValue() slog.Value {
	return slog.GroupValue(
		slog.Int("step", r.Step),
		slog.String("strategy", r.Strategy),
		slog.Int("pes", len(r.Before)),
		slog.Int("objects", r.Objects),
		slog.String("obj_load", r.ObjLoad.triple()),
		slog.String("pe_before", r.PELoadBefore.triple()),
		slog.String("pe_after", r.PELoadAfter.triple()),
		slog.Float64("maxavg_before", r.MaxAvgBefore),
		slog.Float64("maxavg_after", r.MaxAvgAfter),
		slog.Int("migrations", r.Migrations),
		slog.Int("fixed", r.Fixed),
		slog.String("unmovable", strings.Join(r.Unmovable, ",")),
		slog.Duration("strategy_time", r.StrategyTime),
		slog.String("error", r.Error),
	)
}

func (st LoadStats) triple() string {
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', 4, 64) }
	return f(st.Min) + "/" + f(st.Mean) + "/" + f(st.Max)
}

// logWord keeps a log line splittable on spaces: a strategy name that is
// empty or holds a space, a quote or an '=' is quoted.
func logWord(s string) string {
	if s == "" || strings.ContainsAny(s, " \t\r\n\"=") || strconv.Quote(s) != `"`+s+`"` {
		return strconv.Quote(s)
	}
	return s
}

// CSVHeader is the header row of WriteCSV; one row per report follows.
var CSVHeader = []string{
	"step", "strategy", "pes", "objects",
	"obj_load_min", "obj_load_mean", "obj_load_max",
	"pe_before_min", "pe_before_mean", "pe_before_max",
	"pe_after_min", "pe_after_mean", "pe_after_max",
	"maxavg_before", "maxavg_after", "migrations", "strategy_seconds", "error",
}

// PECSVHeader is the header row of WritePECSV; one row per PE per report
// follows.
var PECSVHeader = []string{"step", "pe", "before", "after", "idle"}

// csvFloat writes a float so that strconv.ParseFloat gives it back exactly.
func csvFloat(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// WriteCSV writes the reports as CSV: CSVHeader, then one row per step.
func WriteCSV(w io.Writer, reports []Report) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(CSVHeader); err != nil {
		return err
	}
	for _, r := range reports {
		row := []string{strconv.Itoa(r.Step), r.Strategy, strconv.Itoa(len(r.Before)), strconv.Itoa(r.Objects)}
		for _, st := range []LoadStats{r.ObjLoad, r.PELoadBefore, r.PELoadAfter} {
			row = append(row, csvFloat(st.Min), csvFloat(st.Mean), csvFloat(st.Max))
		}
		row = append(row, csvFloat(r.MaxAvgBefore), csvFloat(r.MaxAvgAfter),
			strconv.Itoa(r.Migrations), csvFloat(r.StrategyTime.Seconds()), r.Error)
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// WritePECSV writes each step's per-PE loads as CSV: PECSVHeader, then
// one row per PE per step. A value a report lacks is left empty.
func WritePECSV(w io.Writer, reports []Report) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(PECSVHeader); err != nil {
		return err
	}
	at := func(v []float64, i int) string {
		if i < len(v) {
			return csvFloat(v[i])
		}
		return ""
	}
	for _, r := range reports {
		for pe := range max(len(r.Before), len(r.After), len(r.Idle)) {
			row := []string{strconv.Itoa(r.Step), strconv.Itoa(pe), at(r.Before, pe), at(r.After, pe), at(r.Idle, pe)}
			if err := cw.Write(row); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// Chart colours (Paul Tol's bright scheme, readable by colour-blind eyes).
var (
	beforeColour = color.RGBA{0xee, 0x77, 0x33, 0xff}
	afterColour  = color.RGBA{0x44, 0x77, 0xaa, 0xff}
	axisColour   = color.RGBA{0x33, 0x33, 0x33, 0xff}
)

// Chart layout, in pixels.
const (
	chartLeft    = 70.0  // room for the load axis labels
	chartRight   = 20.0  //
	chartLegend  = 34.0  // the legend above the first panel
	panelTitle   = 36.0  // a step's title above its plot
	panelPlot    = 220.0 // the plot's height
	panelBelow   = 44.0  // PE labels and the axis name
	panelGap     = 16.0  //
	minPlotWidth = 480.0 //
	maxPlotWidth = 1200.0
	groupWidth   = 28.0 // a PE's before and after bars, when there is room
	maxBarWidth  = 40.0
)

const panelHeight = panelTitle + panelPlot + panelBelow + panelGap

// chart is the geometry shared by the SVG and the PNG.
type chart struct {
	width, height, plotW float64
}

func newChart(reports []Report) chart {
	n := 0
	for _, r := range reports {
		n = max(n, len(r.Before), len(r.After))
	}
	plotW := min(max(float64(n)*groupWidth, minPlotWidth), maxPlotWidth)
	return chart{
		width:  chartLeft + plotW + chartRight,
		height: chartLegend + float64(max(len(reports), 1))*panelHeight,
		plotW:  plotW,
	}
}

// plotTop is the y of the top of step i's plot area.
func (c chart) plotTop(i int) float64 { return chartLegend + float64(i)*panelHeight + panelTitle }

// panel is one step's scale and bars.
type panel struct {
	top, step float64 // the load at the top of the plot; between ticks
	n         int     // PEs
	groupW    float64
}

// finite keeps NaN and infinities out of the geometry.
func finite(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return v
}

func (c chart) panel(r Report) panel {
	hi := 0.0
	for _, v := range r.Before {
		hi = max(hi, finite(v))
	}
	for _, v := range r.After {
		hi = max(hi, finite(v))
	}
	p := panel{n: max(len(r.Before), len(r.After))}
	if p.n > 0 {
		p.groupW = c.plotW / float64(p.n)
	}
	p.top, p.step = niceScale(hi)
	return p
}

// niceScale picks the top of a load axis at or above hi and a tick step
// of 1, 2 or 5 times a power of ten, about five ticks apart; an axis
// without load goes from 0 to 1.
func niceScale(hi float64) (top, step float64) {
	if !(hi > 1e-300) || hi > 1e300 {
		if hi > 1e300 {
			return hi, hi / 5
		}
		return 1, 0.2
	}
	raw := hi / 5
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step = 10 * mag
	for _, f := range []float64{1, 2, 5} {
		if f*mag >= raw {
			step = f * mag
			break
		}
	}
	top = math.Ceil(hi/step-1e-9) * step
	if !(top > 0) || math.IsInf(top, 0) {
		return hi, hi / 5
	}
	return top, step
}

// height is the bar height of load v.
func (p panel) height(v float64) float64 {
	return max(0, min(finite(v), p.top)) / p.top * panelPlot
}

// bar returns the x and width of PE pe's before (or after) bar.
func (p panel) bar(pe int, before bool) (x, w float64) {
	pad := p.groupW * 0.15
	w = min((p.groupW-2*pad)/2, maxBarWidth)
	x = chartLeft + float64(pe)*p.groupW + p.groupW/2 - w
	if !before {
		x += w
	}
	return x, w
}

// labelEvery is how many PEs apart the x axis labels are, so that they
// do not overlap.
func (p panel) labelEvery() int {
	if p.groupW <= 0 {
		return 1
	}
	digits := len(strconv.Itoa(max(p.n-1, 0)))
	need := float64(digits)*7 + 6
	k := 1
	for float64(k)*p.groupW < need {
		k *= 2
	}
	return k
}

func svgEscape(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s)) // a strings.Builder does not fail
	return b.String()
}

// px formats a coordinate.
func px(v float64) string { return strconv.FormatFloat(finite(v), 'f', 2, 64) }

// loadText formats a load for a label.
func loadText(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "n/a"
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

// Title is the one-line title of the report's chart panel.
func (r Report) Title() string {
	name := r.Strategy
	if name == "" {
		name = "no strategy"
	}
	t := fmt.Sprintf("Step %d, %s: max/avg %.3f before, %.3f after; %d migrations, %d objects, %d PEs",
		r.Step, name, finite(r.MaxAvgBefore), finite(r.MaxAvgAfter), r.Migrations, r.Objects, max(len(r.Before), len(r.After)))
	if r.Error != "" {
		t += "; placement not used: " + r.Error
	}
	return t
}

func hexColour(c color.RGBA) string { return fmt.Sprintf("#%02x%02x%02x", c.R, c.G, c.B) }

// WriteSVG draws the reports as one SVG picture: for each step, top to
// bottom, a bar chart of each PE's load before (orange) and after (blue)
// the step, scaled to the step's largest load, titled with the step's
// imbalance. Bars are rects of class "before" and "after", each with a
// tooltip giving its PE and load.
func WriteSVG(w io.Writer, reports []Report) error {
	c := newChart(reports)
	var b bytes.Buffer
	fmt.Fprintf(&b, `<?xml version="1.0" encoding="UTF-8"?>`+"\n")
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%s" height="%s" viewBox="0 0 %s %s" font-family="sans-serif" font-size="12">`+"\n",
		px(c.width), px(c.height), px(c.width), px(c.height))
	fmt.Fprintf(&b, `<rect class="background" x="0" y="0" width="%s" height="%s" fill="#ffffff"/>`+"\n", px(c.width), px(c.height))

	// The legend.
	lx := chartLeft
	for _, item := range []struct {
		class, text string
		colour      color.RGBA
	}{{"before", "before", beforeColour}, {"after", "after", afterColour}} {
		fmt.Fprintf(&b, `<rect class="legend-%s" x="%s" y="10" width="14" height="14" fill="%s"/>`+"\n", item.class, px(lx), hexColour(item.colour))
		fmt.Fprintf(&b, `<text x="%s" y="22">%s</text>`+"\n", px(lx+20), svgEscape(item.text))
		lx += 90
	}
	fmt.Fprintf(&b, `<line class="legend-mean" x1="%s" y1="17" x2="%s" y2="17" stroke="%s" stroke-dasharray="4 3"/>`+"\n", px(lx), px(lx+14), hexColour(axisColour))
	fmt.Fprintf(&b, `<text x="%s" y="22">mean after</text>`+"\n", px(lx+20))

	if len(reports) == 0 {
		fmt.Fprintf(&b, `<text x="%s" y="%s">no load-balancing steps</text>`+"\n", px(chartLeft), px(c.plotTop(0)+panelPlot/2))
	}
	for i, r := range reports {
		writeSVGPanel(&b, c, i, r)
	}
	b.WriteString("</svg>\n")
	_, err := w.Write(b.Bytes())
	return err
}

func writeSVGPanel(b *bytes.Buffer, c chart, i int, r Report) {
	p := c.panel(r)
	top := c.plotTop(i)
	bottom := top + panelPlot
	right := chartLeft + c.plotW
	fmt.Fprintf(b, `<g class="step" id="step-%d">`+"\n", i)
	fmt.Fprintf(b, `<text class="title" x="%s" y="%s" font-size="14" font-weight="bold">%s</text>`+"\n",
		px(chartLeft), px(top-14), svgEscape(r.Title()))

	// The load axis, its ticks and grid lines.
	for k := 0; ; k++ {
		v := float64(k) * p.step
		if v > p.top*(1+1e-9) || k > 20 {
			break
		}
		y := bottom - p.height(v)
		fmt.Fprintf(b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#dddddd"/>`+"\n", px(chartLeft), px(y), px(right), px(y))
		fmt.Fprintf(b, `<text x="%s" y="%s" text-anchor="end">%s</text>`+"\n", px(chartLeft-6), px(y+4), svgEscape(loadText(v)))
	}
	fmt.Fprintf(b, `<text x="%s" y="%s" text-anchor="middle" transform="rotate(-90 %s %s)">load (s)</text>`+"\n",
		px(16), px(top+panelPlot/2), px(16), px(top+panelPlot/2))

	// The bars.
	for pe := range p.n {
		for _, side := range []struct {
			before bool
			class  string
			loads  []float64
			colour color.RGBA
		}{{true, "before", r.Before, beforeColour}, {false, "after", r.After, afterColour}} {
			v := 0.0
			if pe < len(side.loads) {
				v = side.loads[pe]
			}
			x, w := p.bar(pe, side.before)
			h := p.height(v)
			fmt.Fprintf(b, `<rect class="%s" x="%s" y="%s" width="%s" height="%s" fill="%s"><title>PE %d %s: %s</title></rect>`+"\n",
				side.class, px(x), px(bottom-h), px(w), px(h), hexColour(side.colour), pe, side.class, svgEscape(loadText(v)))
		}
	}
	if p.n > 0 && r.PELoadAfter.Mean > 0 {
		y := bottom - p.height(r.PELoadAfter.Mean)
		fmt.Fprintf(b, `<line class="mean" x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-dasharray="4 3"><title>mean after: %s</title></line>`+"\n",
			px(chartLeft), px(y), px(right), px(y), hexColour(axisColour), svgEscape(loadText(r.PELoadAfter.Mean)))
	}

	// The axes and PE labels.
	fmt.Fprintf(b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s"/>`+"\n", px(chartLeft), px(top), px(chartLeft), px(bottom), hexColour(axisColour))
	fmt.Fprintf(b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s"/>`+"\n", px(chartLeft), px(bottom), px(right), px(bottom), hexColour(axisColour))
	every := p.labelEvery()
	for pe := 0; pe < p.n; pe += every {
		x := chartLeft + (float64(pe)+0.5)*p.groupW
		fmt.Fprintf(b, `<text x="%s" y="%s" text-anchor="middle">%d</text>`+"\n", px(x), px(bottom+16), pe)
	}
	fmt.Fprintf(b, `<text x="%s" y="%s" text-anchor="middle">PE</text>`+"\n", px(chartLeft+c.plotW/2), px(bottom+34))
	b.WriteString("</g>\n")
}

// WritePNG draws the bars, axes and grid of WriteSVG as a PNG image,
// without any text (the standard library draws no fonts).
func WritePNG(w io.Writer, reports []Report) error {
	c := newChart(reports)
	img := image.NewRGBA(image.Rect(0, 0, int(math.Ceil(c.width)), int(math.Ceil(c.height))))
	fill := func(x0, y0, x1, y1 float64, col color.RGBA) {
		r := image.Rect(int(math.Round(x0)), int(math.Round(y0)), int(math.Round(x1)), int(math.Round(y1))).Intersect(img.Bounds())
		for y := r.Min.Y; y < r.Max.Y; y++ {
			for x := r.Min.X; x < r.Max.X; x++ {
				img.SetRGBA(x, y, col)
			}
		}
	}
	fill(0, 0, c.width, c.height, color.RGBA{0xff, 0xff, 0xff, 0xff})
	fill(chartLeft, 10, chartLeft+14, 24, beforeColour)
	fill(chartLeft+90, 10, chartLeft+104, 24, afterColour)
	for i, r := range reports {
		p := c.panel(r)
		bottom := c.plotTop(i) + panelPlot
		for k := 1; float64(k)*p.step <= p.top*(1+1e-9) && k <= 20; k++ {
			y := bottom - p.height(float64(k)*p.step)
			fill(chartLeft, y, chartLeft+c.plotW, y+1, color.RGBA{0xdd, 0xdd, 0xdd, 0xff})
		}
		for pe := range p.n {
			for _, before := range []bool{true, false} {
				loads, col := r.After, afterColour
				if before {
					loads, col = r.Before, beforeColour
				}
				if pe >= len(loads) {
					continue
				}
				x, bw := p.bar(pe, before)
				// At least a pixel wide, so that 256 PEs still show.
				fill(x, bottom-p.height(loads[pe]), max(x+bw, x+1), bottom, col)
			}
		}
		fill(chartLeft-1, c.plotTop(i), chartLeft, bottom, axisColour)
		fill(chartLeft-1, bottom, chartLeft+c.plotW, bottom+1, axisColour)
	}
	return png.Encode(w, img)
}
