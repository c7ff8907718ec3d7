package main

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/internal/extest"
)

// run runs the program in-process with a deadline that fails the test
// loudly, and returns its main chare, exit code and output.
var run = extest.Runner("migrate", &out, (*Main).Start, 60*time.Second)

var okLine = regexp.MustCompile(`^migrate: ok sent=(\d+) received=(\d+) lost=0 duplicated=0 migrations=(\d+) pes=(\d+)$`)

// checkOK checks the output of a successful run of n elements, rounds
// rounds and msgs messages on pes PEs, and returns the migrations.
func checkOK(t *testing.T, output string, pes, n, rounds, msgs int) int {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(output), "\n")
	last := lines[len(lines)-1]
	mt := okLine.FindStringSubmatch(last)
	require.NotNil(t, mt, "last line %q of\n%s", last, output)
	want := fmt.Sprint(n * rounds * msgs)
	require.Equal(t, want, mt[1], "sent")
	require.Equal(t, want, mt[2], "received")
	require.Equal(t, fmt.Sprint(pes), mt[4], "pes")
	for _, l := range lines[:len(lines)-1] {
		require.True(t, strings.HasPrefix(l, "migrate: ") && !strings.HasPrefix(l, "migrate: ok") &&
			!strings.HasPrefix(l, "migrate: FAILED"), "progress line %q", l)
	}
	migrations, err := strconv.Atoi(mt[3])
	require.NoError(t, err)
	return migrations
}

func TestMigrate(t *testing.T) {
	cases := []struct {
		pes, n, rounds, msgs int
		migrate              string
	}{
		{2, 16, 10, 8, "0.2"},
		{3, 40, 6, 5, "0.5"},
		{4, 64, 8, 8, "0.2"},
		{4, 8, 20, 4, "1"},  // an element moves after every message it handles
		{5, 1, 10, 10, "1"}, // a single element sends to itself while it moves
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("pes=%d/n=%d/migrate=%s", c.pes, c.n, c.migrate), func(t *testing.T) {
			m, code, output := run(t, c.pes, "-n", fmt.Sprint(c.n), "-rounds", fmt.Sprint(c.rounds),
				"-msgs", fmt.Sprint(c.msgs), "-migrate", c.migrate, "-seed", "3")
			require.Equal(t, 0, code, output)
			migrations := checkOK(t, output, c.pes, c.n, c.rounds, c.msgs)
			require.Positive(t, migrations, output)

			tot, rs := m.res.Totals, m.res.Runtime
			require.Equal(t, c.n, tot.Elements)
			require.Equal(t, uint64(migrations), tot.Departures)
			require.Equal(t, tot.Departures, tot.Arrivals)
			require.Equal(t, tot.SentSum, tot.RecvSum)
			require.Zero(t, tot.Pending)
			require.Zero(t, tot.Foreign)
			require.Equal(t, migrations, rs.MigratedIn)
			require.Equal(t, migrations, rs.MigratedOut)
			require.Equal(t, c.n, rs.Local)
			require.Zero(t, rs.Held)
		})
	}
}

// TestMigrateNoMoves runs without migrations: one PE, or a probability of
// zero.
func TestMigrateNoMoves(t *testing.T) {
	for _, c := range []struct {
		pes     int
		migrate string
	}{{1, "0.5"}, {3, "0"}} {
		t.Run(fmt.Sprintf("pes=%d/migrate=%s", c.pes, c.migrate), func(t *testing.T) {
			m, code, output := run(t, c.pes, "-n", "12", "-rounds", "4", "-msgs", "3", "-migrate", c.migrate)
			require.Equal(t, 0, code, output)
			require.Zero(t, checkOK(t, output, c.pes, 12, 4, 3))
			require.Zero(t, m.res.Runtime.Forwarded)
		})
	}
}

// TestMigrateDeterministic checks that a seed fixes what is sent and
// received, whatever the PEs do meanwhile. (How often the elements move is
// not fixed: an element asks to move once per stay, and which message it
// handles first depends on the timing.)
func TestMigrateDeterministic(t *testing.T) {
	var first Totals
	for i := range 2 {
		m, code, output := run(t, 3, "-n", "20", "-rounds", "5", "-msgs", "6", "-seed", "11")
		require.Equal(t, 0, code, output)
		tot := m.res.Totals
		require.Positive(t, tot.Departures)
		// These depend on the timing.
		tot.Reordered, tot.Departures, tot.Arrivals, tot.Away, tot.MaxVisited = 0, 0, 0, 0, 0
		if i == 0 {
			first = tot
			continue
		}
		require.Equal(t, first, tot)
	}
}

// TestMigrateReportsFailure checks the FAILED line for figures that do not
// add up.
func TestMigrateReportsFailure(t *testing.T) {
	p := Params{N: 4, Rounds: 2, Msgs: 3, Migrate: 0.5}
	tot := Totals{Elements: 4, Sent: 24, Received: 25, Distinct: 22, Duplicates: 3, Departures: 5, Arrivals: 5,
		SentSum: 1, RecvSum: 2, Lost: 2}
	rs := RuntimeStats{Local: 4, MigratedIn: 5, MigratedOut: 5}
	_, code, output := extest.Run(t, "migrate", &out, func(m *Main, _ []string) { m.finish(p, tot, rs) },
		chare.Config{PEs: 2, Timeout: 10 * time.Second})
	require.Equal(t, 1, code, output)
	require.Equal(t, "migrate: FAILED sent=24 received=25 lost=2 duplicated=3 migrations=5 pes=2: "+
		"2 messages lost; 3 messages duplicated; checksums differ: sent 0x1, received 0x2\n", output)
}

func TestMigrateBadFlags(t *testing.T) {
	for _, args := range [][]string{{"-n", "0"}, {"-rounds", "0"}, {"-msgs", "-1"}, {"-migrate", "1.5"},
		{"-migrate", "-0.1"}, {"-migrate", "NaN"}, {"-seed", "x"}, {"extra"}} {
		_, code, output := run(t, 2, args...)
		require.NotEqual(t, 0, code, "%v", args)
		require.True(t, strings.HasPrefix(output, "migrate: FAILED bad arguments: "), "%v: %q", args, output)
	}
}

// TestMigrateTwoProcesses runs the program as two processes (-nodes 2):
// elements migrate between the processes as well as within them.
func TestMigrateTwoProcesses(t *testing.T) {
	code, output := extest.RunProcesses(t, &out, (*Main).Start, chare.Config{PEs: 4, Nodes: 2,
		Args: []string{"-n", "32", "-rounds", "8", "-msgs", "6", "-migrate", "0.3"}, Timeout: 60 * time.Second})
	require.Equal(t, 0, code, output)
	require.Positive(t, checkOK(t, output, 4, 32, 8, 6), output)
}
