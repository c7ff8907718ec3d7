package lb

import (
	"bytes"
	"encoding/csv"
	"encoding/xml"
	"errors"
	"image/png"
	"io"
	"log/slog"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// reportSnapshot is three PEs, the third twice as fast, with four objects:
//
//	PE 0: background 0.5, objects 0 (1 s), 1 (2 s), 2 (3 s) → 6.5
//	PE 1: object 3 (2 s, not migratable)                    → 2
//	PE 2: background 1, speed 2                             → 0.5
//
// reportPlacement moves object 1 to PE 1 and object 2 to PE 2, giving
// 1.5, 4 and (1+3)/2 = 2.
func reportSnapshot() *Snapshot {
	return &Snapshot{
		Step: 3,
		Objects: []Object{
			{ID: 0, Load: 1, PE: 0, Migratable: true},
			{ID: 1, Load: 2, PE: 0, Migratable: true},
			{ID: 2, Load: 3, PE: 0, Migratable: true},
			{ID: 3, Load: 2, PE: 1},
		},
		PEs: []PEStats{
			{Background: 0.5, Idle: 0.25, Speed: 1, Available: true},
			{Idle: 4, Speed: 1, Available: true},
			{Background: 1, Idle: 5.5, Speed: 2, Available: true},
		},
	}
}

var reportPlacement = Placement{0, 1, 2, 1}

func TestReportNewReport(t *testing.T) {
	s := reportSnapshot()
	require.NoError(t, s.Check())
	require.NoError(t, Validate(s, reportPlacement))
	r := NewReport(s, reportPlacement, "greedy", 4200*time.Microsecond)

	require.Equal(t, 3, r.Step)
	require.Equal(t, "greedy", r.Strategy)
	require.Equal(t, 4, r.Objects)
	require.Equal(t, 4200*time.Microsecond, r.StrategyTime)
	require.Equal(t, LoadStats{Min: 1, Mean: 2, Max: 3}, r.ObjLoad)
	require.InDeltaSlice(t, []float64{6.5, 2, 0.5}, r.Before, 1e-12)
	require.InDeltaSlice(t, []float64{1.5, 4, 2}, r.After, 1e-12)
	require.Equal(t, []float64{0.25, 4, 5.5}, r.Idle)
	require.InDelta(t, 0.5, r.PELoadBefore.Min, 1e-12)
	require.InDelta(t, 3, r.PELoadBefore.Mean, 1e-12)
	require.InDelta(t, 6.5, r.PELoadBefore.Max, 1e-12)
	require.InDelta(t, 1.5, r.PELoadAfter.Min, 1e-12)
	require.InDelta(t, 2.5, r.PELoadAfter.Mean, 1e-12)
	require.InDelta(t, 4, r.PELoadAfter.Max, 1e-12)
	require.InDelta(t, 6.5/3, r.MaxAvgBefore, 1e-12)
	require.InDelta(t, 1.6, r.MaxAvgAfter, 1e-12)
	require.Equal(t, 2, r.Migrations)

	// The report owns its slices: changing the snapshot later does not
	// change it.
	s.PEs[0].Idle = 99
	require.Equal(t, 0.25, r.Idle[0])
}

func TestReportUnchangedPlacement(t *testing.T) {
	s := reportSnapshot()
	current := Placement{0, 0, 0, 1}
	for name, p := range map[string]Placement{"nil": nil, "current": current} {
		t.Run(name, func(t *testing.T) {
			r := NewReport(s, p, "dummy", 0)
			require.Equal(t, 0, r.Migrations)
			require.Equal(t, r.Before, r.After)
			require.Equal(t, r.PELoadBefore, r.PELoadAfter)
			require.Equal(t, r.MaxAvgBefore, r.MaxAvgAfter)
			r.After[0] = -1
			require.NotEqual(t, -1.0, r.Before[0], "Before and After must not share memory")
		})
	}
}

func TestReportLogLine(t *testing.T) {
	r := NewReport(reportSnapshot(), reportPlacement, "greedy", 4213457*time.Nanosecond)
	line := r.LogLine()
	require.NotContains(t, line, "\n")
	require.True(t, strings.HasPrefix(line, "lb step=3 strategy=greedy "), line)
	for _, want := range []string{
		"pes=3", "objects=4",
		"obj_load=1/2/3",
		"pe_before=0.5/3/6.5",
		"pe_after=1.5/2.5/4",
		"maxavg_before=2.167", "maxavg_after=1.600",
		"migrations=2",
		"fixed=1",
		"strategy_time=4.213ms",
	} {
		require.Contains(t, strings.Fields(line), want, line)
	}
	require.Equal(t, line, r.String())
	require.Equal(t, 1, r.Fixed, "object 3 is not migratable")
	require.NotContains(t, line, "unmovable=")
	r.Unmovable = []string{"main.Cell", "main.Edge"}
	require.Contains(t, strings.Fields(r.LogLine()), "unmovable=main.Cell,main.Edge")
	r.Unmovable = nil

	// Every field is key=value, and the duration parses back.
	for _, f := range strings.Fields(line)[1:] {
		k, v, ok := strings.Cut(f, "=")
		require.True(t, ok && k != "" && v != "", "field %q of %q", f, line)
		if k == "strategy_time" {
			d, err := time.ParseDuration(v)
			require.NoError(t, err)
			require.Equal(t, 4213*time.Microsecond, d)
		}
	}

	// A strategy name with a space stays one field.
	r.Strategy = "my strategy"
	require.Contains(t, r.LogLine(), `strategy="my strategy" `)
	r.Strategy = ""
	require.Contains(t, r.LogLine(), `strategy="" `)

	// An unused placement says why at the end of the line.
	require.NotContains(t, line, "error=")
	r.Error = "lb: the placement has 1 entries for 4 objects"
	require.True(t, strings.HasSuffix(r.LogLine(), ` error="lb: the placement has 1 entries for 4 objects"`), r.LogLine())
	require.Contains(t, r.Title(), "placement not used: lb: the placement has 1 entries")
}

func TestReportLogValue(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	log.Info("lb step", "report", NewReport(reportSnapshot(), reportPlacement, "greedy", time.Millisecond))
	out := buf.String()
	require.Contains(t, out, "report.strategy=greedy")
	require.Contains(t, out, "report.migrations=2")
	require.Contains(t, out, "report.maxavg_after=1.6")
}

func twoReports() []Report {
	s := reportSnapshot()
	r0 := NewReport(s, reportPlacement, "greedy", 1500*time.Microsecond)
	s.Step = 4
	for i := range s.Objects {
		s.Objects[i].PE = reportPlacement[i]
	}
	r1 := NewReport(s, Placement{0, 1, 2, 1}, "refine, \"quoted\"", 0)
	r1.Error = "no, \"thanks\"\nsecond line"
	return []Report{r0, r1}
}

func TestReportWriteCSV(t *testing.T) {
	reports := twoReports()
	var buf bytes.Buffer
	require.NoError(t, WriteCSV(&buf, reports))

	rows, err := csv.NewReader(&buf).ReadAll()
	require.NoError(t, err)
	require.Len(t, rows, 1+len(reports))
	require.Equal(t, CSVHeader, rows[0])
	col := func(row []string, name string) string {
		for i, h := range rows[0] {
			if h == name {
				return row[i]
			}
		}
		t.Fatalf("no column %q", name)
		return ""
	}
	num := func(row []string, name string) float64 {
		v, err := strconv.ParseFloat(col(row, name), 64)
		require.NoError(t, err, name)
		return v
	}

	first := rows[1]
	require.Equal(t, "3", col(first, "step"))
	require.Equal(t, "greedy", col(first, "strategy"))
	require.Equal(t, "3", col(first, "pes"))
	require.Equal(t, "4", col(first, "objects"))
	require.Equal(t, 1.0, num(first, "obj_load_min"))
	require.Equal(t, 2.0, num(first, "obj_load_mean"))
	require.Equal(t, 3.0, num(first, "obj_load_max"))
	require.Equal(t, 0.5, num(first, "pe_before_min"))
	require.Equal(t, 3.0, num(first, "pe_before_mean"))
	require.Equal(t, 6.5, num(first, "pe_before_max"))
	require.Equal(t, 1.5, num(first, "pe_after_min"))
	require.Equal(t, 2.5, num(first, "pe_after_mean"))
	require.Equal(t, 4.0, num(first, "pe_after_max"))
	require.Equal(t, reports[0].MaxAvgBefore, num(first, "maxavg_before"), "floats round-trip exactly")
	require.Equal(t, 1.6, num(first, "maxavg_after"))
	require.Equal(t, "2", col(first, "migrations"))
	require.Equal(t, 0.0015, num(first, "strategy_seconds"))

	second := rows[2]
	require.Equal(t, "4", col(second, "step"))
	require.Equal(t, `refine, "quoted"`, col(second, "strategy"))
	require.Equal(t, "0", col(second, "migrations"))
	require.Equal(t, "", col(first, "error"))
	require.Equal(t, "no, \"thanks\"\nsecond line", col(second, "error"))
	require.Equal(t, 1.6, num(second, "maxavg_before"))
}

func TestReportWritePECSV(t *testing.T) {
	reports := twoReports()
	var buf bytes.Buffer
	require.NoError(t, WritePECSV(&buf, reports))

	rows, err := csv.NewReader(&buf).ReadAll()
	require.NoError(t, err)
	require.Equal(t, [][]string{
		PECSVHeader,
		{"3", "0", "6.5", "1.5", "0.25"},
		{"3", "1", "2", "4", "4"},
		{"3", "2", "0.5", "2", "5.5"},
		{"4", "0", "1.5", "1.5", "0.25"},
		{"4", "1", "4", "4", "4"},
		{"4", "2", "2", "2", "5.5"},
	}, rows)

	// Only the header for no reports.
	buf.Reset()
	require.NoError(t, WritePECSV(&buf, nil))
	require.Equal(t, strings.Join(PECSVHeader, ",")+"\n", buf.String())
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestReportWritersReturnErrors(t *testing.T) {
	reports := twoReports()
	for name, write := range map[string]func(io.Writer, []Report) error{
		"csv": WriteCSV, "pecsv": WritePECSV, "svg": WriteSVG, "png": WritePNG,
	} {
		require.ErrorContains(t, write(failingWriter{}, reports), "disk full", name)
	}
}

// svgStats parses an SVG document to the end and counts what the tests
// look at.
type svgStats struct {
	rects map[string]int // by class
	text  string         // all character data
}

func parseSVG(t *testing.T, doc []byte) svgStats {
	t.Helper()
	st := svgStats{rects: map[string]int{}}
	var text strings.Builder
	d := xml.NewDecoder(bytes.NewReader(doc))
	depth, roots := 0, 0
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		switch tok := tok.(type) {
		case xml.StartElement:
			if depth == 0 {
				roots++
				require.Equal(t, "svg", tok.Name.Local)
				require.Equal(t, "http://www.w3.org/2000/svg", tok.Name.Space)
			}
			depth++
			if tok.Name.Local == "rect" {
				class := ""
				for _, a := range tok.Attr {
					if a.Name.Local == "class" {
						class = a.Value
					}
					if a.Name.Local == "width" || a.Name.Local == "height" {
						v, err := strconv.ParseFloat(a.Value, 64)
						require.NoError(t, err)
						require.GreaterOrEqual(t, v, 0.0, "rect %s", a.Name.Local)
					}
				}
				st.rects[class]++
			}
		case xml.EndElement:
			depth--
		case xml.CharData:
			text.Write(tok)
		}
	}
	require.Equal(t, 1, roots)
	require.Equal(t, 0, depth)
	st.text = text.String()
	for _, bad := range []string{"NaN", "Inf"} {
		require.NotContains(t, string(doc), bad)
	}
	return st
}

func TestReportWriteSVG(t *testing.T) {
	reports := twoReports()
	var buf bytes.Buffer
	require.NoError(t, WriteSVG(&buf, reports))
	st := parseSVG(t, buf.Bytes())

	require.Equal(t, 6, st.rects["before"], "3 PEs × 2 steps")
	require.Equal(t, 6, st.rects["after"], "3 PEs × 2 steps")
	require.Equal(t, 1, st.rects["legend-before"])
	require.Equal(t, 1, st.rects["legend-after"])
	for _, r := range reports {
		require.Contains(t, st.text, r.Title())
	}
	require.Contains(t, st.text, "Step 3, greedy: max/avg 2.167 before, 1.600 after; 2 migrations")
	require.Contains(t, st.text, `Step 4, refine, "quoted": max/avg 1.600 before`)
	require.Contains(t, buf.String(), "refine, &#34;quoted&#34;", "text is escaped")
	require.Contains(t, st.text, "PE 0 before: 6.5")
	require.Contains(t, st.text, "PE 1 after: 4")
}

func TestReportWriteSVGEscapes(t *testing.T) {
	r := NewReport(reportSnapshot(), reportPlacement, `<script>&"x"</script>`+"\x00", 0)
	var buf bytes.Buffer
	require.NoError(t, WriteSVG(&buf, []Report{r}))
	st := parseSVG(t, buf.Bytes())
	require.NotContains(t, buf.String(), "<script>")
	require.Contains(t, st.text, `<script>&"x"</script>`)
}

func TestReportEdgeCases(t *testing.T) {
	zeroPEs := func(n int) []PEStats {
		pes := make([]PEStats, n)
		for i := range pes {
			pes[i] = PEStats{Speed: 1, Available: true}
		}
		return pes
	}
	many := &Snapshot{PEs: zeroPEs(256)}
	for i := range 1000 {
		many.Objects = append(many.Objects, Object{ID: i, Load: float64(i%7) * 1e-3, PE: i % 3, Migratable: true})
	}
	spread := make(Placement, len(many.Objects))
	spreadMoves := 0
	for i := range spread {
		spread[i] = i % 256
		if spread[i] != i%3 {
			spreadMoves++
		}
	}

	for _, tc := range []struct {
		name    string
		s       *Snapshot
		p       Placement
		pes     int
		maxAvg  [2]float64
		moved   int
		lineHas string
	}{
		{name: "zero load", s: &Snapshot{PEs: zeroPEs(4), Objects: []Object{{ID: 0, PE: 1, Migratable: true}}},
			p: Placement{2}, pes: 4, moved: 1, lineHas: "pe_before=0/0/0"},
		{name: "no objects", s: &Snapshot{PEs: zeroPEs(2)}, p: Placement{}, pes: 2, lineHas: "objects=0 obj_load=0/0/0"},
		{name: "one PE", s: &Snapshot{PEs: []PEStats{{Background: 0.5, Speed: 1}}, Objects: []Object{{ID: 0, Load: 2, PE: 0}}},
			p: Placement{0}, pes: 1, maxAvg: [2]float64{1, 1}, lineHas: "pe_after=2.5/2.5/2.5"},
		{name: "one PE, no load", s: &Snapshot{PEs: zeroPEs(1)}, pes: 1, lineHas: "maxavg_before=0.000"},
		{name: "256 PEs", s: many, p: spread, pes: 256, moved: spreadMoves, lineHas: "pes=256"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := NewReport(tc.s, tc.p, "greedy", 0)
			require.Len(t, r.Before, tc.pes)
			require.Len(t, r.After, tc.pes)
			if tc.name != "256 PEs" {
				require.Equal(t, tc.maxAvg[0], r.MaxAvgBefore)
				require.Equal(t, tc.maxAvg[1], r.MaxAvgAfter)
			}
			require.Equal(t, tc.moved, r.Migrations)
			require.Contains(t, r.LogLine(), tc.lineHas)
			require.NotContains(t, r.LogLine(), "NaN")

			var svg, pngBuf, c1, c2 bytes.Buffer
			require.NoError(t, WriteSVG(&svg, []Report{r, r}))
			st := parseSVG(t, svg.Bytes())
			require.Equal(t, 2*tc.pes, st.rects["before"])
			require.Equal(t, 2*tc.pes, st.rects["after"])

			require.NoError(t, WritePNG(&pngBuf, []Report{r}))
			img, err := png.Decode(&pngBuf)
			require.NoError(t, err)
			require.Positive(t, img.Bounds().Dx())
			require.Positive(t, img.Bounds().Dy())

			require.NoError(t, WriteCSV(&c1, []Report{r}))
			require.NoError(t, WritePECSV(&c2, []Report{r}))
			require.NotContains(t, c1.String()+c2.String(), "NaN")
			rows, err := csv.NewReader(&c2).ReadAll()
			require.NoError(t, err)
			require.Len(t, rows, 1+tc.pes)
		})
	}
}

