package tune_test

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/tune"
)

type svgCircle struct {
	Class      string // the enclosing group's class
	Cx, Cy     float64
	Eval       int
	Value, Cos float64
}

// parseSVG parses a chart as XML and returns its title and circles.
func parseSVG(t *testing.T, b []byte) (string, []svgCircle) {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(b))
	var title, group string
	var out []svgCircle
	inTitle := false
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err, "the chart is well-formed XML")
		switch e := tok.(type) {
		case xml.StartElement:
			attr := map[string]string{}
			for _, a := range e.Attr {
				attr[a.Name.Local] = a.Value
			}
			switch e.Name.Local {
			case "g":
				group = attr["class"]
			case "text":
				inTitle = title == "" && attr["font-size"] == "14"
			case "circle":
				num := func(k string) float64 {
					v, err := strconv.ParseFloat(attr[k], 64)
					require.NoError(t, err, "attribute %s", k)
					return v
				}
				out = append(out, svgCircle{Class: group, Cx: num("cx"), Cy: num("cy"), Eval: int(num("data-eval")), Value: num("data-value"), Cos: num("data-cost")})
			}
		case xml.CharData:
			if inTitle {
				title += string(e)
			}
		case xml.EndElement:
			inTitle = false
		}
	}
	return title, out
}

func TestWriteSVGDrawsEveryPoint(t *testing.T) {
	pts := []tune.Point{{1, 0, 9}, {2, 1, 7.5}, {3, 3, 4}, {4, 7, 6}, {5, 5, 3.25}}
	var b bytes.Buffer
	require.NoError(t, tune.WriteSVG(&b, "cap <pe 3> & co", pts))
	title, cs := parseSVG(t, b.Bytes())
	require.Equal(t, "cap <pe 3> & co", title, "the title is escaped")
	require.Len(t, cs, 2*len(pts), "a circle per point in each panel")
	for k, class := range []string{"value", "cost"} {
		panel := cs[k*len(pts) : (k+1)*len(pts)]
		for i, c := range panel {
			require.Equal(t, class, c.Class)
			require.Equal(t, pts[i], tune.Point{Eval: c.Eval, Value: c.Value, Cost: c.Cos})
			if i > 0 {
				require.Greater(t, c.Cx, panel[i-1].Cx, "evaluations run left to right")
			}
		}
		y := func(p tune.Point) float64 { return []float64{p.Value, p.Cost}[k] }
		// Higher values are drawn higher (smaller y), proportionally.
		for i := range panel {
			for j := range panel {
				if y(pts[i]) > y(pts[j]) {
					require.Less(t, panel[i].Cy, panel[j].Cy, "%s panel: point %d above point %d", class, i+1, j+1)
				}
			}
		}
		top, bottom := panel[0].Cy, panel[0].Cy
		for _, c := range panel {
			top, bottom = min(top, c.Cy), max(bottom, c.Cy)
		}
		require.InDelta(t, 200, bottom-top, 0.2, "the range fills the panel")
	}
}

func TestWriteSVGEmptyAndFlat(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, tune.WriteSVG(&b, "empty", nil))
	_, cs := parseSVG(t, b.Bytes())
	require.Empty(t, cs)
	b.Reset()
	require.NoError(t, tune.WriteSVG(&b, "flat", []tune.Point{{1, 4, 2}}))
	_, cs = parseSVG(t, b.Bytes())
	require.Len(t, cs, 2)
	require.InDelta(t, 140, cs[0].Cy, 0.2, "a single value sits mid-panel")
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestWriteSVGReportsWriteErrors(t *testing.T) {
	err := tune.WriteSVG(failWriter{}, "x", []tune.Point{{1, 1, 1}})
	require.ErrorContains(t, err, "disk full")
	require.ErrorContains(t, err, `"x"`)
}
