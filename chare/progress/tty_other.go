//go:build !linux

package progress

import "os"

// isTTY is true for any character device where the terminal driver is not
// asked (/dev/null counts as a terminal there).
func isTTY(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
