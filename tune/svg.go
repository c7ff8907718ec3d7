package tune

import (
	"bufio"
	"fmt"
	"html"
	"io"
	"math"
	"strconv"
)

// Chart geometry: two panels, one above the other, sharing the
// evaluation axis.
const (
	svgW, svgPanelH      = 640, 200
	svgLeft, svgRight    = 70, 20
	svgTop, svgGap, svgB = 40, 50, 40
)

// WriteSVG draws a trajectory as an SVG chart: the parameter value per
// evaluation in the upper panel, the cost per evaluation in the lower one,
// each a polyline through one circle per point. Every circle carries its
// point as data-eval, data-value and data-cost attributes, so the chart can
// be checked (or read back) by parsing it. A trajectory without points
// gives the frame and the title alone.
func WriteSVG(w io.Writer, title string, pts []Point) error {
	bw := bufio.NewWriter(w)
	h := svgTop + 2*svgPanelH + svgGap + svgB
	fmt.Fprintf(bw, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", svgW, h, svgW, h)
	fmt.Fprintf(bw, `<rect width="%d" height="%d" fill="white"/>`+"\n", svgW, h)
	fmt.Fprintf(bw, `<text x="%d" y="20" font-size="14">%s</text>`+"\n", svgLeft, html.EscapeString(title))
	lastEval := 1
	for _, p := range pts {
		lastEval = max(lastEval, p.Eval)
	}
	panel := func(class, label string, top int, y func(Point) float64) {
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, p := range pts {
			lo, hi = math.Min(lo, y(p)), math.Max(hi, y(p))
		}
		if len(pts) == 0 {
			lo, hi = 0, 1
		}
		if hi == lo { // a flat line sits in the middle
			lo, hi = lo-0.5, hi+0.5
		}
		plotW := float64(svgW - svgLeft - svgRight)
		px := func(e int) float64 {
			if lastEval <= 1 {
				return svgLeft + plotW/2
			}
			return svgLeft + plotW*float64(e-1)/float64(lastEval-1)
		}
		py := func(v float64) float64 { return float64(top) + svgPanelH*(hi-v)/(hi-lo) }
		fmt.Fprintf(bw, `<g class="%s">`+"\n", class)
		fmt.Fprintf(bw, `<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#999"/>`+"\n", svgLeft, top, svgW-svgLeft-svgRight, svgPanelH)
		fmt.Fprintf(bw, `<text x="%d" y="%d" text-anchor="end">%s</text>`+"\n", svgLeft-4, top+12, fmtNum(hi))
		fmt.Fprintf(bw, `<text x="%d" y="%d" text-anchor="end">%s</text>`+"\n", svgLeft-4, top+svgPanelH, fmtNum(lo))
		fmt.Fprintf(bw, `<text x="%d" y="%d" transform="rotate(-90 14 %d)" text-anchor="middle">%s</text>`+"\n", 14, top+svgPanelH/2, top+svgPanelH/2, label)
		if len(pts) > 0 {
			fmt.Fprint(bw, `<polyline fill="none" stroke="#1f77b4" points="`)
			for i, p := range pts {
				if i > 0 {
					fmt.Fprint(bw, " ")
				}
				fmt.Fprintf(bw, "%.1f,%.1f", px(p.Eval), py(y(p)))
			}
			fmt.Fprint(bw, `"/>`+"\n")
			for _, p := range pts {
				fmt.Fprintf(bw, `<circle cx="%.1f" cy="%.1f" r="2.5" fill="#1f77b4" data-eval="%d" data-value="%s" data-cost="%s"/>`+"\n",
					px(p.Eval), py(y(p)), p.Eval, exact(p.Value), exact(p.Cost))
			}
		}
		fmt.Fprint(bw, "</g>\n")
	}
	panel("value", "parameter", svgTop, func(p Point) float64 { return p.Value })
	panel("cost", "cost per evaluation", svgTop+svgPanelH+svgGap, func(p Point) float64 { return p.Cost })
	fmt.Fprintf(bw, `<text x="%d" y="%d" text-anchor="middle">evaluation (1–%d)</text>`+"\n", svgLeft+(svgW-svgLeft-svgRight)/2, h-10, lastEval)
	fmt.Fprint(bw, "</svg>\n")
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("tune: writing SVG %q: %w", title, err)
	}
	return nil
}

func fmtNum(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }

func exact(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
