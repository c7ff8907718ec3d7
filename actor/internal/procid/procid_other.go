//go:build !unix

// Package procid identifies a process across pid reuse (see the Unix
// version); here a process cannot be checked, and every one is taken to
// run.
package procid

import "io/fs"

// Gone is what StartTime returns for a process that does not exist or has
// ended.
const Gone = "gone"

// StartTime returns "": no start time is known here.
func StartTime(pid int) string { return "" }

// Alive returns "": a writer is taken to run.
func Alive(pid, start string) string { return "" }

// OwnedBy reports false: a file's owner is not known here, so nothing is
// taken for this user's.
func OwnedBy(fi fs.FileInfo, uid int) bool { return false }
