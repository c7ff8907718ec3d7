// Package exutil holds what the example programs (and the Charm++
// counterparts under tests/charm) share: their flag
// handling, their final FAILED line and, for the TRAM examples, the -dims,
// -buffer and -flush flags, the grid they name and the start of a
// streamer's step.
package exutil

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/tram"
)

// MainChare is what the helpers use of an example's main chare (a
// chare.Chare).
type MainChare interface {
	chare.Context
	Exit(code int)
	NumPEs() int
	Here() *chare.PE
}

// Fail prints the final line "<name>: FAILED <message>" to w and ends the
// job with code.
func Fail(w io.Writer, m MainChare, name string, code int, format string, args ...any) {
	fmt.Fprintf(w, name+": FAILED "+format+"\n", args...)
	m.Exit(code)
}

// NewFlagSet returns the flag set of the program called name: it returns
// its errors and prints them and its usage to standard error.
func NewFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(os.Stderr)
	return fs
}

// FlagError ends the job of the program called name for err, an error of
// parsing its arguments: with code 0 after -h or -help (the usage has been
// printed), otherwise with code 2 and the final line
// "<name>: FAILED bad arguments: <err>" on w.
func FlagError(w io.Writer, m MainChare, name string, err error) {
	if errors.Is(err, flag.ErrHelp) {
		m.Exit(0)
		return
	}
	Fail(w, m, name, 2, "bad arguments: %v", err)
}

// Parse parses args with fs, the flag set of the program fs.Name(). On an
// error it ends the job as FlagError does and returns false.
func Parse(w io.Writer, m MainChare, fs *flag.FlagSet, args []string) bool {
	err := fs.Parse(args)
	if err != nil {
		FlagError(w, m, fs.Name(), err)
	}
	return err == nil
}

// ParseNoArgs is Parse for a program that takes flags only: an argument
// left after them ends the job with code 2 and the final line
// "<name>: FAILED bad arguments: unexpected argument <arg>".
func ParseNoArgs(w io.Writer, m MainChare, fs *flag.FlagSet, args []string) bool {
	if !Parse(w, m, fs, args) {
		return false
	}
	if fs.NArg() > 0 {
		Fail(w, m, fs.Name(), 2, "bad arguments: unexpected argument %q", fs.Arg(0))
		return false
	}
	return true
}

// DimsFlag defines the TRAM examples' -dims flag, the sizes of the
// streamer's grid, in fs; ParseDims parses its value.
func DimsFlag(fs *flag.FlagSet) *string {
	return fs.String("dims", "", `sizes of TRAM's virtual grid, such as "2,2" or "2x2" (default: nodes × PEs per node)`)
}

// ParseDims parses the value of a -dims flag into the sizes of the grid:
// whole numbers separated by commas, or by x or × as TRAM prints a
// topology ("2,2", "2x2", "2×2"); "" gives nil, the streamer's default
// grid.
func ParseDims(s string) ([]int, error) {
	if s == "" {
		return nil, nil
	}
	var dims []int
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == 'x' || r == '×' }) {
		d, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return nil, fmt.Errorf("-dims %q: %q is not a size: want whole numbers separated by commas, such as \"2,2\"", s, strings.TrimSpace(f))
		}
		dims = append(dims, d)
	}
	if len(dims) == 0 {
		return nil, fmt.Errorf("-dims %q: no sizes: want whole numbers separated by commas, such as \"2,2\"", s)
	}
	return dims, nil
}

// Options are the streamer options of the -dims, -buffer and -flush flags:
// nil dims is the default grid, buffer 0 the default buffer size, flush 0
// no periodic flushing.
func Options(dims []int, buffer int, flush time.Duration) tram.Options {
	o := tram.Options{Dims: dims, FlushPeriod: flush}
	if buffer > 0 {
		o.Sizing = tram.Sizing{BufferItems: buffer}
	}
	return o
}

