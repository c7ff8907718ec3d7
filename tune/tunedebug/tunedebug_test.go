package tunedebug_test

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/internal/core"
	"github.com/charmgo/charm/tune"
	"github.com/charmgo/charm/tune/tunedebug"
)

type tmain struct{ chare.Chare[tmain] }

func init() { chare.Register[tmain]() }

// countCircles counts an SVG's circle elements: one per evaluation for
// the value and one for the cost.
func countCircles(t *testing.T, b []byte) int {
	d := xml.NewDecoder(bytes.NewReader(b))
	n := 0
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			return n
		}
		require.NoError(t, err)
		if e, ok := tok.(xml.StartElement); ok && e.Name.Local == "circle" {
			n++
		}
	}
}

// TestReportTuningWritesFiles: any tuner (TRAM's, say) reports under a
// name; -tunedebug writes it at the job's end, the name made a plain file
// name.
func TestReportTuningWritesFiles(t *testing.T) {
	pts := []tune.Point{{Eval: 1, Value: 8, Cost: 3}, {Eval: 2, Value: 16, Cost: 2}, {Eval: 3, Value: 32, Cost: 2.5}}
	job := func(m *tmain, _ []string) {
		tunedebug.Report(m, "tram/step 1", pts[:1])
		tunedebug.Report(m, "tram/step 1", pts) // the last report counts
		m.Exit(0)
	}
	dir := filepath.Join(t.TempDir(), "out")
	code, err := chare.Run(chare.Config{PEs: 1, Timeout: 20 * time.Second, Flags: map[string]string{tunedebug.Flag: dir}}, job)
	require.NoError(t, err)
	require.Zero(t, code)
	b, err := os.ReadFile(filepath.Join(dir, "tram_step_1.csv"))
	require.NoError(t, err)
	require.Equal(t, "eval,value,cost\n1,8,3\n2,16,2\n3,32,2.5\n", string(b))
	svg, err := os.ReadFile(filepath.Join(dir, "tram_step_1.svg"))
	require.NoError(t, err)
	require.Equal(t, 6, countCircles(t, svg))

	// Without the flag, reporting is allowed and does nothing.
	code, err = chare.Run(chare.Config{PEs: 1, Timeout: 20 * time.Second}, job)
	require.NoError(t, err)
	require.Zero(t, code)
}

// TestReportFuncReadsAtJobEnd: a trajectory registered with ReportFunc is
// read once, when the job ends, so what it holds then is written; without
// the flag it is never read.
func TestReportFuncReadsAtJobEnd(t *testing.T) {
	for _, flag := range []bool{true, false} {
		var calls atomic.Int32
		var pts []tune.Point // grows after the registration
		dir := filepath.Join(t.TempDir(), "out")
		cfg := chare.Config{PEs: 1, Timeout: 20 * time.Second}
		if flag {
			cfg.Flags = map[string]string{tunedebug.Flag: dir}
		}
		code, err := chare.Run(cfg, func(m *tmain, _ []string) {
			tunedebug.ReportFunc(chare.PEOf(m).Job(), "late", func() []tune.Point {
				calls.Add(1)
				return pts
			})
			pts = append(pts, tune.Point{Eval: 1, Value: 4, Cost: 1.5})
			m.Exit(0)
		})
		require.NoError(t, err)
		require.Zero(t, code)
		b, err := os.ReadFile(filepath.Join(dir, "late.csv"))
		if !flag {
			require.Zero(t, calls.Load(), "without -tunedebug the trajectory was read")
			require.ErrorIs(t, err, os.ErrNotExist)
			continue
		}
		require.Equal(t, int32(1), calls.Load(), "reads of the trajectory")
		require.NoError(t, err)
		require.Equal(t, "eval,value,cost\n1,4,1.5\n", string(b))
	}
}

// TestFlagKnownToChare: chare names this package as the import -tunedebug
// needs, and with it imported the flag is taken and an empty directory is
// refused.
func TestFlagKnownToChare(t *testing.T) {
	require.Equal(t, "github.com/charmgo/charm/tune/tunedebug", core.FlagPackage(tunedebug.Flag))
	cfg, err := chare.ParseArgs([]string{"-tunedebug", "out", "x"})
	require.NoError(t, err)
	require.Equal(t, map[string]string{tunedebug.Flag: "out"}, cfg.Flags)
	require.Equal(t, []string{"x"}, cfg.Args)
	_, err = chare.ParseArgs([]string{"-tunedebug="})
	require.ErrorContains(t, err, "want a directory")
}
