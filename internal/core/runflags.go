package core

import (
	"flag"
	"fmt"
	"sort"
	"strings"
	"sync"
)

// Runtime flags that reach the program by mistake. ParseArgs passes the
// arguments it does not take on to the program; a flag of a package the
// program does not import (-balancer without package lb) or a misspelt
// runtime flag (-balncer) would then be ignored without a word, and the
// job would run without what was asked for. So ParseArgs refuses both,
// naming the flag and, for a package's flag, the import it needs. A flag
// the program defines on flag.CommandLine before Main, or declares with
// ProgramFlags, always reaches it; so does everything after "--".

// runtimeFlags are the flags ParseArgs itself takes.
var runtimeFlags = []string{"p", "nodes", "node", "nodelist", "token", "tls-cert", "tls-key", "restart", "v", "jobport", "nodehost", "failafter", "wait"}

var (
	progFlagsMu sync.Mutex
	progFlags   = map[string]bool{}
	// progFlagSet is where the program's own flags are looked up:
	// flag.CommandLine (tests put a set of their own here).
	progFlagSet = flag.CommandLine
)

// programTakes reports whether the program takes the flag name: it
// defined it on flag.CommandLine, or declared it with ProgramFlags.
func programTakes(name string) bool {
	progFlagsMu.Lock()
	defer progFlagsMu.Unlock()
	return progFlags[name] || progFlagSet.Lookup(name) != nil
}

// ProgramFlags declares flags (names without the dash) that the program
// parses itself from its arguments although they look like the runtime's:
// a flag of a package it does not import, or a name one letter away from
// a runtime flag. ParseArgs passes them on instead of refusing them. Call
// it before Main (or ParseArgs). A flag defined on flag.CommandLine before
// Main needs no declaration, nor does one that a program parses with a
// flag.FlagSet of its own if its users put it after "--". Flags the runtime
// takes (-p, and those of imported packages, such as lb's -balancer) are
// still taken.
func ProgramFlags(names ...string) {
	progFlagsMu.Lock()
	defer progFlagsMu.Unlock()
	for _, n := range names {
		progFlags[strings.TrimLeft(n, "-")] = true
	}
}

// checkProgramFlag returns an error for an argument that ParseArgs does
// not take but that looks like a runtime flag, nil for anything else.
func checkProgramFlag(arg, name string) error {
	if !strings.HasPrefix(arg, "-") || name == "" {
		return nil
	}
	if programTakes(name) {
		return nil
	}
	if pkg := FlagPackage(name); pkg != "" {
		return fmt.Errorf("flag -%s belongs to package %s, which this program does not import: add import _ %q (%s)", name, pkg, pkg, ownFlagHint(name))
	}
	if near := nearFlag(name); near != "" {
		hint := ""
		if _, registered := Flag(near); !registered && FlagPackage(near) != "" {
			pkg := FlagPackage(near)
			hint = fmt.Sprintf(", which needs import _ %q", pkg)
		}
		return fmt.Errorf("flag -%s is not a runtime flag: did you mean -%s%s? (%s)", name, near, hint, ownFlagHint(name))
	}
	return nil
}

// ownFlagHint says how a program passes its own flag name on.
func ownFlagHint(name string) string {
	return fmt.Sprintf("a program that takes -%s itself defines it on flag.CommandLine before chare.Main or declares it with chare.ProgramFlags; or put it after --", name)
}

// nearFlag returns the runtime flag (its own, registered, or a package's)
// that name is a likely misspelling of: one edit away, or two for long
// names. Short names (under 4 letters) are left to the program: too many
// of a program's own flags are one letter away from -p or -v.
func nearFlag(name string) string {
	if len(name) < 4 {
		return ""
	}
	var cands []string
	cands = append(cands, runtimeFlags...)
	cands = append(cands, FlagNames()...)
	cands = append(cands, PackageFlagNames()...)
	sort.Strings(cands)
	best, bestD := "", 3
	for _, c := range cands {
		if len(c) < 4 || c == name {
			continue
		}
		limit := 1
		if len(c) >= 7 && len(name) >= 7 {
			limit = 2
		}
		if d := editDistance(name, c); d <= limit && d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// editDistance is the optimal string alignment distance: insertions,
// deletions, substitutions and swaps of neighbours cost 1 each.
func editDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}
