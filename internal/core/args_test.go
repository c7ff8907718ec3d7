package core

import (
	"flag"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseArgs(t *testing.T) {
	cases := []struct {
		in   []string
		pes  int
		args []string
		err  string
	}{
		{in: nil, pes: 0, args: nil},
		{in: []string{"-p", "4"}, pes: 4},
		{in: []string{"-p=3", "-n", "5"}, pes: 3, args: []string{"-n", "5"}},
		{in: []string{"-n", "5", "-p", "2"}, pes: 2, args: []string{"-n", "5"}},
		{in: []string{"--p=2", "x"}, pes: 2, args: []string{"x"}},
		{in: []string{"-n", "5", "--", "-p", "2"}, pes: 0, args: []string{"-n", "5", "-p", "2"}},
		{in: []string{"-p"}, err: "flag -p needs a value"},
		{in: []string{"-p", "0"}, err: `bad number of PEs "0"`},
		{in: []string{"-p=x"}, err: `bad number of PEs "x"`},
	}
	for _, c := range cases {
		cfg, err := ParseArgs(c.in)
		if c.err != "" {
			require.ErrorContains(t, err, c.err, "%q", c.in)
			continue
		}
		require.NoError(t, err, "%q", c.in)
		require.Equal(t, c.pes, cfg.PEs, "%q", c.in)
		require.Equal(t, c.args, cfg.Args, "%q", c.in)
	}
}

// TestParseArgsRefusesStrayRuntimeFlags: a flag of a package the program
// does not import, or a near miss of a runtime flag, is an error naming
// it (and the import), not an argument passed on in silence; a program
// that takes such a flag itself declares it.
func TestParseArgsRefusesStrayRuntimeFlags(t *testing.T) {
	// This package's tests do not import lb: its flags are not registered.
	for _, c := range []struct {
		in   []string
		want string
	}{
		{[]string{"-p", "2", "-balancer", "greedy"}, `flag -balancer belongs to package github.com/charmgo/charm/lb, which this program does not import: add import _ "github.com/charmgo/charm/lb"`},
		{[]string{"--lbdebug"}, `flag -lbdebug belongs to package github.com/charmgo/charm/lb`},
		{[]string{"-lbperiod=20ms"}, `flag -lbperiod belongs to package github.com/charmgo/charm/lb`},
		{[]string{"-balncer", "greedy"}, `flag -balncer is not a runtime flag: did you mean -balancer, which needs import _ "github.com/charmgo/charm/lb"?`},
		{[]string{"-lbperoid", "1s"}, `did you mean -lbperiod`},
		{[]string{"-noeds", "2"}, `flag -noeds is not a runtime flag: did you mean -nodes?`},
		{[]string{"-restrat", "dir"}, `did you mean -restart?`},
		{[]string{"-nodelsit", "f"}, `did you mean -nodelist?`},
	} {
		_, err := ParseArgs(c.in)
		require.Error(t, err, "%q", c.in)
		require.Contains(t, err.Error(), c.want, "%q", c.in)
	}
	// What programs take for themselves passes: the examples' flags, short
	// flags, values, and anything after "--".
	ok := [][]string{
		{"-grid", "256", "-blocks", "8", "-lbevery", "50", "-load", "hotspot", "-comm", "ring", "-list", "x"},
		{"-n", "5", "-m", "3", "-csv", "f", "-size", "8", "-work", "1ms", "-setload", "-checkpoint", "d", "-checkpoint-at", "10"},
		{"-iters", "3", "-flush", "1ms", "-client", "array", "-dims", "2x2", "-tol", "1e-3", "-scale", "2", "-rounds", "3", "-msgs", "4"},
		{"-warmup", "1", "-reps", "5", "-logsize", "20", "-migrate", "-buffer", "64", "-barrier", "-run", "x", "-imbalance", "6", "-cpuprofile", "f"},
		{"-x", "--", "-balancer", "greedy", "-balncer"},
	}
	for _, in := range ok {
		cfg, err := ParseArgs(in)
		require.NoError(t, err, "%q", in)
		require.NotEmpty(t, cfg.Args)
	}
	// Declared for this test only: go test -count=2 runs it again.
	t.Cleanup(func() {
		progFlagsMu.Lock()
		defer progFlagsMu.Unlock()
		delete(progFlags, "balncer")
		delete(progFlags, "lbdebug")
	})
	ProgramFlags("balncer", "-lbdebug")
	cfg, err := ParseArgs([]string{"-balncer", "x", "-lbdebug"})
	require.NoError(t, err)
	require.Equal(t, []string{"-balncer", "x", "-lbdebug"}, cfg.Args)
}

// TestParseArgsPassesFlagsTheProgramDefines: a flag the program defines
// on flag.CommandLine reaches it even when its name is one letter away
// from a runtime flag (-mode and -node); one nobody defines is still
// refused with the suggestion; "--" ends the runtime's flags and is not
// passed on, so that Go's flag parser does not stop at it.
func TestParseArgsPassesFlagsTheProgramDefines(t *testing.T) {
	near := []string{"mode", "modes", "code", "note", "tokens", "restore", "restarts"}
	fs := flag.NewFlagSet("prog", flag.ContinueOnError)
	saved := progFlagSet
	progFlagSet = fs
	t.Cleanup(func() { progFlagSet = saved })
	for _, n := range near {
		_, err := ParseArgs([]string{"-" + n, "x"})
		require.ErrorContains(t, err, "flag -"+n+" is not a runtime flag: did you mean", n)
		require.ErrorContains(t, err, "defines it on flag.CommandLine before chare.Main", n)
	}
	vals := map[string]*string{}
	for _, n := range near {
		vals[n] = fs.String(n, "", "")
	}
	var in, want []string
	for i, n := range near {
		v := string(rune('a' + i))
		in = append(in, "-"+n, v)
		want = append(want, "-"+n, v)
	}
	in = append(in, "-p", "3")
	cfg, err := ParseArgs(in)
	require.NoError(t, err)
	require.Equal(t, 3, cfg.PEs)
	require.Equal(t, want, cfg.Args)
	require.NoError(t, fs.Parse(cfg.Args))
	for i, n := range near {
		require.Equal(t, string(rune('a'+i)), *vals[n], n)
	}

	// "--": what follows reaches the program's parser, which does not see
	// the "--" itself (it would stop there).
	progFlagSet = flag.NewFlagSet("prog2", flag.ContinueOnError)
	cfg, err = ParseArgs([]string{"-p", "2", "--", "-mode", "fast", "-p", "9"})
	require.NoError(t, err)
	require.Equal(t, 2, cfg.PEs)
	require.Equal(t, []string{"-mode", "fast", "-p", "9"}, cfg.Args)
	fs2 := flag.NewFlagSet("prog2", flag.ContinueOnError)
	mode := fs2.String("mode", "", "")
	p := fs2.Int("p", 0, "")
	require.NoError(t, fs2.Parse(cfg.Args))
	require.Equal(t, "fast", *mode)
	require.Equal(t, 9, *p)
}