func TestReportWriteSVGNoReports(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, WriteSVG(&buf, nil))
	st := parseSVG(t, buf.Bytes())
	require.Zero(t, st.rects["before"])
	require.Contains(t, st.text, "no load-balancing steps")
}

func TestReportWriteSVGNonFinite(t *testing.T) {
	// A hand-built report with bad figures still gives a valid picture.
	r := Report{Step: 1, Strategy: "x", Before: []float64{1, math.Inf(1)}, After: []float64{math.NaN(), 3}, MaxAvgBefore: math.NaN()}
	var buf bytes.Buffer
	require.NoError(t, WriteSVG(&buf, []Report{r}))
	st := parseSVG(t, buf.Bytes())
	require.Equal(t, 2, st.rects["before"])
	require.Contains(t, st.text, "PE 1 before: n/a")
}

func TestReportPNGColours(t *testing.T) {
	// One PE whose load halves: the before bar is full height, the after
	// bar half.
	r := Report{Before: []float64{2}, After: []float64{1}, MaxAvgBefore: 1, MaxAvgAfter: 1}
	var buf bytes.Buffer
	require.NoError(t, WritePNG(&buf, []Report{r}))
	img, err := png.Decode(&buf)
	require.NoError(t, err)

	c := newChart([]Report{r})
	p := c.panel(r)
	bottom := c.plotTop(0) + panelPlot
	at := func(before bool, frac float64) [3]uint32 {
		x, w := p.bar(0, before)
		cr, cg, cb, _ := img.At(int(x+w/2), int(bottom-frac*panelPlot)).RGBA()
		return [3]uint32{cr >> 8, cg >> 8, cb >> 8}
	}
	rgb := func(c [4]uint8) [3]uint32 { return [3]uint32{uint32(c[0]), uint32(c[1]), uint32(c[2])} }
	before := rgb([4]uint8{beforeColour.R, beforeColour.G, beforeColour.B})
	after := rgb([4]uint8{afterColour.R, afterColour.G, afterColour.B})
	white := [3]uint32{0xff, 0xff, 0xff}

	require.Equal(t, before, at(true, 0.9))
	require.Equal(t, after, at(false, 0.4))
	require.Equal(t, white, at(false, 0.6))
}
