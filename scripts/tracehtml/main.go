// Command tracehtml draws a trace file that -trace wrote as a static HTML
// page with an SVG timeline: a row per PE, grouped by node, a box per
// entry-method slice (coloured by entry), flow arrows, and instants as
// marks. It stands in for Perfetto's UI where that cannot load (no
// internet): scripts/trace-screenshot.sh renders the page with headless
// Chromium.
//
//	go run ./scripts/tracehtml -in run.json -out run.html [-from US -to US]
package main

import (
	"flag"
	"fmt"
	"hash/fnv"
	"html"
	"os"
	"sort"
	"strings"

	"github.com/charmgo/charm/trace"
)

func main() {
	in := flag.String("in", "", "trace file")
	out := flag.String("out", "trace.html", "HTML file to write")
	from := flag.Float64("from", -1, "start of the window, µs (default: the middle of the run)")
	title := flag.String("title", "", "title (default: the file's name)")
	span := flag.Float64("span", 2000, "width of the window, µs")
	flag.Parse()
	f, err := trace.ReadFile(*in)
	if err != nil {
		fmt.Fprintln(os.Stderr, "tracehtml:", err)
		os.Exit(1)
	}
	if *title == "" {
		*title = *in
	}
	if err := os.WriteFile(*out, []byte(render(f, *from, *span, *title)), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "tracehtml:", err)
		os.Exit(1)
	}
}

func colour(name string) string {
	h := fnv.New32a()
	h.Write([]byte(name))
	return fmt.Sprintf("hsl(%d,55%%,62%%)", h.Sum32()%360)
}

func render(f *trace.File, from, span float64, title string) string {
	type key struct{ pid, tid int }
	rows := map[key]bool{}
	first, last := -1.0, 0.0
	for _, e := range f.TraceEvents {
		if e.Ph == "X" {
			last = max(last, e.TS)
		}
		if e.Ph == "M" && e.Name == "thread_name" {
			rows[key{e.PID, e.TID}] = true
		}
		if e.Ph == "X" && (first < 0 || e.TS < first) {
			first = e.TS
		}
	}
	if from < 0 {
		from = (first + last - span) / 2
	}
	var ks []key
	for k := range rows {
		ks = append(ks, k)
	}
	sort.Slice(ks, func(i, j int) bool { return ks[i].pid < ks[j].pid || ks[i].pid == ks[j].pid && ks[i].tid < ks[j].tid })
	rowOf := map[key]int{}
	for i, k := range ks {
		rowOf[k] = i
	}
	const left, width, rowH, top = 110.0, 1100.0, 46.0, 40.0
	x := func(ts float64) float64 { return left + (ts-from)/span*width }
	in := func(ts float64) bool { return ts >= from && ts <= from+span }
	var sb strings.Builder
	h := top + rowH*float64(len(ks)) + 60
	fmt.Fprintf(&sb, `<!doctype html><meta charset="utf-8"><title>%s</title><body style="margin:0;background:#fff;font:12px sans-serif">`, html.EscapeString(title))
	fmt.Fprintf(&sb, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f">`, left+width+20, h)
	fmt.Fprintf(&sb, `<text x="8" y="18" font-weight="bold">%s — %.0f µs from %.0f µs (static view of the Chrome trace-event file)</text>`, html.EscapeString(title), span, from)
	for i, k := range ks {
		y := top + rowH*float64(i)
		fmt.Fprintf(&sb, `<rect x="0" y="%.0f" width="%.0f" height="%.0f" fill="%s"/>`, y, left+width+20, rowH, []string{"#f4f4f4", "#fafafa"}[i%2])
		fmt.Fprintf(&sb, `<text x="8" y="%.0f">node %d · PE %d</text>`, y+rowH/2+4, k.pid, k.tid)
	}
	slices := map[string]bool{}
	starts := map[uint64][2]float64{}
	for _, e := range f.TraceEvents {
		r, ok := rowOf[key{e.PID, e.TID}]
		if !ok {
			continue
		}
		y := top + rowH*float64(r)
		switch e.Ph {
		case "X":
			d := 0.0
			if e.Dur != nil {
				d = *e.Dur
			}
			if e.TS+d < from || e.TS > from+span {
				continue
			}
			x0, x1 := max(x(e.TS), left), min(x(e.TS+d), left+width)
			slices[e.Name] = true
			fmt.Fprintf(&sb, `<rect x="%.2f" y="%.0f" width="%.2f" height="%.0f" fill="%s"><title>%s %v</title></rect>`, x0, y+8, max(x1-x0, 0.6), rowH-16, colour(e.Name), html.EscapeString(e.Name), e.Args)
		case "s":
			starts[e.ID] = [2]float64{e.TS, y}
		case "i":
			if in(e.TS) {
				fmt.Fprintf(&sb, `<path d="M%.1f %.0f l5 8 l-10 0 z" fill="#c00"><title>%s</title></path>`, x(e.TS), y+2, html.EscapeString(e.Name))
			}
		}
	}
	for _, e := range f.TraceEvents {
		if e.Ph != "f" {
			continue
		}
		s, ok := starts[e.ID]
		r, ok2 := rowOf[key{e.PID, e.TID}]
		if !ok || !ok2 || !in(s[0]) || !in(e.TS) {
			continue
		}
		fmt.Fprintf(&sb, `<line x1="%.1f" y1="%.0f" x2="%.1f" y2="%.0f" stroke="#333" stroke-width="0.7" opacity="0.6"/>`, x(s[0]), s[1]+rowH/2, x(e.TS), top+rowH*float64(r)+rowH/2)
	}
	var names []string
	for n := range slices {
		names = append(names, n)
	}
	sort.Strings(names)
	lx := left
	ly := top + rowH*float64(len(ks)) + 25
	for _, n := range names {
		fmt.Fprintf(&sb, `<rect x="%.0f" y="%.0f" width="12" height="12" fill="%s"/><text x="%.0f" y="%.0f">%s</text>`, lx, ly-10, colour(n), lx+16, ly, html.EscapeString(n))
		lx += 30 + 7*float64(len(n))
	}
	fmt.Fprintf(&sb, `<text x="%.0f" y="%.0f">lines: sampled send → delivery; red marks: instants</text>`, lx, ly)
	sb.WriteString(`</svg></body>`)
	return sb.String()
}
