//go:build unix

package actor

import (
	"io/fs"
	"syscall"
)

// ownedBy reports whether fi is a file of user uid.
func ownedBy(fi fs.FileInfo, uid int) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == uid
}
