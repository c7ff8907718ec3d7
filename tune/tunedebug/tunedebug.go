// Package tunedebug writes the trajectories of a job's online tuners for
// the runtime flag -tunedebug DIR: each tuner reports under a name, and
// when the job ends every process writes what its tuners reported as
// DIR/NAME.csv (tune.WriteCSV) and DIR/NAME.svg (tune.WriteSVG). Without
// the flag, a report costs a map look-up.
//
// Importing the package registers the flag; tram and comlib import it, so
// a program that uses either takes -tunedebug. The tuner itself is package
// tune, which needs no runtime.
package tunedebug

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/internal/core"
	"github.com/charmgo/charm/tune"
)

// Flag (-tunedebug DIR) writes every tuner's trajectory when the job ends.
const Flag = "tunedebug"

func init() {
	core.RegisterFlag(Flag, true, func(v string) error {
		if v == "" {
			return errors.New("want a directory")
		}
		return nil
	})
	core.OnJobEnd(writeTuneDebug)
}

var tuneReports sync.Map // *chare.Job → *tuneRegistry

type tuneRegistry struct {
	mu  sync.Mutex
	dir string
	fns map[string]func() []tune.Point
}

func registryOf(job *chare.Job) *tuneRegistry {
	if job == nil {
		return nil
	}
	dir, ok := job.Flag(Flag)
	if !ok {
		return nil
	}
	r, _ := tuneReports.LoadOrStore(job, &tuneRegistry{dir: dir, fns: map[string]func() []tune.Point{}})
	return r.(*tuneRegistry)
}

// ReportFunc registers a trajectory that is read when the job ends, for
// -tunedebug: fn is called once then, from another goroutine, so it must
// be safe to call from there; the last fn registered under a name counts.
// Names are as for Report. Without -tunedebug (or with a nil job) it does
// nothing. A strategy that keeps its trajectory behind a lock of its own
// (comlib's tuned instances) reports this way.
func ReportFunc(job *chare.Job, name string, fn func() []tune.Point) {
	r := registryOf(job)
	if r == nil {
		return
	}
	r.mu.Lock()
	r.fns[name] = fn
	r.mu.Unlock()
}

// Report records a tuner's trajectory under name (letters, digits,
// '-', '_' and '.'; others become '_'; a name unique in the job, such as
// one with the PE number in it) for -tunedebug: when the job ends, each
// process writes the last trajectory reported under each name as
// DIR/NAME.csv and DIR/NAME.svg. Report again as the trajectory grows
// (it is copied); without -tunedebug it does nothing. Streaming instances
// with Tune report theirs as comlibI-peN-cap and comlibI-peN-period.
func Report(from chare.Context, name string, pts []tune.Point) {
	pe := chare.PEOf(from)
	if pe == nil {
		return
	}
	r := registryOf(pe.Job())
	if r == nil {
		return
	}
	cp := append([]tune.Point(nil), pts...)
	ReportFunc(pe.Job(), name, func() []tune.Point { return cp })
}

// writeTuneDebug writes a job's reported trajectories when it ends.
func writeTuneDebug(job *chare.Job) {
	v, ok := tuneReports.LoadAndDelete(job)
	if !ok {
		return
	}
	r := v.(*tuneRegistry)
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := writeTrajectories(r.dir, r.fns); err != nil {
		slog.Error("-tunedebug", "err", err)
	}
}

// writeTrajectories writes each named trajectory as CSV and SVG into dir.
func writeTrajectories(dir string, fns map[string]func() []tune.Point) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("tunedebug: %w", err)
	}
	names := make([]string, 0, len(fns))
	for n := range fns {
		names = append(names, n)
	}
	sort.Strings(names)
	var errs []error
	for _, n := range names {
		pts := fns[n]()
		base := filepath.Join(dir, safeName(n))
		errs = append(errs, writeFile(base+".csv", func(f *os.File) error { return tune.WriteCSV(f, pts) }),
			writeFile(base+".svg", func(f *os.File) error { return tune.WriteSVG(f, n, pts) }))
	}
	return errors.Join(errs...)
}

func writeFile(path string, write func(*os.File) error) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("tunedebug: %w", err)
	}
	err = write(f)
	if cerr := f.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("tunedebug: writing %s: %w", path, err)
	}
	return nil
}

// safeName keeps a report's name a plain file name.
func safeName(n string) string {
	n = strings.TrimLeft(n, ".")
	if n == "" {
		return "_"
	}
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			return r
		}
		return '_'
	}, n)
}