// Grid returns the sizes of the grid a streamer made with dims uses: dims,
// or when it is nil tram.New's default, nodes × PEs per node.
func Grid(m MainChare, dims []int) []int {
	if dims == nil { // tram.New's default
		nodes := m.Here().Job().Runtime().NumNodes()
		return []int{nodes, m.NumPEs() / nodes}
	}
	return dims
}

// Topology names the grid a streamer made with dims uses, such as "2×2".
func Topology(m MainChare, dims []int) string {
	grid := Grid(m, dims)
	t, err := tram.NewTopology(grid, m.NumPEs())
	if err != nil {
		return fmt.Sprint(grid)
	}
	return t.String()
}

// StartStep starts a step of s in mode with producers, and waits until
// every PE accepts items (the step's Started callback). It returns the
// future of the step's Finished callback. An error of s.Start is returned
// as "<what>: <error>", or as it is when what is "". StartStep must run in
// a threaded entry method, such as the main chare's start method.
func StartStep[C, T any](m MainChare, s tram.Streamer[C, T], mode tram.Mode, producers int, what string) (chare.Future[any], error) {
	started, finished := chare.NewFuture[any](m), chare.NewFuture[any](m)
	err := s.Start(m, tram.Step{Mode: mode, Producers: producers, Started: started.Callback(), Finished: finished.Callback()})
	if err != nil {
		if what != "" {
			err = fmt.Errorf("%s: %w", what, err)
		}
		return finished, err
	}
	_, err = started.Get(m)
	return finished, err
}

// SplitMix64 advances a splitmix64 generator's state and returns its next
// value: a small repeatable generator whose state an element can carry
// when it migrates.
func SplitMix64(state *uint64) uint64 {
	*state += 0x9e3779b97f4a7c15
	return Mix(*state)
}

// Mix is splitmix64's finalizer, a bijection of uint64 that scatters
// neighbouring inputs.
func Mix(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// Positional parses a program's positional arguments, which stand in
// the order of names, as whole numbers of at least min; an argument left
// out takes its default from defaults (names and defaults have the same
// length). More arguments than names, or one that is not such a number,
// is an error naming the argument.
func Positional(args []string, names []string, defaults []int, min int) ([]int, error) {
	if len(args) > len(names) {
		return nil, fmt.Errorf("%d arguments, want at most %d: %s", len(args), len(names), strings.Join(names, " "))
	}
	v := slices.Clone(defaults)
	for i, a := range args {
		n, err := strconv.Atoi(a)
		if err != nil || n < min {
			return nil, fmt.Errorf("%s %q: want a whole number of at least %d", names[i], a, min)
		}
		v[i] = n
	}
	return v, nil
}

// ParseOK reads the final line of the program called name from its
// output: "<name>: ok key=value ...". It returns the values by key, or an
// error quoting the line when the last line is not such a line (a FAILED
// line, say) or a field is not key=value.
func ParseOK(name, output string) (map[string]string, error) {
	lines := strings.Split(strings.TrimRight(output, "\n"), "\n")
	last := lines[len(lines)-1]
	rest, ok := strings.CutPrefix(last, name+": ok")
	if !ok || (rest != "" && rest[0] != ' ') {
		return nil, fmt.Errorf("%s: the last line is not %q: %q", name, name+": ok ...", last)
	}
	kv := map[string]string{}
	for _, f := range strings.Fields(rest) {
		k, v, ok := strings.Cut(f, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("%s: field %q of %q is not key=value", name, f, last)
		}
		kv[k] = v
	}
	return kv, nil
}

// Figure returns the value of key in kv, a program's final line as
// ParseOK reads it, as a positive finite number, or an error naming the
// key.
func Figure(kv map[string]string, key string) (float64, error) {
	s, ok := kv[key]
	if !ok {
		return 0, fmt.Errorf("no %s= in the final line", key)
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || !(v > 0) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%s=%s: want a positive finite number", key, s)
	}
	return v, nil
}
