package progress

import (
	"os"

	"golang.org/x/sys/unix"
)

// isTTY asks the terminal driver: a character device that is not a
// terminal (/dev/null) is not one.
func isTTY(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}
