//go:build unix

// Package procid identifies a process across pid reuse, so that a file a
// process leaves behind can name its writer, and a later process can tell
// whether that writer still runs.
package procid

import (
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// Gone is what StartTime returns for a process that does not exist or has
// ended.
const Gone = "gone"

// StartTime identifies process pid with its start time (the 22nd field of
// /proc/PID/stat, in clock ticks since boot): a pid can be reused, a pid
// and a start time cannot. It returns Gone for a process that does not
// exist or has ended (a zombie), and "" where there is no /proc (then a
// pid alone identifies a process).
func StartTime(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		if _, serr := os.Stat("/proc/self/stat"); serr != nil {
			if syscall.Kill(pid, 0) == syscall.ESRCH {
				return Gone
			}
			return ""
		}
		return Gone
	}
	// pid (comm) state ... : comm may hold spaces; fields follow the last ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return Gone
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 || f[0] == "Z" || f[0] == "X" {
		return Gone
	}
	return f[19] // field 22 overall: the 20th after ")"
}

// Alive returns "" if process pid (in decimal) runs and started at start
// (as StartTime says), or why not.
func Alive(pid, start string) string {
	p, err := strconv.Atoi(pid)
	if err != nil || p <= 0 {
		return fmt.Sprintf("it names no process (pid %q)", pid)
	}
	now := StartTime(p)
	switch {
	case now == Gone:
		return fmt.Sprintf("its writer, process %d, is gone", p)
	case now != start:
		return fmt.Sprintf("its writer, process %d, is gone (process %d now is another one)", p, p)
	}
	return ""
}

// OwnedBy reports whether fi is a file of user uid.
func OwnedBy(fi fs.FileInfo, uid int) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == uid
}
